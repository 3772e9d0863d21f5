// One tile of the run-based primitives: reduce_by_key, scan_by_key, unique_by_key, run-length and run-end
// encoding, non-trivial runs. A run is a maximal stretch of equal adjacent keys.
//
// Single pass, on the same look-back as the scan: the scanned value is a pair (count, payload).
// * count: run heads so far (for non-trivial runs: heads of runs longer than one item), so the run an
//   item belongs to, and the output slot of that run, is count - 1.
// * payload, keyed reductions and scans: the reduction of the current run's values so far. Pairs combine
//   as (c1, v1) ⊕ (c2, v2) = (c1 + c2, c2 > 0 ? v2 : v1 ⊕ v2): a head inside the right-hand stretch cuts
//   the left-hand value off. This is associative, so tiles publish and look back exactly as in a scan.
// * payload, encodings: the index of the latest run head (a max: head indices only grow), so an item
//   that ends a run knows where it started, and its length, without a second pass.
//
// Whether item i starts a run depends on key i-1, and whether it ends one on key i+1: a tile reads the key
// just before and the key just after it (two extra loads per tile). The item that ends a run writes the
// run's result; the item that starts it writes the run's key. These writes are scattered but a warp's
// runs are contiguous, so they coalesce as well as the runs are long.
//
// reduce_by_key, unique_by_key and the run-length and run-end encodings of 4-byte keys (and values) run on
// classic/runs_at_heads.cuh, a register tile whose run heads write every output (chosen in src/plan.rs).
//
// Not in-place safe, unlike the selection: a tile reads the key before its first item, which the previous
// tile may already have overwritten, and the run outputs are not ordered against later tiles' loads (no
// release/acquire argument as in classic/select.cuh). The Rust layer rejects overlapping buffers.
#pragma once
#include "../core/std_subset.cuh"
#include "../core/block_scan.cuh"
#include "../core/key_equality.cuh"
#include "../core/lookback.cuh"
#include "../core/ops.cuh"
#include "../core/params.cuh"
#include "../core/tile_io.cuh"
#include "../core/tuning.cuh"


