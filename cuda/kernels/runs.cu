// Entry points of the encodings (run-length, run-end, non-trivial runs) and unique_by_key:
// lookback_runs_k<key bytes>_v<value bytes>, value bytes 0 meaning no value column, and the encodings'
// small-grid kernels lookback_runs_small_k<key bytes>. The mode parameter picks the primitive; float
// keys get IEEE equality from the parameters (key_equality.cuh).
#include "../classic/runs.cuh"

using namespace lookback;

#define LOOKBACK_RUNS_KERNEL(KB, VB)                                                                      \
    extern "C" __global__ void __launch_bounds__(RunsAgent<KB, ValueBits<VB>::type, OpMax, false>::BLOCK_THREADS, \
                                         RunsAgent<KB, ValueBits<VB>::type, OpMax, false>::MIN_BLOCKS) \
        lookback_runs_k##KB##_v##VB(RunsParams p) {                                                       \
        RunsAgent<KB, ValueBits<VB>::type, OpMax, false>::run(p);                                          \
    }
#define LOOKBACK_RUNS_FOR_KEY(KB)   \
    LOOKBACK_RUNS_KERNEL(KB, 0)     \
    LOOKBACK_RUNS_KERNEL(KB, 1)     \
    LOOKBACK_RUNS_KERNEL(KB, 2)     \
    LOOKBACK_RUNS_KERNEL(KB, 4)     \
    LOOKBACK_RUNS_KERNEL(KB, 8)

LOOKBACK_KEY_BYTES(LOOKBACK_RUNS_FOR_KEY)

// The encodings for small grids, lookback_runs_small_k<key bytes>: the same agent with its small-grid
// tile shape and fewer resident threads (RunsAgent's SMALL_GRID; src/plan.rs picks it by the input size).
#define LOOKBACK_RUNS_SMALL_KERNEL(KB)                                                                     \
    extern "C" __global__ void __launch_bounds__(RunsAgent<KB, NoValues, OpMax, false, true>::BLOCK_THREADS, \
                                                 RunsAgent<KB, NoValues, OpMax, false, true>::MIN_BLOCKS) \
        lookback_runs_small_k##KB(RunsParams p) {                                                          \
        RunsAgent<KB, NoValues, OpMax, false, true>::run(p);                                               \
    }

LOOKBACK_KEY_BYTES(LOOKBACK_RUNS_SMALL_KERNEL)
