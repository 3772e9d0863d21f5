// reduce_by_key with operator min on the persistent engine (see pipe_by_key.cuh).
#include "pipe_by_key.cuh"

#define LOOKBACK_PIPE_BY_KEY_min_K1(NAME, CTYPE, CLASS) LOOKBACK_PIPE_BY_KEY_KERNEL(min, OpMin, 1, NAME, CTYPE)
#define LOOKBACK_PIPE_BY_KEY_min_K2(NAME, CTYPE, CLASS) LOOKBACK_PIPE_BY_KEY_KERNEL(min, OpMin, 2, NAME, CTYPE)
#define LOOKBACK_PIPE_BY_KEY_min_K4(NAME, CTYPE, CLASS) LOOKBACK_PIPE_BY_KEY_KERNEL(min, OpMin, 4, NAME, CTYPE)
#define LOOKBACK_PIPE_BY_KEY_min_K8(NAME, CTYPE, CLASS) LOOKBACK_PIPE_BY_KEY_KERNEL(min, OpMin, 8, NAME, CTYPE)
LOOKBACK_PIPE_BY_KEY_KERNELS(min, OpMin)
