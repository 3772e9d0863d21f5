// Device helpers shared by every agent: thread ids, and the memory-ordering primitives of the look-back.
//
// Status words are only ever touched through these functions. They are "strong" operations at GPU scope
// (PTX memory model): never the weak, possibly L1-cached `ld.global`, and never the non-coherent
// `ld.global.nc` / `__ldg` path, which may return a stale status forever (invariant 2 of DESIGN.md).
#pragma once
#include <cstdint>

namespace lookback {

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }
__device__ __forceinline__ unsigned warp_id() { return threadIdx.x >> 5; }

template <class I> __host__ __device__ constexpr I ceil_div(I a, I b) { return (a + b - 1) / b; }

// 64-bit loads and stores of status words.
__device__ __forceinline__ uint64_t ld_relaxed(const uint64_t* p) {
    uint64_t v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ uint64_t ld_acquire(const uint64_t* p) {
    uint64_t v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_relaxed(uint64_t* p, uint64_t v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void st_release(uint64_t* p, uint64_t v) {
    asm volatile("st.release.gpu.global.u64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
}

// Orders this thread's later loads after its earlier ones (the acquire half of a relaxed poll).
__device__ __forceinline__ void fence_acquire() { asm volatile("fence.acq_rel.gpu;" : : : "memory"); }

// Back-off between polls of a status word that is not ready yet.
__device__ __forceinline__ void backoff(unsigned ns) {
#if __CUDA_ARCH__ >= 700
    if (ns) __nanosleep(ns);
#endif
}

}  // namespace lookback
