// arg_min and arg_max: a reduction whose accumulator is an item with its index, run by the scan agents
// (classic/scan.cuh, persistent/scan_work.cuh) in reduce mode.
//
// The order. Among the items, arg_min takes the least value (arg_max the greatest); ties, -0.0 against
// +0.0 included, go to the lowest index. NaNs are ignored, as the library's float min and max ignore them
// (ops.cuh), unless every item is NaN: the first NaN then wins. That is a total preorder refined by the
// index, so the combine is associative and commutative and the result does not depend on how the
// look-back groups tiles. f16 and bf16 compare as their f32 values.
//
// The index travels in a (count, value) pair through WidePairState (tile_state.cuh), whose 64-bit-value
// layout leaves 44 bits to the count: indices below ARG_NONE, which is the identity's index and the mark
// of an empty input (src/reduce.rs checks the item count).
#pragma once
#include "ops.cuh"
#include "tile_state.cuh"
#include "types.cuh"

namespace lookback {

// An item and its index. `count` holds the index: WidePairState reads the pair by those names.
template <class T> struct ArgPair {
    uint64_t count;
    T value;
};

// No item: the identity's index (every real index is lower, so it loses every tie).
constexpr uint64_t ARG_NONE = (1ull << 44) - 1;

template <bool MAX> struct OpArg {
    // Whether `a` is taken over `b`.
    template <class P> static __device__ __forceinline__ bool first_wins(const P& a, const P& b) {
        using V = decltype(P::value);
        using C = typename Acc<V>::type;
        const C x = Acc<V>::load(a.value), y = Acc<V>::load(b.value);
        if constexpr (!std::is_integral_v<C>) {
            const bool x_nan = x != x, y_nan = y != y;
            if (x_nan != y_nan) return y_nan;
            if (x_nan) return a.count <= b.count;
        }
        if (MAX ? y < x : x < y) return true;
        if (MAX ? x < y : y < x) return false;
        return a.count <= b.count;
    }
    template <class P> static __device__ __forceinline__ P apply(P a, P b) { return first_wins(a, b) ? a : b; }
    // The worst value (NaN for floats) at index ARG_NONE: any item wins against it, by value or by index.
    template <class P> static __device__ __forceinline__ P identity() {
        using V = decltype(P::value);
        using C = typename Acc<V>::type;
        P r;
        r.count = ARG_NONE;
        if constexpr (std::is_integral_v<C>) r.value = MAX ? Limits<V>::lowest() : Limits<V>::highest();
        else r.value = Acc<V>::store(C(NAN));
        return r;
    }
};

// What an arg reduction writes: the index (u64::MAX for an empty input) and the value, as
// `lookback::ArgItem<T>` mirrors it (src/reduce.rs).
template <class T> struct ArgTotal {
    uint64_t index;
    T value;
};

// The policy (core/scan_policy.cuh) of arg_min (MAX = false) and arg_max over items of T. The items carry
// their index, which the agents know where they reduce in tile order (COMMUTATIVE = false), so the pair
// is built there by load_at.
template <class T, bool MAX> struct ArgReduce {
    using In = T;
    using Out = T;
    using A = ArgPair<T>;
    using Op = OpArg<MAX>;
    using Total = ArgTotal<T>;
    static constexpr bool COMMUTATIVE = false;
    static constexpr bool PAD_IS_IDENTITY = false;
    static constexpr bool REDUCE_ONLY = true;
    static __device__ __forceinline__ A load_at(In x, uint64_t index) { return A{index, x}; }
    static __device__ __forceinline__ Total total(A a) { return Total{a.count == ARG_NONE ? ~0ull : a.count, a.value}; }
    static __device__ __forceinline__ A seed(uint64_t) { return Op::template identity<A>(); }
    static __device__ __forceinline__ In pad() { return In{}; }
};

// Exact: the result is one of the items, whatever the grouping (no deterministic path needed).
template <bool MAX, class A> struct OrderSensitive<OpArg<MAX>, A> : std::false_type {};

// Pairs of an item and its index travel as WidePairState's (count, value) entries: the 64-bit layout for
// 8-byte items.
template <class T, bool ORDERED> struct StateFor<ArgPair<T>, ORDERED, false> {
    using type = WidePairState<ArgPair<T>, sizeof(T) == 8>;
    static __device__ __forceinline__ type make(uint64_t* words, unsigned epoch) { return {words, epoch}; }
};

}  // namespace lookback
