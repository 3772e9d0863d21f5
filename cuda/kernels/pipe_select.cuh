// Entry points shared by pipe_select.cu, pipe_partition.cu and pipe_flagged.cu (one file per kernel family,
// so nvcc compiles them in parallel): selection on the persistent engine (persistent/select_work.cuh), a
// kernel `NAME` running PipeEngine<WORK> (WORK is the variadic tail: a template-id's commas would split a
// macro argument). A launch in a mode the family was not compiled for traps
// (WORK::handles; the host never makes one). sm_90 or newer only: on older architectures the body traps,
// and the host never launches it there.
#pragma once
#include "../persistent/select_work.cuh"

#if __CUDA_ARCH__ >= 900
#define LOOKBACK_PIPE_SELECT_BODY(...)         \
    if (!__VA_ARGS__::handles(p)) __trap();    \
    lookback::PipeEngine<__VA_ARGS__>::run(p);
#else
#define LOOKBACK_PIPE_SELECT_BODY(...) __trap();
#endif

#define LOOKBACK_PIPE_SELECT_ENTRY(NAME, ...)                                                               \
    extern "C" __global__ void __launch_bounds__(lookback::PipeEngine<__VA_ARGS__>::THREADS, 1)             \
        NAME(const __grid_constant__ lookback::SelectParams p) {                                            \
        LOOKBACK_PIPE_SELECT_BODY(__VA_ARGS__)                                                              \
    }
