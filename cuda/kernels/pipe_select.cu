// Compaction on the persistent engine (select_if, unique, count_if: the `select` row of tuning.cuh, with
// writer warps): one kernel per element type, named lookback_pipe_select_<type> (see pipe_select.cuh).
#include "pipe_select.cuh"

#define LOOKBACK_PIPE_SELECT_KERNEL(NAME, CTYPE, CLASS) \
    LOOKBACK_PIPE_SELECT_ENTRY(lookback_pipe_select_##NAME, lookback::PipeSelectWork<CTYPE>)

LOOKBACK_TYPES(LOOKBACK_PIPE_SELECT_KERNEL)
