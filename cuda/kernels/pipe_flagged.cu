// Entry points of select_flagged on the persistent engine (agent_pipe_select.cuh with FLAGS: the flags
// are a side stream of each tile): one kernel per item size of LOOKBACK_PIPE_FLAGGED_BYTES (tuning.cuh),
// named lookback_pipe_flagged_b<bytes>. Compaction by flags only moves items, so it moves them as bits and
// one kernel serves every type of that size. sm_90 or newer only: on older architectures the body traps,
// and the host never launches it there.
#include "../agent_pipe_select.cuh"

using namespace lookback;

#define LOOKBACK_PIPE_FLAGGED_ENGINE(BYTES) PipeEngine<PipeSelectWork<Bits<BYTES>::type, true>>

#if __CUDA_ARCH__ >= 900
#define LOOKBACK_PIPE_FLAGGED_BODY(BYTES) LOOKBACK_PIPE_FLAGGED_ENGINE(BYTES)::run(p);
#else
#define LOOKBACK_PIPE_FLAGGED_BODY(BYTES) __trap();
#endif

#define LOOKBACK_PIPE_FLAGGED_KERNEL(BYTES)                                                               \
    extern "C" __global__ void __launch_bounds__(LOOKBACK_PIPE_FLAGGED_ENGINE(BYTES)::THREADS, 1)          \
        lookback_pipe_flagged_b##BYTES(const __grid_constant__ SelectParams p) {                           \
        LOOKBACK_PIPE_FLAGGED_BODY(BYTES)                                                                 \
    }

LOOKBACK_PIPE_FLAGGED_BYTES(LOOKBACK_PIPE_FLAGGED_KERNEL)
