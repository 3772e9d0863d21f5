// Keyed reductions and scans with operator min (see by_key.cuh).
#include "by_key.cuh"

#define LOOKBACK_BY_KEY_min_K1(NAME, CTYPE, CLASS) LOOKBACK_BY_KEY_KERNEL(min, OpMin, 1, NAME, CTYPE)
#define LOOKBACK_BY_KEY_min_K2(NAME, CTYPE, CLASS) LOOKBACK_BY_KEY_KERNEL(min, OpMin, 2, NAME, CTYPE)
#define LOOKBACK_BY_KEY_min_K4(NAME, CTYPE, CLASS) LOOKBACK_BY_KEY_KERNEL(min, OpMin, 4, NAME, CTYPE)
#define LOOKBACK_BY_KEY_min_K8(NAME, CTYPE, CLASS) LOOKBACK_BY_KEY_KERNEL(min, OpMin, 8, NAME, CTYPE)
LOOKBACK_BY_KEY_KERNELS(min, OpMin)
