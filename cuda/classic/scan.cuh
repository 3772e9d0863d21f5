// One tile of a device-wide scan: load, publish the aggregate, look back, scan, store.
//
// The tile's aggregate is reduced from the items as they arrive in registers (striped order), so it is
// published as early as possible: successors wait on it. While warp 0 looks back, the other warps reduce
// their own items from shared memory; the block scan then seeds every thread, and the scanned tile goes
// back through shared memory to coalesced 16-byte stores.
//
// In place (`out == in`) is safe: a tile reads only its own items, all of them before the first barrier,
// and writes only those same items, after it.
#pragma once
#include "../core/block_scan.cuh"
#include "../core/lookback.cuh"
#include "../core/ops.cuh"
#include "../core/params.cuh"
#include "../core/tile_io.cuh"
#include "../core/tuning.cuh"

namespace lookback {

template <class T, class Op> struct ScanAgent {
    using Shape = typename Tuning<Algo::scan, sizeof(T)>::Shape;
    static constexpr int BLOCK_THREADS = Shape::BLOCK_THREADS;
    static constexpr int WARPS = BLOCK_THREADS / 32;
    using IO = TileIO<T, BLOCK_THREADS, Shape::CHUNKS_PER_THREAD>;
    using A = typename Acc<T>::type;
    // Scan status carries nothing but its value: relaxed accesses suffice (tile_state.cuh).
    using State = StateFor<A, false>;

    struct Storage {
        uint4 tile[IO::TILE_CHUNKS];
        BlockScanStorage<A, WARPS> scan;
        A warp_aggregates[WARPS];
        A exclusive;
        TileTicket ticket;
    };

    static __device__ __forceinline__ void run(const ScanParams& p) {
        __shared__ Storage s;
        const LookbackParams& lb = p.lb;
        if (threadIdx.x == 0) take_tile(s.ticket, lb, p.n, {p.in, p.n * sizeof(T), IO::TILE_ITEMS * sizeof(T)});
        __syncthreads();
        const BlockTile bt = block_tile(s.ticket, lb);
        // Past the items, and an empty launch (a device count of 0): nothing to scan.
        if (bt.idle(IO::TILE_ITEMS) || bt.n == 0) return;
        const uint64_t tile = bt.tile;
        const uint64_t start = tile * (uint64_t)IO::TILE_ITEMS;
        const int valid = (int)min((uint64_t)IO::TILE_ITEMS, bt.n - start);
        const T* in = static_cast<const T*>(p.in) + start;
        T* out = static_cast<T*>(p.out) + start;
        const bool vector_io = valid == IO::TILE_ITEMS && IO::aligned(p.in) && IO::aligned(p.out);
        const A identity = Op::template identity<A>();

        // 1. Load, folding the items into a per-thread partial aggregate as they arrive.
        A partial = identity;
        auto fold = [&](T x) { partial = Op::apply(partial, Acc<T>::load(x)); };
        if (vector_io) IO::load_full(in, s.tile, fold);
        else IO::load_partial(in, valid, Acc<T>::store(identity), s.tile, fold);
        const A warp_agg = warp_reduce<Op>(partial);
        if (lane_id() == 0) s.warp_aggregates[warp_id()] = warp_agg;
        __syncthreads();

        // 2. Publish: tile 0 knows its inclusive prefix at once; the others publish their aggregate.
        A aggregate = identity;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) aggregate = Op::apply(aggregate, s.warp_aggregates[w]);
        const A seed = p.exclusive ? load_seed<T>(p.seed) : identity;
        const typename State::type state = State::make(bt.status, bt.epoch);
        if (threadIdx.x == 0) state.publish(tile, tile == 0 ? STATUS_P : STATUS_A, tile == 0 ? Op::apply(seed, aggregate) : aggregate);

        // 3. Each thread reduces its own consecutive items (tile order).
        A own = identity;
#pragma unroll
        for (int c = 0; c < Shape::CHUNKS_PER_THREAD; ++c) {
            const typename IO::Chunk chunk = IO::own_chunk(s.tile, c);
#pragma unroll
            for (int e = 0; e < IO::ITEMS_PER_CHUNK; ++e) own = Op::apply(own, Acc<T>::load(chunk.items[e]));
        }

        // 4. Warp 0 resolves the tile's exclusive prefix and publishes its inclusive prefix.
        if (warp_id() == 0) {
            A exclusive = seed;
            if (tile > 0) {
                exclusive = resolve_prefix<Op, A>(state, tile, lb, aggregate);
            }
            if (lane_id() == 0) s.exclusive = exclusive;
        }

        // 5. Block scan of the per-thread totals (its barrier also publishes s.exclusive), then rewrite
        //    the thread's items with their scanned values.
        A block_total;
        const A thread_prefix = block_exclusive_scan<Op>(own, block_total, s.scan);
        A running = Op::apply(s.exclusive, thread_prefix);
#pragma unroll
        for (int c = 0; c < Shape::CHUNKS_PER_THREAD; ++c) {
            typename IO::Chunk& chunk = IO::own_chunk(s.tile, c);
            typename IO::Chunk result;
#pragma unroll
            for (int e = 0; e < IO::ITEMS_PER_CHUNK; ++e) {
                const A x = Acc<T>::load(chunk.items[e]);
                if (p.exclusive) {
                    result.items[e] = Acc<T>::store(running);
                    running = Op::apply(running, x);
                } else {
                    running = Op::apply(running, x);
                    result.items[e] = Acc<T>::store(running);
                }
            }
            chunk.vec = result.vec;
        }
        __syncthreads();

        // 6. Store.
        if (vector_io) IO::store_full(out, s.tile);
        else IO::store_partial(out, valid, s.tile);
    }
};

}  // namespace lookback
