// The run-based primitives on the persistent engine (pipe_engine.cuh, sm_90+): run-length and run-end
// encoding and unique_by_key (`lookback_pipe_runs_k<key bytes>_v<value bytes>`), reduce_by_key with Sum,
// Min or Max (`lookback_pipe_by_key_<op>_k<key bytes>_<value type>`). Non-trivial runs and the scans by
// key stay on the classic agent (agent_runs.cuh); the host routes them there. Semantics are the classic
// agent's, item for item: read its header for the pair operator and the outputs.
//
// What a tile reduces to. The scanned value is the classic agent's pair (count, payload): count = run
// heads, payload = the segmented reduction of the current run's values (reduce_by_key) or the global
// index of the latest head (the encodings; a max). The pair operator is associative but does not
// commute, so the Work says COMMUTATIVE = false and the engine folds other tiles' aggregates in tile order
// (lane-contiguous reads, then a lane-ordered warp reduction); inside a tile everything is in item order:
// a thread's items, then lanes (warp_inclusive_scan), then warps (the engine's warp totals).
//
// Packed aggregates. The engine publishes tile *aggregates* only, whose counts are tile-local (at most
// TILE_ITEMS <= 2^15), so (tag, count, payload) fits one 64-bit word when the payload has at most 4
// bytes; positions travel as the tile-local index + 1 of the tile's latest head and become global again
// in RunsPairState::read, which knows the tile it read (tile_state.cuh). Only 8-byte reductions use two
// words (value, then the word with release).
//
// Heads and tails across tiles. Item i starts a run when key i differs from key i-1 (IEEE == for float
// keys: each NaN its own run), so a thread needs the key before its first item: its left neighbour's
// last key from the ring, or for the tile's first thread key start-1 from global memory (issued first,
// off the critical path). Instead of comparing with key i+1, a run is closed by the item that starts the
// next one (it knows the run's index, count - 1, and its reduction or start so far) or by item n-1: so a
// run that ends at a tile's last item is closed by the next tile's first item, with the prefix that the
// look-ahead folded in, and a run spanning many tiles is carried through their aggregates (count 0:
// the payload just accumulates, or keeps the earlier head's position).
//
// Layout: compute thread t owns items [t·IPT, (t+1)·IPT) of its tile (IPT = TILE_ITEMS / compute threads,
// 8 to 128), read in groups of 64 bytes of keys (and the same items' values) with 16-byte loads.
// Consecutive threads' groups are IPT·bytes apart, which would put a quarter warp's loads into one or two
// of the eight 16-byte bank groups; each lane starts its group's loads at a lane-dependent chunk and
// rotates them back in registers (load_group_rotated), so i32 + i32 reads are conflict-free and
// key-only reads at most 2-way. Outputs are stored straight from registers where the
// runs start and end: a warp's runs are contiguous, so the stores fall into few sectors when runs are
// short and are few when runs are long.
//
// Not in place (the Rust layer rejects overlapping buffers): a tile reads key start-1 from global memory,
// which is another tile's input.
#pragma once
#include "agent_runs.cuh"
#include "pipe_engine.cuh"

