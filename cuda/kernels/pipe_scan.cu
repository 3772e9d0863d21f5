// Entry points of the persistent, warp-specialised scans (persistent/scan_work.cuh): one kernel per (operator,
// element type), named lookback_pipe_scan_<op>_<type>, for the same pairs as scan.cu. sm_90 or newer
// only: on older architectures the body traps, and the host never launches it there.
#include "../persistent/scan_work.cuh"

using namespace lookback;

#if __CUDA_ARCH__ >= 900
#define LOOKBACK_PIPE_SCAN_BODY(OPTYPE, CTYPE) PipeScanAgent<BuiltinScan<CTYPE, OPTYPE>>::run(p);
#else
#define LOOKBACK_PIPE_SCAN_BODY(OPTYPE, CTYPE) __trap();
#endif

#define LOOKBACK_PIPE_SCAN_KERNEL(OP, OPTYPE, NAME, CTYPE)                                                \
    extern "C" __global__ void __launch_bounds__(PipeScanAgent<BuiltinScan<CTYPE, OPTYPE>>::THREADS, 1)                \
        lookback_pipe_scan_##OP##_##NAME(const __grid_constant__ ScanParams p) {                           \
        LOOKBACK_PIPE_SCAN_BODY(OPTYPE, CTYPE)                                                             \
    }

#define LOOKBACK_PIPE_SCAN_ALL(NAME, CTYPE, CLASS) LOOKBACK_FOR_EACH_OP(LOOKBACK_PIPE_SCAN_KERNEL, NAME, CTYPE, CLASS)

LOOKBACK_TYPES(LOOKBACK_PIPE_SCAN_ALL)
