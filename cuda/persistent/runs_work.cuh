// The run-based primitives on the persistent engine (persistent/engine.cuh, sm_90+): run-length and run-end
// encoding and unique_by_key (`lookback_pipe_runs_k<key bytes>_v<value bytes>`), reduce_by_key with Sum,
// Min or Max (`lookback_pipe_by_key_<op>_k<key bytes>_<value type>`); the scans by key reuse this Work's
// reduction with their own write pass (persistent/scan_by_key_work.cuh). Non-trivial runs are the encodings'
// kernels with another count (write_non_trivial). Semantics are the classic
// agent's, item for item: read its header for the pair operator and the outputs.
//
// What a tile reduces to. The scanned value is the classic agent's pair (count, payload): count = run
// heads (non-trivial runs: markers, the second items of runs longer than one), payload = the segmented
// reduction of the current run's values (reduce_by_key) or the global index of the latest head (the
// encodings; a max). The pair operator is associative but does not commute, so the Work says
// COMMUTATIVE = false and the engine folds other tiles' aggregates in tile order (lane-contiguous reads
// polled together, then a lane-ordered warp reduction); inside a tile everything is in item order:
// a lane's items, then the lanes of a round (warp scans), then rounds, then warps (the engine's warp
// totals).
//
// Packed aggregates. The engine publishes tile *aggregates* only, whose counts are tile-local (at most
// TILE_ITEMS <= 2^15), so (tag, count, payload) fits one 64-bit word when the payload has at most 4
// bytes; positions travel as the tile-local index + 1 of the tile's latest head and become global again
// in RunsPairState::read, which knows the tile it read (tile_state.cuh). Only 8-byte reductions use two
// words (value, then the word with release).
//
// Heads and tails across tiles. Item i starts a run when key i differs from key i-1 (IEEE == for float
// keys: each NaN its own run), so a lane needs the key before its first item: its left neighbour's last
// key (a shuffle), the previous round's last key, or for the tile's first item key start-1, which the
// load lane bulk-copies with the tile (`on_load`: a compute warp that read it from global memory would
// stall every warp of the block for an HBM round trip on every tile). Instead of
// comparing with key i+1, a run is closed by the item that starts the next one (it knows the run's
// index, count - 1, and its reduction or start so far) or by item n-1: so a run that ends at a tile's
// last item is closed by the next tile's first item, with the prefix that the look-ahead folded in, and
// a run spanning many tiles is carried through their aggregates (count 0: the payload just accumulates,
// or keeps the earlier head's position).
//
// Layout: compute warp w owns WARP_ITEMS consecutive items of its tile and takes them in rounds of
// 32 · GI consecutive items, lane l owning GI consecutive items of a round (GI: 16, or fewer so that a
// round holds at most 64 bytes of keys per lane and fits the warp's items). A lane reads its items with
// 16-byte loads, starting at a lane-dependent chunk and rotating them back in registers
// (load_group_rotated), so a quarter warp's loads spread over the bank groups. A round's results are
// contiguous in every output (its runs are), so the warp stages them in shared memory and stores them
// coalesced: run keys (and unique's values, reduce_by_key's results) over the round's own part of the
// ring slot, which every lane has read into registers by then (a round has at most as many runs as
// items); for the encodings, the round-local index of each run's head in a per-warp buffer of static
// shared memory, from which the copy-out computes the lengths or ends. Storing straight from registers
// (the first version) put one warp store into up to 32 sectors and saturated L2 at a fifth of HBM's
// write bandwidth (benches/log).
//
// Early staging (prepare_tile; reduce_by_key and unique_by_key with one round per warp, ROUNDS == 1:
// keys and values of 4 or more bytes together). The lanes keep their round in registers from the reduce
// (`Kept`), and right after the tile's aggregate is published — long before its prefix is known — the warp
// scans the round and stages its run keys and values or results over its part of the slot. Only what
// depends on the prefix waits for it: the copy-out (at the runs before the warp) and reduce_by_key's result
// of the run open when the warp starts (its part in the warp kept beside the slot, finished in scan_tile).
// Without it the write pass read the round again, recomputed its heads and scanned it after the prefix
// wait, on every tile: reduce_by_key i32 at 2^28 1088 → 1007 µs, unique_by_key 1265 → 1253 (H200,
// benches/log 2026-12-01). The encodings stay as they were: the same split (lengths or ends staged
// after the keys, a fallback for warps whose runs do not fit) made run-length encoding 17 % slower and,
// through its registers (96, the cap, with a spill), non-trivial runs 16 % slower though they never
// staged early. The input's last tile (item n-1 closes its run) writes after the prefix.
//
// Not in place (the Rust layer rejects overlapping buffers): a tile reads key start-1 from global memory,
// which is another tile's input.
#pragma once
#include "../classic/runs.cuh"
#include "engine.cuh"

