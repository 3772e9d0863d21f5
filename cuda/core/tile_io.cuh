// Moving a tile between global memory and a shared-memory buffer, coalesced.
//
// Global side: a full tile with 16-byte aligned pointers moves as 16-byte vectors, warp-striped (thread t
// handles chunks t, t + BLOCK_THREADS, …), so each warp instruction touches 512 contiguous bytes. The
// last, partial tile and unaligned buffers move item by item, still striped (coalesced at item width).
//
// Shared side: thread t owns the CHUNKS_PER_THREAD consecutive chunks t*CPT … t*CPT+CPT-1 (its items in
// order), so the sequential per-thread work of an agent reads its own items. Chunk g is stored at
// position g ^ ((g >> 3) & 7): eight consecutive chunks (one quarter-warp of the striped global access)
// land in eight different bank groups, and so do chunk c of eight consecutive threads (the per-thread
// access) whenever CPT is 1, 2, 4 or 8. Both sides are then free of bank conflicts.
#pragma once
#include "common.cuh"

namespace lookback {

template <class T, int BLOCK_THREADS, int CHUNKS_PER_THREAD> struct TileIO {
    static_assert(CHUNKS_PER_THREAD == 1 || CHUNKS_PER_THREAD == 2 || CHUNKS_PER_THREAD == 4 ||
                      CHUNKS_PER_THREAD == 8,
                  "the swizzle is conflict-free for 1, 2, 4 or 8 chunks per thread");
    using Item = T;
    static constexpr int THREADS = BLOCK_THREADS;
    static constexpr int CHUNKS = CHUNKS_PER_THREAD;  // per thread
    static constexpr int ITEMS_PER_CHUNK = 16 / sizeof(T);
    static constexpr int ITEMS_PER_THREAD = CHUNKS_PER_THREAD * ITEMS_PER_CHUNK;
    static constexpr int TILE_CHUNKS = BLOCK_THREADS * CHUNKS_PER_THREAD;
    static constexpr int TILE_ITEMS = TILE_CHUNKS * ITEMS_PER_CHUNK;

    union Chunk {
        uint4 vec;
        T items[ITEMS_PER_CHUNK];
    };

    static __device__ __forceinline__ int slot(int chunk) { return chunk ^ ((chunk >> 3) & 7); }
    static __device__ __forceinline__ T& item_at(uint4* smem, int item) {
        return reinterpret_cast<Chunk*>(smem + slot(item / ITEMS_PER_CHUNK))->items[item % ITEMS_PER_CHUNK];
    }
    // Chunk c (0 ≤ c < CPT) of this thread's own items.
    static __device__ __forceinline__ Chunk& own_chunk(uint4* smem, int c) {
        return *reinterpret_cast<Chunk*>(smem + slot((int)threadIdx.x * CHUNKS_PER_THREAD + c));
    }

    static __device__ __forceinline__ bool aligned(const void* p) { return ((uintptr_t)p & 15) == 0; }

    // Loads TILE_ITEMS items (16-byte aligned `in`) into `smem`, calling `each(item)` on every item as it
    // arrives in registers (in striped, not tile, order).
    template <class F> static __device__ __forceinline__ void load_full(const T* in, uint4* smem, F&& each) {
        const uint4* src = reinterpret_cast<const uint4*>(in);
        Chunk c[CHUNKS_PER_THREAD];
#pragma unroll
        for (int i = 0; i < CHUNKS_PER_THREAD; ++i) c[i].vec = src[i * BLOCK_THREADS + threadIdx.x];
#pragma unroll
        for (int i = 0; i < CHUNKS_PER_THREAD; ++i) {
            smem[slot(i * BLOCK_THREADS + threadIdx.x)] = c[i].vec;
#pragma unroll
            for (int e = 0; e < ITEMS_PER_CHUNK; ++e) each(c[i].items[e]);
        }
    }

    // Loads the first `valid` items of a tile item by item; the rest of the tile is filled with `fill`
    // (the operator's identity, so padding never changes a reduction).
    template <class F>
    static __device__ __forceinline__ void load_partial(const T* in, int valid, T fill, uint4* smem, F&& each) {
#pragma unroll 4
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
            const int item = i * BLOCK_THREADS + (int)threadIdx.x;
            const T x = item < valid ? in[item] : fill;
            item_at(smem, item) = x;
            if (item < valid) each(x);
        }
    }

    static __device__ __forceinline__ void store_full(T* out, const uint4* smem) {
        uint4* dst = reinterpret_cast<uint4*>(out);
#pragma unroll
        for (int i = 0; i < CHUNKS_PER_THREAD; ++i) {
            const int g = i * BLOCK_THREADS + (int)threadIdx.x;
            dst[g] = smem[slot(g)];
        }
    }

    static __device__ __forceinline__ void store_partial(T* out, int valid, uint4* smem) {
#pragma unroll 4
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
            const int item = i * BLOCK_THREADS + (int)threadIdx.x;
            if (item < valid) out[item] = item_at(smem, item);
        }
    }
};

}  // namespace lookback
