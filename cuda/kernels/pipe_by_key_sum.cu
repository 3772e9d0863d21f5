// reduce_by_key with operator sum on the persistent engine (see pipe_by_key.cuh).
#include "pipe_by_key.cuh"

#define LOOKBACK_PIPE_BY_KEY_sum_K1(NAME, CTYPE, CLASS) LOOKBACK_PIPE_BY_KEY_KERNEL(sum, OpSum, 1, NAME, CTYPE)
#define LOOKBACK_PIPE_BY_KEY_sum_K2(NAME, CTYPE, CLASS) LOOKBACK_PIPE_BY_KEY_KERNEL(sum, OpSum, 2, NAME, CTYPE)
#define LOOKBACK_PIPE_BY_KEY_sum_K4(NAME, CTYPE, CLASS) LOOKBACK_PIPE_BY_KEY_KERNEL(sum, OpSum, 4, NAME, CTYPE)
#define LOOKBACK_PIPE_BY_KEY_sum_K8(NAME, CTYPE, CLASS) LOOKBACK_PIPE_BY_KEY_KERNEL(sum, OpSum, 8, NAME, CTYPE)
LOOKBACK_PIPE_BY_KEY_KERNELS(sum, OpSum)
