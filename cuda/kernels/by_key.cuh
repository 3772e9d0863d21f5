// Kernel definitions shared by by_key_sum.cu, by_key_min.cu and by_key_max.cu (one file per operator, so
// nvcc compiles them in parallel): lookback_by_key_<op>_k<key bytes>_<value type>. Reduce, inclusive and
// exclusive scan are the `mode` parameter.
#pragma once
#include "../classic/runs.cuh"

#define LOOKBACK_BY_KEY_KERNEL(OP, OPTYPE, KB, NAME, CTYPE)                                              \
    extern "C" __global__ void __launch_bounds__(lookback::RunsAgent<KB, CTYPE, lookback::OPTYPE, true>::BLOCK_THREADS, \
                                                   lookback::RunsAgent<KB, CTYPE, lookback::OPTYPE, true>::MIN_BLOCKS) \
        lookback_by_key_##OP##_k##KB##_##NAME(lookback::RunsParams p) {                                   \
        lookback::RunsAgent<KB, CTYPE, lookback::OPTYPE, true>::run(p);                                    \
    }

// Every value type for each key size of LOOKBACK_KEY_BYTES (types.cuh).
#define LOOKBACK_BY_KEY_KERNELS(OP, OPTYPE)                                                                \
    LOOKBACK_TYPES(LOOKBACK_BY_KEY_##OP##_K1)                                                              \
    LOOKBACK_TYPES(LOOKBACK_BY_KEY_##OP##_K2)                                                              \
    LOOKBACK_TYPES(LOOKBACK_BY_KEY_##OP##_K4)                                                              \
    LOOKBACK_TYPES(LOOKBACK_BY_KEY_##OP##_K8)