namespace lookback {

// A run count and a payload (the running value of the current run, or the latest head's index): the
// look-back state, with 64-bit counts and positions.
template <class V> struct RunPair {
    uint64_t count;
    V value;
};
// The same within a tile, where counts and positions fit 32 bits: half the shuffles in the block scan.
template <class V> struct LocalPair {
    uint32_t count;
    V value;
};

// Combines the pairs of two consecutive stretches. SEGMENTED: a head in the right-hand stretch cuts the
// left-hand value off; otherwise the payloads are simply combined (positions, with max).
template <class Op, bool SEGMENTED> struct PairOp {
    template <class P> static __device__ __forceinline__ P apply(P a, P b) {
        P r;
        r.count = a.count + b.count;
        r.value = (SEGMENTED && b.count) ? b.value : Op::apply(a.value, b.value);
        return r;
    }
    template <class P> static __device__ __forceinline__ P identity() {
        P r;
        r.count = 0;
        r.value = Op::template identity<decltype(P::value)>();
        return r;
    }
};
// The counts add exactly; the values are as order-sensitive as the operator that combines them.
template <class Op, bool SEGMENTED, class V>
struct OrderSensitive<PairOp<Op, SEGMENTED>, RunPair<V>> : OrderSensitive<Op, V> {};
// The segmented operator: a stretch with a head has a value no grouping of earlier stretches changes, which
// the deterministic look-back uses to let such tiles publish P ("Keyed sums" in core/lookback.cuh).
template <class Op> struct CutsAtHeads<PairOp<Op, true>> : std::true_type {};

// How the run agent turns values into accumulators and back. The built-in operators accumulate an element
// in its Acc type and write the element type; an operator compiled at run time (rtc/by_key.cuh) brings its
// own load and store, and takes an exclusive scan's seed as the bits of an accumulator.
template <class V> struct AccValues {
    using A = typename Acc<V>::type;
    static __device__ __forceinline__ A load(V x) { return Acc<V>::load(x); }
    static __device__ __forceinline__ V store(A a) { return Acc<V>::store(a); }
    static __device__ __forceinline__ A seed(uint64_t raw) { return load(from_bits<V>((typename Bits<sizeof(V)>::type)raw)); }
};

// A lane's segmented reduction of its N consecutive values: the reduction since its last head (of all of
// them when it has none). Items outside `in_range` are the identity; they are never heads.
template <class Op, class V, int N, class VP = AccValues<V>>
__device__ __forceinline__ typename VP::A since_last_head(const V (&v)[N], uint32_t heads, uint32_t in_range) {
    using A = typename VP::A;
    A acc = Op::template identity<A>();
#pragma unroll
    for (int j = 0; j < N; ++j) {
        const A x = (in_range >> j) & 1u ? VP::load(v[j]) : Op::template identity<A>();
        acc = (heads >> j) & 1u ? x : Op::apply(acc, x);
    }
    return acc;
}

// The value column of the encodings, which have none.
struct NoValues {
    uint8_t unused;
};
template <int BYTES> struct ValueBits { using type = typename Bits<BYTES>::type; };
template <> struct ValueBits<0> { using type = NoValues; };

// KB: key bytes. V: the value type. VALUED: values are reduced with Op (keyed reductions and scans);
// otherwise they are only carried (unique_by_key) or absent (V = NoValues: the encodings). SMALL_GRID:
// the encodings' kernel for small grids (its own tile shape and occupancy; src/plan.rs picks it by size).
// VP: how values load into accumulators and store back (AccValues above); results are written as V, so a
// policy's store returns a V (a user operator's output of V's size travels as V's bits: rtc/by_key.cuh).
// KE: how two adjacent keys compare (core/key_equality.cuh): ParamsKeyEq, the kind RunsParams asks for, or
// a user equality compiled at run time (rtc/user_eq.cuh), which sees the keys as their own type.
//
// Per thread, heads and tails are bit masks, so counts are popcounts; the tile is scanned with 32-bit
// tile-local pairs (encodings: the tile-local index + 1 of the latest head, 0 for none), and only the
// tile's aggregate and the look-back use 64-bit pairs.
template <int KB, class V, class Op, bool VALUED, bool SMALL_GRID = false, class VP = AccValues<V>,
          class KE = ParamsKeyEq>
struct RunsAgent {
    using K = typename Bits<KB>::type;
    static constexpr bool HAS_VALUES = VALUED || !std::is_same_v<V, NoValues>;
    static_assert(!SMALL_GRID || !HAS_VALUES, "only the encodings have a small-grid kernel");
    static constexpr int VB = HAS_VALUES ? (int)sizeof(V) : 0;
    static constexpr int MAXB = KB > VB ? KB : VB;
    // The encodings (no value column) have tuning rows of their own, two: the small-grid kernel's and the
    // other's (tuning.cuh).
    static constexpr Algo ALGO = HAS_VALUES ? Algo::runs : SMALL_GRID ? Algo::encode_small : Algo::encode;
    using Shape = typename Tuning<ALGO, MAXB>::Shape;
    static constexpr int BLOCK_THREADS = Shape::BLOCK_THREADS;
    static constexpr int WARPS = BLOCK_THREADS / 32;
    static constexpr int IPT = 16;  // items per thread, whatever the sizes (tuning.cuh)
    using KeyIO = TileIO<K, BLOCK_THREADS, KB>;
    using ValIO = TileIO<V, BLOCK_THREADS, HAS_VALUES ? VB : 1>;
    static constexpr int TILE_ITEMS = KeyIO::TILE_ITEMS;
    static_assert(KeyIO::ITEMS_PER_THREAD == IPT && (!HAS_VALUES || ValIO::ITEMS_PER_THREAD == IPT),
                  "keys and values move in whole chunks of 16 items per thread");
    static_assert(TILE_ITEMS == BLOCK_THREADS * Shape::CHUNKS_PER_THREAD * 16 / MAXB,
                  "the launcher sizes grids from the tuning row (runs or encode) of max(key, value) bytes");
    static_assert(TILE_ITEMS < 65536, "tile-local positions are staged as 16 bits");

    using A = std::conditional_t<VALUED, typename VP::A, uint64_t>;
    using Pair = RunPair<A>;
    using Local = LocalPair<std::conditional_t<VALUED, A, uint32_t>>;
    // One operator for both pair widths: segmented for values, max for head positions.
    using POp = std::conditional_t<VALUED, PairOp<Op, true>, PairOp<OpMax, false>>;

