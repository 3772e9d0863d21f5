// Predicates as data: a small postfix program, evaluated on a thread's items in registers.
//
// Closures cannot run on the device, so `Pred<T>` (src/pred.rs) compiles an expression tree into this
// program. Instructions push or combine truth *masks* — bit k is item k of the thread — rather than single
// booleans, so the interpreter's dispatch (a uniform branch on the opcode) is paid once per instruction
// for all of a thread's items, and `and`/`or`/`not` cost one integer operation. A compound predicate
// therefore costs about one compare per item per leaf. Its dispatch still cost a memory-bound kernel real
// speed (a five-instruction `|` predicate ran select_if at 0.70 of memcpy against 0.96 for one leaf), so
// the host folds every predicate made of comparisons into the set of values it selects (src/pred/fold.rs)
// and sends that instead: one leaf for one interval, or a ranges program (`eval_ranges`). Only
// predicates with bit tests, or of more than PRED_MAX_RANGES intervals, reach the interpreter loop.
#pragma once
#include "ops.cuh"
#include "types.cuh"

namespace lookback {

// Must match src/pred.rs (Opcode, MAX_INSTRUCTIONS, MAX_DEPTH).
enum : uint8_t {
    PRED_TRUE = 0,
    PRED_LT = 1,
    PRED_LE = 2,
    PRED_GT = 3,
    PRED_GE = 4,
    PRED_EQ = 5,
    PRED_NE = 6,
    PRED_BETWEEN = 7,   // a <= x && x <= b
    PRED_IS_NAN = 8,
    PRED_IS_FINITE = 9,
    PRED_ANY_BITS = 10, // (x & a) != 0
    PRED_ALL_BITS = 11, // (x & a) == a
    PRED_AND = 12,
    PRED_OR = 13,
    PRED_NOT = 14,
    PRED_RANGES = 15,   // first opcode of a ranges program (eval_ranges); the second holds RANGES_* flags
};
constexpr int PRED_MAX_INSTRUCTIONS = 16;
constexpr int PRED_MAX_DEPTH = 8;
// Must match src/pred/fold.rs (MAX_RANGES) and src/pred/program.rs (the flags).
constexpr uint32_t PRED_MAX_RANGES = 8;
// A ranges program keeps interval i's bounds in a[i] and b[i].
static_assert(PRED_MAX_RANGES <= PRED_MAX_INSTRUCTIONS, "a ranges program's intervals fit its operand arrays");
enum : uint8_t {
    RANGES_INVERT = 1,    // select the items in no interval
    RANGES_NAN_TEST = 2,  // NaN items take RANGES_NAN_IN rather than what the intervals decide
    RANGES_NAN_IN = 4,
};

struct PredProgram {
    uint32_t len;
    uint8_t op[PRED_MAX_INSTRUCTIONS];
    uint32_t _pad;
    uint64_t a[PRED_MAX_INSTRUCTIONS];  // operand bits (elements of the item type)
    uint64_t b[PRED_MAX_INSTRUCTIONS];
};
static_assert(sizeof(PredProgram) == 280, "PredProgram layout changed: update src/pred.rs");

template <class T> __device__ __forceinline__ bool pred_is_nan(T x) {
    if constexpr (std::is_integral_v<T>) return false;
    else { const auto v = Acc<T>::load(x); return v != v; }
}
template <class T> __device__ __forceinline__ bool pred_is_finite(T x) {
    if constexpr (std::is_integral_v<T>) return true;
    else return isfinite(Acc<T>::load(x));
}
template <class T> __device__ __forceinline__ bool pred_any_bits(T x, T m) {
    if constexpr (std::is_integral_v<T>) return (x & m) != 0; else return false;
}
template <class T> __device__ __forceinline__ bool pred_all_bits(T x, T m) {
    if constexpr (std::is_integral_v<T>) return (T)(x & m) == m; else return false;
}

// Mask of the N items for which one leaf holds. Comparisons happen in the accumulator type (f16/bf16
// widen exactly to f32), with IEEE semantics: every comparison with NaN is false, except `ne`.
template <class T, int N, class F>
__device__ __forceinline__ uint32_t leaf_mask(const T (&x)[N], F&& test) {
    uint32_t m = 0;
#pragma unroll
    for (int k = 0; k < N; ++k) m |= (uint32_t)test(Acc<T>::load(x[k]), x[k]) << k;
    return m;
}

// Mask of the items for which leaf instruction i of `p` holds (i is not a combinator).
template <class T, int N>
__device__ __forceinline__ uint32_t eval_leaf(const PredProgram& p, uint32_t i, const T (&x)[N]) {
    using A = typename Acc<T>::type;
    constexpr uint32_t ALL = N == 32 ? 0xffffffffu : (1u << N) - 1;
    const T ta = from_bits<T>((typename Bits<sizeof(T)>::type)p.a[i]);
    const T tb = from_bits<T>((typename Bits<sizeof(T)>::type)p.b[i]);
    const A a = Acc<T>::load(ta), b = Acc<T>::load(tb);
    switch (p.op[i]) {
        case PRED_TRUE: return ALL;
        case PRED_LT: return leaf_mask(x, [&](A v, T) { return v < a; });
        case PRED_LE: return leaf_mask(x, [&](A v, T) { return v <= a; });
        case PRED_GT: return leaf_mask(x, [&](A v, T) { return v > a; });
        case PRED_GE: return leaf_mask(x, [&](A v, T) { return v >= a; });
        case PRED_EQ: return leaf_mask(x, [&](A v, T) { return v == a; });
        case PRED_NE: return leaf_mask(x, [&](A v, T) { return v != a; });
        case PRED_BETWEEN: return leaf_mask(x, [&](A v, T) { return a <= v && v <= b; });
        case PRED_IS_NAN: return leaf_mask(x, [&](A, T t) { return pred_is_nan(t); });
        case PRED_IS_FINITE: return leaf_mask(x, [&](A, T t) { return pred_is_finite(t); });
        case PRED_ANY_BITS: return leaf_mask(x, [&](A, T t) { return pred_any_bits(t, ta); });
        case PRED_ALL_BITS: return leaf_mask(x, [&](A, T t) { return pred_all_bits(t, ta); });
        default: return 0;  // the host validates programs; an unknown opcode is "false"
    }
}

// Mask of the items in one of the `p.len` closed intervals of a ranges program, then inverted and NaN
// decided by the flags. Integer types test `(unsigned)(x - lo) <= width` (`b` holds the width: one add
// and one compare); floats compare in the accumulator type, where NaN lies in no interval. The first
// four intervals are unrolled with uniform guards, so their bounds are read straight from the kernel
// parameters; more take a loop (at most PRED_MAX_RANGES, checked on the host).
template <class T, int N>
__device__ __forceinline__ uint32_t eval_ranges(const PredProgram& p, const T (&x)[N]) {
    using A = typename Acc<T>::type;
    using U = typename Bits<sizeof(T)>::type;
    constexpr uint32_t ALL = N == 32 ? 0xffffffffu : (1u << N) - 1;
    auto in_range = [&](uint32_t i) {
        if constexpr (std::is_integral_v<T>) {
            const U lo = (U)p.a[i], width = (U)p.b[i];
            return leaf_mask(x, [&](A, T t) { return (U)((U)t - lo) <= width; });
        } else {
            const A lo = Acc<T>::load(from_bits<T>((U)p.a[i])), hi = Acc<T>::load(from_bits<T>((U)p.b[i]));
            return leaf_mask(x, [&](A v, T) { return lo <= v && v <= hi; });
        }
    };
    uint32_t m = 0;
#pragma unroll
    for (uint32_t i = 0; i < 4; ++i)
        if (i < p.len) m |= in_range(i);
#pragma unroll 1
    for (uint32_t i = 4; i < p.len; ++i) m |= in_range(i);
    const uint8_t flags = p.op[1];
    if (flags & RANGES_INVERT) m = ~m & ALL;
    if constexpr (!std::is_integral_v<T>) {
        if (flags & RANGES_NAN_TEST) {
            const uint32_t nan = leaf_mask(x, [&](A, T t) { return pred_is_nan(t); });
            m = (flags & RANGES_NAN_IN) ? (m | nan) : (m & ~nan);
        }
    }
    return m;
}

// Evaluates `p` on N ≤ 32 items; bit k of the result is item k.
//
// The stack lives in registers as a shift register: `top` is the top of the stack and s[0..) the entries
// below it, so a push moves every entry down one place and a binary operator moves them up one. The stack
// depth is data (the same for every thread), so indexing an array by it would cost a compare and a select
// per entry on every push and pop; moves cost one instruction per entry and the top is a plain register.
// Every leaf is one uniform branch (the opcode) and one compare per item. A program of one leaf (the
// common case) skips the loop and the stack, and so does a ranges program.
template <class T, int N>
__device__ __forceinline__ uint32_t eval_predicate(const PredProgram& p, const T (&x)[N]) {
    static_assert(N <= 32, "one 32-bit mask per thread");
    constexpr uint32_t ALL = N == 32 ? 0xffffffffu : (1u << N) - 1;
    if (p.op[0] == PRED_RANGES) return eval_ranges(p, x);
    if (p.len == 1) return eval_leaf(p, 0, x);
    constexpr int BELOW = PRED_MAX_DEPTH - 1;  // entries under the top
    uint32_t top = 0;
    uint32_t s[BELOW];
#pragma unroll
    for (int i = 0; i < BELOW; ++i) s[i] = 0;
    // Removes the entry under the top and returns it.
    auto pop_below = [&]() {
        const uint32_t v = s[0];
#pragma unroll
        for (int i = 0; i < BELOW - 1; ++i) s[i] = s[i + 1];
        return v;
    };
#pragma unroll 1
    for (uint32_t i = 0; i < p.len; ++i) {
        const uint8_t op = p.op[i];
        if (op == PRED_AND) {
            top &= pop_below();
        } else if (op == PRED_OR) {
            top |= pop_below();
        } else if (op == PRED_NOT) {
            top = ~top & ALL;
        } else {
            const uint32_t m = eval_leaf(p, i, x);
#pragma unroll
            for (int j = BELOW - 1; j > 0; --j) s[j] = s[j - 1];
            s[0] = top;
            top = m;
        }
    }
    return p.len > 0 ? top : 0u;
}

// What decides selection in the selection agents (classic/select.cuh, classic/partition3.cuh,
// persistent/select_work.cuh): a policy with one static `mask(program, items)`. The kernels nvcc builds
// interpret the launch's predicate program; a run-time compile (src/rtc, cuda/rtc/) plugs in the user's
// own code instead, so user predicates run on the same agents, tiles and look-back.
struct ProgramPredicate {
    template <class T, int N>
    static __device__ __forceinline__ uint32_t mask(const PredProgram& p, const T (&x)[N]) {
        return eval_predicate(p, x);
    }
};

// A user predicate: `F` is a type whose `__device__ bool operator()(T) const` decides one item. The
// launch's program is not read.
template <class F> struct FunctorPredicate {
    template <class T, int N>
    static __device__ __forceinline__ uint32_t mask(const PredProgram&, const T (&x)[N]) {
        static_assert(N <= 32, "one 32-bit mask per thread");
        const F f{};
        uint32_t m = 0;
#pragma unroll
        for (int k = 0; k < N; ++k) m |= (uint32_t)(bool)f(x[k]) << k;
        return m;
    }
};

}  // namespace lookback
