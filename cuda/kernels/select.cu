// Entry points of the selection family (select_if, select_flagged, unique, partition, count, mask): one
// kernel per element type, named lookback_select_<type>. Source and mode are parameters (uniform branches).
#include "../agent_select.cuh"

using namespace lookback;

// Eight resident blocks per SM (ptxas caps registers at 32; the predicate interpreter spills a few bytes
// for 1- and 2-byte types). Measured on the H200 at 2^28 i32: select_if 50 % 0.46 → 0.53 of memcpy
// against no cap (5-6 blocks): more tiles in flight while others look back (benches/NOTES.md).
// sm_86 and sm_89 hold at most 1536 threads per SM: six blocks there.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 890)
#define LOOKBACK_SELECT_MIN_BLOCKS 6
#else
#define LOOKBACK_SELECT_MIN_BLOCKS 8
#endif

#define LOOKBACK_SELECT_KERNEL(NAME, CTYPE, CLASS)                                                        \
    extern "C" __global__ void __launch_bounds__(SelectAgent<CTYPE>::BLOCK_THREADS, LOOKBACK_SELECT_MIN_BLOCKS)                       \
        lookback_select_##NAME(SelectParams p) {                                                           \
        SelectAgent<CTYPE>::run(p);                                                                        \
    }

LOOKBACK_TYPES(LOOKBACK_SELECT_KERNEL)