namespace lookback {

// N items of T from shared memory at `src` (aligned to N·sizeof(T) bytes), with the widest vector loads.
template <class T, int N> __host__ __device__ __forceinline__ void load_group(const T* src, T (&dst)[N]) {
    constexpr int BYTES = N * (int)sizeof(T);
    constexpr int W = BYTES % 16 == 0 ? 16 : BYTES % 8 == 0 ? 8 : BYTES % 4 == 0 ? 4 : 0;
    if constexpr (W == 0) {
#pragma unroll
        for (int i = 0; i < N; ++i) dst[i] = src[i];
    } else {
        using U = std::conditional_t<W == 16, uint4, std::conditional_t<W == 8, uint2, uint32_t>>;
        union {
            U u[BYTES / W];
            T t[N];
        } x;
#pragma unroll
        for (int i = 0; i < BYTES / W; ++i) x.u[i] = reinterpret_cast<const U*>(src)[i];
#pragma unroll
        for (int i = 0; i < N; ++i) dst[i] = x.t[i];
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
    static constexpr int ITEM_BYTES = KB;
    static constexpr int VALUE_BYTES = HAS_VALUES ? (int)sizeof(V) : 0;
    static constexpr bool COMMUTATIVE = false;
    static constexpr bool WRITES_RING = false;
    // The engine's tile, computed here too (the engine cannot be asked while this class is incomplete;
    // scan_tile asserts that both agree).
    using Shape = PipeTuning<Algo::runs>;
    static constexpr int THREADS = Shape::COMPUTE_WARPS * 32;
    static constexpr int TILE_ITEMS =
        Shape::COMPUTE_WARPS * 32 * Shape::CHUNKS_PER_LANE * 16 / pow2_at_least(KB + VALUE_BYTES);
    static constexpr int IPT = TILE_ITEMS / THREADS;  // items per compute thread
    // Items per group: 64 bytes of keys (four 16-byte loads to rotate), or all of the thread's items.
    static constexpr int GI = IPT < 64 / KB ? IPT : 64 / KB;
    static_assert(TILE_ITEMS % THREADS == 0 && IPT % GI == 0, "threads own whole groups of items");
    static constexpr bool POSITIONS = !VALUED;  // payload: the latest head's position (unused by unique)
    using AV = std::conditional_t<VALUED, typename Acc<V>::type, uint64_t>;
    using A = RunPair<AV>;
    using Op = std::conditional_t<VALUED, PairOp<Op_, true>, PairOp<OpMax, false>>;
    using State = RunsPairState<A, POSITIONS, TILE_ITEMS>;
    using VS = std::conditional_t<HAS_VALUES, V, uint8_t>;  // a value column's item (unused without one)
    static constexpr int VB_ = (int)sizeof(VS);
    struct Slot {
        A lane_exclusive[THREADS];  // per thread: ⊕ of its warp's lanes before it (set in reduce_tile)
    };
    using Engine = PipeEngine<PipeRunsWork>;

    static __device__ __forceinline__ const void* input(const Params& p) { return p.keys; }
    static __device__ __forceinline__ const void* values_input(const Params& p) { return p.values; }
    static __device__ __forceinline__ State state(const Params& p) { return {p.lb.status, p.lb.values, p.lb.epoch}; }
    static __device__ __forceinline__ A initial(const Params&) { return Op::template identity<A>(); }
    // Every mode routed here writes the number of runs (the scans by key stay classic).
    static __device__ __forceinline__ void finish(const Params& p, A total) { *p.num_runs = total.count; }

    // Whether two keys start different runs: bit patterns for integers; IEEE == for floats (-0 == +0, a
    // NaN equals nothing), as agent_runs.cuh's differ_mask.
    template <bool FLOAT> static __device__ __forceinline__ bool differ(K a, K b, const Params& p) {
        if constexpr (FLOAT) {
            const K abs_mask = (K)p.key_abs_mask, inf_bits = (K)p.key_inf_bits;
            return !((a == b && (K)(a & abs_mask) <= inf_bits) || ((a | b) & abs_mask) == 0);
        } else {
            return a != b;
        }
    }

    // The key before this thread's first item (any value for the input's first item, which is a head).
    template <bool FULL>
    static __device__ __forceinline__ K key_before(const Params& p, const uint4* tile, uint64_t start, int valid) {
        const int first = (int)threadIdx.x * IPT;
        if (first == 0) return start > 0 ? static_cast<const K*>(p.keys)[start - 1] : K(0);
        if constexpr (FULL) return reinterpret_cast<const K*>(tile)[first - 1];
        else return Engine::partial_item(tile, static_cast<const K*>(p.keys) + start, first - 1, valid, K(0));
    }

    // Calls f(i, key, value) for this thread's items i < valid of the tile, in order: a full tile in groups
    // of GI items from the ring (rotated vector loads, unrolled), a partial tile item by item (the last
    // tile of a call: kept small, it is compiled for every kernel).
    template <bool FULL, class F>
    static __device__ __forceinline__ void for_each_item(const Params& p, const uint4* tile, uint64_t start, int valid,
                                                         F&& f) {
        const int first = (int)threadIdx.x * IPT;
        const uint4* vtile = reinterpret_cast<const uint4*>(reinterpret_cast<const char*>(tile) + Engine::VALUES_OFFSET);
        if constexpr (FULL) {
            const K* keys = reinterpret_cast<const K*>(tile);
#pragma unroll 1
            for (int g = 0; g < IPT / GI; ++g) {
                const int i0 = first + g * GI;
                K k[GI];
                VS v[GI];
                // Consecutive lanes' groups are IPT items apart: rotated loads keep them off one bank group.
                load_group_rotated(keys + i0, k, group_rotation<(GI * KB >= 16 ? GI * KB / 16 : 1), IPT * KB>(lane_id()));
                if constexpr (HAS_VALUES)
                    load_group_rotated(reinterpret_cast<const V*>(vtile) + i0, v,
                                       group_rotation<(GI * VB_ >= 16 ? GI * VB_ / 16 : 1), IPT * VB_>(lane_id()));
#pragma unroll
                for (int e = 0; e < GI; ++e) f(i0 + e, k[e], v[e]);
            }
        } else {
            const K* kin = static_cast<const K*>(p.keys) + start;
            const int last = min(first + IPT, valid);
#pragma unroll 1
            for (int i = first; i < last; ++i) {
                VS v{};
                if constexpr (HAS_VALUES)
                    v = Engine::partial_item(vtile, static_cast<const V*>(p.values) + start, i, valid, from_bits<V>(0));
                f(i, Engine::partial_item(tile, kin, i, valid, K(0)), v);
            }
        }
    }

    // This thread's pair: its heads, and the reduction since (or position of) its latest head.
    template <bool FULL, bool FLOAT>
    static __device__ __forceinline__ A lane_pair(const Params& p, const uint4* tile, uint64_t start, int valid) {
        A acc = Op::template identity<A>();
        K prev = key_before<FULL>(p, tile, start, valid);
        for_each_item<FULL>(p, tile, start, valid, [&](int i, K k, VS v) {
            const uint64_t at = start + (uint64_t)i;
            const bool head = at == 0 || differ<FLOAT>(prev, k, p);
            if constexpr (VALUED) {
                const AV x = Acc<V>::load(v);
                acc.value = head ? x : Op_::apply(acc.value, x);
            } else {
                if (head) acc.value = at;
            }
            acc.count += head;
            prev = k;
        });
        return acc;
    }

    // The four (full or partial tile) × (integer or float keys) variants of a pass; 1-byte keys are never
    // floats.
    template <template <bool, bool> class Pass, class... Args>
    static __device__ __forceinline__ auto dispatch(const Params& p, int valid, Args&&... args) {
        const bool floats = KB > 1 && p.key_abs_mask != 0;
        if (valid == TILE_ITEMS) {
            if (floats) return Pass<true, KB != 1>::run(p, valid, args...);
            return Pass<true, false>::run(p, valid, args...);
        }
        if (floats) return Pass<false, KB != 1>::run(p, valid, args...);
        return Pass<false, false>::run(p, valid, args...);
    }
    template <bool FULL, bool FLOAT> struct ReducePass {
        static __device__ __forceinline__ A run(const Params& p, int valid, const uint4* tile, uint64_t start) {
            return lane_pair<FULL, FLOAT>(p, tile, start, valid);
        }
    };
    template <bool FULL, bool FLOAT> struct WritePass {
        static __device__ __forceinline__ void run(const Params& p, int valid, const Slot& slot, const uint4* tile,
                                                   uint64_t start, A carry) {
            write_runs<FULL, FLOAT>(p, slot, tile, start, valid, carry);
        }
    };

    static __device__ __forceinline__ A reduce_tile(const Params& p, Slot& slot, const uint4* tile, uint64_t start,
                                                    int valid) {
        const A mine = dispatch<ReducePass>(p, valid, tile, start);
        // The lanes before this one, in lane order (the operator does not commute).
        const A inclusive = warp_inclusive_scan<Op>(mine);
        A exclusive = shfl_up(inclusive, 1);
        if (lane_id() == 0) exclusive = Op::template identity<A>();
        slot.lane_exclusive[threadIdx.x] = exclusive;  // read back by this thread only
        return mine;
    }

    static __device__ __forceinline__ void put_index(void* base, uint64_t at, uint64_t x, uint32_t bytes) {
        if (bytes == 4) static_cast<uint32_t*>(base)[at] = (uint32_t)x;
        else static_cast<uint64_t*>(base)[at] = x;
    }

    // Run r ended at item `end` - 1: its result. `run` is its reduction, or its head's position.
    static __device__ __forceinline__ void close_run(const Params& p, uint64_t r, AV run, uint64_t end) {
        if constexpr (VALUED) {
            static_cast<V*>(p.out_values)[r] = Acc<V>::store(run);
        } else {
            if (p.mode == RUNS_ENCODE) put_index(p.out_values, r, end - run, p.length_bytes);
            else if (p.mode == RUNS_ENDS) put_index(p.out_values, r, end, p.length_bytes);
            // RUNS_UNIQUE: everything was written at the head.
        }
    }

    template <bool FULL, bool FLOAT>
    static __device__ __forceinline__ void write_runs(const Params& p, const Slot& slot, const uint4* tile,
                                                      uint64_t start, int valid, A carry) {
        const A before = Op::apply(carry, slot.lane_exclusive[threadIdx.x]);
        uint64_t runs = before.count;  // runs started before the current item: the next run's index
        AV run = before.value;         // the current run's reduction so far, or its head's position
        const bool unique = !VALUED && p.mode == RUNS_UNIQUE;
        K prev = key_before<FULL>(p, tile, start, valid);
        for_each_item<FULL>(p, tile, start, valid, [&](int i, K k, VS v) {
            const uint64_t at = start + (uint64_t)i;
            const bool head = at == 0 || differ<FLOAT>(prev, k, p);
            if (head) {
                if (at > 0) close_run(p, runs - 1, run, at);
                static_cast<K*>(p.out_keys)[runs] = k;
                if constexpr (!VALUED && HAS_VALUES) {
                    if (unique) static_cast<V*>(p.out_values)[runs] = v;
                }
                ++runs;
            }
            if constexpr (VALUED) {
                const AV x = Acc<V>::load(v);
                run = head ? x : Op_::apply(run, x);
            } else {
                if (head) run = at;
            }
            if (at == p.n - 1) close_run(p, runs - 1, run, p.n);
            prev = k;
        });
    }

    static __device__ __forceinline__ void scan_tile(const Params& p, Slot& slot, const uint4* tile, uint64_t start,
                                                     int valid, A carry) {
        static_assert(Engine::TILE_ITEMS == TILE_ITEMS && Engine::COMPUTE_THREADS == THREADS,
                      "the Work's tile is the engine's");
        dispatch<WritePass>(p, valid, slot, tile, start, carry);
    }
};

template <int KB, class V, class Op, bool VALUED> using PipeRunsAgent = PipeEngine<PipeRunsWork<KB, V, Op, VALUED>>;

}  // namespace lookback
