// Entry points of the selection family (select_if, select_flagged, unique, partition, count, mask): one
// kernel per element type, named lookback_select_<type>. Source and mode are parameters (uniform branches).
// Each is compiled for SelectAgent::MIN_BLOCKS resident blocks per SM (cuda/classic/select.cuh).
#include "../classic/select.cuh"

using namespace lookback;

#define LOOKBACK_SELECT_KERNEL(NAME, CTYPE, CLASS)                                                        \
    extern "C" __global__ void __launch_bounds__(SelectAgent<CTYPE>::BLOCK_THREADS, SelectAgent<CTYPE>::MIN_BLOCKS)                       \
        lookback_select_##NAME(SelectParams p) {                                                           \
        SelectAgent<CTYPE>::run(p);                                                                        \
    }

LOOKBACK_TYPES(LOOKBACK_SELECT_KERNEL)
