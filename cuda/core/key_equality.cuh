// When two adjacent keys belong to different runs (classic/runs.cuh, persistent/runs_work.cuh,
// persistent/scan_by_key_work.cuh). Keys travel as bits of their size, so one kernel per key size serves every
// key type; how they compare is chosen once per thread (or pass) from RunsParams, which src/runs.rs fills
// from the key type (`key_equality`):
// * bits: integer keys, equal when their bits are.
// * ieee, bf16: float keys with IEEE ==: -0 equals +0, and a NaN equals nothing, itself included. The
//   keys are compared in the floating-point unit — f16 and bf16 widened exactly to f32 first — one
//   FSETP or DSETP per pair. The bit formulation before it (a magnitude mask, a NaN test and a zero
//   test per pair: 6-7 integer instructions, twice that for 8-byte keys) left the f16 and f64 encodings
//   slower than the integer ones (benches/log, 2026-12-01). The kernels are built without -ftz
//   (build.rs), so denormal keys stay distinct from zero and from each other.
#pragma once
#include "std_subset.cuh"
#include "half.cuh"
#include "params.cuh"

namespace lookback {

enum class KeyEq { bits, ieee, bf16 };

// The comparison RunsParams asks for, for keys of KB bytes (1-byte keys are never floats).
template <int KB> __device__ __forceinline__ KeyEq key_eq(const RunsParams& p) {
    if (KB == 1 || p.key_abs_mask == 0) return KeyEq::bits;
    // bf16 and f16 share the magnitude mask; +inf tells them apart (src/runs.rs key_equality).
    return KB == 2 && p.key_inf_bits == 0x7f80u ? KeyEq::bf16 : KeyEq::ieee;
}

// A float key's value, exactly, in a type the floating-point unit compares.
template <KeyEq EQ> __device__ __forceinline__ float key_value(uint16_t k) {
    if constexpr (EQ == KeyEq::bf16) return __uint_as_float((uint32_t)k << 16);
#if LOOKBACK_HAS_HALF
    else return __half2float(__ushort_as_half(k));
#else
    else {  // the same conversion, without the CUDA headers (half.cuh)
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(k));
        return f;
    }
#endif
}
template <KeyEq EQ> __device__ __forceinline__ float key_value(uint32_t k) { return __uint_as_float(k); }
template <KeyEq EQ> __device__ __forceinline__ double key_value(uint64_t k) {
    return __longlong_as_double((long long)k);
}

template <KeyEq EQ, class K> __device__ __forceinline__ bool keys_differ(K a, K b) {
    if constexpr (EQ == KeyEq::bits) return a != b;
    else return !(key_value<EQ>(a) == key_value<EQ>(b));  // unordered: a NaN differs
}

// A comparison kind as a type, for generic lambdas: `[&](auto eq) { ... decltype(eq)::value ... }`, and as a
// comparison: `Tag::differ(a, b)`, which the run agent calls so that a user equality (rtc/user_eq.cuh) can
// stand in for the kind (its own tag has the same `differ`).
template <KeyEq EQ> struct KeyEqTag : std::integral_constant<KeyEq, EQ> {
    template <class K> static __device__ __forceinline__ bool differ(K a, K b) { return keys_differ<EQ>(a, b); }
};

// Calls f(KeyEqTag<EQ>{}) with the comparison p asks for: one instantiation of f per kind that keys of
// KB bytes can have.
template <int KB, class F> __device__ __forceinline__ auto with_key_eq(const RunsParams& p, F&& f) {
    const KeyEq eq = key_eq<KB>(p);
    if constexpr (KB == 1) {
        return f(KeyEqTag<KeyEq::bits>{});
    } else if constexpr (KB == 2) {
        if (eq == KeyEq::bf16) return f(KeyEqTag<KeyEq::bf16>{});
        if (eq == KeyEq::ieee) return f(KeyEqTag<KeyEq::ieee>{});
        return f(KeyEqTag<KeyEq::bits>{});
    } else {
        if (eq == KeyEq::ieee) return f(KeyEqTag<KeyEq::ieee>{});
        return f(KeyEqTag<KeyEq::bits>{});
    }
}

// The run agent's key-equality policy (classic/runs.cuh) of the kernels nvcc builds: the comparison kind
// RunsParams asks for, chosen once per call of `dispatch`, which calls f(tag) with a tag whose
// `differ(a, b)` compares two keys' bits. A user equality compiled at run time (rtc/user_eq.cuh) is the
// other policy: it ignores the parameters.
struct ParamsKeyEq {
    template <int KB, class F> static __device__ __forceinline__ auto dispatch(const RunsParams& p, F&& f) {
        return with_key_eq<KB>(p, static_cast<F&&>(f));
    }
};

// Bit j: key j of a lane's N consecutive keys differs from key j-1, key -1 being `prev` (compared as p
// asks). Callers make the input's first item a head and mask items past the end.
template <int KB, class K, int N>
__device__ __forceinline__ uint32_t differ_bits(const RunsParams& p, K prev, const K (&k)[N]) {
    static_assert(N <= 32, "one bit per key");
    return with_key_eq<KB>(p, [&](auto eq) {
        constexpr KeyEq EQ = decltype(eq)::value;
        uint32_t m = (uint32_t)keys_differ<EQ>(prev, k[0]);
#pragma unroll
        for (int j = 1; j < N; ++j) m |= (uint32_t)keys_differ<EQ>(k[j - 1], k[j]) << j;
        return m;
    });
}

}  // namespace lookback
