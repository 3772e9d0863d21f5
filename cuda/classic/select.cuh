// One tile of selection: select_if, select_flagged, unique, partition (three layouts), count, and mask.
//
// The selection is fused into the look-back scan: the value scanned is the number of selected items, so
// a tile's exclusive prefix is its output offset. A tile loads its items (coalesced, through shared
// memory), decides which are selected (a predicate program, a flag array, or "differs from the previous
// item"), counts them, publishes the count, looks back for its offset, then stages the selected (and for
// a partition the rejected) items contiguously in shared memory and writes them out coalesced.
//
// In place (MODE_COMPACT with out == in; invariant 3 of DESIGN.md). Output index ≤ input index for every
// item, since an item's rank counts only selected items before it. A tile writes only after it knows its
// exclusive prefix, which exists only after every earlier tile published its count — and each tile's
// thread 0 fences right after the __syncthreads() that follows all of its loads and publishes only after
// that fence (fence + relaxed store: a release pattern), and a successor reads that status with acquire.
// So every write of tile t lands in memory whose reads (by tiles ≤ t) have completed: tiles < t finished
// loading before t could learn its prefix, and t itself loaded before it published. Tiles > t read only
// items at indices ≥ their start > every index t writes. (This is the ordering CUB lacked in cccl #1730:
// publishing before the loads had landed.) Out of place nothing of this is needed, and the status words
// go relaxed (CountState::ordered).
//
// unique in place also reads the item just before the tile. The only write that can reach that index
// before the read is the previous tile's, and only when every earlier item was selected — in which case
// it writes back the very value that is there.
#pragma once
#include "../core/block_scan.cuh"
#include "../core/lookback.cuh"
#include "../core/params.cuh"
#include "../core/predicate.cuh"
#include "../core/shared_cursor.cuh"
#include "../core/tile_io.cuh"
#include "../core/tuning.cuh"

// Eight resident blocks of 16 KB tiles per SM (ptxas caps registers at 32; the predicate interpreter
// spills a few bytes for 1- and 2-byte types). Measured on the H200 at 2^28 i32: select_if 50 % 0.46 →
// 0.53 of memcpy against no cap (5-6 blocks): more tiles in flight while others look back
// (benches/log). sm_86 and sm_89 hold at most 1536 threads per SM: six blocks there.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 890)
#define LOOKBACK_SELECT_MIN_BLOCKS 6
#else
#define LOOKBACK_SELECT_MIN_BLOCKS 8
#endif

