// Entry points of the device-wide scans: one kernel per (operator, element type), named
// lookback_scan_<op>_<type>. Inclusive or exclusive is a parameter.
#include "../agent_scan.cuh"

using namespace lookback;

#define LOOKBACK_SCAN_KERNEL(OP, OPTYPE, NAME, CTYPE)                                                     \
    extern "C" __global__ void __launch_bounds__(ScanAgent<CTYPE, OPTYPE>::BLOCK_THREADS)                 \
        lookback_scan_##OP##_##NAME(ScanParams p) {                                                        \
        ScanAgent<CTYPE, OPTYPE>::run(p);                                                                  \
    }

#define LOOKBACK_SCAN_ALL(NAME, CTYPE, CLASS)       \
    LOOKBACK_SCAN_KERNEL(sum, OpSum, NAME, CTYPE)   \
    LOOKBACK_SCAN_KERNEL(min, OpMin, NAME, CTYPE)   \
    LOOKBACK_SCAN_KERNEL(max, OpMax, NAME, CTYPE)   \
    LOOKBACK_SCAN_BITS_##CLASS(NAME, CTYPE)
#define LOOKBACK_SCAN_BITS_int(NAME, CTYPE)         \
    LOOKBACK_SCAN_KERNEL(and, OpAnd, NAME, CTYPE)   \
    LOOKBACK_SCAN_KERNEL(or, OpOr, NAME, CTYPE)     \
    LOOKBACK_SCAN_KERNEL(xor, OpXor, NAME, CTYPE)
#define LOOKBACK_SCAN_BITS_float(NAME, CTYPE)

LOOKBACK_TYPES(LOOKBACK_SCAN_ALL)
