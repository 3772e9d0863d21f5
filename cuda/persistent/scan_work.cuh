// The device-wide scan on the persistent engine (persistent/engine.cuh, sm_90+).
//
// A tile reduces to its ⊕ of items; once its exclusive prefix is known, each warp scans its rows (chunk
// j of its 32 lanes: lane l's items follow lane l-1's) with one warp scan per row and stores them with
// coalesced 16-byte stores straight from registers.
//
// In place (`out == in`) is safe: a tile's bytes are all in shared memory (its `full` phase completed)
// before any of them is written back, and a tile writes only its own items. Both pointers must be
// 16-byte aligned (the host checks; the classic agent takes the other cases).
#pragma once
#include "engine.cuh"

namespace lookback {

template <class T, class Op_> struct PipeScanWork : PipeWorkDefaults {
    static constexpr Algo ALGO = Algo::scan;
    using Params = ScanParams;
    using Op = Op_;
    using A = typename Acc<T>::type;
    // Statuses carry nothing but their value: relaxed accesses suffice (tile_state.cuh).
    using StateMaker = StateFor<A, false>;
    using State = typename StateMaker::type;
    // 8-byte values (WideState: flag and value in one 16-byte load) issue the look-ahead's loads
    // together, 8 per lane: one L2 round trip per step, where a flag word with separate value slots took
    // two per step of 4 (benches/log, 2026-11-30).
    static constexpr bool BATCHED_LOOKAHEAD = sizeof(A) == 8;
    struct Slot {};
    static constexpr int ITEM_BYTES = sizeof(T);
    static constexpr bool WRITES_RING = false;
    static constexpr int E = 16 / sizeof(T);  // items per chunk
    // The engine is complete only after this class (NVRTC insists; nvcc lets it pass), so its constants
    // come from the tuning row here.
    using Engine = PipeEngine<PipeScanWork>;
    static constexpr int CPL = PipeTuning<ALGO>::CHUNKS_PER_LANE;
    union Chunk {
        uint4 vec;
        T items[E];
    };

    static __device__ __forceinline__ State state(const Params&, uint64_t* status, unsigned epoch) {
        return StateMaker::make(status, epoch);
    }
    static __device__ __forceinline__ A initial(const Params& p) {
        return p.exclusive ? load_seed<T>(p.seed) : Op::template identity<A>();
    }
    static __device__ __forceinline__ void finish(const Params&, A) {}

    static __device__ __forceinline__ A reduce_tile(const Params& p, Slot&, const uint4* tile, uint64_t start,
                                                    int valid) {
        A total = Op::template identity<A>();
        if (valid == Engine::TILE_ITEMS) {
#pragma unroll
            for (int j = 0; j < CPL; ++j) {
                Chunk c;
                c.vec = tile[Engine::chunk_index(j)];
#pragma unroll
                for (int e = 0; e < E; ++e) total = Op::apply(total, Acc<T>::load(c.items[e]));
            }
        } else {
            const T* in = static_cast<const T*>(p.in) + start;
            const T fill = Acc<T>::store(Op::template identity<A>());
            for (int j = 0; j < CPL; ++j) {
                const int first = Engine::chunk_index(j) * E;
                for (int e = 0; e < E; ++e)
                    total = Op::apply(total, Acc<T>::load(Engine::partial_item(tile, in, first + e, valid, fill)));
            }
        }
        return total;
    }

    static __device__ __forceinline__ void scan_tile(const Params& p, Slot&, const uint4* tile, uint64_t start,
                                                     int valid, A carry) {
        if (valid == Engine::TILE_ITEMS) {
            uint4* out = static_cast<uint4*>(p.out) + start / E;
#pragma unroll
            for (int j = 0; j < CPL; ++j) {
                Chunk c;
                c.vec = tile[Engine::chunk_index(j)];
                A x[E];
#pragma unroll
                for (int e = 0; e < E; ++e) x[e] = Acc<T>::load(c.items[e]);
                scan_row(p.exclusive, x, carry);
#pragma unroll
                for (int e = 0; e < E; ++e) c.items[e] = Acc<T>::store(x[e]);
                out[Engine::chunk_index(j)] = c.vec;
            }
        } else {
            const T* in = static_cast<const T*>(p.in) + start;
            T* out = static_cast<T*>(p.out) + start;
            const T fill = Acc<T>::store(Op::template identity<A>());
            for (int j = 0; j < CPL; ++j) {
                const int first = Engine::chunk_index(j) * E;
                A x[E];
#pragma unroll
                for (int e = 0; e < E; ++e) x[e] = Acc<T>::load(Engine::partial_item(tile, in, first + e, valid, fill));
                scan_row(p.exclusive, x, carry);
#pragma unroll
                for (int e = 0; e < E; ++e)
                    if (first + e < valid) out[first + e] = Acc<T>::store(x[e]);
            }
        }
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

template <class T, class Op> using PipeScanAgent = PipeEngine<PipeScanWork<T, Op>>;

}  // namespace lookback
