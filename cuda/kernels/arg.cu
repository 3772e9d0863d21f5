// Entry points of arg_min and arg_max (core/arg_policy.cuh) on the classic scan agent in reduce mode: one
// kernel per element type, named lookback_arg_min_<type> and lookback_arg_max_<type>.
#include "../classic/scan.cuh"
#include "../core/arg_policy.cuh"

using namespace lookback;

#define LOOKBACK_ARG_KERNEL(DIR, MAX, NAME, CTYPE)                                                        \
    extern "C" __global__ void __launch_bounds__(ScanAgent<ArgReduce<CTYPE, MAX>>::BLOCK_THREADS)       \
        lookback_arg_##DIR##_##NAME(ScanParams p) {                                                       \
        ScanAgent<ArgReduce<CTYPE, MAX>>::run(p);                                                         \
    }

#define LOOKBACK_ARG_ALL(NAME, CTYPE, CLASS)       \
    LOOKBACK_ARG_KERNEL(min, false, NAME, CTYPE) \
    LOOKBACK_ARG_KERNEL(max, true, NAME, CTYPE)

LOOKBACK_TYPES(LOOKBACK_ARG_ALL)
