// The table filter: the rows of several columns selected by one decision per row, in one pass.
//
// A tile of rows is decided once — from a mask column (one byte per row), or a predicate over one
// column (a built-in program or user code) or over two (user code) — counted, and looked back on
// once, exactly as a selection tile (classic/select.cuh: the same flag loads, count, look-back and
// staged compaction, shared as free functions there). Then every listed column of the tile goes out in
// turn through the one tile buffer: loaded coalesced, taken into the threads' registers, staged compacted
// at the output's chunk alignment and stored in whole 16-byte chunks. So each row is decided once, the
// decision columns are read once, each payload column is read once and written once (stable order, as
// select_flagged), and a tile with nothing selected reads no payload at all.
//
// The columns are a template pack of codes: B > 0 moves items of B bytes (as their bits: any type of that
// size), -B writes each selected row's index as an unsigned integer of B bytes (4 or 8), which needs no
// input. The tile is the selection row of the largest column (decision columns included), so every
// column moves in whole 16-byte chunks per thread: 16 rows per thread for 4- and 8-byte columns, 32 for
// 1- and 2-byte ones (cuda/core/tuning.cuh). The kernel is compiled at run time (NVRTC, cuda/rtc/table.cuh)
// for each column signature and decision: one launch, one kernel, no per-column dispatch.
//
// The mask-only case, against one select_flagged per column: the mask is read once, not once per column,
// and the look-back runs once per tile. A block holds one tile (as the selection agent: tile ids from the
// device counter, 8 resident blocks per SM, 5 for 8-byte tiles) and stages each column through the same
// 16 KB (32 KB) buffer, so the shared memory and residency are select_flagged's of the widest column. The
// columns of a tile are loaded after its look-back, one after the other; to keep DRAM busy meanwhile,
// the next column's rows are asked of L2 while the current one is staged (the first column's while the
// look-back waits). Not measured yet: benches/table.rs times it against four select_flagged calls and
// memcpy (benches/README.md, Table filter benchmark).
//
// Not in place: the host rejects outputs that overlap any input (src/table/), so the status words stay
// relaxed (CountState::ordered false) and no fence follows the loads.
#pragma once
#include "select.cuh"

