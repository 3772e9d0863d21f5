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
// with timing; for float sums the last bits vary with it. `anchored_lookback` instead groups by position
// only, on two levels. Tiles fall into aligned windows of ANCHOR_WINDOW (32) tiles, window k holding tiles
// 32k … 32k+31, whose last tile is the window's anchor.
// * Inside a window: tile 32k+p combines the values its window's tiles 32k … 32k+p-1 published (A, or a P
//   published once with the same value: tile 0's, a keyed tile's with a head) by a warp scan in lane
//   order, the same fixed tree whoever reads it: S_k(p).
// * Between windows: each anchor publishes, in an anchor entry of its own (anchor_entry: from the top of
//   the status region, which the host sizes for them), first A = W_k = its window's 32 values combined by
//   that tree, then P = E_k ⊕ W_k, where E_k is the left fold over anchor entries: from the nearest anchor
//   P back, ((P_j ⊕ W_(j+1)) ⊕ …) ⊕ W_(k-1), lane by lane. If every anchor's P is E_k ⊕ W_k, then by
//   induction on k every P_k equals the plain left fold W_0 ⊕ W_1 ⊕ … ⊕ W_k (starting from the identity),
//   whichever anchor P each look-back stopped at.
// So tile 32k+p's exclusive prefix is E_k ⊕ S_k(p): its bits depend only on the input and the tile
// partition. Nothing waits for a P: a walk that finds anchors with only A folds their W forward; anchor
// entries are 32 times sparser than tiles, so even the first wave of a grid reaches a P in one window.
// Tiles publish no P of their own in this mode (it would replace the A that window readers combine) except
// keyed tiles with a head (below), and an anchor whose own prefix is not needed (a keyed tile starting with
// a head) still looks back, for its entry (anchor_duty). Every wait is on a lower tile id, as in the
// default look-back.
//
// Keyed sums (CutsAtHeads: the segmented pair operator of classic/runs.cuh over a float sum). Pairs are
// (count, value), (c1, v1) ⊕ (c2, v2) = (c1 + c2, c2 > 0 ? v2 : v1 + v2). Three facts about any grouping:
// (a) its count is exact: counts are integers; (b) its value depends on the counts only through which of
//     them are zero: the operator tests c2 for zero, and a sum of counts (never negative, never near
//     2^64) is zero exactly when every term is;
// (c) if the sequence's last stretch holds a head, its value is that stretch's value, bit for bit: the
//     right-hand operand at the top contains that stretch, so its count is not zero and its value is
//     taken unchanged, and so on down to the stretch itself. No float operation touches it.
// So a tile t with a head knows its inclusive prefix as soon as it has its count: after its anchored
// prefix E it publishes P_t = E ⊕ a_t = (exact count, a_t's value bits) (resolve_prefix), the same bits
// whichever way E was found, as in the default mode (where the count is the reason to wait at all).
// Its successors need no such P to find theirs (keyed_anchored_lookback). A P read where an A was changes
// no value of the window tree by (b) (both counts are non-zero), so S_k(p)'s and W_k's values are the
// same whichever was read; their counts are not, and are not used. Tile 32k+p reads its 32 predecessors,
// as the default look-back's first step does, and:
// * if a tile of its window before it has a head, its prefix is (the exact count, S_k(p)'s value): the
//   count by (a) from the nearest P back and the A counts after it, found as the default look-back finds
//   it; the value is E_k ⊕ S_k(p)'s by (c), S_k(p)'s last stretch holding that head, so E_k is not needed;
// * if it opens its window (p = 0) and its predecessor has a head, its prefix is (the exact count, that
//   predecessor's value): E_k's value by (c), the last stretch of W_(k-1) (and of E_(k-1) ⊕ W_(k-1))
//   holding that head, down to the predecessor's own value, which its A and its P both carry unchanged;
// * otherwise the window before the tile holds no head (an anchor's W_k, published as A, is exact), and
//   the look-back goes through the anchor entries as above, each of whose P's is E_j ⊕ W_j however it was
//   made.
// An anchor whose window holds a head before it publishes its entry's P, (exact count, W_k's value) =
// E_k ⊕ W_k by the same argument, as soon as it has its count.
// Every tile therefore gets the bits of E_k ⊕ S_k(p), the grouping described above (and in the docs of
// Workspace::set_deterministic), only sooner; the paths differ in which loads they wait for, not in any
// float operation. Headless tiles never publish P: their inclusive value depends on E_k's grouping. The
// scans by key publish a tile's aggregate, tile-local count and all, as P as soon as the tile has a head
// (classic/runs.cuh 4', classic/scan_by_key_tile.cuh): their counts are then not run counts but are zero
// exactly when the run count is, which is all (b) needs; the scans read only values.
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

