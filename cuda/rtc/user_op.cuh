// A user operator compiled at run time (src/rtc/scan_op.rs) as the operator type the look-back, the warp
// scans and the run agent take: shared by the scans (rtc/scan.cuh) and the keyed ones (rtc/by_key.cuh).
// U is the generated struct with In, A, Out and the static __device__ functions load(In) -> A,
// apply(A, A) -> A, identity() -> A and store(A) -> Out.
#pragma once
#include "../core/ops.cuh"

namespace lookback {

// The user's combine and identity as an operator type.
template <class U> struct UserScanOp {
    template <class X> static __device__ __forceinline__ X apply(X a, X b) { return U::apply(a, b); }
    template <class X> static __device__ __forceinline__ X identity() { return U::identity(); }
};

// A user operator may be a float one, whose grouping changes its bits: Workspace::set_deterministic covers
// it as it covers the built-in float sums (the anchored look-back and the window-grouped look-ahead, which
// combine in order and so also suit an operator that does not commute). Exact operators pay that only
// when the setting is on. The run agent's pairs forward to this (PairOp in classic/runs.cuh).
template <class U, class A> struct OrderSensitive<UserScanOp<U>, A> : std::true_type {};

}  // namespace lookback
