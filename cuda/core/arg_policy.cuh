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

    // fold_next over the items of one 16-byte chunk, the items at index, index + 1, …, with the chunk's
    // best value found first and the item located only when that value wins: integers of 1 and 2 bytes
    // are compared packed (four or two to a word: __vminu4 and kin), those of 4 bytes and f32 by a tree.
    // The item is the first of the chunk that equals the best value, so a tie inside the chunk goes to
    // the lowest index, and a tie with acc keeps acc, as fold_next does item by item. Item by item, the
    // u8 fold extracted and converted each of its sixteen items (lead 8 of benches/STATUS.md).
    template <class Chunk> static __device__ __forceinline__ A fold_chunk(A acc, const Chunk& c, uint64_t index) {
        constexpr int PER = 16 / (int)sizeof(T);
        if constexpr (std::is_integral_v<T> && sizeof(T) <= 2) {
            const uint32_t w[4] = {c.vec.x, c.vec.y, c.vec.z, c.vec.w};
            uint32_t m = packed_best(packed_best(w[0], w[1]), packed_best(w[2], w[3]));
            if constexpr (sizeof(T) == 1) m = packed_best(m, m >> 16), m = packed_best(m, m >> 8);
            else m = packed_best(m, m >> 16);
            const T b = (T)m;  // the low lane holds the chunk's best value
            if (!(MAX ? acc.value < b : b < acc.value) && acc.index != ARG_NONE) return acc;
            const uint32_t lanes = (uint32_t)(typename Bits<sizeof(T)>::type)b * (sizeof(T) == 1 ? 0x01010101u : 0x00010001u);
            // Where b first is: lanes equal to it set all their bits (__vcmpeq4 / __vcmpeq2), so the first
            // set bit of the chunk's 128-bit mask, over the lane width in bits, is its index.
            uint32_t eq[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) eq[k] = sizeof(T) == 1 ? __vcmpeq4(w[k], lanes) : __vcmpeq2(w[k], lanes);
            const uint64_t lo = eq[0] | (uint64_t)eq[1] << 32, hi = eq[2] | (uint64_t)eq[3] << 32;
            const int bit = lo ? __ffsll((long long)lo) - 1 : 64 + __ffsll((long long)hi) - 1;
            const int at = bit / (8 * (int)sizeof(T));
            acc.index = index + at;
            acc.value = b;
            return acc;
        } else if constexpr (sizeof(T) == 4 && (std::is_integral_v<T> || std::is_same_v<T, float>)) {
            const T b = tree_best(tree_best(c.items[0], c.items[1]), tree_best(c.items[2], c.items[3]));
            if constexpr (std::is_integral_v<T>) {
                if (!(MAX ? acc.value < b : b < acc.value) && acc.index != ARG_NONE) return acc;
            } else {
                // fminf / fmaxf ignore NaNs: b is NaN only when the whole chunk is, and then only the
                // identity yields to it (its first item). A number wins over a NaN acc.
                const bool wins = b == b ? (MAX ? acc.value < b : b < acc.value) || acc.value != acc.value
                                         : acc.index == ARG_NONE;
                if (!wins) return acc;
                if (b != b) {
                    acc.index = index;
                    acc.value = c.items[0];
                    return acc;
                }
            }
            int at = 3;
            T item = c.items[3];
#pragma unroll
            for (int e = 2; e >= 0; --e) {
                if (c.items[e] == b) at = e, item = c.items[e];  // -0.0 equals +0.0: the first of them, as item by item
            }
            acc.index = index + at;
            acc.value = item;
            return acc;
        } else {
#pragma unroll
            for (int e = 0; e < PER; ++e) acc = fold_next(acc, c.items[e], index + e);
            return acc;
        }
    }

  private:
    // Lane-wise best of two words of packed 1- or 2-byte integers of T.
    static __device__ __forceinline__ uint32_t packed_best(uint32_t a, uint32_t b) {
        constexpr bool S = T(-1) < T(0);  // signed (std_subset.cuh has no is_signed)
        if constexpr (sizeof(T) == 1) return MAX ? (S ? __vmaxs4(a, b) : __vmaxu4(a, b)) : (S ? __vmins4(a, b) : __vminu4(a, b));
        else return MAX ? (S ? __vmaxs2(a, b) : __vmaxu2(a, b)) : (S ? __vmins2(a, b) : __vminu2(a, b));
    }
    // The better of two items of 4 bytes (floats: the number, if one is NaN).
    static __device__ __forceinline__ T tree_best(T a, T b) {
        if constexpr (std::is_same_v<T, float>) return MAX ? fmaxf(a, b) : fminf(a, b);
        else return MAX ? (a < b ? b : a) : (b < a ? b : a);
    }
};

}  // namespace lookback
