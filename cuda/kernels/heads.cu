// Entry points of the register tile whose run heads write every output (classic/runs_at_heads.cuh):
// * lookback_heads_<op>_k4_<type>: reduce_by_key (mode RUNS_REDUCE) of the LOOKBACK_HEADS_TYPES values,
//   4-byte keys (LOOKBACK_HEADS_KEY_BYTES);
// * lookback_heads_runs_k<KB>_v4: unique_by_key (RUNS_UNIQUE) of 4-byte values, same keys;
// * lookback_heads_runs_k<KB>_v0: run-length and run-end encoding (RUNS_ENCODE, RUNS_ENDS), and
//   lookback_heads_non_trivial_k<KB>: the non-trivial runs (RUNS_NON_TRIVIAL), for the key sizes of
//   LOOKBACK_HEADS_ENCODE_KEY_BYTES (4, 8).
// The scans by key and other sizes run on classic/runs.cuh. build.rs names these kernels from the same
// lists: a kernel it names that is not here fails tests/kernel_table.rs.
#include "../classic/runs_at_heads.cuh"

using namespace lookback;

#define LOOKBACK_HEADS_KERNEL(OP, OPTYPE, NAME, CTYPE)                                              \
    extern "C" __global__ void __launch_bounds__(HeadsAgent<4, CTYPE, OPTYPE, true>::BLOCK_THREADS, \
                                                 HeadsAgent<4, CTYPE, OPTYPE, true>::MIN_BLOCKS)    \
        lookback_heads_##OP##_k4_##NAME(RunsParams p) {                                             \
        HeadsAgent<4, CTYPE, OPTYPE, true>::run(p);                                                 \
    }
#define LOOKBACK_HEADS_SUM(NAME, CTYPE, CLASS) LOOKBACK_HEADS_KERNEL(sum, OpSum, NAME, CTYPE)
#define LOOKBACK_HEADS_MIN(NAME, CTYPE, CLASS) LOOKBACK_HEADS_KERNEL(min, OpMin, NAME, CTYPE)
#define LOOKBACK_HEADS_MAX(NAME, CTYPE, CLASS) LOOKBACK_HEADS_KERNEL(max, OpMax, NAME, CTYPE)
LOOKBACK_HEADS_TYPES(LOOKBACK_HEADS_SUM)
LOOKBACK_HEADS_TYPES(LOOKBACK_HEADS_MIN)
LOOKBACK_HEADS_TYPES(LOOKBACK_HEADS_MAX)

// Value bytes 0: the encodings; otherwise values carried, not reduced (unique_by_key).
#define LOOKBACK_HEADS_RUNS_KERNEL(KB, VB)                                                                   \
    extern "C" __global__ void __launch_bounds__(HeadsAgent<KB, ValueBits<VB>::type, OpMax, false>::BLOCK_THREADS, \
                                                 HeadsAgent<KB, ValueBits<VB>::type, OpMax, false>::MIN_BLOCKS)    \
        lookback_heads_runs_k##KB##_v##VB(RunsParams p) {                                                    \
        HeadsAgent<KB, ValueBits<VB>::type, OpMax, false>::run(p);                                           \
    }
#define LOOKBACK_HEADS_UNIQUE_FOR_KEY(KB) LOOKBACK_HEADS_RUNS_KERNEL(KB, KB)
LOOKBACK_HEADS_KEY_BYTES(LOOKBACK_HEADS_UNIQUE_FOR_KEY)

#define LOOKBACK_HEADS_ENCODE_FOR_KEY(KB)                                                      \
    LOOKBACK_HEADS_RUNS_KERNEL(KB, 0)                                                          \
    extern "C" __global__ void __launch_bounds__(HeadsNonTrivial<KB>::BLOCK_THREADS,           \
                                                 HeadsNonTrivial<KB>::MIN_BLOCKS)              \
        lookback_heads_non_trivial_k##KB(RunsParams p) {                                       \
        HeadsNonTrivial<KB>::run(p);                                                           \
    }
LOOKBACK_HEADS_ENCODE_KEY_BYTES(LOOKBACK_HEADS_ENCODE_FOR_KEY)
