// The 16-bit float types, f16 (`__half`) and bf16 (`__nv_bfloat16`), from the CUDA headers.
//
// nvcc always has those headers. NVRTC has them only where the CUDA toolkit or the headers' wheels are
// installed; a run-time compile defines LOOKBACK_RTC_HALF when it found them and passed their folders. Without them the engine still compiles, for every other element type:
// LOOKBACK_HAS_HALF is 0 and the code that names the 16-bit types is left out.
#pragma once

#if !defined(__CUDACC_RTC__) || defined(LOOKBACK_RTC_HALF)
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define LOOKBACK_HAS_HALF 1
#else
#define LOOKBACK_HAS_HALF 0
#endif