    // Staged run outputs (see `stage` and `store_staged`). Slot s is the run whose head is the tile's s-th
    // counted head (s >= 1); slot 0 is a run that started in an earlier tile and ends in this one. Keys and
    // values of slots >= 1 reuse the input tiles at index s - 1; slot 0's data is kept apart because it is
    // completed only with the look-back's exclusive prefix.
    static constexpr bool POSITIONS = !HAS_VALUES;  // the encodings (unique_by_key needs no positions)
    struct Storage {
        uint4 keys[KeyIO::TILE_CHUNKS];                     // the loaded keys, later staged run keys
        uint4 values[HAS_VALUES ? ValIO::TILE_CHUNKS : 1];  // the loaded values, later results or staged run values
        uint16_t starts[POSITIONS ? TILE_ITEMS : 1];        // encodings: tile-local index of each run's head
        uint16_t ends[POSITIONS ? TILE_ITEMS : 1];          // encodings: tile-local index one past each run's tail
        BlockScanStorage<Local, WARPS> scan;
        Pair exclusive;
        A slot0_value;       // reduce: the reduction of slot 0's items in this tile
        TileTicket ticket;
        uint32_t slot0_end;      // encodings: tile-local end of slot 0
        uint32_t first_written;  // slot 0 has a result
        uint32_t first_head;     // scans: tile-local index of the tile's first head (TILE_ITEMS: none)
        uint32_t last_written;   // the highest slot has a result (its run ends in this tile)
        K before_tile;  // key start-1 (when start > 0)
        K after_tile;   // key start+valid (when it exists)
    };

    // Resident threads per SM the kernels are compiled for (registers: 65536 / that). Measured on the H200
    // at 2^28 i32 (benches/log): 1024 (64 registers, no spills) is best where values are carried
    // (reduce_by_key 1329 us against 1775 at 1536 and 2244 at 2048: spills); the encodings, which have no
    // value column, are faster at 1536 (RLE 1197 -> 1007 us; 2048: 1133), except with 8-byte keys, whose
    // sixteen keys per thread alone spill at 42 registers. Uncapped, ptxas took 70-106
    // registers and only two or three blocks fit. -DLOOKBACK_RUNS_MIN_THREADS=N overrides all of these.
    //
    // The encodings' small-grid kernel (SMALL_GRID), for inputs of at most ENCODE_SMALL_GRID_TILES tiles
    // of the other (src/plan.rs), is compiled for 1024 threads like the valued kernels. A per-tile trace
    // (benches/probes/trace_tiles.cu) of RLE at 2^22 showed the 1536-thread kernel's first wave of 792
    // tiles waiting up to 5 us on the look-back walk and a 232-tile tail walking again; at 1024 (4 blocks
    // of 256, 53 registers, no spills; 40 registers spilled 8 bytes) blocks are faster and the second wave
    // starts staggered: RLE and non-trivial runs i32 2^20-2^22 4-11 % faster, but 2^23-2^28 5-12 % slower,
    // where the wider occupancy keeps more loads in flight (benches/log, 2026-12-01).
#ifdef LOOKBACK_RUNS_MIN_THREADS
    static constexpr int MIN_THREADS = LOOKBACK_RUNS_MIN_THREADS;
#else
    static constexpr int MIN_THREADS = (SMALL_GRID || HAS_VALUES || KB == 8) ? 1024 : 1536;
#endif
    // Never more blocks than shared memory lets an SM hold: two 8-byte columns (32 KB tiles of 128
    // threads) fit 6 on the H200, and capping registers for 8 blocks (64) only made ptxas spill 216 bytes
    // in the f64 keyed kernel, where 6 blocks leave it 80 registers (benches/log, 2026-12-01).
    static constexpr int MIN_BLOCKS = resident_blocks<Storage>(MIN_THREADS, BLOCK_THREADS);

    // Status of a tile's pair: one 16-byte entry, with the 64-bit layout for 8-byte reductions
    // (tile_state.cuh).
    using State = WidePairState<Pair, VALUED && sizeof(A) == 8>;
    static __device__ __forceinline__ State make_state(const BlockTile& bt) { return State{bt.status, bt.epoch}; }

    // Sub-windows per look-back step after the first (lookback.cuh): 4 (128 tiles per round trip) for the
    // keyed kernels, 2 where 8-byte keys or values already fill the 64 registers a thread may use (with 4,
    // ptxas spilled 124-272 bytes in the f64 kernels). The encodings, capped at 40 registers, spilled with
    // any wider window and measured 2.5-8 % slower at 2^20 and 2^24: they keep one (benches/log,
    // 2026-11-30).
    static constexpr int LOOKBACK_WIDE = POSITIONS ? 1 : (KB == 8 || (VALUED && sizeof(A) == 8)) ? 2 : 4;