// Whether `Op` is the segmented pair operator of the keyed sums (classic/runs.cuh: PairOp<Op, true>, which
// specialises this): (c1, v1) ⊕ (c2, v2) = (c1 + c2, c2 > 0 ? v2 : v1 ⊕ v2). See "Keyed sums" in the header.
template <class Op> struct CutsAtHeads : std::false_type {};

// Tiles per deterministic window: one per lane of the look-back warp.
constexpr int ANCHOR_WINDOW = 32;

// The status entry of window `a`'s anchor: the top of the region holds them, above the tiles (the host
// gives each region status_tiles >= entry_units · (tiles + tiles / 32 + 1) 16-byte units:
// src/launch/launcher.rs). Entries of several units (MultiState) count status_tiles / units.
__device__ __forceinline__ uint64_t anchor_entry(const LookbackParams& lb, int64_t a) {
    const unsigned units = entry_units(lb);
    const uint64_t entries = units == 1 ? (uint64_t)lb.status_tiles : (uint64_t)lb.status_tiles / units;
    return entries - 1 - (uint64_t)a;
}

// Whether `tile` must look back although it needs no prefix: an anchor under LB_DETERMINISTIC, for the
// anchor entry its successors fold (see the header). Never for exact operators.
template <class Op, class A> __device__ __forceinline__ bool anchor_duty(const LookbackParams& lb, uint64_t tile) {
    if constexpr (OrderSensitive<Op, A>::value) {
        return (lb.flags & LB_DETERMINISTIC) && tile % ANCHOR_WINDOW == ANCHOR_WINDOW - 1;
    } else {
        return false;
    }
}

// Lane l: the anchor entry of window end - 32 + l (windows before 0: P with the identity), waiting out X.
template <class Op, class A, class State>
__device__ __forceinline__ unsigned read_anchors(const State& state, const LookbackParams& lb, int64_t end, A& value) {
    const int64_t a = end - 32 + (int)lane_id();
    value = Op::template identity<A>();
    unsigned s = a < 0 ? STATUS_P : state.read(anchor_entry(lb, a), value);
    while (__any_sync(0xffffffffu, s == STATUS_X)) {
        backoff(lb.poll_ns);
        if (s == STATUS_X) s = state.read(anchor_entry(lb, a), value);
    }
    return s;
}

// E_k: the anchor entries before window k folded left from the nearest P (see the header). `value` and
// `status` are lane l's entry of window k - 32 + l, already read.
template <class Op, class A, class State>
__device__ __forceinline__ A fold_anchors(const State& state, const LookbackParams& lb, int64_t k, A value, unsigned status) {
    // Back to the nearest window of anchors holding a P. Windows reaching before anchor 0 always hold one.
    int64_t end = k;
    unsigned prefixes = __ballot_sync(0xffffffffu, status == STATUS_P);
    while (!prefixes) {
        end -= 32;
        prefixes = __ballot_sync(0xffffffffu, read_anchors<Op>(state, lb, end, value) == STATUS_P);
    }
    // Then forward to window k: each window of anchors from its highest P (or from its start), lane by lane
    // (warp_fold_tail: the fold of warp_fold_in_order, with fewer shuffles when few lanes are left).
    A exclusive = Op::template identity<A>();
    while (true) {
        const int highest_p = prefixes ? 31 - __clz((int)prefixes) : -1;
        if (highest_p >= 0) exclusive = shfl_from(value, highest_p);
        exclusive = warp_fold_tail<Op>(exclusive, value, highest_p + 1);
        end += 32;
        if (end > k) return exclusive;
        prefixes = __ballot_sync(0xffffffffu, read_anchors<Op>(state, lb, end, value) == STATUS_P);
    }
}

