// Entry point of a run-time compiled reduce_by_key and scan by key (src/rtc, Workspace::reduce_by_key_user_into
// and the `_user` scans by key): the classic run agent (classic/runs.cuh) that by_key_*.cu instantiate for
// the built-in operators, with a user operator. The program that includes this header defines first
//   LOOKBACK_RTC_BY_KEY     the generated operator type of rtc/user_op.cuh (In, A, Out and the static
//                           __device__ functions load, apply, identity and store)
//   LOOKBACK_RTC_KEY_BYTES  1, 2, 4 or 8: keys travel as their bits and compare as key_equality.cuh says
//                           (the float keys' parameters come with the launch, as for the built-in kernels)
//   LOOKBACK_RTC_EQ         optional: a user equality type (rtc/user_eq.cuh) that decides where runs start
//                           instead, keys of its K (of LOOKBACK_RTC_KEY_BYTES bytes)
// The kernel is the agent by_key.cuh builds, with the same tuning row (runs, by the larger of key and
// value), launch bounds and parameter block, so the host plans and launches it as it does the built-in
// one (src/plan.rs, Primitive::UserByKey). The mode says what it computes: RUNS_REDUCE,
// RUNS_SCAN_INCLUSIVE or RUNS_SCAN_EXCLUSIVE, whose seed holds the bits of an A. The agent combines a
// run's values, and tiles' pairs, in item order: the operator need not commute. One kernel per module,
// so its name is fixed.
//
// What the agent can carry (the host checks it first: src/rtc/scan_op.rs, `check_by_key_sizes`):
// * values (In) of 1, 2, 4 or 8 bytes: a thread's values are whole 16-byte chunks (TileIO);
// * results (Out) of In's size: the agent stages results in its value tile, over the values they came
//   from, and writes them from there; they travel as In's bits (UserRunValues::store);
// * accumulators of 1, 2, 4 or 8 bytes: a tile's status is one 16-byte entry holding its run count and
//   its value, 54 bits of value beside the count, or 64 in the FULL layout for 8-byte accumulators
//   (WidePairState in core/tile_state.cuh).
#pragma once
#include "../classic/runs.cuh"
#include "user_eq.cuh"
#include "user_op.cuh"

namespace lookback {

// The user's load and store as the run agent's value policy (AccValues in classic/runs.cuh).
template <class U> struct UserRunValues {
    using V = typename U::In;
    using A = typename U::A;
    static_assert(sizeof(typename U::Out) == sizeof(V), "results are staged over the values: Out must have In's size");
    static_assert(sizeof(A) == 1 || sizeof(A) == 2 || sizeof(A) == 4 || sizeof(A) == 8,
                  "a tile's status carries accumulators of 1, 2, 4 or 8 bytes");
    static __device__ __forceinline__ A load(V x) { return U::load(x); }
    static __device__ __forceinline__ V store(A a) { return from_bits<V>(to_bits(U::store(a))); }
    static __device__ __forceinline__ A seed(uint64_t raw) { return from_bits<A>((typename Bits<sizeof(A)>::type)raw); }
};

}  // namespace lookback

#ifdef LOOKBACK_RTC_EQ
using lookback_rtc_by_key_eq = lookback::UserKeyEq<LOOKBACK_RTC_EQ>;
static_assert(sizeof(typename LOOKBACK_RTC_EQ::K) == LOOKBACK_RTC_KEY_BYTES, "the equality's keys have the key size");
#else
using lookback_rtc_by_key_eq = lookback::ParamsKeyEq;
#endif
using lookback_rtc_by_key_agent =
    lookback::RunsAgent<LOOKBACK_RTC_KEY_BYTES, typename LOOKBACK_RTC_BY_KEY::In, lookback::UserScanOp<LOOKBACK_RTC_BY_KEY>,
                        true, false, lookback::UserRunValues<LOOKBACK_RTC_BY_KEY>, lookback_rtc_by_key_eq>;

extern "C" __global__ void __launch_bounds__(lookback_rtc_by_key_agent::BLOCK_THREADS, lookback_rtc_by_key_agent::MIN_BLOCKS)
    lookback_rtc_by_key(lookback::RunsParams p) {
    lookback_rtc_by_key_agent::run(p);
}