    // Warp 0: publishes the tile's aggregate (tile 0: its inclusive prefix), then looks back: the tile's
    // exclusive prefix into s.exclusive, and its inclusive prefix published.
    static __device__ __forceinline__ void lookback_and_publish(const State& state, uint64_t tile,
                                                                const Pair& aggregate, Storage& s,
                                                                const LookbackParams& lb) {
        Pair exclusive = POp::template identity<Pair>();
        if (tile == 0) {
            if (lane_id() == 0) state.publish(tile, STATUS_P, aggregate);
        } else {
            if (lane_id() == 0) state.publish(tile, STATUS_A, aggregate);
            exclusive = resolve_prefix<POp, Pair, State, LOOKBACK_WIDE>(state, tile, lb, aggregate);
        }
        if (lane_id() == 0) s.exclusive = exclusive;
    }

    // lookback_and_publish in two parts, for warp 0 to stage its own outputs in between.
    static __device__ __forceinline__ void publish_aggregate(const State& state, uint64_t tile, const Pair& aggregate) {
        if (lane_id() == 0) state.publish(tile, tile == 0 ? STATUS_P : STATUS_A, aggregate);
    }
    static __device__ __forceinline__ void lookback(const State& state, uint64_t tile, const Pair& aggregate,
                                                    Storage& s, const LookbackParams& lb) {
        Pair exclusive = POp::template identity<Pair>();
        if (tile != 0) {
            exclusive = resolve_prefix<POp, Pair, State, LOOKBACK_WIDE>(state, tile, lb, aggregate);
        }
        if (lane_id() == 0) s.exclusive = exclusive;
    }

    // Writes this thread's run outputs to their tile-local slots: a counted head opens slot `local count`
    // (key, start, or the unique value); the item that ends a run closes it (reduction, end). `prefix` is
    // the thread's exclusive tile-local pair.
    static __device__ __forceinline__ void stage(const RunsParams& p, Storage& s, const K (&k)[IPT], const V (&v)[IPT],
                                                 uint32_t heads, uint32_t tails, uint32_t counted, Local prefix,
                                                 uint32_t tile_runs, int first) {
        K* keys = reinterpret_cast<K*>(s.keys);
        V* vals = reinterpret_cast<V*>(s.values);
        const bool non_trivial = !VALUED && p.mode == RUNS_NON_TRIVIAL;
        const bool unique = !VALUED && p.mode == RUNS_UNIQUE;
        [[maybe_unused]] A run_value = prefix.value;  // reduce: the current run's value so far (tile-local)
        // A counted head opens its run's slot; the item that ends a run closes it. Items past the end are in
        // neither mask (their values may enter run_value, which nothing reads after them).
        const uint32_t opens_mask = counted;
        const uint32_t closes_mask = unique ? 0u : non_trivial ? (tails & ~heads) : tails;
#pragma unroll
        for (int j = 0; j < IPT; ++j) {
            const uint32_t slot = prefix.count + __popc(counted & ((2u << j) - 1u));  // 0 = the run carried in
            if constexpr (VALUED) {
                const A x = VP::load(v[j]);
                run_value = (heads >> j) & 1u ? x : Op::apply(run_value, x);
            }
            const bool opens = (opens_mask >> j) & 1u, closes = (closes_mask >> j) & 1u;
            if (opens) {  // slot >= 1: the item counts itself
                if (!non_trivial) keys[slot - 1] = k[j];
                if constexpr (POSITIONS) s.starts[slot - 1] = (uint16_t)(first + j);
                if constexpr (!VALUED && HAS_VALUES) {
                    if (unique) vals[slot - 1] = v[j];
                }
            }
            if constexpr (VALUED) {
                if (closes) {
                    if (slot == 0) {
                        s.first_written = 1;
                        s.slot0_value = run_value;
                    } else {
                        vals[slot - 1] = VP::store(run_value);
                    }
                    if (slot == tile_runs) s.last_written = 1;
                }
            } else if constexpr (POSITIONS) {
                if (closes && slot != 0) s.ends[slot - 1] = (uint16_t)(first + j + 1);
            }
        }
        // The encodings find the tile's two special closes from the masks once rather than testing every
        // item above, where the tests and their shared-memory flag stores made a divergent branch per item
        // (ncu, f64 non-trivial runs: a quarter of the kernel's warp instructions ran with ~6 of 32 lanes;
        // 5-13 % faster; benches/log, 2026-12-01). The run carried in (slot 0) closes at this thread's
        // first closing item if no counted head precedes that item, here or in an earlier thread; the
        // tile's last run (slot tile_runs) closes in this tile if this thread's last closing item is in it
        // (slots only grow with the item). The keyed reductions keep the tests in the loop: moved out,
        // reduce_by_key measured 2-5 % slower (their slot 0 also needs the run's value at that item).
        if (!VALUED && closes_mask) {
            const int j0 = __ffs((int)closes_mask) - 1;
            if (prefix.count == 0 && (counted & ((2u << j0) - 1u)) == 0) {
                s.first_written = 1;
                if constexpr (POSITIONS) s.slot0_end = (uint32_t)(first + j0 + 1);
            }
            const int j1 = 31 - __clz((int)closes_mask);
            if (prefix.count + __popc(counted & ((2u << j1) - 1u)) == tile_runs) s.last_written = 1;
        }
    }

