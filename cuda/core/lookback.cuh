// The warp-parallel decoupled look-back (Merrill & Garland 2016, section 4.4).
//
// One warp computes the exclusive prefix of tile `tile` from the status words of its predecessors, a
// window of predecessors per step. A window is made of sub-windows of 32 consecutive tiles, lane i
// inspecting tile (sub-window end - 32 + i) of each. While any lane sees X (not ready) the warp backs off
// and re-polls those entries. Then, newest sub-window first, the highest lane holding a P (an inclusive
// prefix) bounds the sub-window: the values of that lane and every lane above it are combined in tile
// order and folded into the running prefix. A P ends the look-back; a window of only A's slides back.
// Tiles before tile 0 count as P with the identity value, so the look-back always ends.
//
// Window sizes (WIDE > 1). The first step reads the 32 nearest predecessors, where a tile that starts
// after its predecessors usually finds a P. Later steps read WIDE sub-windows (WIDE × 32 tiles) with all their
// loads issued before any is used: one L2 round trip per WIDE × 32 tiles. That is for the first wave of
// a grid, whose tiles all start at once and find no P near them: with 32 tiles per round trip, a tile
// ~800 ids into the grid (a full H200 wave) walks ~25 dependent round trips back to the P frontier.
//
// Deterministic order (LB_DETERMINISTIC, for order-sensitive operators: float sums). Above, where the P is
// found decides how values are grouped (a tree per sub-window, sub-windows newest first), and that varies
// with timing; for float sums the last bits vary with it. `ordered_lookback` instead folds left from the P
// it finds, one tile at a time in tile order: exclusive(t) = ((P_j ⊕ A_(j+1)) ⊕ …) ⊕ A_(t-1). If every
// tile's P is its exclusive prefix ⊕ its aggregate, then by induction on t every P_t equals the plain
// left fold seed ⊕ A_0 ⊕ A_1 ⊕ … ⊕ A_t, whichever j each look-back stopped at: the bits depend only on
// the input and the tile partition. A P found several windows back is folded forward window by window:
// the newer windows are read again (their entries are no longer X) and a P met there restarts the fold
// from it (the same value, by the same induction).
#pragma once
#include "ops.cuh"
#include "tile_state.cuh"
#include "warp_scan.cuh"

