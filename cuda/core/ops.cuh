// Scan operators. Each has `apply` and an `identity` for every accumulator type it supports.
//
// `LOOKBACK_OPS(X)` lists them as `X(name, classes)` (one per line; build.rs parses it): `all` ops exist for
// every element type, `int` ops only for integers.
#pragma once
#include "std_subset.cuh"

#define LOOKBACK_OPS(X) \
    X(sum, all)         \
    X(min, all)         \
    X(max, all)         \
    X(and, int)         \
    X(or, int)          \
    X(xor, int)

// Instantiates KERNEL(op, OpType, NAME, CTYPE) for every operator of LOOKBACK_OPS that a type of CLASS
// (`int` or `float`) has: what cuda/kernels/scan.cu and pipe_scan.cu expand per element type.
#define LOOKBACK_FOR_EACH_OP(KERNEL, NAME, CTYPE, CLASS) \
    KERNEL(sum, OpSum, NAME, CTYPE)                      \
    KERNEL(min, OpMin, NAME, CTYPE)                      \
    KERNEL(max, OpMax, NAME, CTYPE)                      \
    LOOKBACK_FOR_EACH_OP_##CLASS(KERNEL, NAME, CTYPE)
#define LOOKBACK_FOR_EACH_OP_int(KERNEL, NAME, CTYPE) \
    KERNEL(and, OpAnd, NAME, CTYPE)                   \
    KERNEL(or, OpOr, NAME, CTYPE)                     \
    KERNEL(xor, OpXor, NAME, CTYPE)
#define LOOKBACK_FOR_EACH_OP_float(KERNEL, NAME, CTYPE)

namespace lookback {

template <class A> struct Limits;
#define LOOKBACK_INT_LIMITS(T, LO, HI)                                              \
    template <> struct Limits<T> {                                                  \
        static __device__ __forceinline__ T lowest() { return (T)(LO); }           \
        static __device__ __forceinline__ T highest() { return (T)(HI); }          \
    };
LOOKBACK_INT_LIMITS(int8_t, -128, 127)
LOOKBACK_INT_LIMITS(int16_t, -32768, 32767)
LOOKBACK_INT_LIMITS(int32_t, INT32_MIN, INT32_MAX)
LOOKBACK_INT_LIMITS(int64_t, INT64_MIN, INT64_MAX)
LOOKBACK_INT_LIMITS(uint8_t, 0, 0xff)
LOOKBACK_INT_LIMITS(uint16_t, 0, 0xffff)
LOOKBACK_INT_LIMITS(uint32_t, 0, 0xffffffffu)
LOOKBACK_INT_LIMITS(uint64_t, 0, 0xffffffffffffffffull)
#undef LOOKBACK_INT_LIMITS
// Integer sums wrap: add as unsigned so signed overflow is defined.
struct OpSum {
    template <class A> static __device__ __forceinline__ A apply(A a, A b) {
        if constexpr (std::is_integral_v<A>) {
            using U = std::make_unsigned_t<A>;
            return (A)(U)((U)a + (U)b);
        } else {
            return a + b;
        }
    }
    // -0.0 rather than +0.0: it leaves every float unchanged, a negative zero included.
    template <class A> static __device__ __forceinline__ A identity() {
        if constexpr (std::is_integral_v<A>) return A(0); else return A(-0.0);
    }
};
// Float min/max ignore NaN (IEEE minNum/maxNum, like Rust's f32::min): associative and commutative even
// with NaNs, so the result does not depend on the order the look-back combines tiles in. Their identity
// is NaN, not ±inf: fmin(NaN, x) = x for every x, and a prefix of NaNs only stays NaN (as the sequential
// reference says) if the seed is NaN too — with +inf, min over [NaN] came out as +inf.
struct OpMin {
    template <class A> static __device__ __forceinline__ A apply(A a, A b) {
        if constexpr (std::is_integral_v<A>) return b < a ? b : a; else return fmin(a, b);
    }
    template <class A> static __device__ __forceinline__ A identity() {
        if constexpr (std::is_integral_v<A>) return Limits<A>::highest(); else return A(NAN);
    }
};
struct OpMax {
    template <class A> static __device__ __forceinline__ A apply(A a, A b) {
        if constexpr (std::is_integral_v<A>) return a < b ? b : a; else return fmax(a, b);
    }
    template <class A> static __device__ __forceinline__ A identity() {
        if constexpr (std::is_integral_v<A>) return Limits<A>::lowest(); else return A(NAN);
    }
};
struct OpAnd {
    template <class A> static __device__ __forceinline__ A apply(A a, A b) { return (A)(a & b); }
    template <class A> static __device__ __forceinline__ A identity() { return (A)~A(0); }
};
struct OpOr {
    template <class A> static __device__ __forceinline__ A apply(A a, A b) { return (A)(a | b); }
    template <class A> static __device__ __forceinline__ A identity() { return A(0); }
};
struct OpXor {
    template <class A> static __device__ __forceinline__ A apply(A a, A b) { return (A)(a ^ b); }
    template <class A> static __device__ __forceinline__ A identity() { return A(0); }
};

// Whether the bits of `Op` over accumulator `A` depend on how the operations are grouped: float sums
// (rounding). The look-back groups tiles by timing, so under LB_DETERMINISTIC (params.cuh) these, and only
// these, combine in tile order; integer operators and float min/max are exactly associative and keep
// their code. Wrapping operators (the pairs of classic/runs.cuh) forward to the operator they wrap.
template <class Op, class A> struct OrderSensitive : std::false_type {};
template <class A> struct OrderSensitive<OpSum, A> : std::bool_constant<std::is_floating_point_v<A>> {};

}  // namespace lookback
