// Kernel definitions shared by pipe_by_key_sum.cu, pipe_by_key_min.cu and pipe_by_key_max.cu (one file per
// operator, so nvcc compiles them in parallel): the keyed primitives on the persistent engine,
// lookback_pipe_by_key_<op>_k<key bytes>_<value type>, for the same triples as the classic by_key
// kernels. The mode picks the Work: RUNS_REDUCE is reduce_by_key (persistent/runs_work.cuh), the scans by key
// are persistent/scan_by_key_work.cuh; both engines have the same block (the runs row of tuning.cuh) and each
// its own static shared memory. sm_90 or newer only: on older architectures the body traps, and the host
// never launches it there.
#pragma once
#include "../persistent/scan_by_key_work.cuh"

#if __CUDA_ARCH__ >= 900
#define LOOKBACK_PIPE_BY_KEY_BODY(OPTYPE, KB, CTYPE)                                                       \
    static_assert(lookback::PipeRunsAgent<KB, CTYPE, lookback::OPTYPE, true>::THREADS ==                     \
                  lookback::PipeScanByKeyAgent<KB, CTYPE, lookback::OPTYPE>::THREADS);                      \
    if (p.mode == lookback::RUNS_REDUCE) lookback::PipeRunsAgent<KB, CTYPE, lookback::OPTYPE, true>::run(p); \
    else lookback::PipeScanByKeyAgent<KB, CTYPE, lookback::OPTYPE>::run(p);
#else
#define LOOKBACK_PIPE_BY_KEY_BODY(OPTYPE, KB, CTYPE) __trap();
#endif

#define LOOKBACK_PIPE_BY_KEY_KERNEL(OP, OPTYPE, KB, NAME, CTYPE)                                          \
    extern "C" __global__ void __launch_bounds__(lookback::PipeRunsAgent<KB, CTYPE, lookback::OPTYPE, true>::THREADS, 1) \
        lookback_pipe_by_key_##OP##_k##KB##_##NAME(const __grid_constant__ lookback::RunsParams p) {          \
        LOOKBACK_PIPE_BY_KEY_BODY(OPTYPE, KB, CTYPE)                                                         \
    }

// With LOOKBACK_ALL_PERSISTENT_RUNS, every value type for each key size of LOOKBACK_KEY_BYTES; otherwise
// the rows Engine::Auto takes, 1-byte keys with the value types of LOOKBACK_PIPE_BY_KEY_K1_TYPES
// (types.cuh says why).
#ifdef LOOKBACK_ALL_PERSISTENT_RUNS
#define LOOKBACK_PIPE_BY_KEY_KERNELS(OP, OPTYPE)                                                           \
    LOOKBACK_TYPES(LOOKBACK_PIPE_BY_KEY_##OP##_K1)                                                         \
    LOOKBACK_TYPES(LOOKBACK_PIPE_BY_KEY_##OP##_K2)                                                         \
    LOOKBACK_TYPES(LOOKBACK_PIPE_BY_KEY_##OP##_K4)                                                         \
    LOOKBACK_TYPES(LOOKBACK_PIPE_BY_KEY_##OP##_K8)
#else
#define LOOKBACK_PIPE_BY_KEY_KERNELS(OP, OPTYPE) LOOKBACK_PIPE_BY_KEY_K1_TYPES(LOOKBACK_PIPE_BY_KEY_##OP##_K1)
#endif