    // Stores the staged outputs of slots 1..H (keys, unique values) and of the slots whose runs end in
    // this tile (results), striped across the block: consecutive threads, consecutive addresses.
    static __device__ __forceinline__ void store_staged(const RunsParams& p, Storage& s, uint32_t tile_runs,
                                                        uint64_t start, int valid, uint64_t n) {
        const Pair exclusive = s.exclusive;
        const uint64_t base = exclusive.count;  // global slot of tile-local slot 1
        const int H = (int)tile_runs;
        const bool non_trivial = !VALUED && p.mode == RUNS_NON_TRIVIAL;
        const bool unique = !VALUED && p.mode == RUNS_UNIQUE;
        const K* keys = reinterpret_cast<const K*>(s.keys);
        const V* vals = reinterpret_cast<const V*>(s.values);
        if (!non_trivial) {
            K* out = static_cast<K*>(p.out_keys) + base;
            for (int i = threadIdx.x; i < H; i += BLOCK_THREADS) out[i] = keys[i];
        }
        if (threadIdx.x == 0 && start + valid == n) *p.num_runs = exclusive.count + tile_runs;
        if constexpr (!VALUED && HAS_VALUES) {
            if (unique) {
                V* out = static_cast<V*>(p.out_values) + base;
                for (int i = threadIdx.x; i < H; i += BLOCK_THREADS) out[i] = vals[i];
                return;
            }
        }
        const int lo = s.first_written ? 0 : 1;
        const int hi = H + (s.last_written ? 1 : 0);
        for (int i = lo + (int)threadIdx.x; i < hi; i += BLOCK_THREADS) {
            const uint64_t r = base + i - 1;
            if constexpr (VALUED) {
                static_cast<V*>(p.out_values)[r] =
                    i == 0 ? VP::store(Op::apply(exclusive.value, s.slot0_value)) : vals[i - 1];
            } else if constexpr (POSITIONS) {
                const uint64_t run_start = i == 0 ? (uint64_t)exclusive.value : start + s.starts[i - 1];
                const uint64_t run_end = start + (i == 0 ? s.slot0_end : (uint32_t)s.ends[i - 1]);
                if (non_trivial) put_index(p.out_keys, r, run_start, p.length_bytes);
                put_index(p.out_values, r, p.mode == RUNS_ENDS ? run_end : run_end - run_start, p.length_bytes);
            }
        }
    }

    // Bit j: key j differs from key j-1 (key -1 being `prev`); `last` = key IPT-1 differs from `next`.
    // Tag: how keys compare (`Tag::differ(earlier, later)`), chosen once per thread by KE.
    template <class Tag>
    static __device__ __forceinline__ uint32_t differ_mask(const K (&k)[IPT], K prev, K next, uint32_t& last) {
        uint32_t m = (uint32_t)Tag::differ(prev, k[0]);
#pragma unroll
        for (int j = 1; j < IPT; ++j) m |= (uint32_t)Tag::differ(k[j - 1], k[j]) << j;
        last = (uint32_t)Tag::differ(k[IPT - 1], next);
        return m;
    }

    // differ_mask for KE's comparison tag: a functor, not a generic lambda, which NVRTC takes for host
    // code (rtc/by_key.cuh and rtc/runs.cuh compile this agent at run time).
    struct DifferMask {
        const K (&k)[IPT];
        K prev;
        K next;
        uint32_t& last;
        template <class Tag> __device__ __forceinline__ uint32_t operator()(Tag) const {
            return differ_mask<Tag>(k, prev, next, last);
        }
    };

    // The scans' initial value (RUNS_SCAN_EXCLUSIVE).
    static __device__ __forceinline__ A scan_seed(const RunsParams& p) {
        return VP::seed(p.seed);
    }

