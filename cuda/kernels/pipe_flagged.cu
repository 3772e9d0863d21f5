// select_flagged on the persistent engine (the flags a side stream of each tile: the `flagged` row of
// tuning.cuh): one kernel per item size of LOOKBACK_PIPE_FLAGGED_BYTES, named lookback_pipe_flagged_b<bytes>
// (see pipe_select.cuh). Compaction by flags only moves items, so it moves them as bits and one kernel
// serves every type of that size.
#include "pipe_select.cuh"

#define LOOKBACK_PIPE_FLAGGED_KERNEL(BYTES) \
    LOOKBACK_PIPE_SELECT_ENTRY(lookback_pipe_flagged_b##BYTES,                                              \
                               lookback::PipeSelectWork<lookback::Bits<BYTES>::type, lookback::Algo::flagged>)

LOOKBACK_PIPE_FLAGGED_BYTES(LOOKBACK_PIPE_FLAGGED_KERNEL)
