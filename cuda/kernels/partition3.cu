// Entry points of the three-way partition: one kernel per element type, lookback_partition3_<type>.
// Four resident blocks (64 registers): two predicate programs spill 30-760 bytes under the 40 of six.
#include "../classic/partition3.cuh"

using namespace lookback;

#define LOOKBACK_PARTITION3_KERNEL(NAME, CTYPE, CLASS)                                                    \
    extern "C" __global__ void __launch_bounds__(Partition3Agent<CTYPE>::BLOCK_THREADS, 4)                \
        lookback_partition3_##NAME(Partition3Params p) {                                                   \
        Partition3Agent<CTYPE>::run(p);                                                                    \
    }

LOOKBACK_TYPES(LOOKBACK_PARTITION3_KERNEL)
