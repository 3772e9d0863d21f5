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
#pragma once
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

// WIDE = 1: every step reads one sub-window of 32 (the default). WIDE > 1: the first step reads 32, later
// steps WIDE × 32. Measured on the H200 (benches/log, 2026-11-30): the wider steps help the run-based
// agent's keyed kernels (reduce_by_key, unique_by_key, scan_by_key: 4-7 % at 2^22-2^24 for i32, more for
// f64) and cost the scans, the selections and the encodings 2-9 % at 2^20-2^24 (more registers: fewer
// resident blocks or spills), so only the keyed kernels ask for them.
template <class Op, class A, class State, int WIDE = 1>
__device__ __forceinline__ A warp_lookback(const State& state, uint64_t tile, unsigned first_poll_ns,
                                           unsigned poll_ns) {
    const int lane = (int)lane_id();
    A exclusive = Op::template identity<A>();
    int64_t end = (int64_t)tile;
    // Sleeping before the first poll lets predecessors whose loads are still in flight publish first,
    // instead of every waiting tile hammering their status words (CUB's "L2 write latency" delay).
    backoff(first_poll_ns);
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
