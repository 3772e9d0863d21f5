// reduce_by_key with operator max on the persistent engine (see pipe_by_key.cuh).
#include "pipe_by_key.cuh"

#define LOOKBACK_PIPE_BY_KEY_max_K1(NAME, CTYPE, CLASS) LOOKBACK_PIPE_BY_KEY_KERNEL(max, OpMax, 1, NAME, CTYPE)
#define LOOKBACK_PIPE_BY_KEY_max_K2(NAME, CTYPE, CLASS) LOOKBACK_PIPE_BY_KEY_KERNEL(max, OpMax, 2, NAME, CTYPE)
#define LOOKBACK_PIPE_BY_KEY_max_K4(NAME, CTYPE, CLASS) LOOKBACK_PIPE_BY_KEY_KERNEL(max, OpMax, 4, NAME, CTYPE)
#define LOOKBACK_PIPE_BY_KEY_max_K8(NAME, CTYPE, CLASS) LOOKBACK_PIPE_BY_KEY_KERNEL(max, OpMax, 8, NAME, CTYPE)
LOOKBACK_PIPE_BY_KEY_KERNELS(max, OpMax)
