// Entry points of the device-wide scans: one kernel per (operator, element type), named
// lookback_scan_<op>_<type>. Inclusive or exclusive is a parameter.
#include "../classic/scan.cuh"

using namespace lookback;

#define LOOKBACK_SCAN_KERNEL(OP, OPTYPE, NAME, CTYPE)                                                     \
    extern "C" __global__ void __launch_bounds__(ScanAgent<BuiltinScan<CTYPE, OPTYPE>>::BLOCK_THREADS)                 \
        lookback_scan_##OP##_##NAME(ScanParams p) {                                                        \
        ScanAgent<BuiltinScan<CTYPE, OPTYPE>>::run(p);                                                                  \
    }

#define LOOKBACK_SCAN_ALL(NAME, CTYPE, CLASS) LOOKBACK_FOR_EACH_OP(LOOKBACK_SCAN_KERNEL, NAME, CTYPE, CLASS)

LOOKBACK_TYPES(LOOKBACK_SCAN_ALL)
