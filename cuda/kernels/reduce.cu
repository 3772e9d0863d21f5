// Entry points of the reductions (classic/reduce.cuh): one kernel per (built-in operator, element type),
// named lookback_reduce_<op>_<type>, and arg_min / arg_max per element type (core/arg_policy.cuh), named
// lookback_arg_min_<type> and lookback_arg_max_<type>.
#include "../classic/reduce.cuh"
#include "../core/arg_policy.cuh"

using namespace lookback;

#define LOOKBACK_REDUCE_KERNEL(OP, OPTYPE, NAME, CTYPE)                                                  \
    extern "C" __global__ void __launch_bounds__(ReduceAgent<BuiltinScan<CTYPE, OPTYPE>>::BLOCK_THREADS) \
        lookback_reduce_##OP##_##NAME(ReduceParams p) {                                                   \
        ReduceAgent<BuiltinScan<CTYPE, OPTYPE>>::run(p);                                                  \
    }

#define LOOKBACK_ARG_KERNEL(DIR, MAX, NAME, CTYPE)                                                  \
    extern "C" __global__ void __launch_bounds__(ReduceAgent<ArgReduce<CTYPE, MAX>>::BLOCK_THREADS) \
        lookback_arg_##DIR##_##NAME(ReduceParams p) {                                               \
        ReduceAgent<ArgReduce<CTYPE, MAX>>::run(p);                                                 \
    }

#define LOOKBACK_REDUCE_ALL(NAME, CTYPE, CLASS)                         \
    LOOKBACK_FOR_EACH_OP(LOOKBACK_REDUCE_KERNEL, NAME, CTYPE, CLASS) \
    LOOKBACK_ARG_KERNEL(min, false, NAME, CTYPE)                     \
    LOOKBACK_ARG_KERNEL(max, true, NAME, CTYPE)

LOOKBACK_TYPES(LOOKBACK_REDUCE_ALL)
