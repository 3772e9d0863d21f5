// The warp-parallel decoupled look-back (Merrill & Garland 2016, section 4.4).
//
// One warp computes the exclusive prefix of tile `tile` from the status words of its predecessors. Lane i
// inspects tile (end - 32 + i) of a window of 32 predecessors. While any lane sees X (not ready) the warp
// backs off and re-polls those lanes. Then the highest lane holding a P (an inclusive prefix) bounds the
// window: the values of that lane and every lane above it are combined in tile order and folded into the
// running prefix. A P ends the look-back; a window of only A's slides back 32 tiles. Tiles before tile 0
// count as P with the identity value, so the look-back always ends.
#pragma once
#include "tile_state.cuh"
#include "warp_scan.cuh"

namespace lookback {

template <class Op, class A, class State>
__device__ __forceinline__ A warp_lookback(const State& state, uint64_t tile, unsigned first_poll_ns,
                                           unsigned poll_ns) {
    const int lane = (int)lane_id();
    A exclusive = Op::template identity<A>();
    int64_t end = (int64_t)tile;
    // Sleeping before the first poll lets predecessors whose loads are still in flight publish first,
    // instead of every waiting tile hammering their status words (CUB's "L2 write latency" delay).
    backoff(first_poll_ns);
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
}

}  // namespace lookback
