// Device helpers shared by every agent: thread ids, and the memory-ordering primitives of the look-back.
//
// Status words are only ever touched through these functions. They are "strong" operations at GPU scope
// (PTX memory model): never the weak, possibly L1-cached `ld.global`, and never the non-coherent
// `ld.global.nc` / `__ldg` path, which may return a stale status forever (invariant 2 of DESIGN.md).
#pragma once
#include "std_subset.cuh"

// Diagnostic hook: LB_TRACE(tile, point) marks that this thread reached stage `point` of tile `tile`
// (benches/probes/trace_tiles.cu defines it to record a timestamp). Compiled out of the library.
#ifndef LB_TRACE
#define LB_TRACE(tile, point) ((void)0)
#endif

namespace lookback {

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }
__device__ __forceinline__ unsigned warp_id() { return threadIdx.x >> 5; }

template <class I> __host__ __device__ constexpr I ceil_div(I a, I b) { return (a + b - 1) / b; }

// Shared memory of one SM of the architecture being compiled (CUDA C++ Programming Guide, technical
// specifications per compute capability), and what each resident block costs on top of its own: the
// most blocks of a kernel an SM can hold whatever its registers. The host pass takes the H200's.
__host__ __device__ constexpr int sm_shared_bytes() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 870)
    return 164 * 1024;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    return 100 * 1024;
#else
    return 228 * 1024;
#endif
}
constexpr int BLOCK_RESERVED_SHARED_BYTES = 1024;
template <class Storage> __host__ __device__ constexpr int blocks_per_sm_by_shared_memory() {
    return sm_shared_bytes() / (int)(sizeof(Storage) + BLOCK_RESERVED_SHARED_BYTES);
}
// Blocks of `block_threads` threads an SM holds when the kernel is compiled for `threads` resident
// threads (its __launch_bounds__), never more than shared memory allows.
template <class Storage> __host__ __device__ constexpr int resident_blocks(int threads, int block_threads) {
    const int by_threads = threads / block_threads;
    const int by_shared_memory = blocks_per_sm_by_shared_memory<Storage>();
    return by_threads < by_shared_memory ? by_threads : by_shared_memory;
}

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

// A gpu-scope fence. Followed by a strong (relaxed) store of the same thread it makes a release pattern
// (PTX memory model): every memory access before the fence, and through a barrier every access of the
// block before that barrier, is ordered before the store.
__device__ __forceinline__ void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// 16-byte status entries (tile_state.cuh, WideState): one vector access of two 64-bit words. PTX makes
// each 64-bit element single-copy atomic, not the pair (a 128-bit vector access is two accesses: CUB issue
// #612), so the entry's format must detect a torn read itself. One instruction, one L2 round trip. (The
// native 128-bit atomics of sm_90 are atomic as a pair, but an atomic read is a read-modify-write that L2
// serializes per address: with every block's look-ahead reading the same newest entries, the i64 scan on
// the H200 ran at half the speed of these loads; benches/log, 2026-11-30.)
struct U64Pair {
    uint64_t lo, hi;
};
template <bool ACQUIRE> __device__ __forceinline__ U64Pair ld_pair(const uint64_t* p) {
    U64Pair w;
    if constexpr (ACQUIRE)
        asm volatile("ld.acquire.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(w.lo), "=l"(w.hi) : "l"(p) : "memory");
    else
        asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(w.lo), "=l"(w.hi) : "l"(p) : "memory");
    return w;
}
template <bool RELEASE> __device__ __forceinline__ void st_pair(uint64_t* p, U64Pair w) {
    if constexpr (RELEASE)
        asm volatile("st.release.gpu.global.v2.u64 [%0], {%1, %2};" : : "l"(p), "l"(w.lo), "l"(w.hi) : "memory");
    else
        asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" : : "l"(p), "l"(w.lo), "l"(w.hi) : "memory");
}

// Back-off between polls of a status word that is not ready yet.
__device__ __forceinline__ void backoff(unsigned ns) {
#if __CUDA_ARCH__ >= 700
    if (ns) __nanosleep(ns);
#endif
}

}  // namespace lookback
