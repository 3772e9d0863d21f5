// A user key equality compiled at run time (src/rtc/eq.rs) as the policies that decide where runs start:
// the run agent's key equality (KE of classic/runs.cuh: rtc/runs.cuh, rtc/by_key.cuh) and unique's (Eq of
// classic/select.cuh and persistent/select_work.cuh: rtc/unique.cuh). U is the generated struct with the
// key type K and `static __device__ bool equal(K a, K b)`, a the earlier item of the two.
//
// Items travel as the bits of K's size (one agent per key size, as for the built-in keys); each pair is
// turned back into two K before the user's code sees it. The user's equality is asked only about adjacent
// items, each pair once, so it need not be transitive (a tolerance is fine) nor symmetric.
#pragma once
#include "../core/key_equality.cuh"

namespace lookback {

template <class U> struct UserKeyEq {
    using K = typename U::K;
    static_assert(sizeof(K) == 1 || sizeof(K) == 2 || sizeof(K) == 4 || sizeof(K) == 8,
                  "keys travel as the bits of 1, 2, 4 or 8 bytes");
    // Two adjacent items' bits, `before` first: whether they start different runs.
    template <class B> static __device__ __forceinline__ bool differ(B before, B item) {
        static_assert(sizeof(B) == sizeof(K), "an item's bits have the key's size");
        return !(bool)U::equal(from_bits<K>(before), from_bits<K>(item));
    }
    // The run agent's policy: the launch's key parameters are not read; the policy is its own tag.
    template <int KB, class F> static __device__ __forceinline__ auto dispatch(const RunsParams&, F&& f) {
        return f(UserKeyEq{});
    }
};

}  // namespace lookback