    // Scans: rewrites this thread's values v[j], j >= from, with their run's values so far (with or
    // without the item, by the mode), `running` being the run's value before item `from`; then stages all
    // of v in the value tile.
    static __device__ __forceinline__ void scan_and_stage(const RunsParams& p, Storage& s, V (&v)[IPT],
                                                          uint32_t heads, A running, int from) {
        const A seed = scan_seed(p);
        const bool inclusive = p.mode == RUNS_SCAN_INCLUSIVE;
#pragma unroll
        for (int j = 0; j < IPT; ++j) {
            const bool head = (heads >> j) & 1u;
            const A x = VP::load(v[j]);
            if (j < from) continue;
            if (inclusive) {
                running = head ? x : Op::apply(running, x);
                v[j] = VP::store(running);
            } else {
                v[j] = VP::store(head ? seed : Op::apply(seed, running));
                running = head ? x : Op::apply(running, x);
            }
        }
#pragma unroll
        for (int c = 0; c < VB; ++c) {
            typename ValIO::Chunk& chunk = ValIO::own_chunk(s.values, c);
#pragma unroll
            for (int e = 0; e < ValIO::ITEMS_PER_CHUNK; ++e) chunk.items[e] = v[c * ValIO::ITEMS_PER_CHUNK + e];
        }
    }

    // Stores chunks [lo, hi) of the value tile to `out` (the tile's first item), striped across the block:
    // 16-byte vectors when `vector`, else item by item, only items below `valid`.
    static __device__ __forceinline__ void store_value_chunks(V* out, const uint4* smem, bool vector, int valid,
                                                              int lo, int hi) {
        if (vector) {
            uint4* dst = reinterpret_cast<uint4*>(out);
            for (int g = lo + (int)threadIdx.x; g < hi; g += BLOCK_THREADS) dst[g] = smem[ValIO::slot(g)];
        } else {
            const int end = min(valid, hi * ValIO::ITEMS_PER_CHUNK);
            for (int i = lo * ValIO::ITEMS_PER_CHUNK + (int)threadIdx.x; i < end; i += BLOCK_THREADS)
                out[i] = ValIO::item_at(const_cast<uint4*>(smem), i);
        }
    }

    static __device__ __forceinline__ void put_index(void* base, uint64_t at, uint64_t x, uint32_t bytes) {
        if (bytes == 4) static_cast<uint32_t*>(base)[at] = (uint32_t)x;
        else static_cast<uint64_t*>(base)[at] = x;
    }