namespace lookback {

// One step of the look-back over SUBS sub-windows ending before tile `end`. Folds what it read into
// `exclusive`; true when it met a P (the prefix is complete).
template <int SUBS, class Op, class A, class State>
__device__ __forceinline__ bool lookback_step(const State& state, int64_t end, unsigned poll_ns, A& exclusive) {
    const int lane = (int)lane_id();
    A value[SUBS];
    unsigned s[SUBS];
    // Every load of the step before any is tested, so their round trips overlap. Indices before tile 0
    // read tile 0's entry (always published by now or later) and count as P with the identity.
#pragma unroll
    for (int j = 0; j < SUBS; ++j) {
        const int64_t idx = end - 32 * (j + 1) + lane;
        value[j] = Op::template identity<A>();
        s[j] = state.read((uint64_t)max(idx, (int64_t)0), value[j]);
        if (idx < 0) {
            s[j] = STATUS_P;
            value[j] = Op::template identity<A>();
        }
    }
    while (true) {
        bool missing = false;
#pragma unroll
        for (int j = 0; j < SUBS; ++j) missing |= s[j] == STATUS_X;
        if (!__any_sync(0xffffffffu, missing)) break;
        backoff(poll_ns);
#pragma unroll
        for (int j = 0; j < SUBS; ++j) {
            if (s[j] == STATUS_X) s[j] = state.read((uint64_t)(end - 32 * (j + 1) + lane), value[j]);
        }
    }
#pragma unroll
    for (int j = 0; j < SUBS; ++j) {
        const unsigned prefixes = __ballot_sync(0xffffffffu, s[j] == STATUS_P);
        const int highest_p = prefixes ? 31 - __clz((int)prefixes) : -1;
        const A mine = lane >= highest_p ? value[j] : Op::template identity<A>();
        exclusive = Op::apply(warp_reduce<Op>(mine), exclusive);
        if (prefixes) return true;
    }
    return false;
}

// Reads the status of tile end - 32 + lane (tiles before 0: P with the identity), waiting out X.
template <class Op, class A, class State>
__device__ __forceinline__ unsigned read_window(const State& state, int64_t end, unsigned poll_ns, A& value) {
    const int64_t idx = end - 32 + (int)lane_id();
    value = Op::template identity<A>();
    unsigned s = idx < 0 ? STATUS_P : state.read((uint64_t)idx, value);
    while (__any_sync(0xffffffffu, s == STATUS_X)) {
        backoff(poll_ns);
        if (s == STATUS_X) s = state.read((uint64_t)idx, value);
    }
    return s;
}

// The exclusive prefix of `tile`, folded left in tile order from the nearest P (see the header).
template <class Op, class A, class State>
__device__ __forceinline__ A ordered_lookback(const State& state, uint64_t tile, unsigned poll_ns) {
    // Back to the nearest window holding a P. Windows reaching before tile 0 always hold one.
    int64_t end = (int64_t)tile;
    A value;
    unsigned prefixes;
    while (!(prefixes = __ballot_sync(0xffffffffu, read_window<Op>(state, end, poll_ns, value) == STATUS_P))) {
        end -= 32;
    }
    // Then forward to the tile: each window from its highest P (or from its start), lane by lane.
    A exclusive = Op::template identity<A>();
    while (true) {
        const int highest_p = prefixes ? 31 - __clz((int)prefixes) : -1;
        if (highest_p >= 0) exclusive = shfl_from(value, highest_p);
        exclusive = warp_fold_in_order<Op>(exclusive, value, highest_p + 1, 32);
        end += 32;
        if (end > (int64_t)tile) return exclusive;
        prefixes = __ballot_sync(0xffffffffu, read_window<Op>(state, end, poll_ns, value) == STATUS_P);
    }
}

// The exclusive prefix of `tile` (warp 0 of its block; every lane gets it).
//
// WIDE = 1: every step reads one sub-window of 32 (the default). WIDE > 1: the first step reads 32, later
// steps WIDE × 32. Measured on the H200 (benches/log, 2026-11-30): the wider steps help the run-based
// agent's keyed kernels (reduce_by_key, unique_by_key, scan_by_key: 4-7 % at 2^22-2^24 for i32, more for
// f64) and cost the scans, the selections and the encodings 2-9 % at 2^20-2^24 (more registers: fewer
// resident blocks or spills), so only the keyed kernels ask for them.
// Under LB_DETERMINISTIC, order-sensitive operators take ordered_lookback instead, whatever WIDE.
template <class Op, class A, class State, int WIDE = 1>
__device__ __forceinline__ A warp_lookback(const State& state, uint64_t tile, const LookbackParams& lb) {
    const unsigned first_poll_ns = lb.first_poll_ns, poll_ns = lb.poll_ns;
    const int lane = (int)lane_id();
    A exclusive = Op::template identity<A>();
    int64_t end = (int64_t)tile;
    // Sleeping before the first poll lets predecessors whose loads are still in flight publish first,
    // instead of every waiting tile hammering their status words (CUB's "L2 write latency" delay).
    backoff(first_poll_ns);
    if constexpr (OrderSensitive<Op, A>::value) {
        if (lb.flags & LB_DETERMINISTIC) return ordered_lookback<Op, A>(state, tile, poll_ns);
    }
    if constexpr (WIDE == 1) {
        while (true) {
            const int64_t idx = end - 32 + lane;
            A value = Op::template identity<A>();
            unsigned s = idx < 0 ? STATUS_P : state.read((uint64_t)idx, value);
            while (__any_sync(0xffffffffu, s == STATUS_X)) {
                backoff(poll_ns);
                if (s == STATUS_X) s = state.read((uint64_t)idx, value);
            }
            const unsigned prefixes = __ballot_sync(0xffffffffu, s == STATUS_P);
            const int highest_p = prefixes ? 31 - __clz((int)prefixes) : -1;
            const A mine = lane >= highest_p ? value : Op::template identity<A>();
            exclusive = Op::apply(warp_reduce<Op>(mine), exclusive);
            if (prefixes) return exclusive;
            end -= 32;
        }
    } else {
        if (lookback_step<1, Op>(state, end, poll_ns, exclusive)) return exclusive;
        end -= 32;
        while (!lookback_step<WIDE, Op>(state, end, poll_ns, exclusive)) end -= 32 * WIDE;
        return exclusive;
    }
}

}  // namespace lookback
