// Device-wide reductions of built-in operators and of arg_min / arg_max: one launch, no look-back.
//
// A reduction needs no order between tiles, only a fixed grouping, so it does not pay for the scan's chain
// of tile prefixes. The host launches G = min(tiles, MAX_SHARES) blocks (src/plan.rs), a number fixed by
// the item count alone. Block b owns share b: the tiles b, b + G, b + 2G, … (so the shares stream through
// memory together). Each thread folds the same items of every tile of its share in the same order: its
// chunks t, t + BLOCK_THREADS, … of the tile, each chunk's items in order. The block then reduces its
// threads' values by a fixed tree (warp_reduce, then the warps in order) and stores the share's value in
// the workspace (ReduceParams::partials). The block that finishes last — it sees the count of finished
// blocks reach G — folds the G values by another fixed tree and writes the total.
//
// Every grouping above depends only on n, G and the tile shape, never on timing or on the SM count, and
// the partial tile and unaligned inputs are read item by item in the very same order as full tiles are
// read by vectors. So a float sum is the same bits on every run, on every GPU that runs this code, and
// for every alignment of the input: the reductions are deterministic without a setting.
//
// The operators must combine in any order: the built-in ones commute, and arg_min / arg_max pick an item
// by a total order refined by the index, whatever the grouping (core/arg_policy.cuh). The index of each
// item is its position, which the striped fold knows. A thread folds its items one by one in increasing
// index order (the policy's fold_next, or fold_chunk for a whole chunk), which lets arg_min skip the
// tie-break by index there.
//
// Launch state: the count of finished blocks lives in the workspace and is zero between launches (the
// last block puts it back), so a launch captured in a CUDA graph replays correctly.
#pragma once
#include "../core/params.cuh"
#include "../core/scan_policy.cuh"
#include "../core/tile_io.cuh"
#include "../core/warp_scan.cuh"

namespace lookback {

template <class P> struct ReduceAgent {
    using In = typename P::In;
    using A = typename P::A;
    using Op = typename P::Op;
    using Row = typename Tuning<Algo::reduce, sizeof(In)>::Shape;
    static constexpr int BLOCK_THREADS = Row::BLOCK_THREADS;
    static constexpr int CHUNKS = Row::CHUNKS_PER_THREAD;
    using IO = TileIO<In, BLOCK_THREADS, CHUNKS>;
    static constexpr int PER_CHUNK = IO::ITEMS_PER_CHUNK;
    static constexpr int TILE_ITEMS = IO::TILE_ITEMS;
    static constexpr int WARPS = BLOCK_THREADS / 32;
    // A share's value travels in one 16-byte entry of the workspace.
    static_assert(sizeof(A) <= 16, "reduction accumulators of at most 16 bytes");

    struct Storage {
        A warp_values[WARPS];
        bool last;
    };

    // The index of item e of chunk c of this thread in tile `tile`.
    static __device__ __forceinline__ uint64_t index_of(uint64_t tile, int c, int e) {
        return tile * (uint64_t)TILE_ITEMS + (uint64_t)((c * BLOCK_THREADS + (int)threadIdx.x) * PER_CHUNK + e);
    }

    // A whole tile of a 16-byte aligned input: all chunks in flight before the first combine.
    static __device__ __forceinline__ A fold_full(const In* in, uint64_t tile, A acc) {
        const uint4* src = reinterpret_cast<const uint4*>(in + tile * (uint64_t)TILE_ITEMS);
        typename IO::Chunk c[CHUNKS];
#pragma unroll
        for (int i = 0; i < CHUNKS; ++i) c[i].vec = __ldg(src + i * BLOCK_THREADS + threadIdx.x);
#pragma unroll
        for (int i = 0; i < CHUNKS; ++i) acc = P::fold_chunk(acc, c[i], index_of(tile, i, 0));
        return acc;
    }

    // The same items in the same order, one by one, those below n only: the last tile, and any tile of an
    // unaligned input.
    static __device__ __forceinline__ A fold_items(const In* in, uint64_t tile, uint64_t n, A acc) {
#pragma unroll
        for (int i = 0; i < CHUNKS; ++i) {
#pragma unroll
            for (int e = 0; e < PER_CHUNK; ++e) {
                const uint64_t index = index_of(tile, i, e);
                if (index < n) acc = P::fold_next(acc, in[index], index);
            }
        }
        return acc;
    }

    // The block's values folded by a fixed tree: each warp in lane order, then the warps in order. Thread 0
    // gets the result.
    static __device__ __forceinline__ A block_reduce(Storage& s, A x) {
        const A warp_value = warp_reduce<Op>(x);
        if (lane_id() == 0) s.warp_values[warp_id()] = warp_value;
        __syncthreads();
        A total = s.warp_values[0];
        if (threadIdx.x == 0) {
#pragma unroll
            for (int w = 1; w < WARPS; ++w) total = Op::apply(total, s.warp_values[w]);
        }
        return total;
    }

    // A share's value in its 16-byte entry: written by one block, read by the last one after the count of
    // finished blocks (release and acquire through the fences around that count's atomic).
    static __device__ __forceinline__ void store_partial(uint64_t* entry, A a) {
        U64Pair w{0, 0};
        __builtin_memcpy(&w, &a, sizeof(A));
        st_pair<false>(entry, w);
    }
    static __device__ __forceinline__ A load_partial(const uint64_t* entry) {
        const U64Pair w = ld_pair<false>(entry);
        A a;
        __builtin_memcpy(&a, &w, sizeof(A));
        return a;
    }

    static __device__ __forceinline__ void run(const ReduceParams& p) {
        __shared__ Storage s;
        const In* in = static_cast<const In*>(p.in);
        // A call sized on the device reduces its count's items (never more than the launch was sized for).
        const uint64_t n = p.items ? min(*p.items, p.n) : p.n;
        const uint64_t shares = gridDim.x, share = blockIdx.x;
        const uint64_t full_tiles = n / TILE_ITEMS;
        const uint64_t tiles = ceil_div(n, (uint64_t)TILE_ITEMS);

        A acc = Op::template identity<A>();
        if (IO::aligned(p.in)) {
            for (uint64_t tile = share; tile < full_tiles; tile += shares) acc = fold_full(in, tile, acc);
            // The last, partial tile belongs to the share the striding gives it.
            if (full_tiles < tiles && full_tiles % shares == share) acc = fold_items(in, full_tiles, n, acc);
        } else {
            for (uint64_t tile = share; tile < tiles; tile += shares) acc = fold_items(in, tile, n, acc);
        }
        const A value = block_reduce(s, acc);

        if (threadIdx.x == 0) {
            store_partial(p.partials + 2 * share, value);
            __threadfence();
            s.last = atomicAdd(reinterpret_cast<unsigned long long*>(p.finished), 1ull) == shares - 1;
        }
        __syncthreads();
        if (!s.last) return;
        __threadfence();

        // The last block: the shares' values, thread t folding shares t, t + BLOCK_THREADS, … in order.
        A total = Op::template identity<A>();
        for (uint64_t i = threadIdx.x; i < shares; i += BLOCK_THREADS) total = Op::apply(total, load_partial(p.partials + 2 * i));
        __syncthreads();  // the first block_reduce's reads of s.warp_values are done
        total = block_reduce(s, total);
        if (threadIdx.x == 0) {
            *static_cast<typename P::Total*>(p.out) = P::total(total);
            // Zero again for the next launch on this workspace (stream order makes it visible there).
            st_relaxed(p.finished, 0);
        }
    }
};

}  // namespace lookback