    static __device__ __forceinline__ void run(const RunsParams& p) {
        __shared__ Storage s;
        const LookbackParams& lb = p.lb;
        if (threadIdx.x == 0) {
            take_tile(s.ticket, lb, p.n, {p.keys, p.n * sizeof(K), TILE_ITEMS * sizeof(K)},
                      {p.values, HAS_VALUES ? p.n * sizeof(V) : 0, TILE_ITEMS * sizeof(V)});
            s.first_written = 0;
            s.first_head = TILE_ITEMS;
            s.last_written = 0;
        }
        __syncthreads();
        const BlockTile bt = block_tile(s.ticket, lb);
        if (bt.idle(TILE_ITEMS)) return;
        if (bt.n == 0) {  // a device count of 0: no runs (the scans by key write nothing)
            if (threadIdx.x == 0 && p.mode != RUNS_SCAN_INCLUSIVE && p.mode != RUNS_SCAN_EXCLUSIVE) *p.num_runs = 0;
            return;
        }
        const uint64_t n = bt.n;
        const uint64_t tile = bt.tile;
        LB_TRACE(tile, 0);
        const uint64_t start = tile * (uint64_t)TILE_ITEMS;
        const int valid = (int)min((uint64_t)TILE_ITEMS, n - start);
        const bool full = valid == TILE_ITEMS;
        const K* keys = static_cast<const K*>(p.keys) + start;
        const V* values = static_cast<const V*>(p.values) + start;

        // 1. Load the tile, and the keys just outside it.
        if (threadIdx.x == 0) s.before_tile = start > 0 ? keys[-1] : K(0);
        if (threadIdx.x == BLOCK_THREADS - 1) s.after_tile = start + valid < n ? keys[valid] : K(0);
        // Typed, not generic, lambdas: NVRTC (rtc/by_key.cuh) takes a generic lambda's call operator for
        // host code.
        auto ignore_key = [](K) {};
        if (full && KeyIO::aligned(keys)) KeyIO::load_full(keys, s.keys, ignore_key);
        else KeyIO::load_partial(keys, valid, K(0), s.keys, ignore_key);
        if constexpr (HAS_VALUES) {
            auto ignore_value = [](V) {};
            if (full && ValIO::aligned(values)) ValIO::load_full(values, s.values, ignore_value);
            else ValIO::load_partial(values, valid, from_bits<V>(0), s.values, ignore_value);
        }
        __syncthreads();
        LB_TRACE(tile, 1);

        // 2. This thread's IPT consecutive items: which start a run (heads) and which end one (tails).
        const int first = (int)threadIdx.x * IPT;
        K k[IPT];
#pragma unroll
        for (int c = 0; c < KB; ++c) {
            const typename KeyIO::Chunk chunk = KeyIO::own_chunk(s.keys, c);
#pragma unroll
            for (int e = 0; e < KeyIO::ITEMS_PER_CHUNK; ++e) k[c * KeyIO::ITEMS_PER_CHUNK + e] = chunk.items[e];
        }
        V v[IPT];
        if constexpr (HAS_VALUES) {
#pragma unroll
            for (int c = 0; c < VB; ++c) {
                const typename ValIO::Chunk chunk = ValIO::own_chunk(s.values, c);
#pragma unroll
                for (int e = 0; e < ValIO::ITEMS_PER_CHUNK; ++e) v[c * ValIO::ITEMS_PER_CHUNK + e] = chunk.items[e];
            }
        }
        const K prev = threadIdx.x == 0 ? s.before_tile : KeyIO::item_at(s.keys, first - 1);
        const K next = threadIdx.x == BLOCK_THREADS - 1 ? s.after_tile : KeyIO::item_at(s.keys, first + IPT);
        // Item j starts a run when it differs from item j-1 and ends one when item j+1 differs from it:
        // IPT + 1 comparisons give both masks. The first item of the input always starts a run and the
        // last always ends one; items past the end belong to no run.
        uint32_t last_differs;
        const uint32_t differs = KE::template dispatch<KB>(p, DifferMask{k, prev, next, last_differs});
        const int mine = max(0, min(IPT, valid - first));
        const uint32_t in_range = (uint32_t)((1ull << mine) - 1);  // 64-bit shift: see classic/select.cuh
        uint32_t heads = differs, tails = (differs >> 1) | (last_differs << (IPT - 1));
        if (start + first == 0) heads |= 1u;
        if (start + valid == n && valid - first >= 1 && valid - first <= IPT) tails |= 1u << (valid - first - 1);
        heads &= in_range;
        tails &= in_range;
        const uint32_t counted = (!VALUED && p.mode == RUNS_NON_TRIVIAL) ? (heads & ~tails) : heads;

        // 3. The thread's tile-local pair, the block scan, the tile's aggregate (published by warp 0).
        Local own;
        own.count = __popc(counted);
        if constexpr (VALUED) {
            own.value = since_last_head<Op, V, IPT, VP>(v, heads, in_range);
        } else {
            own.value = heads ? (uint32_t)(first + 31 - __clz((int)heads)) + 1u : 0u;
        }
        Local tile_local;
        const Local prefix = block_exclusive_scan<POp>(own, tile_local, s.scan);
        // From here on the input tiles are free: every thread read its items and its neighbours' keys
        // before the block scan's barrier.
        Pair aggregate;
        aggregate.count = tile_local.count;
        if constexpr (VALUED) aggregate.value = tile_local.value;
        else aggregate.value = tile_local.value ? start + tile_local.value - 1 : 0;
        const State state = make_state(bt);
        LB_TRACE(tile, 2);

        if (!VALUED || p.mode == RUNS_REDUCE) {
            // 4. Every warp stages its runs' outputs in shared memory at tile-local slots (which need no
            //    prefix), and warp 0 looks back; then everything is stored coalesced. With one sub-window
            //    per step warp 0 looks back while the others stage. With wider steps warp 0 publishes,
            //    stages, then looks back: that costs the look-back nothing (its first poll sleeps anyway)
            //    and frees warp 0's item registers for the window's loads.
            if constexpr (LOOKBACK_WIDE == 1) {
                if (warp_id() == 0) lookback_and_publish(state, tile, aggregate, s, lb);
                LB_TRACE(tile, 3);
                stage(p, s, k, v, heads, tails, counted, prefix, tile_local.count, first);
            } else {
                if (warp_id() == 0) publish_aggregate(state, tile, aggregate);
                stage(p, s, k, v, heads, tails, counted, prefix, tile_local.count, first);
                if (warp_id() == 0) lookback(state, tile, aggregate, s, lb);
                LB_TRACE(tile, 3);
            }
            __syncthreads();
            LB_TRACE(tile, 4);
            store_staged(p, s, tile_local.count, start, valid, n);
            LB_TRACE(tile, 5);
            return;
        }

        // 4'. Scans. Only the items before the tile's first head (the run carried in from earlier tiles)
        //     depend on the tile's exclusive prefix; every later item's result is known now. So the tile
        //     is finished and stored from the first chunk without such an item before the look-back,
        //     which then only delays the few chunks before it. And a tile with a head knows its inclusive
        //     prefix at once (the reduction since its last head, its aggregate's value): it publishes P
        //     straight away, so a successor's look-back stops at its predecessor as soon as that one has
        //     reduced, instead of waiting for the prefix chain. Scans use only the value of a pair; the
        //     count such a P carries is tile-local.
        if constexpr (VALUED && sizeof(A) == 8) {
            // 8-byte reductions wait for the prefix, then rewrite and store the whole tile. The split
            // below costs their kernel, which holds every mode, registers the reduction pays for: f64
            // spills rose from 20 to 72 bytes at 80 registers, reduce_by_key f64 slowed 8-10 % and
            // scan_by_key gained 1-3 % (13 % at 2^20) (benches/log, 2026-12-01).
            if (warp_id() == 0) lookback_and_publish(state, tile, aggregate, s, lb);
            __syncthreads();
            scan_and_stage(p, s, v, heads, prefix.count ? prefix.value : Op::apply(s.exclusive.value, prefix.value), 0);
            __syncthreads();
            V* out = static_cast<V*>(p.out_values) + start;
            if (full && ValIO::aligned(out)) ValIO::store_full(out, s.values);
            else ValIO::store_partial(out, valid, s.values);
        } else if constexpr (VALUED) {
            const bool has_heads = tile_local.count > 0;
            if (warp_id() == 0 && lane_id() == 0) state.publish(tile, tile == 0 || has_heads ? STATUS_P : STATUS_A, aggregate);
            // This thread's items before its first head continue the run carried in when no head precedes
            // them in the tile (and are then the tile's first items): they wait for the prefix.
            const int carried = prefix.count ? 0 : heads ? __ffs((int)heads) - 1 : IPT;
            if (prefix.count == 0 && heads) s.first_head = (uint32_t)(first + carried);
            // From the thread's first head on, the run's value before it does not matter; the items before
            // it are staged unchanged, for the fix-up below.
            scan_and_stage(p, s, v, heads, prefix.value, carried);
            __syncthreads();
            const int first_head = (int)s.first_head;
            const int first_final_chunk = (first_head + ValIO::ITEMS_PER_CHUNK - 1) / ValIO::ITEMS_PER_CHUNK;
            V* out = static_cast<V*>(p.out_values) + start;
            const bool vector_io = full && ValIO::aligned(out);
            store_value_chunks(out, s.values, vector_io, valid, first_final_chunk, ValIO::TILE_CHUNKS);
            if (tile == 0) return;  // nothing waits for a prefix, and P is published
            if (first_head == 0) {  // likewise, but an anchor of the deterministic mode still owes its entry
                if (warp_id() == 0 && anchor_duty<POp, Pair>(lb, tile))
                    (void)resolve_prefix<POp, Pair, State>(state, tile, lb, aggregate, false);
                return;
            }

            // One sub-window per step (not LOOKBACK_WIDE): the walk ends at the first predecessor with a head.
            if (warp_id() == 0) {
                const Pair exclusive = resolve_prefix<POp, Pair, State>(state, tile, lb, aggregate, !has_heads);
                if (lane_id() == 0) s.exclusive = exclusive;
            }
            __syncthreads();
            if (carried > 0) {
                // The carried items (no head among them) from their staged inputs: the value tile rather
                // than registers keeps v[] dead across the look-back. Each item is read and rewritten as
                // its bits, and everything that needs the input is computed before the write: with the
                // item read as a struct (a user type of four u8, NVRTC and nvcc 13.0), the compiler read
                // some of its bytes again after the exclusive result was stored over them.
                using VBits = typename Bits<sizeof(V)>::type;
                const A seed = scan_seed(p);
                const bool inclusive = p.mode == RUNS_SCAN_INCLUSIVE;
                A run = Op::apply(s.exclusive.value, prefix.value);
#pragma unroll
                for (int j = 0; j < IPT; ++j) {
                    if (j >= carried) continue;
                    VBits* cell = reinterpret_cast<VBits*>(&ValIO::item_at(s.values, first + j));
                    const A x = VP::load(from_bits<V>(*cell));
                    const A before = run;
                    run = Op::apply(run, x);
                    *cell = to_bits(VP::store(inclusive ? run : Op::apply(seed, before)));
                }
            }
            __syncthreads();
            store_value_chunks(out, s.values, vector_io, valid, 0, first_final_chunk);
        }
    }
};

}  // namespace lookback
