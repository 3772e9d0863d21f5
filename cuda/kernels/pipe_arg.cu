// Entry points of arg_min and arg_max on the persistent engine (persistent/scan_work.cuh in reduce mode):
// one kernel per element type, named lookback_pipe_arg_min_<type> and lookback_pipe_arg_max_<type>.
// sm_90 or newer only: on older architectures the body traps, and the host never launches it there.
#include "../persistent/scan_work.cuh"
#include "../core/arg_policy.cuh"

using namespace lookback;

#if __CUDA_ARCH__ >= 900
#define LOOKBACK_PIPE_ARG_BODY(MAX, CTYPE) PipeScanAgent<ArgReduce<CTYPE, MAX>>::run(p);
#else
#define LOOKBACK_PIPE_ARG_BODY(MAX, CTYPE) __trap();
#endif

#define LOOKBACK_PIPE_ARG_KERNEL(DIR, MAX, NAME, CTYPE)                                                   \
    extern "C" __global__ void __launch_bounds__(PipeScanAgent<ArgReduce<CTYPE, MAX>>::THREADS, 1)      \
        lookback_pipe_arg_##DIR##_##NAME(const __grid_constant__ ScanParams p) {                           \
        LOOKBACK_PIPE_ARG_BODY(MAX, CTYPE)                                                                \
    }

#define LOOKBACK_PIPE_ARG_ALL(NAME, CTYPE, CLASS)       \
    LOOKBACK_PIPE_ARG_KERNEL(min, false, NAME, CTYPE) \
    LOOKBACK_PIPE_ARG_KERNEL(max, true, NAME, CTYPE)

LOOKBACK_TYPES(LOOKBACK_PIPE_ARG_ALL)