namespace lookback {

// The columns of a table filter, as codes (see the top of this file).
template <int... CODES> struct Columns {};

__host__ __device__ constexpr int column_bytes(int code) { return code < 0 ? -code : code; }
__host__ __device__ constexpr int largest_of(int a) { return a; }
template <class... Rest> __host__ __device__ constexpr int largest_of(int a, int b, Rest... rest) {
    return largest_of(a > b ? a : b, rest...);
}
// Code `i` of a pack (0 past its end), as selects rather than an indexed array in local memory.
template <int... CODES> __host__ __device__ constexpr int code_at(int i) {
    int k = 0, code = 0;
    ((code = k++ == i ? CODES : code), ...);
    return code;
}

// This thread's IPT rows [first, first + IPT) of the tile of column `col` (already offset to the tile),
// through the tile buffer: a coalesced load, then each thread's own chunks. The items move as their bits
// (`T` may be any type of 1, 2, 4 or 8 bytes). Ends with a barrier, after which `tile` may be reused.
template <class T, int BLOCK_THREADS, int IPT>
__device__ __forceinline__ void load_own_rows(const T* col, int valid, uint4* tile, T (&x)[IPT]) {
    using U = typename Bits<sizeof(T)>::type;
    using IO = TileIO<U, BLOCK_THREADS, IPT * (int)sizeof(T) / 16>;
    const U* src = reinterpret_cast<const U*>(col);
    if (valid == IO::TILE_ITEMS && IO::aligned(src)) IO::load_full(src, tile, [](U) {});
    else IO::load_partial(src, valid, U(), tile, [](U) {});
    __syncthreads();
#pragma unroll
    for (int c = 0; c < IO::CHUNKS; ++c) {
        const typename IO::Chunk chunk = IO::own_chunk(tile, c);
#pragma unroll
        for (int e = 0; e < IO::ITEMS_PER_CHUNK; ++e) x[c * IO::ITEMS_PER_CHUNK + e] = from_bits<T>(chunk.items[e]);
    }
    __syncthreads();
}

// The decisions: a policy with the bytes of its widest column and a static `mask<Agent>(...)`, bit k set
// when row first + k of the tile is selected (rows past `valid` are masked off by the agent).

// A mask column: one byte per row, nonzero selects (u8 or bool), read with select_flagged's loads.
struct DecideByFlags {
    static constexpr int BYTES = 1;
    template <class Agent>
    static __device__ __forceinline__ uint32_t mask(const TableParams& p, uint4*, uint64_t start, int first,
                                                    int valid) {
        return load_flag_mask<Agent::IPT>(static_cast<const uint8_t*>(p.decide[0]) + start, first, valid);
    }
};

// A predicate over one column of T: `Pred` is ProgramPredicate (the launch's program) or a user functor
// (FunctorPredicate), as in the selection agents.
template <class T, class Pred> struct DecideByColumn {
    static constexpr int BYTES = (int)sizeof(T);
    template <class Agent>
    static __device__ __forceinline__ uint32_t mask(const TableParams& p, uint4* tile, uint64_t start, int,
                                                    int valid) {
        T x[Agent::IPT];
        load_own_rows<T, Agent::BLOCK_THREADS>(static_cast<const T*>(p.decide[0]) + start, valid, tile, x);
        return Pred::mask(p.pred, x);
    }
};

// A user predicate over two columns, `F` a type whose `__device__ bool operator()(A, B) const` decides a
// row. The first column's rows are held in registers; the second's are read from the tile buffer one at
// a time as they are tested, so only one column's rows occupy registers.
template <class A, class B, class F> struct DecideByColumns {
    static constexpr int BYTES = sizeof(A) > sizeof(B) ? (int)sizeof(A) : (int)sizeof(B);
    template <class Agent>
    static __device__ __forceinline__ uint32_t mask(const TableParams& p, uint4* tile, uint64_t start, int,
                                                    int valid) {
        constexpr int IPT = Agent::IPT;
        A a[IPT];
        load_own_rows<A, Agent::BLOCK_THREADS>(static_cast<const A*>(p.decide[0]) + start, valid, tile, a);
        using U = typename Bits<sizeof(B)>::type;
        using IO = TileIO<U, Agent::BLOCK_THREADS, IPT * (int)sizeof(B) / 16>;
        const U* b = static_cast<const U*>(p.decide[1]) + start;
        if (valid == IO::TILE_ITEMS && IO::aligned(b)) IO::load_full(b, tile, [](U) {});
        else IO::load_partial(b, valid, U(), tile, [](U) {});
        __syncthreads();
        const F f{};
        uint32_t m = 0;
#pragma unroll
        for (int c = 0; c < IO::CHUNKS; ++c) {
            const typename IO::Chunk chunk = IO::own_chunk(tile, c);
#pragma unroll
            for (int e = 0; e < IO::ITEMS_PER_CHUNK; ++e) {
                const int k = c * IO::ITEMS_PER_CHUNK + e;
                m |= (uint32_t)(bool)f(a[k], from_bits<B>(chunk.items[e])) << k;
            }
        }
        // The caller's count has a barrier before anything writes the tile buffer again.
        return m;
    }
};

template <class Decide, class Cols> struct TableAgent;

template <class Decide, int... CODES> struct TableAgent<Decide, Columns<CODES...>> {
    static_assert(sizeof...(CODES) <= TABLE_MAX_COLUMNS, "at most TABLE_MAX_COLUMNS columns");
    // The tile of the widest column: the selection row of that size.
    static constexpr int BYTES = largest_of(Decide::BYTES, column_bytes(CODES)...);
    using Shape = typename Tuning<Algo::select, BYTES>::Shape;
    static constexpr int BLOCK_THREADS = Shape::BLOCK_THREADS;
    static constexpr int WARPS = BLOCK_THREADS / 32;
    static constexpr int TILE_CHUNKS = BLOCK_THREADS * Shape::CHUNKS_PER_THREAD;
    static constexpr int TILE_ITEMS = TILE_CHUNKS * 16 / BYTES;
    static constexpr int IPT = TILE_ITEMS / BLOCK_THREADS;
    static_assert(IPT >= 16 && IPT <= 32, "every column of 1 to 8 bytes moves in whole chunks per thread");

    // The IO of a column of `B` bytes: its items as bits, a thread's IPT rows in whole chunks.
    template <int B> using IO = TileIO<typename Bits<B>::type, BLOCK_THREADS, IPT * B / 16>;

    struct Storage {
        // A column's tile, later its staged output; one chunk more for compaction's alignment shift.
        uint4 tile[TILE_CHUNKS + 1];
        BlockScanStorage<uint32_t, WARPS> scan;
        uint64_t exclusive;
        TileTicket ticket;
    };

    // The selection agent's residency (SelectAgent::MIN_BLOCKS): tiles of 8-byte columns are 32 KB.
    static constexpr int MIN_BLOCKS =
        BYTES == 8 ? resident_blocks<Storage>(5 * BLOCK_THREADS, BLOCK_THREADS) : LOOKBACK_SELECT_MIN_BLOCKS;

    static __device__ __forceinline__ void run(const TableParams& p) {
        __shared__ Storage s;
        const LookbackParams& lb = p.lb;
        if (threadIdx.x == 0) {
            // The guessed tile of the decision's column and of the first moved column (tile_state.cuh).
            constexpr int FIRST = code_at<CODES...>(0);
            constexpr int b0 = column_bytes(FIRST);
            const TileArray first_column = FIRST > 0
                                               ? TileArray{p.in[0], p.n * b0, (uint64_t)TILE_ITEMS * b0}
                                               : TileArray{};
            take_tile(s.ticket, lb, p.n,
                      {p.decide[0], p.n * Decide::BYTES, (uint64_t)TILE_ITEMS * Decide::BYTES}, first_column);
        }
        __syncthreads();
        const BlockTile bt = block_tile(s.ticket, lb);
        if (bt.idle(TILE_ITEMS)) return;
        if (bt.n == 0) {  // a device count of 0: nothing selected
            if (threadIdx.x == 0) *p.num_selected = 0;
            return;
        }
        const uint64_t n = bt.n;
        const uint64_t tile = bt.tile;
        LB_TRACE(tile, 0);
        const uint64_t start = tile * (uint64_t)TILE_ITEMS;
        const int valid = (int)min((uint64_t)TILE_ITEMS, n - start);
        const int first = (int)threadIdx.x * IPT;

        // 1-2. Decide each row once. Bit k of `mask` is this thread's row first + k.
        uint32_t mask = Decide::template mask<TableAgent>(p, s.tile, start, first, valid);
        const int mine = max(0, min(IPT, valid - first));
        mask &= (uint32_t)((1ull << mine) - 1);  // a 64-bit shift: see SelectAgent::run
        LB_TRACE(tile, 1);

        // 3. Count, publish, look back: once for all the columns.
        uint32_t tile_count;
        const uint32_t before_me = block_exclusive_count((uint32_t)__popc(mask), tile_count, s.scan);
        // The first column's tile is asked of L2 while the look-back waits (only for a tile that will read
        // it): its load below then starts from L2 rather than DRAM.
        if (threadIdx.x == 0 && tile_count > 0) prefetch_column(p, 0, start, valid);
        const uint64_t exclusive = selected_before_tile(bt, lb, tile_count, false, s.exclusive);
        if (threadIdx.x == 0 && start + valid == n) *p.num_selected = exclusive + tile_count;
        if (tile_count == 0) return;  // uniform: nothing of this tile's payload is read

        // 4-5. Each column through the tile buffer, in order.
        int column = 0;
        (move_column<CODES>(p, s, column++, mask, before_me, tile_count, exclusive, start, first, valid), ...);
        LB_TRACE(tile, 5);
    }

    // Asks L2 for the tile's rows of column `column` if it is one that is read (sm_90+; a hint). One
    // column ahead at most: the blocks resident on the GPU then hold about 17 MB of prefetched rows, well
    // within L2, where prefetching every column of a tile at once would not be.
    static __device__ __forceinline__ void prefetch_column(const TableParams& p, int column, uint64_t start,
                                                           int valid) {
        const int b = code_at<CODES...>(column);
        if (b > 0) {
            prefetch_l2(static_cast<const uint8_t*>(p.in[column]) + start * b, (uint64_t)valid * b);
        }
    }

    // One column of the tile to its output: the selected rows' items (or their indices) staged and
    // written by select.cuh's write_staged, while the next column's rows are asked of L2. Starts and ends
    // with the tile buffer free (a barrier).
    template <int CODE>
    static __device__ __forceinline__ void move_column(const TableParams& p, Storage& s, int column, uint32_t mask,
                                                       uint32_t before_me, uint32_t tile_count, uint64_t exclusive,
                                                       uint64_t start, int first, int valid) {
        constexpr int B = column_bytes(CODE);
        using U = typename Bits<B>::type;
        using CIO = IO<B>;
        constexpr int E = CIO::ITEMS_PER_CHUNK;
        typename CIO::Chunk items[CIO::CHUNKS];
        if (threadIdx.x == 0) prefetch_column(p, column + 1, start, valid);
        if constexpr (CODE > 0) {
            const U* in = static_cast<const U*>(p.in[column]) + start;
            if (valid == TILE_ITEMS && CIO::aligned(in)) CIO::load_full(in, s.tile, [](U) {});
            else CIO::load_partial(in, valid, U(), s.tile, [](U) {});
            __syncthreads();
#pragma unroll
            for (int c = 0; c < CIO::CHUNKS; ++c) items[c] = CIO::own_chunk(s.tile, c);
            __syncthreads();
        } else {
            static_assert(B == 4 || B == 8, "row indices of 4 or 8 bytes");
            // Only selected rows are staged, and a selected row is below n: a u32 index was checked by the
            // host to fit (n ≤ 2^32).
#pragma unroll
            for (int c = 0; c < CIO::CHUNKS; ++c) {
#pragma unroll
                for (int e = 0; e < E; ++e) items[c].items[e] = (U)(start + (uint64_t)(first + c * E + e));
            }
        }
        write_staged<CIO>(s.tile, items, mask, before_me, tile_count, static_cast<U*>(p.out[column]) + exclusive);
        __syncthreads();
    }
};

}  // namespace lookback