// The deterministic exclusive prefix of `tile` > 0 whose own value is `aggregate` (warp 0 of its block;
// every lane gets it), for order-sensitive operators other than the keyed sums. An anchor also publishes
// its window's entry. See the header.
template <class Op, class A, class State>
__device__ __forceinline__ A anchored_lookback(const State& state, uint64_t tile, const LookbackParams& lb,
                                               const A& aggregate) {
    const int lane = (int)lane_id();
    const int64_t k = (int64_t)(tile / ANCHOR_WINDOW);
    const int pos = (int)(tile % ANCHOR_WINDOW);
    const uint64_t mine = (uint64_t)k * ANCHOR_WINDOW + lane;
    // Both levels' loads in flight before either is waited on.
    A value = Op::template identity<A>();
    unsigned s = lane < pos ? state.read(mine, value) : STATUS_A;
    const int64_t a = k - 32 + lane;
    A anchor = Op::template identity<A>();
    unsigned as = a < 0 ? STATUS_P : state.read(anchor_entry(lb, a), anchor);
    while (__any_sync(0xffffffffu, s == STATUS_X)) {
        backoff(lb.poll_ns);
        if (s == STATUS_X) s = state.read(mine, value);
    }
    if (lane == pos) value = aggregate;  // lanes above pos stay the identity; only the anchor (pos 31) uses it
    const A scanned = warp_inclusive_scan<Op>(value);
    const A window = shfl_from(scanned, 31);
    const A within = shfl_from(scanned, max(pos - 1, 0));
    const bool anchor_tile = pos == ANCHOR_WINDOW - 1;
    if (anchor_tile && lane == 0) state.publish(anchor_entry(lb, k), STATUS_A, window);
    while (__any_sync(0xffffffffu, as == STATUS_X)) {
        backoff(lb.poll_ns);
        if (as == STATUS_X) as = state.read(anchor_entry(lb, a), anchor);
    }
    const A before = fold_anchors<Op>(state, lb, k, anchor, as);
    if (anchor_tile && lane == 0) state.publish(anchor_entry(lb, k), STATUS_P, Op::apply(before, window));
    return pos > 0 ? Op::apply(before, within) : before;
}

// The deterministic exclusive prefix of keyed tile `tile` > 0 (CutsAtHeads), whose own pair is
// `aggregate` (warp 0; every lane gets it): the bits of anchored_lookback's E_k ⊕ S_k(p), found sooner
// ("Keyed sums" in the header). Its count is an integer sum, exact under any grouping (a), so the default
// look-back's walk to the nearest P finds it. Its value is fixed by the nearest head before the tile (c):
// * a tile of the window before it (lanes < p) has a head: the value is S_k(p)'s, the window tree's;
// * the tile opens its window (p = 0) and its predecessor has a head: the value is that predecessor's,
//   bit for bit, which is E_k's (the last stretch of W_(k-1) holds that head);
// * otherwise the anchors give E_k, as in anchored_lookback.
// Both first cases need only the 32 predecessors the default look-back reads first, waited out of X; an
// anchor whose window holds a head publishes its entry's P, (exact count, W_k's value), at once.
template <class Op, class A, class State>
__device__ __forceinline__ A keyed_anchored_lookback(const State& state, uint64_t tile, const LookbackParams& lb,
                                                     const A& aggregate) {
    const int lane = (int)lane_id();
    const int64_t k = (int64_t)(tile / ANCHOR_WINDOW);
    const int pos = (int)(tile % ANCHOR_WINDOW);
    // Lane i: tile - 32 + i, as the default look-back's first step (before tile 0: P with the identity).
    int64_t end = (int64_t)tile;
    A value = Op::template identity<A>();
    unsigned s = end - 32 + lane < 0 ? STATUS_P : state.read((uint64_t)(end - 32 + lane), value);
    while (__any_sync(0xffffffffu, s == STATUS_X)) {
        backoff(lb.poll_ns);
        if (s == STATUS_X) s = state.read((uint64_t)(end - 32 + lane), value);
    }
    // The window in lane order (tile 32k + i at lane i, read by lane i + 32 - pos), the tile's own pair at
    // lane pos, the identity above: anchored_lookback's tree, over the same values.
    A in_window = shfl_from(value, (lane + 32 - pos) & 31);
    if (lane >= pos) in_window = lane == pos ? aggregate : Op::template identity<A>();
    const A scanned = warp_inclusive_scan<Op>(in_window);
    const A window = shfl_from(scanned, 31);
    const A within = shfl_from(scanned, max(pos - 1, 0));
    const bool head_in_window = __ballot_sync(0xffffffffu, lane < pos && in_window.count > 0) != 0;
    const bool head_before = pos > 0 ? head_in_window : shfl_from(value.count, 31) > 0;
    if (!head_before) return anchored_lookback<Op>(state, tile, lb, aggregate);
    // The count: the nearest P's and the tile-local counts of the A's after it (below 2^16 each, 32 of
    // them: 32 bits hold their sum), walking back a window of 32 at a time until a P is met.
    A exclusive;
    exclusive.value = pos > 0 ? within.value : shfl_from(value.value, 31);
    exclusive.count = 0;
    while (true) {
        const unsigned prefixes = __ballot_sync(0xffffffffu, s == STATUS_P);
        const int highest_p = prefixes ? 31 - __clz((int)prefixes) : -1;
        exclusive.count += __reduce_add_sync(0xffffffffu, lane > highest_p ? (uint32_t)value.count : 0u);
        if (prefixes) {
            exclusive.count += shfl_from(value.count, highest_p);
            break;
        }
        end -= 32;
        value = Op::template identity<A>();
        s = end - 32 + lane < 0 ? STATUS_P : state.read((uint64_t)(end - 32 + lane), value);
        while (__any_sync(0xffffffffu, s == STATUS_X)) {
            backoff(lb.poll_ns);
            if (s == STATUS_X) s = state.read((uint64_t)(end - 32 + lane), value);
        }
    }
    if (pos == ANCHOR_WINDOW - 1 && lane == 0) {
        A inclusive = window;  // E_k ⊕ W_k: W_k's value (W_k holds a head), the exact count
        inclusive.count = exclusive.count + aggregate.count;
        state.publish(anchor_entry(lb, k), STATUS_P, inclusive);
    }
    return exclusive;
}

