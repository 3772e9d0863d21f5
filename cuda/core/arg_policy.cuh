// arg_min and arg_max: a reduction whose accumulator is an item with its index, run by the reduction agent
// (classic/reduce.cuh), which knows each item's index from its position.
//
// The order. Among the items, arg_min takes the least value (arg_max the greatest); ties, -0.0 against
// +0.0 included, go to the lowest index. NaNs are ignored, as the library's float min and max ignore them
// (ops.cuh), unless every item is NaN: the first NaN then wins. That is a total preorder refined by the
// index, so the combine is associative and commutative and the result does not depend on the order in
// which the agent combines. f16 and bf16 compare as their f32 values.
#pragma once
#include "ops.cuh"
#include "types.cuh"

namespace lookback {

// An item and its index.
template <class T> struct ArgPair {
    uint64_t index;
    T value;
};

// No item: the identity's index, u64::MAX (every real index is lower, so it loses every tie), which is
// also what an empty input's result carries.
constexpr uint64_t ARG_NONE = ~0ull;

template <bool MAX> struct OpArg {
    // Whether `a` is taken over `b`.
    template <class P> static __device__ __forceinline__ bool first_wins(const P& a, const P& b) {
        using V = decltype(P::value);
        using C = typename Acc<V>::type;
        const C x = Acc<V>::load(a.value), y = Acc<V>::load(b.value);
        if constexpr (!std::is_integral_v<C>) {
            const bool x_nan = x != x, y_nan = y != y;
            if (x_nan != y_nan) return y_nan;
            if (x_nan) return a.index <= b.index;
        }
        if (MAX ? y < x : x < y) return true;
        if (MAX ? x < y : y < x) return false;
        return a.index <= b.index;
    }
    template <class P> static __device__ __forceinline__ P apply(P a, P b) { return first_wins(a, b) ? a : b; }
    // The worst value (NaN for floats) at index ARG_NONE: any item wins against it, by value or by index.
    template <class P> static __device__ __forceinline__ P identity() {
        using V = decltype(P::value);
        using C = typename Acc<V>::type;
        P r;
        r.index = ARG_NONE;
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

// The policy (core/scan_policy.cuh) of arg_min (MAX = false) and arg_max over items of T, for the
// reduction agent, which builds each item's pair with its index (load_at).
template <class T, bool MAX> struct ArgReduce {
    using In = T;
    using Out = T;
    using A = ArgPair<T>;
    using Op = OpArg<MAX>;
    using Total = ArgTotal<T>;
    static constexpr bool COMMUTATIVE = true;
    static __device__ __forceinline__ A load_at(In x, uint64_t index) { return A{index, x}; }
    static __device__ __forceinline__ Total total(A a) { return Total{a.index, a.value}; }
    // acc ⊕ (index, x) where every index folded into acc is below `index` (one thread's items in order):
    // a tie keeps acc, so only the values are compared, and the index is moved only when x wins. The same
    // result as Op::apply, in fewer instructions: the reduction of arg pairs is bound by them, not by
    // memory. x wins over the identity (ARG_NONE: the first item, NaN or not), a NaN never wins over an
    // item, and any other x wins over a NaN item.
    static __device__ __forceinline__ A fold_next(A acc, In x, uint64_t index) {
        using C = typename Acc<T>::type;
        const C v = Acc<T>::load(x), best = Acc<T>::load(acc.value);
        bool wins = MAX ? best < v : v < best;
        if constexpr (!std::is_integral_v<C>) wins = (wins || best != best) && v == v;
        if (wins || acc.index == ARG_NONE) {
            acc.index = index;
            acc.value = x;
        }
        return acc;
    }
};

}  // namespace lookback
