// The partitions on the persistent engine (reversed, split and stable, plus the stable partition's count
// pass: the `partition` row of tuning.cuh, without writer warps): one kernel per element type, named
// lookback_pipe_partition_<type> (see pipe_select.cuh).
#include "pipe_select.cuh"

#define LOOKBACK_PIPE_PARTITION_KERNEL(NAME, CTYPE, CLASS) \
    LOOKBACK_PIPE_SELECT_ENTRY(lookback_pipe_partition_##NAME, lookback::PipeSelectWork<CTYPE, lookback::Algo::partition>)

LOOKBACK_TYPES(LOOKBACK_PIPE_PARTITION_KERNEL)