// The exclusive prefix of `tile` (warp 0 of its block; every lane gets it).
//
// WIDE = 1: every step reads one sub-window of 32 (the default). WIDE > 1: the first step reads 32, later
// steps WIDE × 32. Measured on the H200 (benches/log, 2026-11-30): the wider steps help the run-based
// agent's keyed kernels (reduce_by_key, unique_by_key, scan_by_key: 4-7 % at 2^22-2^24 for i32, more for
// f64) and cost the scans, the selections and the encodings 2-9 % at 2^20-2^24 (more registers: fewer
// resident blocks or spills), so only the keyed kernels ask for them.
// Under LB_DETERMINISTIC, order-sensitive operators take anchored_lookback instead (through
// resolve_prefix), whatever WIDE.
template <class Op, class A, class State, int WIDE = 1>
__device__ __forceinline__ A warp_lookback(const State& state, uint64_t tile, const LookbackParams& lb) {
    const unsigned first_poll_ns = lb.first_poll_ns, poll_ns = lb.poll_ns;
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

// Warp 0 of tile > 0, after the tile published its value (`aggregate`, as A or P): its exclusive prefix
// (every lane gets it). Then, when `publish`, its inclusive prefix exclusive ⊕ aggregate as P. Under
// LB_DETERMINISTIC an order-sensitive operator takes anchored_lookback instead and publishes no P of
// the tile (an anchor publishes its window's entry), except a keyed tile with a head, when `publish`
// ("Keyed sums" in the header).
template <class Op, class A, class State, int WIDE = 1>
__device__ __forceinline__ A resolve_prefix(const State& state, uint64_t tile, const LookbackParams& lb,
                                                  const A& aggregate, bool publish = true) {
    if constexpr (OrderSensitive<Op, A>::value) {
        if (lb.flags & LB_DETERMINISTIC) {
            backoff(lb.first_poll_ns);
            if constexpr (CutsAtHeads<Op>::value) {
                const A exclusive = keyed_anchored_lookback<Op, A>(state, tile, lb, aggregate);
                // A keyed tile with a head: exclusive ⊕ aggregate is its aggregate's value, bit for bit, and
                // the exact count, whichever way the prefix was found ("Keyed sums" in the header).
                if (publish && aggregate.count > 0 && lane_id() == 0)
                    state.publish(tile, STATUS_P, Op::apply(exclusive, aggregate));
                return exclusive;
            } else {
                return anchored_lookback<Op, A>(state, tile, lb, aggregate);
            }
        }
    }
    const A exclusive = warp_lookback<Op, A, State, WIDE>(state, tile, lb);
    if (publish && lane_id() == 0) state.publish(tile, STATUS_P, Op::apply(exclusive, aggregate));
    return exclusive;
}

}  // namespace lookback
