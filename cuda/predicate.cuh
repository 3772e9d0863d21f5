// Predicates as data: a small postfix program, evaluated on a thread's items in registers.
//
// Closures cannot run on the device, so `Pred<T>` (src/pred.rs) compiles an expression tree into this
// program. Instructions push or combine truth *masks* — bit k is item k of the thread — rather than single
// booleans, so the interpreter's dispatch (a uniform branch on the opcode) is paid once per instruction
// for all of a thread's items, and `and`/`or`/`not` cost one integer operation. A compound predicate
// therefore costs about one compare per item per leaf, which the memory-bound kernels hide.
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
};
constexpr int PRED_MAX_INSTRUCTIONS = 16;
constexpr int PRED_MAX_DEPTH = 8;

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

// Evaluates `p` on N ≤ 32 items; bit k of the result is item k. The stack lives in registers: it is
// indexed only through unrolled compile-time indices.
template <class T, int N>
__device__ __forceinline__ uint32_t eval_predicate(const PredProgram& p, const T (&x)[N]) {
    static_assert(N <= 32, "one 32-bit mask per thread");
    using A = typename Acc<T>::type;
    uint32_t stack[PRED_MAX_DEPTH];
#pragma unroll
    for (int i = 0; i < PRED_MAX_DEPTH; ++i) stack[i] = 0;
    int sp = 0;
    auto push = [&](uint32_t v) {
#pragma unroll
        for (int i = 0; i < PRED_MAX_DEPTH; ++i) if (i == sp) stack[i] = v;
        ++sp;
    };
    auto pop = [&]() {
        --sp;
        uint32_t v = 0;
#pragma unroll
        for (int i = 0; i < PRED_MAX_DEPTH; ++i) if (i == sp) v = stack[i];
        return v;
    };
    for (uint32_t i = 0; i < p.len; ++i) {
        const T ta = from_bits<T>((typename Bits<sizeof(T)>::type)p.a[i]);
        const T tb = from_bits<T>((typename Bits<sizeof(T)>::type)p.b[i]);
        const A a = Acc<T>::load(ta), b = Acc<T>::load(tb);
        switch (p.op[i]) {
            case PRED_TRUE: push(N == 32 ? 0xffffffffu : (1u << N) - 1); break;
            case PRED_LT: push(leaf_mask(x, [&](A v, T) { return v < a; })); break;
            case PRED_LE: push(leaf_mask(x, [&](A v, T) { return v <= a; })); break;
            case PRED_GT: push(leaf_mask(x, [&](A v, T) { return v > a; })); break;
            case PRED_GE: push(leaf_mask(x, [&](A v, T) { return v >= a; })); break;
            case PRED_EQ: push(leaf_mask(x, [&](A v, T) { return v == a; })); break;
            case PRED_NE: push(leaf_mask(x, [&](A v, T) { return v != a; })); break;
            case PRED_BETWEEN: push(leaf_mask(x, [&](A v, T) { return a <= v && v <= b; })); break;
            case PRED_IS_NAN: push(leaf_mask(x, [&](A, T t) { return pred_is_nan(t); })); break;
            case PRED_IS_FINITE: push(leaf_mask(x, [&](A, T t) { return pred_is_finite(t); })); break;
            case PRED_ANY_BITS: push(leaf_mask(x, [&](A, T t) { return pred_any_bits(t, ta); })); break;
            case PRED_ALL_BITS: push(leaf_mask(x, [&](A, T t) { return pred_all_bits(t, ta); })); break;
            case PRED_AND: { const uint32_t r = pop(), l = pop(); push(l & r); break; }
            case PRED_OR: { const uint32_t r = pop(), l = pop(); push(l | r); break; }
            case PRED_NOT: push(~pop() & (N == 32 ? 0xffffffffu : (1u << N) - 1)); break;
            default: break;  // the host validates programs; an unknown opcode is skipped
        }
    }
    return sp > 0 ? pop() : 0u;
}

}  // namespace lookback
