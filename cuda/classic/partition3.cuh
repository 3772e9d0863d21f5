// One tile of the three-way partition: items for which the first predicate holds go to `out_first`, the
// others for which the second holds to `out_second`, the rest to `out_rest` — each part in input order.
//
// The scanned value is the pair (first count, second count), with the look-back state of the run-based
// primitives (WidePairState: both counts in one 16-byte entry) and the pair summed componentwise; a tile's
// exclusive prefix (e1, e2) gives all three output offsets (the rest's is start - e1 - e2). The parts are
// staged contiguously in shared memory and written out coalesced, as classic/select.cuh does.
//
// Not in place: items are written to three other buffers (the Rust layer checks they do not overlap).
#pragma once
#include "runs.cuh"  // RunPair, LocalPair, PairOp
#include "../core/block_scan.cuh"
#include "../core/lookback.cuh"
#include "../core/params.cuh"
#include "../core/predicate.cuh"
#include "../core/tile_io.cuh"
#include "../core/tuning.cuh"

namespace lookback {

// `First` and `Second` decide the two parts (core/predicate.cuh): the launch's programs, or user code.
template <class T, class First = ProgramPredicate, class Second = ProgramPredicate> struct Partition3Agent {
    using Shape = typename Tuning<Algo::select, sizeof(T)>::Shape;
    static constexpr int BLOCK_THREADS = Shape::BLOCK_THREADS;
    static constexpr int WARPS = BLOCK_THREADS / 32;
    using IO = TileIO<T, BLOCK_THREADS, Shape::CHUNKS_PER_THREAD>;
    static constexpr int IPT = IO::ITEMS_PER_THREAD;
    static_assert(IPT <= 32, "masks hold at most 32 items per thread");
    using Pair = RunPair<uint64_t>;     // (first count, second count), over the whole input
    using Local = LocalPair<uint32_t>;  // the same within the tile
    using POp = PairOp<OpSum, false>;

    struct Storage {
        uint4 tile[IO::TILE_CHUNKS];  // the loaded tile, later the staged parts
        BlockScanStorage<Local, WARPS> scan;
        Pair exclusive;
        TileTicket ticket;
    };

    static __device__ __forceinline__ void run(const Partition3Params& p) {
        __shared__ Storage s;
        const LookbackParams& lb = p.lb;
        if (threadIdx.x == 0) take_tile(s.ticket, lb, p.n, {p.in, p.n * sizeof(T), IO::TILE_ITEMS * sizeof(T)});
        __syncthreads();
        const BlockTile bt = block_tile(s.ticket, lb);
        if (bt.idle(IO::TILE_ITEMS)) return;
        if (bt.n == 0) {  // a device count of 0: three empty parts
            if (threadIdx.x == 0) p.num_selected[0] = p.num_selected[1] = 0;
            return;
        }
        const uint64_t n = bt.n;
        const uint64_t tile = bt.tile;
        const uint64_t start = tile * (uint64_t)IO::TILE_ITEMS;
        const int valid = (int)min((uint64_t)IO::TILE_ITEMS, n - start);
        const T* in = static_cast<const T*>(p.in) + start;

        // 1. Load, and decide: bit k of m1 / m2 is this thread's item k.
        if (valid == IO::TILE_ITEMS && IO::aligned(in)) IO::load_full(in, s.tile, [](T) {});
        else IO::load_partial(in, valid, T(), s.tile, [](T) {});
        __syncthreads();
        const int first = (int)threadIdx.x * IPT;
        T x[IPT];
#pragma unroll
        for (int c = 0; c < Shape::CHUNKS_PER_THREAD; ++c) {
            const typename IO::Chunk chunk = IO::own_chunk(s.tile, c);
#pragma unroll
            for (int e = 0; e < IO::ITEMS_PER_CHUNK; ++e) x[c * IO::ITEMS_PER_CHUNK + e] = chunk.items[e];
        }
        const int mine = max(0, min(IPT, valid - first));
        // A 64-bit shift, well defined for mine = 32 (see classic/select.cuh for the ptxas issue it avoids).
        const uint32_t in_range = (uint32_t)((1ull << mine) - 1);
        const uint32_t m1 = First::mask(p.first, x) & in_range;
        const uint32_t m2 = Second::mask(p.second, x) & in_range & ~m1;

        // 2. Count, publish, look back.
        Local own;
        own.count = __popc(m1);
        own.value = __popc(m2);
        Local totals;
        const Local before = block_exclusive_scan<POp>(own, totals, s.scan);
        const WidePairState<Pair> state{bt.status, bt.epoch};
        Pair aggregate;
        aggregate.count = totals.count;
        aggregate.value = totals.value;
        if (warp_id() == 0) {
            Pair exclusive = POp::template identity<Pair>();
            if (tile == 0) {
                if (lane_id() == 0) state.publish(tile, STATUS_P, aggregate);
            } else {
                if (lane_id() == 0) state.publish(tile, STATUS_A, aggregate);
                exclusive = warp_lookback<POp, Pair>(state, tile, lb);
                if (lane_id() == 0) state.publish(tile, STATUS_P, POp::apply(exclusive, aggregate));
            }
            if (lane_id() == 0) s.exclusive = exclusive;
        }

        // 3. Stage: first part at [0, T1), second at [T1, T1 + T2), the rest after, each in order. Every
        //    thread's items are in registers and the block scan's barrier has passed, so the tile buffer
        //    is free.
        T* staged = reinterpret_cast<T*>(s.tile);
        const uint32_t t1 = totals.count, t2 = totals.value;
        uint32_t a = before.count, b = t1 + before.value, c = t1 + t2 + (uint32_t)first - before.count - before.value;
#pragma unroll
        for (int k = 0; k < IPT; ++k) {
            if (k >= mine) break;
            if ((m1 >> k) & 1u) staged[a++] = x[k];
            else if ((m2 >> k) & 1u) staged[b++] = x[k];
            else staged[c++] = x[k];
        }
        __syncthreads();

        // 4. Write out, striped across the block (coalesced at item width within each part).
        const Pair e = s.exclusive;
        if (threadIdx.x == 0 && start + valid == n) {
            p.num_selected[0] = e.count + t1;
            p.num_selected[1] = e.value + t2;
        }
        const uint64_t rest_before = start - e.count - e.value;
        for (int i = threadIdx.x; i < valid; i += BLOCK_THREADS) {
            if (i < (int)t1) static_cast<T*>(p.out_first)[e.count + i] = staged[i];
            else if (i < (int)(t1 + t2)) static_cast<T*>(p.out_second)[e.value + (i - t1)] = staged[i];
            else static_cast<T*>(p.out_rest)[rest_before + (i - t1 - t2)] = staged[i];
        }
    }
};

}  // namespace lookback
