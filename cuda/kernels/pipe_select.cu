// Entry points of compaction on the persistent engine (agent_pipe_select.cuh): one kernel per element
// type, named lookback_pipe_select_<type>. sm_90 or newer only: on older architectures the body traps,
// and the host never launches it there.
#include "../agent_pipe_select.cuh"

using namespace lookback;

#if __CUDA_ARCH__ >= 900
#define LOOKBACK_PIPE_SELECT_BODY(CTYPE) PipeEngine<PipeSelectWork<CTYPE>>::run(p);
#else
#define LOOKBACK_PIPE_SELECT_BODY(CTYPE) __trap();
#endif

#define LOOKBACK_PIPE_SELECT_KERNEL(NAME, CTYPE, CLASS)                                                     \
    extern "C" __global__ void __launch_bounds__(PipeEngine<PipeSelectWork<CTYPE>>::THREADS, 1)              \
        lookback_pipe_select_##NAME(const __grid_constant__ SelectParams p) {                                 \
        LOOKBACK_PIPE_SELECT_BODY(CTYPE)                                                                     \
    }

LOOKBACK_TYPES(LOOKBACK_PIPE_SELECT_KERNEL)
