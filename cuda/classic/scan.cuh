// One tile of a device-wide scan: load, publish the aggregate, look back, scan, store.
//
// The scan is described by a policy (core/scan_policy.cuh): input, accumulator and output types, the
// transform on load, the operator and the conversion on store.
//
// Commutative policies (the built-in operators) reduce the tile's aggregate from the items as they arrive
// in registers (striped order), so it is published as early as possible: successors wait on it. While
// warp 0 looks back, the other warps reduce their own items from shared memory; the block scan then
// seeds every thread, and the scanned tile goes back through shared memory to coalesced 16-byte stores.
// Other policies (user operators, which may not commute) reduce in tile order instead: each thread its
// own consecutive items, then the warps' totals in lane and warp order, one barrier later.
//
// Input and output items may differ in size. The tile then holds TILE_ITEMS of either layout (the buffer
// is sized for the larger); each thread keeps its scanned values in registers until every thread has
// read its input items, then writes them in the output layout.
//
// In place (`out == in`, same item size) is safe: a tile reads only its own items, all of them before
// the first barrier, and writes only those same items, after it.
//
// A reduction (ScanParams::reduce: user operators; classic/reduce.cuh takes the built-in ones) stops after the look-back:
// every tile still publishes its aggregate and resolves its prefix (that chain is how the total reaches
// the last tile), and the tile holding the last item writes seed ⊕ all items to out[0]. Its other warps
// leave once the aggregate is known, so a reduction reads each item once and writes one value.
#pragma once
#include "../core/block_scan.cuh"
#include "../core/lookback.cuh"
#include "../core/ops.cuh"
#include "../core/params.cuh"
#include "../core/scan_policy.cuh"
#include "../core/tile_io.cuh"
#include "../core/tuning.cuh"

namespace lookback {

template <class P> struct ScanAgent {
    using In = typename P::In;
    using Out = typename P::Out;
    using A = typename P::A;
    using Op = typename P::Op;
    using Shape = ScanShape<sizeof(In), sizeof(Out)>;
    static constexpr int BLOCK_THREADS = Shape::BLOCK_THREADS;
    static constexpr int WARPS = BLOCK_THREADS / 32;
    using IO = TileIO<In, BLOCK_THREADS, Shape::IN_CHUNKS>;
    using OutIO = TileIO<Out, BLOCK_THREADS, Shape::OUT_CHUNKS>;
    static constexpr bool SAME_LAYOUT = sizeof(In) == sizeof(Out);
    static constexpr int TILE_CHUNKS = IO::TILE_CHUNKS > OutIO::TILE_CHUNKS ? IO::TILE_CHUNKS : OutIO::TILE_CHUNKS;
    // Scan status carries nothing but its value: relaxed accesses suffice (tile_state.cuh).
    using State = StateFor<A, false>;

    struct Storage {
        uint4 tile[TILE_CHUNKS];
        BlockScanStorage<A, WARPS> scan;
        A warp_aggregates[WARPS];
        A exclusive;
        TileTicket ticket;
    };

    // This thread's own consecutive items (tile order) reduced; past `valid`, padding is skipped unless it
    // is the identity. `start`: the tile's first item, for policies whose items carry their index.
    static __device__ __forceinline__ A reduce_own(uint4* tile, uint64_t start, int valid) {
        A own = Op::template identity<A>();
#pragma unroll
        for (int c = 0; c < Shape::IN_CHUNKS; ++c) {
            const typename IO::Chunk chunk = IO::own_chunk(tile, c);
#pragma unroll
            for (int e = 0; e < IO::ITEMS_PER_CHUNK; ++e) {
                const int item = (int)threadIdx.x * IO::ITEMS_PER_THREAD + c * IO::ITEMS_PER_CHUNK + e;
                const A x = P::load_at(chunk.items[e], start + (uint64_t)item);
                if constexpr (P::PAD_IS_IDENTITY) own = Op::apply(own, x);
                else if (item < valid) own = Op::apply(own, x);
            }
        }
        return own;
    }

    static __device__ __forceinline__ void run(const ScanParams& p) {
        __shared__ Storage s;
        const LookbackParams& lb = p.lb;
        if (threadIdx.x == 0) take_tile(s.ticket, lb, p.n, {p.in, p.n * sizeof(In), IO::TILE_ITEMS * sizeof(In)});
        __syncthreads();
        const BlockTile bt = block_tile(s.ticket, lb);
        // Past the items, and an empty launch (a device count of 0): nothing to scan. An empty reduction
        // still has a result: the seed, or the identity.
        if (bt.idle(IO::TILE_ITEMS) || bt.n == 0) {
            if (p.reduce && bt.n == 0 && bt.tile == 0 && threadIdx.x == 0)
                write_total(p, p.exclusive != SCAN_INCLUSIVE ? P::seed(p.seed) : Op::template identity<A>());
            return;
        }
        const uint64_t tile = bt.tile;
        const uint64_t start = tile * (uint64_t)IO::TILE_ITEMS;
        const int valid = (int)min((uint64_t)IO::TILE_ITEMS, bt.n - start);
        const In* in = static_cast<const In*>(p.in) + start;
        Out* out = static_cast<Out*>(p.out) + start;
        // A reduction writes one value, wherever `out` points.
        const bool reduce = p.reduce;
        const bool vector_io = valid == IO::TILE_ITEMS && IO::aligned(p.in) && (reduce || IO::aligned(p.out));
        const A identity = Op::template identity<A>();

        // 1. Load; a commutative policy folds the items into a per-thread partial aggregate as they arrive.
        A partial = identity;
        auto fold = [&](In x) {
            if constexpr (P::COMMUTATIVE) partial = Op::apply(partial, P::load(x));
        };
        if (vector_io) IO::load_full(in, s.tile, fold);
        else IO::load_partial(in, valid, P::pad(), s.tile, fold);

        // 2. Publish: tile 0 knows its inclusive prefix at once; the others publish their aggregate.
        //    Then (3) each thread reduces its own consecutive items (tile order): after publishing when
        //    the aggregate came from the striped fold, before it (as its source) otherwise.
        A own = identity;
        if constexpr (P::COMMUTATIVE) {
            const A warp_agg = warp_reduce<Op>(partial);
            if (lane_id() == 0) s.warp_aggregates[warp_id()] = warp_agg;
        } else {
            __syncthreads();
            own = reduce_own(s.tile, start, valid);
            const A warp_agg = warp_reduce<Op>(own);
            if (lane_id() == 0) s.warp_aggregates[warp_id()] = warp_agg;
        }
        __syncthreads();
        A aggregate = identity;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) aggregate = Op::apply(aggregate, s.warp_aggregates[w]);
        const A seed = p.exclusive != SCAN_INCLUSIVE ? P::seed(p.seed) : identity;
        const typename State::type state = State::make(bt.status, bt.epoch);
        if (threadIdx.x == 0) state.publish(tile, tile == 0 ? STATUS_P : STATUS_A, tile == 0 ? Op::apply(seed, aggregate) : aggregate);
        if (reduce) {
            if (warp_id() == 0) {
                const A exclusive = tile > 0 ? resolve_prefix<Op, A>(state, tile, lb, aggregate) : seed;
                if (lane_id() == 0 && start + (uint64_t)valid == bt.n) write_total(p, Op::apply(exclusive, aggregate));
            }
            return;
        }
        scan_rest(p, s, state, tile, valid, vector_io, out, seed, aggregate, own);
    }

