// The device-wide scan on the persistent engine (persistent/engine.cuh, sm_90+).
//
// A tile reduces to its ⊕ of items; once its exclusive prefix is known, each warp scans its rows (chunk
// j of its 32 lanes: lane l's items follow lane l-1's) with one warp scan per row and stores them with
// coalesced 16-byte stores straight from registers.
//
// The scan is described by a policy (core/scan_policy.cuh). Policies that may not commute (user operators)
// reduce a tile in tile order: row by row, each row's lane totals in lane order, which is the warp's total
// (warp_sum then passes it through), and the engine folds statuses in tile order (COMMUTATIVE). When the
// output item size differs from the input's, a lane's chunk of input items becomes a span of output
// items, stored with the widest accesses its size allows.
//
// A reduction (ScanParams::reduce) scans no tile: like count_if it needs no
// prefix but the last tile's, and `finish` writes the total to out[0], which need not be aligned.
//
// In place (`out == in`, same item size) is safe: a tile's bytes are all in shared memory (its `full` phase completed)
// before any of them is written back, and a tile writes only its own items. Both pointers must be
// 16-byte aligned (the host checks; the classic agent takes the other cases).
#pragma once
#include "engine.cuh"
#include "../core/scan_policy.cuh"

namespace lookback {

template <class P> struct PipeScanWork : PipeWorkDefaults {
    static constexpr Algo ALGO = Algo::scan;
    using Params = ScanParams;
    using In = typename P::In;
    using Out = typename P::Out;
    using A = typename P::A;
    using Op = typename P::Op;
    static constexpr bool COMMUTATIVE = P::COMMUTATIVE;
    // Statuses carry nothing but their value: relaxed accesses suffice (tile_state.cuh).
    using StateMaker = StateFor<A, false>;
    using State = typename StateMaker::type;
    // 8-byte values (WideState: flag and value in one 16-byte load) issue the look-ahead's loads
    // together, 8 per lane: one L2 round trip per step, where a flag word with separate value slots took
    // two per step of 4 (benches/log, 2026-11-30).
    static constexpr bool BATCHED_LOOKAHEAD = sizeof(A) == 8;
    struct Slot {};
    static constexpr int ITEM_BYTES = sizeof(In);
    static constexpr bool WRITES_RING = false;
    static constexpr int E = 16 / sizeof(In);  // items per chunk
    // The engine is complete only after this class (NVRTC insists; nvcc lets it pass), so its constants
    // come from the tuning row here.
    using Engine = PipeEngine<PipeScanWork>;
    static constexpr int CPL = PipeTuning<ALGO>::CHUNKS_PER_LANE;
    union Chunk {
        uint4 vec;
        In items[E];
    };

    static __device__ __forceinline__ State state(const Params&, uint64_t* status, unsigned epoch) {
        return StateMaker::make(status, epoch);
    }
    static __device__ __forceinline__ A initial(const Params& p) {
        return p.exclusive != SCAN_INCLUSIVE ? P::seed(p.seed) : Op::template identity<A>();
    }
    static __device__ __forceinline__ bool reduces(const Params& p) { return p.reduce; }
    static __device__ __forceinline__ bool needs_prefix(const Params& p) { return !reduces(p); }
    // Called once, with seed ⊕ every item (the seed alone for an empty launch).
    static __device__ __forceinline__ void finish(const Params& p, A total) {
        if (reduces(p)) *static_cast<typename P::Total*>(p.out) = P::total(total);
    }

    // A commutative policy returns this thread's part, which the engine reduces across the warp; the
    // others return the warp's total (every lane), reduced row by row in tile order.
    template <class Op2, class A2> static __device__ __forceinline__ A2 warp_sum(A2 x) {
        if constexpr (COMMUTATIVE) return warp_reduce<Op2>(x);
        else return x;
    }

    static __device__ __forceinline__ A reduce_tile(const Params& p, Slot&, const uint4* tile, uint64_t start,
                                                    int valid) {
        A total = Op::template identity<A>();
        if (valid == Engine::TILE_ITEMS) {
            if constexpr (COMMUTATIVE) {
#pragma unroll
                for (int j = 0; j < CPL; ++j) {
                    Chunk c;
                    c.vec = tile[Engine::chunk_index(j)];
#pragma unroll
                    for (int e = 0; e < E; ++e) total = Op::apply(total, P::load(c.items[e]));
                }
            } else {
                // Each row's lane totals, all rows reduced at once and folded in row order (warp_fold_rows:
                // the same bits as one warp_reduce per row).
                A rows[CPL];
#pragma unroll
                for (int j = 0; j < CPL; ++j) {
                    Chunk c;
                    c.vec = tile[Engine::chunk_index(j)];
                    const uint64_t first = start + (uint64_t)Engine::chunk_index(j) * E;
                    rows[j] = Op::template identity<A>();
#pragma unroll
                    for (int e = 0; e < E; ++e) rows[j] = Op::apply(rows[j], P::load_at(c.items[e], first + e));
                }
                total = warp_fold_rows<Op>(total, rows);
            }
        } else {
            const In* in = static_cast<const In*>(p.in) + start;
            const In fill = P::pad();
            for (int j = 0; j < CPL; ++j) {
                const int first = Engine::chunk_index(j) * E;
                if constexpr (COMMUTATIVE && P::PAD_IS_IDENTITY) {
                    for (int e = 0; e < E; ++e)
                        total = Op::apply(total, P::load(Engine::partial_item(tile, in, first + e, valid, fill)));
                } else {
                    A row = Op::template identity<A>();
                    for (int e = 0; e < E; ++e)
                        if (first + e < valid)
                            row = Op::apply(row, P::load_at(Engine::partial_item(tile, in, first + e, valid, fill),
                                                            start + (uint64_t)(first + e)));
                    total = Op::apply(total, COMMUTATIVE ? row : warp_reduce<Op>(row));
                }
            }
        }
        return total;
    }

    static __device__ __forceinline__ void scan_tile(const Params& p, Slot& slot, const uint4* tile, uint64_t start,
                                                     int valid, A carry) {
        if (!p.reduce) scan_items(p, slot, tile, start, valid, carry);
    }

    template <class Slot_>
    static __device__ __forceinline__ void scan_items(const Params& p, Slot_&, const uint4* tile, uint64_t start,
                                                      int valid, A carry) {
        if (valid == Engine::TILE_ITEMS) {
            uint4* out = static_cast<uint4*>(p.out) + start / E;
#pragma unroll
            for (int j = 0; j < CPL; ++j) {
                Chunk c;
                c.vec = tile[Engine::chunk_index(j)];
                A x[E];
#pragma unroll
                for (int e = 0; e < E; ++e) x[e] = P::load(c.items[e]);
                scan_row(p.exclusive == SCAN_EXCLUSIVE, x, carry);
                if constexpr (std::is_same<In, Out>::value) {
#pragma unroll
                    for (int e = 0; e < E; ++e) c.items[e] = P::store(x[e]);
                    out[Engine::chunk_index(j)] = c.vec;
                } else if constexpr (sizeof(In) == sizeof(Out)) {
                    union {
                        uint4 vec;
                        Out items[E];
                    } o;
#pragma unroll
                    for (int e = 0; e < E; ++e) o.items[e] = P::store(x[e]);
                    out[Engine::chunk_index(j)] = o.vec;
                } else {
                    store_span(static_cast<Out*>(p.out) + start + Engine::chunk_index(j) * E, x);
                }
            }
        } else {
            const In* in = static_cast<const In*>(p.in) + start;
            Out* out = static_cast<Out*>(p.out) + start;
            const In fill = P::pad();
            for (int j = 0; j < CPL; ++j) {
                const int first = Engine::chunk_index(j) * E;
                A x[E];
#pragma unroll
                for (int e = 0; e < E; ++e) x[e] = P::load(Engine::partial_item(tile, in, first + e, valid, fill));
                // Padding comes after every item of the tile: what it scans to is never stored.
                scan_row(p.exclusive == SCAN_EXCLUSIVE, x, carry);
#pragma unroll
                for (int e = 0; e < E; ++e)
                    if (first + e < valid) out[first + e] = P::store(x[e]);
            }
        }
    }

    // The E output items of one input chunk, at `dst` (aligned to their size, or to 16 bytes when larger:
    // the host checks that the output is 16-byte aligned), with 16-byte stores, or one store of their size.
    static __device__ __forceinline__ void store_span(Out* dst, const A (&x)[E]) {
        constexpr int BYTES = E * (int)sizeof(Out);
        using Word = std::conditional_t<
            (BYTES >= 16), uint4,
            std::conditional_t<BYTES == 8, uint2, std::conditional_t<BYTES == 4, uint32_t, uint16_t>>>;
        constexpr int WORDS = BYTES >= 16 ? BYTES / 16 : 1;
        union {
            Word words[WORDS];
            Out items[E];
        } o;
#pragma unroll
        for (int e = 0; e < E; ++e) o.items[e] = P::store(x[e]);
        Word* w = reinterpret_cast<Word*>(dst);
#pragma unroll
        for (int i = 0; i < WORDS; ++i) w[i] = o.words[i];
    }

    // One warp row: lane l's E items follow lane l-1's. Replaces x with its scanned values (inclusive or
    // exclusive) after `carry`, and advances `carry` past the whole row.
    static __device__ __forceinline__ void scan_row(bool exclusive, A (&x)[E], A& carry) {
        A local[E];
        A acc = x[0];
        local[0] = acc;
#pragma unroll
        for (int e = 1; e < E; ++e) {
            acc = Op::apply(acc, x[e]);
            local[e] = acc;
        }
        const A lane_inclusive = warp_inclusive_scan<Op>(acc);
        A before = shfl_up(lane_inclusive, 1);
        if (lane_id() == 0) before = Op::template identity<A>();
        const A base = Op::apply(carry, before);
        if (exclusive) {
            x[0] = base;
#pragma unroll
            for (int e = 1; e < E; ++e) x[e] = Op::apply(base, local[e - 1]);
        } else {
#pragma unroll
            for (int e = 0; e < E; ++e) x[e] = Op::apply(base, local[e]);
        }
        carry = Op::apply(carry, shfl_from(lane_inclusive, 31));
    }
};

template <class P> using PipeScanAgent = PipeEngine<PipeScanWork<P>>;

}  // namespace lookback