namespace lookback {

// N items of T moved with the widest vector accesses their total size allows (16, 8 or 4 bytes; none: item
// by item), through a union of the vectors and the items.
template <class T, int N> struct VectorGroup {
    static constexpr int BYTES = N * (int)sizeof(T);
    static constexpr int W = BYTES % 16 == 0 ? 16 : BYTES % 8 == 0 ? 8 : BYTES % 4 == 0 ? 4 : 0;
    static constexpr int VECTORS = W == 0 ? 1 : BYTES / W;
    using U = std::conditional_t<W == 16, uint4, std::conditional_t<W == 8, uint2, uint32_t>>;
    union Bits {
        U u[VECTORS];
        T t[N];
    };
};

// N items of T from shared memory at `src` (aligned to N·sizeof(T) bytes), with the widest vector loads.
template <class T, int N> __host__ __device__ __forceinline__ void load_group(const T* src, T (&dst)[N]) {
    using G = VectorGroup<T, N>;
    if constexpr (G::W == 0) {
#pragma unroll
        for (int i = 0; i < N; ++i) dst[i] = src[i];
    } else {
        typename G::Bits x;
#pragma unroll
        for (int i = 0; i < G::VECTORS; ++i) x.u[i] = reinterpret_cast<const typename G::U*>(src)[i];
#pragma unroll
        for (int i = 0; i < N; ++i) dst[i] = x.t[i];
    }
}

// N items of T to `dst` (global or shared, aligned to N·sizeof(T) bytes), with the widest vector stores.
template <class T, int N> __host__ __device__ __forceinline__ void store_group(T* dst, const T (&src)[N]) {
    using G = VectorGroup<T, N>;
    typename G::Bits x;
#pragma unroll
    for (int i = 0; i < N; ++i) x.t[i] = src[i];
    if constexpr (G::W == 0) {
#pragma unroll
        for (int i = 0; i < N; ++i) dst[i] = x.t[i];
    } else {
#pragma unroll
        for (int i = 0; i < G::VECTORS; ++i) reinterpret_cast<typename G::U*>(dst)[i] = x.u[i];
    }
}

// The rotation of lane `lane`'s 16-byte loads of a group of NC chunks, when consecutive lanes' groups are
// LANE_STRIDE bytes apart: lanes whose groups start in the same bank group (16 bytes of the 128-byte bank
// row) within a quarter warp (8 lanes: one 16-byte load wavefront) start at different chunks, so a
// quarter warp's loads hit min(8, NC · distinct starts) bank groups instead of as few as one.
template <int NC, int LANE_STRIDE> __host__ __device__ constexpr int group_rotation(int lane) {
    constexpr int UNITS = LANE_STRIDE / 16;                        // 16-byte units between lanes
    constexpr int STARTS = UNITS >= 8 ? 1 : UNITS == 0 ? 8 : 8 / UNITS;  // distinct start bank groups
    return (lane / STARTS) & (NC - 1);
}

// load_group for full tiles: the same N items, but the group's NC 16-byte chunks are loaded starting at
// chunk `rot` (see group_rotation) and rotated back in registers with a log2(NC)-stage select network
// (static register indices only: no local memory).
template <class T, int N> __host__ __device__ __forceinline__ void load_group_rotated(const T* src, T (&dst)[N],
                                                                                     int rot) {
    constexpr int BYTES = N * (int)sizeof(T);
    constexpr int NC = BYTES / 16;
    if constexpr (BYTES % 16 != 0 || NC < 2 || (NC & (NC - 1)) != 0) {
        load_group(src, dst);
    } else {
        union {
            uint4 u[NC];
            T t[N];
        } x;
        const uint4* chunks = reinterpret_cast<const uint4*>(src);
#pragma unroll
        for (int c = 0; c < NC; ++c) x.u[c] = chunks[(c + rot) & (NC - 1)];  // x.u[c] = chunk c + rot
#pragma unroll
        for (int b = 1; b < NC; b <<= 1) {
            // Rotate by b where rot has bit b: afterwards x.u[j] = chunk j + (rot without the bits done).
            const bool on = (rot & b) != 0;
            uint4 y[NC];
#pragma unroll
            for (int j = 0; j < NC; ++j) y[j] = on ? x.u[(j - b + NC) & (NC - 1)] : x.u[j];
#pragma unroll
            for (int j = 0; j < NC; ++j) x.u[j] = y[j];
        }
#pragma unroll
        for (int i = 0; i < N; ++i) dst[i] = x.t[i];
    }
}

// KB: key bytes. V: the value type (NoValues for the encodings). VALUED: values are reduced with Op_
// (reduce_by_key); otherwise they are only carried (unique_by_key) or absent.
template <int KB, class V, class Op_, bool VALUED> struct PipeRunsWork : PipeWorkDefaults {
    static constexpr Algo ALGO = Algo::runs;
    using Params = RunsParams;
    using K = typename Bits<KB>::type;
    static constexpr bool HAS_VALUES = VALUED || !std::is_same_v<V, NoValues>;
    static constexpr bool UNIQUE = HAS_VALUES && !VALUED;  // unique_by_key: values carried, not reduced
    static constexpr int ITEM_BYTES = KB;
    static constexpr int VALUE_BYTES = HAS_VALUES ? (int)sizeof(V) : 0;
    static constexpr bool COMMUTATIVE = false;
    static constexpr bool WRITES_RING = true;  // run keys and values are staged over the slot
    // Batched look-ahead loads for reduce_by_key (and the scans by key, which inherit it): i32 runs of 4 at
    // 2^28 on the H200, 1232 -> 1096 µs (scan_by_key 1228 -> 942); the position-carrying Works measured
    // slower with them (unique_by_key 1262 -> 3000, run_length_encode 734 -> 751; benches/log).
    // BATCHED_LOOKAHEAD is defined below, after AV.
    // The engine's tile, computed here too (the engine cannot be asked while this class is incomplete;
    // scan_tile asserts that both agree).
    using Shape = PipeTuning<Algo::runs>;
    static constexpr int WARPS = Shape::COMPUTE_WARPS;
    static constexpr int TILE_ITEMS =
        WARPS * 32 * Shape::CHUNKS_PER_LANE * 16 / pow2_at_least(KB + VALUE_BYTES);
    static constexpr int WARP_ITEMS = TILE_ITEMS / WARPS;
    // Items per lane per round: 16, at most 64 bytes of keys, at most the warp's items over 32 lanes.
    static constexpr int GI = (64 / KB < 16 ? 64 / KB : 16) < WARP_ITEMS / 32 ? (64 / KB < 16 ? 64 / KB : 16)
                                                                           : WARP_ITEMS / 32;
    static constexpr int ROUND_ITEMS = 32 * GI;
    static constexpr int ROUNDS = WARP_ITEMS / ROUND_ITEMS;
    static_assert(GI >= 1 && WARP_ITEMS % ROUND_ITEMS == 0, "a warp's items are whole rounds");
    static constexpr bool POSITIONS = !VALUED;  // payload: the latest head's position (unused by unique)
    using AV = std::conditional_t<VALUED, typename Acc<V>::type, uint64_t>;
    using A = RunPair<AV>;
    // Not for 8-byte reductions (16-byte entries): batched, f64 reduce_by_key at 2^28 measured 2577 or
    // 4287 µs in two calls, against 2869 one by one in both (benches/log, 2026-11-30).
    static constexpr bool BATCHED_LOOKAHEAD = VALUED && sizeof(AV) <= 4;
    using Op = std::conditional_t<VALUED, PairOp<Op_, true>, PairOp<OpMax, false>>;
    using State = RunsPairState<A, POSITIONS, TILE_ITEMS>;
    // Inside a round: 32-bit counts, and for positions the round-local index of the latest head (a max;
    // the identity, INT_MIN, means none).
    using LV = std::conditional_t<VALUED, AV, int32_t>;
    using L = LocalPair<LV>;
    using LOp = std::conditional_t<VALUED, PairOp<Op_, true>, PairOp<OpMax, false>>;
    using VS = std::conditional_t<HAS_VALUES, V, uint8_t>;  // a value column's item (unused without one)
    static constexpr int VB_ = (int)sizeof(VS);
    // Early staging (prepare_tile): keyed Works whose warp's items are one round, kept in registers.
    static constexpr bool EARLY = ROUNDS == 1 && HAS_VALUES;
    struct Slot {
        uint4 before;  // the 16 bytes of keys before the tile (tiles after the first): key start-1 last
        // Early-staged tiles, per warp (prepare_tile for scan_tile): runs starting in the warp, and for
        // reduce_by_key the reduction of its items before its first head.
        uint32_t runs[EARLY ? WARPS : 1];
        AV first[EARLY ? WARPS : 1];
    };
    using Engine = PipeEngine<PipeRunsWork>;

    // This lane's items of one round.
    struct Round {
        K k[GI];
        VS v[GI];
        uint32_t heads;    // bit e: item e starts a run (only items that exist)
        uint32_t counted;  // bit e: item e counts in the pair: a head, or for non-trivial runs a marker
        int n;             // items of the lane that exist (GI in a full tile)
    };
    // What a lane keeps from its reduce for prepare_tile (EARLY): its round.
    struct Kept {
        Round r;
    };

    static __device__ __forceinline__ const void* input(const Params& p) { return p.keys; }
    static __device__ __forceinline__ const void* values_input(const Params& p) { return p.values; }
    static __device__ __forceinline__ State state(const Params&, uint64_t* status, unsigned epoch) { return {status, epoch}; }
    static __device__ __forceinline__ A initial(const Params&) { return Op::template identity<A>(); }
    // Every mode this Work runs writes the number of runs (the scans by key override this).
    static __device__ __forceinline__ void finish(const Params& p, A total) { *p.num_runs = total.count; }
    // reduce_tile returns the warp's total in every lane already (rounds are reduced in item order).
    template <class, class X> static __device__ __forceinline__ X warp_sum(X x) { return x; }

    // Key start-1 for the tile's first item, by a bulk copy of the 16 bytes before the tile (16-byte
    // aligned: the keys are, and a tile is a multiple of 16 bytes) on the tile's `full` barrier: a plain
    // load would hold the load lane for an HBM round trip on every tile.
    static __device__ __forceinline__ void on_load(const Params& p, Slot& slot, uint64_t start, uint64_t* full) {
        if (start == 0) return;
        mbar_expect_tx(full, sizeof(uint4));
        bulk_load(&slot.before, static_cast<const char*>(p.keys) + start * KB - sizeof(uint4), sizeof(uint4), full);
    }

    // The key before this warp's first item (any value for the input's first item, which is a head).
    template <bool FULL>
    static __device__ __forceinline__ K warp_key_before(const Params& p, const Slot& slot, const uint4* tile,
                                                        uint64_t start, int valid) {
        const int first = (int)warp_id() * WARP_ITEMS;
        if (first == 0) return reinterpret_cast<const K*>(&slot.before)[16 / KB - 1];
        if constexpr (FULL) return reinterpret_cast<const K*>(tile)[first - 1];
        else return Engine::partial_item(tile, static_cast<const K*>(p.keys) + start, first - 1, valid, K(0));
    }

    // Non-trivial runs: whether the item before this warp's first item starts a run (true for the input's
    // first warp, whose first item is item 0: a head, never a marker). Keys first-2 and first-1 come from
    // the tile, or for the tile's first warp from the 16 bytes before the tile (two keys or more).
    template <bool FULL, KeyEq EQ>
    static __device__ __forceinline__ bool warp_head_before(const Params& p, const Slot& slot, const uint4* tile,
                                                            uint64_t start, int valid) {
        const int first = (int)warp_id() * WARP_ITEMS;
        if (start + (uint64_t)first <= 1) return true;
        K a, b;
        if (first == 0) {
            a = reinterpret_cast<const K*>(&slot.before)[16 / KB - 2];
            b = reinterpret_cast<const K*>(&slot.before)[16 / KB - 1];
        } else if constexpr (FULL) {
            a = reinterpret_cast<const K*>(tile)[first - 2];
            b = reinterpret_cast<const K*>(tile)[first - 1];
        } else {
            const K* in = static_cast<const K*>(p.keys) + start;
            a = Engine::partial_item(tile, in, first - 2, valid, K(0));
            b = Engine::partial_item(tile, in, first - 1, valid, K(0));
        }
        return keys_differ<EQ>(a, b);
    }

    // This lane's items of the round starting at tile item `first` (its own start at first + GI·lane),
    // with values when WITH_VALUES, and their heads. `prev`: the key before the round's first item; on
    // return, the round's last key. Non-trivial runs (`nt`) count markers, the second items of runs longer
    // than one (an item that is not a head after one that is), which need whether the item before each
    // lane's first item is a head: `prev_head`, for the round's first item, then the round's last.
    template <bool FULL, KeyEq EQ, bool WITH_VALUES>
    static __device__ __forceinline__ Round load_round(const Params& p, const uint4* tile, uint64_t start, int valid,
                                                       int first, K& prev, bool nt, bool& prev_head) {
        Round r;
        const int lane = (int)lane_id();
        const int mine = first + GI * lane;
        const uint4* vtile = reinterpret_cast<const uint4*>(reinterpret_cast<const char*>(tile) + Engine::VALUES_OFFSET);
        if constexpr (FULL) {
            constexpr int KC = GI * KB >= 16 ? GI * KB / 16 : 1;
            constexpr int VC = GI * VB_ >= 16 ? GI * VB_ / 16 : 1;
            load_group_rotated(reinterpret_cast<const K*>(tile) + mine, r.k, group_rotation<KC, GI * KB>(lane));
            if constexpr (WITH_VALUES)
                load_group_rotated(reinterpret_cast<const V*>(vtile) + mine, r.v, group_rotation<VC, GI * VB_>(lane));
            r.n = GI;
        } else {
            const K* kin = static_cast<const K*>(p.keys) + start;
#pragma unroll
            for (int e = 0; e < GI; ++e) {
                r.k[e] = Engine::partial_item(tile, kin, mine + e, valid, K(0));
                if constexpr (WITH_VALUES)
                    r.v[e] = Engine::partial_item(vtile, static_cast<const V*>(p.values) + start,
                                                  mine + e, valid, from_bits<V>(0));
            }
            r.n = max(0, min(GI, valid - mine));
        }
        K before = shfl_up(r.k[GI - 1], 1);
        if (lane == 0) before = prev;
        prev = shfl_from(r.k[GI - 1], 31);
        uint32_t heads = keys_differ<EQ>(before, r.k[0]) || start + (uint64_t)mine == 0;
#pragma unroll
        for (int e = 1; e < GI; ++e) heads |= (uint32_t)keys_differ<EQ>(r.k[e - 1], r.k[e]) << e;
        const uint32_t exists = (1u << (FULL ? GI : r.n)) - 1;  // GI <= 16: the shift is defined
        heads &= exists;
        r.heads = heads;
        r.counted = heads;
        if (nt) {
            uint32_t head_before = shfl_up(heads >> (GI - 1), 1) & 1u;
            if (lane == 0) head_before = prev_head;
            prev_head = (shfl_from(heads, 31) >> (GI - 1)) & 1u;
            r.counted = ~heads & ((heads << 1) | head_before) & exists;
        }
        return r;
    }

    // Value e of a lane's round as the accumulator type; the identity past the end of the input.
    template <bool FULL> static __device__ __forceinline__ AV value_at(const Round& r, int e) {
        if constexpr (FULL) return Acc<V>::load(r.v[e]);
        else return e < r.n ? Acc<V>::load(r.v[e]) : Op_::template identity<AV>();
    }

    // The lane's pair: its heads, and the reduction since its latest head (or that head's round-local
    // index, `mine_in_round` being the lane's first).
    template <bool FULL> static __device__ __forceinline__ L lane_pair(const Round& r, int mine_in_round) {
        L x;
        x.count = __popc(r.counted);
        if constexpr (VALUED) {
            AV acc = Op_::template identity<AV>();
#pragma unroll
            for (int e = 0; e < GI; ++e) {
                const AV v = value_at<FULL>(r, e);
                acc = (r.heads >> e) & 1u ? v : Op_::apply(acc, v);
            }
            x.value = acc;
        } else {
            x.value = r.heads ? mine_in_round + 31 - __clz(r.heads) : LOp::template identity<L>().value;
        }
        return x;
    }

    // A round-local pair as a tile pair (global positions), for the round starting at global item `at`.
    static __device__ __forceinline__ A widen(const L& x, uint64_t at) {
        A a;
        a.count = x.count;
        if constexpr (VALUED) a.value = x.value;
        else a.value = x.value >= 0 ? at + (uint64_t)x.value : 0;  // 0: the max's identity
        return a;
    }

    // The variants of a pass: full or partial tile × how keys compare (key_equality.cuh).
    template <template <bool, KeyEq> class Pass, class... Args>
    static __device__ __forceinline__ auto dispatch(const Params& p, int valid, Args&&... args) {
        return with_key_eq<KB>(p, [&](auto eq) {
            constexpr KeyEq EQ = decltype(eq)::value;
            if (valid == TILE_ITEMS) return Pass<true, EQ>::run(p, valid, args...);
            return Pass<false, EQ>::run(p, valid, args...);
        });
    }

    // The warp's pair: its rounds' pairs, each reduced across lanes in lane order, folded in round order.
    template <bool FULL, KeyEq EQ> struct ReducePass {
        static __device__ __forceinline__ A run(const Params& p, int valid, const Slot& slot, const uint4* tile,
                                                uint64_t start, Kept& kept) {
            A total = Op::template identity<A>();
            K prev = warp_key_before<FULL>(p, slot, tile, start, valid);
            const bool nt = !HAS_VALUES && p.mode == RUNS_NON_TRIVIAL;
            bool prev_head = nt && warp_head_before<FULL, EQ>(p, slot, tile, start, valid);
            const int warp_first = (int)warp_id() * WARP_ITEMS;
#pragma unroll 1
            for (int g = 0; g < ROUNDS; ++g) {
                const int first = warp_first + g * ROUND_ITEMS;
                const Round r = load_round<FULL, EQ, VALUED || EARLY>(p, tile, start, valid, first, prev, nt, prev_head);
                if constexpr (EARLY) kept.r = r;
                const L round = warp_reduce<LOp>(lane_pair<FULL>(r, GI * (int)lane_id()));
                total = Op::apply(total, widen(round, start + (uint64_t)first));
            }
            return total;
        }
    };

    static __device__ __forceinline__ A reduce_tile(const Params& p, Slot& slot, const uint4* tile, uint64_t start,
                                                    int valid, Kept& kept) {
        return dispatch<ReducePass>(p, valid, slot, tile, start, kept);
    }

    // Whether a tile is staged early (prepare_tile): EARLY, and not the input's last tile (item n-1
    // closes its run there), so a full one. Uniform over the tile.
    static __device__ __forceinline__ bool early_tile(const Params& p, uint64_t start, int valid) {
        return EARLY && start + (uint64_t)valid != engine_items;
    }

    // Right after the tile's aggregate is published (early tiles): the warp scans its round, kept in
    // registers, and stages its runs over its part of the slot (every warp has read the slot by then),
    // each at its index h among the warp's runs: the run's key, and unique's value or reduce_by_key's
    // result of the run head h closes (h - 1; h = 0 closes the run open when the warp starts, whose result
    // needs the prefix: its part in the warp goes to Slot::first).
    static __device__ __forceinline__ void prepare_tile(const Params& p, Slot& slot, uint4* tile, uint64_t start,
                                                        int valid, const Kept& kept) {
        if constexpr (EARLY) {
            if (!early_tile(p, start, valid)) return;
            const int lane = (int)lane_id(), w = (int)warp_id();
            const int first = w * WARP_ITEMS;
            const Round& r = kept.r;
            const L inclusive = warp_inclusive_scan<LOp>(lane_pair<true>(r, GI * lane));
            L exclusive = shfl_up(inclusive, 1);
            if (lane == 0) exclusive = LOp::template identity<L>();
            const uint32_t runs = shfl_from(inclusive, 31).count;  // every lane: a shuffle
            K* stage_keys = reinterpret_cast<K*>(tile) + first;
            V* stage_values = reinterpret_cast<V*>(reinterpret_cast<char*>(tile) + Engine::VALUES_OFFSET) + first;
            uint32_t h = exclusive.count;
            [[maybe_unused]] AV cur = exclusive.value;  // reduce_by_key: since the latest head in the warp
#pragma unroll
            for (int e = 0; e < GI; ++e) {
                const bool head = (r.heads >> e) & 1u;
                if (head) stage_keys[h] = r.k[e];
                if constexpr (UNIQUE) {
                    if (head) stage_values[h] = r.v[e];
                } else {
                    if (head && h == 0) slot.first[w] = cur;
                    if (head && h > 0) stage_values[h] = Acc<V>::store(cur);
                    const AV x = value_at<true>(r, e);
                    cur = head ? x : Op_::apply(cur, x);
                }
                h += head;
            }
            if (lane == 0) slot.runs[w] = runs;
        }
    }

    // Once the prefix is known, an early-staged warp's runs out (coalesced) at `carry.count`, the runs
    // before the warp; reduce_by_key finishes the run open when the warp starts (run carry.count - 1).
    static __device__ __forceinline__ void copy_out(const Params& p, const Slot& slot, const uint4* tile, A carry) {
        const int lane = (int)lane_id(), w = (int)warp_id();
        const int first = w * WARP_ITEMS;
        const uint32_t runs = slot.runs[EARLY ? w : 0];
        const uint64_t base = carry.count;
        const K* stage_keys = reinterpret_cast<const K*>(tile) + first;
        const V* stage_values =
            reinterpret_cast<const V*>(reinterpret_cast<const char*>(tile) + Engine::VALUES_OFFSET) + first;
        K* out_keys = static_cast<K*>(p.out_keys) + base;
#pragma unroll 4
        for (uint32_t i = lane; i < runs; i += 32) out_keys[i] = stage_keys[i];
        if constexpr (UNIQUE) {
            V* out = static_cast<V*>(p.out_values) + base;
#pragma unroll 4
            for (uint32_t i = lane; i < runs; i += 32) out[i] = stage_values[i];
        } else {
            // Staged index h holds run base + h - 1: none before the input's first run.
            V* out = static_cast<V*>(p.out_values) + base - 1;
            if (lane == 0 && runs > 0 && base > 0)
                out[0] = Acc<V>::store(Op_::apply(carry.value, slot.first[EARLY ? w : 0]));
#pragma unroll 4
            for (uint32_t i = 1 + lane; i < runs; i += 32) out[i] = stage_values[i];
        }
    }

    // Encodings: per warp, the round-local index of each of a round's run heads (4 bytes: lengths and
    // ends, up to 8 bytes and wider than 1- or 2-byte keys, cannot be staged over the slot; the copy-out
    // computes them from consecutive heads, once per run instead of on every item).
    // One entry more than a round's items: non-trivial runs stage a round's markers (at most every other
    // item: ROUND_ITEMS / 2) from index 0 and its run ends (one more) from index ROUND_ITEMS / 2.
    static constexpr int STAGE_ITEMS = ROUND_ITEMS + 1;
    static __device__ __forceinline__ uint32_t* head_stage() {
        __shared__ uint32_t stage[HAS_VALUES ? 1 : WARPS * STAGE_ITEMS];
        return stage + (HAS_VALUES ? 0 : (int)warp_id() * STAGE_ITEMS);
    }

    static __device__ __forceinline__ void put_index(void* base, uint64_t at, uint64_t x, uint32_t bytes) {
        if (bytes == 4) static_cast<uint32_t*>(base)[at] = (uint32_t)x;
        else static_cast<uint64_t*>(base)[at] = x;
    }

    // Non-trivial runs, one round (WritePass, after its scan): the run with marker index h (counted from
    // the round's first, `exclusive.count` before this lane) starts at the marker's item - 1 and ends at
    // the head that closes it, any head at least two items after the current run's head. Markers' items
    // are staged at [0, round_runs), the ends at ROUND_ITEMS / 2 + h (h: the marker count when the head
    // is reached, so the end of run round_base + h - 1): a round holds the ends of runs round_base - 1
    // (marker in an earlier round) to round_base + round_runs - 1, each at most once. `last`: the
    // round-local index of item n-1 if this lane holds it (it closes its run), else -1.
    static __device__ __forceinline__ void write_non_trivial(const Params& p, const Round& r, const L& exclusive,
                                                             uint32_t round_runs, uint64_t round_base,
                                                             uint64_t open_before, uint64_t round_at, int last) {
        const int lane = (int)lane_id();
        constexpr int HALF = ROUND_ITEMS / 2;
        uint32_t* stage = head_stage();
        uint32_t h = exclusive.count;
        // Round-local index of the current run's head: this round's latest before the lane, or the head
        // open before the round (only "at least 2 before" matters there, so clamped at -2).
        int cur = exclusive.value;
        if (cur == LOp::template identity<L>().value)
            cur = (int)max((int64_t)open_before - (int64_t)round_at, (int64_t)-2);
        bool closes_first = false, closes_last = false;
#pragma unroll
        for (int e = 0; e < GI; ++e) {
            const int i = GI * lane + e;
            const bool head = (r.heads >> e) & 1u, marker = (r.counted >> e) & 1u;
            const bool closes = head && cur <= i - 2;
            if (closes) stage[HALF + h] = (uint32_t)i;
            closes_first |= closes && h == 0;
            closes_last |= closes && h == round_runs;
            if (marker) stage[h] = (uint32_t)i;
            h += marker;
            cur = head ? i : cur;
        }
        // Item n-1 closes its run, if that run is non-trivial: run round_base + h - 1.
        if (last >= 0 && cur <= last - 1) {
            const uint64_t begin = cur >= 0 ? round_at + (uint64_t)cur : open_before;
            put_index(p.out_values, round_base + h - 1, engine_items - begin, p.length_bytes);
        }
        const int c_lo = __any_sync(~0u, closes_first) ? 0 : 1;
        const int c_hi = __any_sync(~0u, closes_last) ? (int)round_runs : (int)round_runs - 1;
        __syncwarp();
#pragma unroll 4
        for (uint32_t i = lane; i < round_runs; i += 32)
            put_index(p.out_keys, round_base + i, round_at + stage[i] - 1, p.length_bytes);
#pragma unroll 4
        for (int c = c_lo + lane; c <= c_hi; c += 32) {
            const uint64_t end = round_at + stage[HALF + c];
            const uint64_t begin = c == 0 ? open_before : round_at + stage[c - 1] - 1;
            put_index(p.out_values, round_base + c - 1, end - begin, p.length_bytes);
        }
        __syncwarp();  // the next round restages
    }

    // Writes the runs of the warp's rounds. Per round: a warp scan of the lanes' pairs gives each lane the
    // run count before its first item and the current run's reduction (or head); each lane stages, at a
    // head, the run's key, its value (unique) or the previous run's result (reduce_by_key), or its
    // round-local index (the encodings), at the run's round-local index h (a result staged at h closes run
    // round_base + h - 1); the warp then copies the round's runs out in order. Item n-1 closes its run
    // with a direct store (the one result a round cannot stage: it would be the round's (h+1)-th). The
    // per-item loop is kept to predicated shared stores: it runs on every item, the copy-out once per run.
    template <bool FULL, KeyEq EQ> struct WritePass {
        static __device__ __forceinline__ void run(const Params& p, int valid, const Slot& slot, uint4* tile,
                                                   uint64_t start, A carry) {
            const int lane = (int)lane_id();
            const bool last_tile = start + (uint64_t)valid == engine_items;
            K prev = warp_key_before<FULL>(p, slot, tile, start, valid);
            const bool nt = !HAS_VALUES && p.mode == RUNS_NON_TRIVIAL;
            bool prev_head = nt && warp_head_before<FULL, EQ>(p, slot, tile, start, valid);
            const int warp_first = (int)warp_id() * WARP_ITEMS;
            K* out_keys = static_cast<K*>(p.out_keys);
#pragma unroll 1
            for (int g = 0; g < ROUNDS; ++g) {
                const int first = warp_first + g * ROUND_ITEMS;
                const uint64_t round_at = start + (uint64_t)first;
                const Round r = load_round<FULL, EQ, HAS_VALUES>(p, tile, start, valid, first, prev, nt, prev_head);
                const L mine = lane_pair<FULL>(r, GI * lane);
                const L inclusive = warp_inclusive_scan<LOp>(mine);
                L exclusive = shfl_up(inclusive, 1);
                if (lane == 0) exclusive = LOp::template identity<L>();
                const L round = shfl_from(inclusive, 31);
                const uint32_t round_runs = round.count;  // runs starting in the round
                const uint64_t round_base = carry.count;  // runs before the round
                [[maybe_unused]] const AV open_before = carry.value;  // encodings: the head of the run open at the start
                const A before = Op::apply(carry, widen(exclusive, round_at));
                carry = Op::apply(carry, widen(round, round_at));
                if constexpr (!HAS_VALUES) {
                    if (nt) {
                        write_non_trivial(p, r, exclusive, round_runs, round_base, open_before, round_at,
                                          last_tile && valid - 1 >= first + GI * lane && valid - 1 < first + GI * (lane + 1)
                                              ? valid - 1 - first
                                              : -1);
                        continue;
                    }
                }
                uint32_t h = exclusive.count;  // round-local index of the next run this lane starts
                [[maybe_unused]] AV cur = before.value;  // reduce_by_key: the current run's reduction so far
                K* stage_keys = reinterpret_cast<K*>(tile) + first;
                V* stage_values = reinterpret_cast<V*>(reinterpret_cast<char*>(tile) + Engine::VALUES_OFFSET) + first;
                uint32_t* stage_heads = head_stage();
                __syncwarp();  // every lane holds its items: the round's part of the slot may be overwritten
#pragma unroll
                for (int e = 0; e < GI; ++e) {
                    const bool head = (r.heads >> e) & 1u;
                    if (head) stage_keys[h] = r.k[e];
                    if constexpr (UNIQUE) {
                        if (head) stage_values[h] = r.v[e];
                    } else if constexpr (VALUED) {
                        if (head) stage_values[h] = Acc<V>::store(cur);
                        const AV x = value_at<FULL>(r, e);
                        cur = head ? x : Op_::apply(cur, x);
                    } else {
                        if (head) stage_heads[h] = (uint32_t)(GI * lane + e);
                    }
                    h += head;
                }
                // Item n-1 (the input's last) closes its run: run round_base + h - 1.
                if (last_tile && valid - 1 >= first + GI * lane && valid - 1 < first + GI * (lane + 1)) {
                    const uint64_t run = round_base + h - 1;
                    if constexpr (VALUED) {
                        static_cast<V*>(p.out_values)[run] = Acc<V>::store(cur);
                    } else if constexpr (!UNIQUE) {
                        // The last run's head: this lane's latest, or the one open before its items.
                        const uint64_t head_at =
                            r.heads ? round_at + (uint64_t)(GI * lane + 31 - __clz(r.heads)) : before.value;
                        put_index(p.out_values, run, p.mode == RUNS_ENDS ? engine_items : engine_items - head_at,
                                  p.length_bytes);
                    }
                }
                __syncwarp();
#pragma unroll 4
                for (uint32_t i = lane; i < round_runs; i += 32) out_keys[round_base + i] = stage_keys[i];
                if constexpr (UNIQUE) {
#pragma unroll 4
                    for (uint32_t i = lane; i < round_runs; i += 32)
                        static_cast<V*>(p.out_values)[round_base + i] = stage_values[i];
                } else {
                    // Staged index h holds run round_base + h - 1: none before the input's first run.
                    const uint32_t lo = round_base == 0 ? 1 : 0;
                    if constexpr (VALUED) {
                        V* out = static_cast<V*>(p.out_values) + round_base - 1;
#pragma unroll 4
                        for (uint32_t i = lo + lane; i < round_runs; i += 32) out[i] = stage_values[i];
                    } else {
                        // Run round_base + i - 1 ends where head i starts and began at head i - 1 (or, for
                        // i = 0, at the head open before the round).
                        const bool ends = p.mode == RUNS_ENDS;
#pragma unroll 4
                        for (uint32_t i = lo + lane; i < round_runs; i += 32) {
                            const uint64_t end = round_at + stage_heads[i];
                            const uint64_t begin = i == 0 ? (uint64_t)open_before : round_at + stage_heads[i - 1];
                            put_index(p.out_values, round_base - 1 + i, ends ? end : end - begin, p.length_bytes);
                        }
                    }
                }
            }
        }
    };

    static __device__ __forceinline__ void scan_tile(const Params& p, Slot& slot, uint4* tile, uint64_t start,
                                                     int valid, A carry) {
        static_assert(Engine::TILE_ITEMS == TILE_ITEMS && Engine::COMPUTE_THREADS == WARPS * 32,
                      "the Work's tile is the engine's");
        if constexpr (EARLY) {
            if (early_tile(p, start, valid)) {
                // The staging and the Slot's fields were written by this warp's lanes (prepare_tile), with
                // no barrier since.
                __syncwarp();
                copy_out(p, slot, tile, carry);
                return;
            }
        }
        dispatch<WritePass>(p, valid, slot, tile, start, carry);
    }
};

template <int KB, class V, class Op, bool VALUED> using PipeRunsAgent = PipeEngine<PipeRunsWork<KB, V, Op, VALUED>>;

}  // namespace lookback