namespace lookback {

template <class T> __device__ __forceinline__ bool items_differ(T a, T b) {
    // IEEE == for floats: NaN differs from everything, itself included; -0 equals +0.
    return Acc<T>::load(a) != Acc<T>::load(b);
}

// How unique decides that an item starts a run: `Eq::differ(before, item)`. The kernels nvcc builds compare
// with IEEE == (items_differ); a user equality compiled at run time (rtc/user_eq.cuh) is the other policy.
struct IeeeDiffer {
    template <class T> static __device__ __forceinline__ bool differ(T before, T item) { return items_differ(item, before); }
};

// The steps a selection tile shares with the table filter (classic/table.cuh), which selects the same
// way and moves several columns per tile.

// Flags of this thread's items [first, first + IPT) of the tile at `flags`: bit k is flag first + k set;
// 16-byte loads when aligned.
template <int IPT> __device__ __forceinline__ uint32_t load_flag_mask(const uint8_t* flags, int first, int valid) {
    uint32_t mask = 0;
    const uint8_t* f = flags + first;
    if (IPT % 16 == 0 && first + IPT <= valid && ((uintptr_t)f & 15) == 0) {
#pragma unroll
        for (int v = 0; v < IPT / 16; ++v) {
            union { uint4 vec; uint8_t b[16]; } u;
            u.vec = reinterpret_cast<const uint4*>(f)[v];
#pragma unroll
            for (int e = 0; e < 16; ++e) mask |= (uint32_t)(u.b[e] != 0) << (v * 16 + e);
        }
    } else {
#pragma unroll
        for (int k = 0; k < IPT; ++k) if (first + k < valid) mask |= (uint32_t)(f[k] != 0) << k;
    }
    return mask;
}

// Step 3 of a selection tile, after the block has counted its selected items (`tile_count`): publish the
// count, look back, and return the number selected before the tile (every thread; `exclusive` is the
// block's shared word for it). In place the look-back reads with acquire (the in-place argument above);
// the publishes are relaxed, thread 0 having fenced after the loads.
__device__ __forceinline__ uint64_t selected_before_tile(const BlockTile& bt, const LookbackParams& lb,
                                                         uint32_t tile_count, bool in_place, uint64_t& exclusive) {
    const uint64_t tile = bt.tile;
    const CountState state{bt.status, bt.epoch, in_place};
    const CountState publisher{bt.status, bt.epoch, false};
    LB_TRACE(tile, 2);
    if (threadIdx.x == 0) publisher.publish(tile, tile == 0 ? STATUS_P : STATUS_A, tile_count);
    if (warp_id() == 0) {
        uint64_t before = 0;
        if (tile > 0) {
            before = warp_lookback<OpSum, uint64_t>(state, tile, lb);
            if (lane_id() == 0) publisher.publish(tile, STATUS_P, before + tile_count);
        }
        if (lane_id() == 0) exclusive = before;
    }
    LB_TRACE(tile, 3);
    __syncthreads();
    LB_TRACE(tile, 4);
    return exclusive;
}

// Compaction's output of one tile: each thread's items (`items`, its own chunks, taken out of `tile`
// before a barrier) whose bit of `mask` is set, staged in order at `shift + rank` in `tile`, where `shift`
// is the output's position within its 16-byte chunk (`base`, the tile's first output item, is only
// item-aligned). The staged buffer and the output then share their chunk boundaries, so every whole
// chunk moves as one 16-byte load and store; only the first and last chunks go item by item. `tile`
// holds IO::TILE_CHUNKS + 1 chunks. Stores land in [base, base + tile_count) only.
template <class IO>
__device__ __forceinline__ void write_staged(uint4* tile, const typename IO::Chunk* items, uint32_t mask,
                                             uint32_t before_me, uint32_t tile_count,
                                             typename IO::Item* base) {
    using T = typename IO::Item;
    constexpr int E = IO::ITEMS_PER_CHUNK;
    constexpr int CPT = IO::CHUNKS;
    constexpr int BLOCK_THREADS = IO::THREADS;
    const int shift = (int)(((uintptr_t)base / sizeof(T)) % E);
    T* staged = reinterpret_cast<T*>(tile) + shift;
    // A branch on a thread's own bit would diverge on every item: the store and the step are
    // predicated instead (SharedCursor).
    SharedCursor dst(staged + before_me);
#pragma unroll
    for (int c = 0; c < CPT; ++c) {
#pragma unroll
        for (int e = 0; e < E; ++e) dst.put_if(items[c].items[e], mask, 1u << (c * E + e));
    }
    __syncthreads();
    const int end = shift + (int)tile_count;  // staged chunk positions [shift, end) hold the output
    uint4* out_chunks = reinterpret_cast<uint4*>(reinterpret_cast<uintptr_t>(base) - shift * sizeof(T));
#pragma unroll
    for (int j = 0; j <= CPT; ++j) {  // at most TILE_CHUNKS + 1 chunks
        const int c = j * BLOCK_THREADS + (int)threadIdx.x;
        const int lo = c * E;
        if (lo >= end) break;
        if (lo >= shift && lo + E <= end) {
            out_chunks[c] = tile[c];
        } else {
#pragma unroll
            for (int e = 0; e < E; ++e)
                if (lo + e >= shift && lo + e < end) base[lo + e - shift] = staged[lo + e - shift];
        }
    }
}

// `Pred` decides selection by predicate (core/predicate.cuh): the launch's program, or user code. `Eq`
// decides unique's runs (IeeeDiffer above).
template <class T, class Pred = ProgramPredicate, class Eq = IeeeDiffer> struct SelectAgent {
    using Shape = typename Tuning<Algo::select, sizeof(T)>::Shape;
    static constexpr int BLOCK_THREADS = Shape::BLOCK_THREADS;
    static constexpr int WARPS = BLOCK_THREADS / 32;
    using IO = TileIO<T, BLOCK_THREADS, Shape::CHUNKS_PER_THREAD>;
    static constexpr int IPT = IO::ITEMS_PER_THREAD;
    static constexpr int E = IO::ITEMS_PER_CHUNK;
    static_assert(IPT <= 32, "selection masks hold at most 32 items per thread");

    struct Storage {
        // The loaded tile, later the staged output; one chunk more for compaction's alignment shift.
        uint4 tile[IO::TILE_CHUNKS + 1];
        BlockScanStorage<uint32_t, WARPS> scan;
        uint64_t exclusive;
        TileTicket ticket;
        T before_tile;  // unique: the item just before this tile
    };

    // Resident blocks per SM the kernel is compiled for (its register budget; cuda/kernels/select.cu).
    // Tiles of 16 KB: LOOKBACK_SELECT_MIN_BLOCKS (8 of 256 threads on sm_90: 32 registers). Tiles of
    // 8-byte items are 32 KB (4096 items; six fit the H200's shared memory), compiled for 5 blocks: 48
    // registers, no spills (for 6, 40 registers spilled 188 bytes). Probe, 2026-12-01 (benches/log),
    // i64 against 2048-item tiles compiled for 8 blocks: select_if 50 % −2.5 to −6 %, unique −7 to −8 %,
    // flagged −0.5 to −6.5 % at 2^21-2^23 (6 blocks: −3 to +4 %; 512-thread tiles: slower).
    static constexpr int MIN_BLOCKS = sizeof(T) == 8 ? resident_blocks<Storage>(5 * BLOCK_THREADS, BLOCK_THREADS)
                                                     : LOOKBACK_SELECT_MIN_BLOCKS;

    static __device__ __forceinline__ void run(const SelectParams& p) {
        __shared__ Storage s;
        const LookbackParams& lb = p.lb;
        if (threadIdx.x == 0) {
            take_tile(s.ticket, lb, p.n, {p.in, p.n * sizeof(T), IO::TILE_ITEMS * sizeof(T)},
                      {p.flags, p.source == SOURCE_FLAGS ? p.n : 0, IO::TILE_ITEMS});
        }
        __syncthreads();
        const BlockTile bt = block_tile(s.ticket, lb);
        if (bt.idle(IO::TILE_ITEMS)) return;
        if (bt.n == 0) {  // a device count of 0: an empty selection
            if (threadIdx.x == 0 && p.mode != MODE_MASK) *p.num_selected = 0;
            return;
        }
        const uint64_t n = bt.n;
        const uint64_t tile = bt.tile;
        LB_TRACE(tile, 0);
        const uint64_t start = tile * (uint64_t)IO::TILE_ITEMS;
        const int valid = (int)min((uint64_t)IO::TILE_ITEMS, n - start);
        const T* in = static_cast<const T*>(p.in) + start;

        // 1. Load (every read of the input happens before the barrier; see the in-place argument).
        if (valid == IO::TILE_ITEMS && IO::aligned(in)) IO::load_full(in, s.tile, [](T) {});
        else IO::load_partial(in, valid, T(), s.tile, [](T) {});
        if (p.source == SOURCE_UNIQUE && threadIdx.x == 0 && tile > 0) s.before_tile = in[-1];
        __syncthreads();
        LB_TRACE(tile, 1);
        // In place, one fence per tile, right after the loads: both publishes below (thread 0's) are then
        // relaxed stores. A release store at each publish put a fence in front of the P that successors
        // wait for, which made in place 5-8 % slower than out of place at 2^20-2^22 (benches/log,
        // 2026-12-01).
        const bool in_place = p.in == p.out;
        if (in_place && threadIdx.x == 0) fence_acq_rel_gpu();

        // 2. Decide: bit k of `mask` is this thread's item k (tile index threadIdx.x * IPT + k).
        const int first = (int)threadIdx.x * IPT;
        uint32_t mask = decide(p, s, tile, first, valid);
        const int mine = max(0, min(IPT, valid - first));
        // Built with a 64-bit shift (well defined for mine = 32). The equivalent
        // `mine == 32 ? ~0u : (1u << mine) - 1` is miscompiled by ptxas 13.0.88 for sm_90 when IPT = 32:
        // it fuses the compare into the clamp's predicate and keeps all 32 bits for a partial thread.
        mask &= (uint32_t)((1ull << mine) - 1);

        if (p.mode == MODE_MASK) {
            uint8_t* dst = static_cast<uint8_t*>(p.out_rejected) + start + first;
#pragma unroll
            for (int k = 0; k < IPT; ++k) if (k < mine) dst[k] = (mask >> k) & 1u;
            return;
        }

        // 3. Count, publish, look back.
        uint32_t tile_count;
        const uint32_t before_me = block_exclusive_count((uint32_t)__popc(mask), tile_count, s.scan);
        const uint64_t exclusive = selected_before_tile(bt, lb, tile_count, in_place, s.exclusive);
        if (threadIdx.x == 0 && start + valid == n) *p.num_selected = exclusive + tile_count;
        if (p.mode == MODE_COUNT) return;

        // 4-5. Stage the tile's output in shared memory and write it out coalesced. The items are read
        //      again from the tile buffer rather than kept in registers across the look-back: fewer
        //      registers, more resident blocks, more loads in flight. Compaction and the partitions are
        //      separate paths (a uniform branch per tile) so compaction's per-item loop carries none of
        //      the partitions' work.
        if (p.mode == MODE_COMPACT) write_compacted(p, s, mask, before_me, tile_count, exclusive);
        else write_partitioned(p, s, mask, before_me, tile_count, exclusive, start, first, valid, n);
        LB_TRACE(tile, 5);
    }

    // Staging overwrites the tile buffer: every thread first takes its own items into registers. (A
    // separate staging buffer measured no faster and halves the resident blocks' shared-memory budget.)
    static __device__ __forceinline__ void take_own_items(Storage& s, typename IO::Chunk (&items)[Shape::CHUNKS_PER_THREAD]) {
#pragma unroll
        for (int c = 0; c < Shape::CHUNKS_PER_THREAD; ++c) items[c] = IO::own_chunk(s.tile, c);
        __syncthreads();
    }

    // Compaction: the selected items staged and written out by write_staged. Every store lands in
    // [exclusive, exclusive + tile_count): the tile's own output, as in place requires.
    static __device__ __forceinline__ void write_compacted(const SelectParams& p, Storage& s, uint32_t mask,
                                                           uint32_t before_me, uint32_t tile_count,
                                                           uint64_t exclusive) {
        typename IO::Chunk items[Shape::CHUNKS_PER_THREAD];
        take_own_items(s, items);
        write_staged<IO>(s.tile, items, mask, before_me, tile_count, static_cast<T*>(p.out) + exclusive);
    }

    // Partitions: selected items at [0, tile_count) in order, rejected ones after them in order (an
    // item's place among the rejected is its index minus the selected items before it; items past the
    // end of a partial tile land after every valid item and are not written out), then written item by
    // item to the layout's destinations.
    static __device__ __forceinline__ void write_partitioned(const SelectParams& p, Storage& s, uint32_t mask,
                                                             uint32_t before_me, uint32_t tile_count,
                                                             uint64_t exclusive, uint64_t start, int first,
                                                             int valid, uint64_t n) {
        typename IO::Chunk items[Shape::CHUNKS_PER_THREAD];
        take_own_items(s, items);
        T* staged = reinterpret_cast<T*>(s.tile);
        uint32_t selected_before = before_me;
#pragma unroll
        for (int c = 0; c < Shape::CHUNKS_PER_THREAD; ++c) {
#pragma unroll
            for (int e = 0; e < E; ++e) {
                const int k = c * E + e;
                const bool keep = (mask >> k) & 1u;
                staged[keep ? selected_before : tile_count + (first + k - selected_before)] = items[c].items[e];
                selected_before += keep;
            }
        }
        __syncthreads();
        T* out = static_cast<T*>(p.out);
        const uint64_t rejected_before = start - exclusive;
        for (int i = threadIdx.x; i < valid; i += BLOCK_THREADS) {
            if (i < (int)tile_count) {
                out[exclusive + i] = staged[i];
            } else {
                const uint64_t r = rejected_before + (uint64_t)(i - (int)tile_count);
                if (p.mode == MODE_PARTITION_REVERSE) out[n - 1 - r] = staged[i];
                else if (p.mode == MODE_PARTITION_SPLIT) static_cast<T*>(p.out_rejected)[r] = staged[i];
                else out[*p.known_total + r] = staged[i];
            }
        }
    }

    // The selection mask of this thread's items (before masking off items past the end).
    static __device__ __forceinline__ uint32_t decide(const SelectParams& p, Storage& s, uint64_t tile, int first,
                                                      int valid) {
        const uint64_t start = tile * (uint64_t)IO::TILE_ITEMS;
        if (p.source == SOURCE_FLAGS) return load_flag_mask<IPT>(p.flags + start, first, valid);
        T x[IPT];
#pragma unroll
        for (int c = 0; c < Shape::CHUNKS_PER_THREAD; ++c) {
            const typename IO::Chunk chunk = IO::own_chunk(s.tile, c);
#pragma unroll
            for (int e = 0; e < IO::ITEMS_PER_CHUNK; ++e) x[c * IO::ITEMS_PER_CHUNK + e] = chunk.items[e];
        }
        if (p.source == SOURCE_PRED) return Pred::mask(p.pred, x);
        const T before = threadIdx.x > 0 ? IO::item_at(s.tile, first - 1) : s.before_tile;
        uint32_t mask = (threadIdx.x == 0 && tile == 0) ? 1u : (uint32_t)Eq::differ(before, x[0]);
#pragma unroll
        for (int k = 1; k < IPT; ++k) mask |= (uint32_t)Eq::differ(x[k - 1], x[k]) << k;
        return mask;
    }

};

}  // namespace lookback
