// Entry points of the encodings (run-length, run-end) and unique_by_key on the persistent engine
// (persistent/runs_work.cuh): lookback_pipe_runs_k<key bytes>_v<value bytes>, value bytes 0 meaning no value
// column, for the same pairs as runs.cu (when built: see the end). The mode parameter picks the primitive. sm_90 or newer only: on
// older architectures the body traps, and the host never launches it there.
#include "../persistent/runs_work.cuh"

using namespace lookback;

#if __CUDA_ARCH__ >= 900
#define LOOKBACK_PIPE_RUNS_BODY(KB, VB) PipeRunsAgent<KB, ValueBits<VB>::type, OpMax, false>::run(p);
#else
#define LOOKBACK_PIPE_RUNS_BODY(KB, VB) __trap();
#endif

#define LOOKBACK_PIPE_RUNS_KERNEL(KB, VB)                                                                  \
    extern "C" __global__ void __launch_bounds__(PipeRunsAgent<KB, ValueBits<VB>::type, OpMax, false>::THREADS, 1) \
        lookback_pipe_runs_k##KB##_v##VB(const __grid_constant__ RunsParams p) {                            \
        LOOKBACK_PIPE_RUNS_BODY(KB, VB)                                                                     \
    }
#define LOOKBACK_PIPE_RUNS_FOR_KEY(KB) \
    LOOKBACK_PIPE_RUNS_KERNEL(KB, 0)   \
    LOOKBACK_PIPE_RUNS_KERNEL(KB, 1)   \
    LOOKBACK_PIPE_RUNS_KERNEL(KB, 2)   \
    LOOKBACK_PIPE_RUNS_KERNEL(KB, 4)   \
    LOOKBACK_PIPE_RUNS_KERNEL(KB, 8)

// Only with LOOKBACK_ALL_PERSISTENT_RUNS: Engine::Auto never takes these (core/types.cuh says why).
#ifdef LOOKBACK_ALL_PERSISTENT_RUNS
LOOKBACK_KEY_BYTES(LOOKBACK_PIPE_RUNS_FOR_KEY)
#endif