    // A reduction's result, by the one thread that has it.
    static __device__ __forceinline__ void write_total(const ScanParams& p, A total) {
        *static_cast<typename P::Total*>(p.out) = P::total(total);
    }

    // Steps 3-6 of a scan, after the tile's aggregate is published. `own`: this thread's items reduced,
    // when the policy does not commute (else reduced here).
    template <class State_>
    static __device__ __forceinline__ void scan_rest(const ScanParams& p, Storage& s, const State_& state, uint64_t tile,
                                                     int valid, bool vector_io, Out* out, A seed, A aggregate, A own) {
        const LookbackParams& lb = p.lb;
        const uint64_t start = tile * (uint64_t)IO::TILE_ITEMS;
        if constexpr (P::COMMUTATIVE) own = reduce_own(s.tile, start, valid);

        // 4. Warp 0 resolves the tile's exclusive prefix and publishes its inclusive prefix.
        if (warp_id() == 0) {
            A exclusive = seed;
            if (tile > 0) {
                exclusive = resolve_prefix<Op, A>(state, tile, lb, aggregate);
            }
            if (lane_id() == 0) s.exclusive = exclusive;
        }

        // 5. Block scan of the per-thread totals (its barrier also publishes s.exclusive), then rewrite
        //    the thread's items with their scanned values. Padding past `valid` comes after every item
        //    of the tile, so what it scans to is never stored.
        A block_total;
        const A thread_prefix = block_exclusive_scan<Op>(own, block_total, s.scan);
        A running = Op::apply(s.exclusive, thread_prefix);
        if constexpr (SAME_LAYOUT) {
#pragma unroll
            for (int c = 0; c < Shape::IN_CHUNKS; ++c) {
                typename IO::Chunk& chunk = IO::own_chunk(s.tile, c);
                typename OutIO::Chunk result;
#pragma unroll
                for (int e = 0; e < IO::ITEMS_PER_CHUNK; ++e) result.items[e] = scan_item(p.exclusive == SCAN_EXCLUSIVE, running, chunk.items[e]);
                chunk.vec = result.vec;
            }
        } else {
            Out result[IO::ITEMS_PER_THREAD];
#pragma unroll
            for (int c = 0; c < Shape::IN_CHUNKS; ++c) {
                const typename IO::Chunk chunk = IO::own_chunk(s.tile, c);
#pragma unroll
                for (int e = 0; e < IO::ITEMS_PER_CHUNK; ++e)
                    result[c * IO::ITEMS_PER_CHUNK + e] = scan_item(p.exclusive == SCAN_EXCLUSIVE, running, chunk.items[e]);
            }
            // The output chunks of this thread overlap other threads' input chunks.
            __syncthreads();
#pragma unroll
            for (int c = 0; c < Shape::OUT_CHUNKS; ++c) {
                typename OutIO::Chunk& chunk = OutIO::own_chunk(s.tile, c);
#pragma unroll
                for (int e = 0; e < OutIO::ITEMS_PER_CHUNK; ++e) chunk.items[e] = result[c * OutIO::ITEMS_PER_CHUNK + e];
            }
        }
        __syncthreads();

        // 6. Store.
        if (vector_io) OutIO::store_full(out, s.tile);
        else OutIO::store_partial(out, valid, s.tile);
    }

    // One item's scanned value, advancing `running` past it.
    static __device__ __forceinline__ Out scan_item(bool exclusive, A& running, In item) {
        const A x = P::load(item);
        if (exclusive) {
            const Out r = P::store(running);
            running = Op::apply(running, x);
            return r;
        }
        running = Op::apply(running, x);
        return P::store(running);
    }
};

}  // namespace lookback
