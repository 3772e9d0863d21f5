// The one list of element types, and how each is accumulated.
//
// `LOOKBACK_TYPES(X)` is the single source of truth for the element types: the kernels are instantiated
// from it, and build.rs parses it (one `X(name, c_type, class)` per line) to generate the Rust kernel
// table. `class` is `int` or `float`; it decides which operators exist for the type (see ops.cuh).
#pragma once
#include "std_subset.cuh"
#include "half.cuh"

#define LOOKBACK_TYPES(X)       \
    X(i8, int8_t, int)          \
    X(i16, int16_t, int)        \
    X(i32, int32_t, int)        \
    X(i64, int64_t, int)        \
    X(u8, uint8_t, int)         \
    X(u16, uint16_t, int)       \
    X(u32, uint32_t, int)       \
    X(u64, uint64_t, int)       \
    X(f32, float, float)        \
    X(f64, double, float)       \
    X(f16, __half, float)       \
    X(bf16, __nv_bfloat16, float)

// The 8-byte rows of LOOKBACK_TYPES: the value types of the register-tile scans by key
// (classic/scan_by_key_tile.cuh). build.rs checks that each row is one of LOOKBACK_TYPES, of 8 bytes.
#define LOOKBACK_WIDE_TYPES(X)  \
    X(i64, int64_t, int)        \
    X(u64, uint64_t, int)       \
    X(f64, double, float)

// The register tile whose run heads write every output (classic/runs_at_heads.cuh) is compiled for 4-byte keys
// (LOOKBACK_HEADS_KEY_BYTES) and, for reduce_by_key, these value types (4-byte rows of LOOKBACK_TYPES,
// which build.rs checks); unique_by_key takes it for 4-byte values of any type. The encodings without
// values (run-length, run-end, non-trivial runs) take it for the key sizes of
// LOOKBACK_HEADS_ENCODE_KEY_BYTES (rows of LOOKBACK_KEY_BYTES, which build.rs checks). Other sizes run on
// the run agent (classic/runs.cuh): the tile was measured for these only (benches/log, 2026-12-02).
#define LOOKBACK_HEADS_TYPES(X) \
    X(i32, int32_t, int)        \
    X(u32, uint32_t, int)       \
    X(f32, float, float)
#define LOOKBACK_HEADS_KEY_BYTES(X) \
    X(4)
#define LOOKBACK_HEADS_ENCODE_KEY_BYTES(X) \
    X(4)                                   \
    X(8)

// The persistent engine's keyed kernels (kernels/pipe_by_key.cuh) a default build compiles: those
// Engine::Auto takes, for 1-byte keys and these 1-byte value types (auto_scan_by_key in src/plan.rs). The
// others, every (key size, value type) of pipe_by_key_*.cu and the encodings and unique_by_key of
// pipe_runs.cu, run only where a call forces Engine::Persistent, yet they are most of the sm_90 code: a
// default build leaves them out (the kernel tables then say None and such calls take the classic engine),
// and LOOKBACK_ALL_PERSISTENT_RUNS (the `persistent-runs` feature: build/persistent_runs.rs) builds them.
// build.rs parses this list and checks that each row is a 1-byte row of LOOKBACK_TYPES.
#define LOOKBACK_PIPE_BY_KEY_K1_TYPES(X) \
    X(i8, int8_t, int)                   \
    X(u8, uint8_t, int)

// The key sizes of the run-based kernels (classic/runs.cuh): keys travel as bits of their size, and float
// keys get IEEE equality from the parameters (key_equality.cuh), so one kernel per size serves every key
// type. build.rs parses this list; cuda/kernels/by_key_*.cu and runs.cu instantiate each size.
#define LOOKBACK_KEY_BYTES(X) \
    X(1)                      \
    X(2)                      \
    X(4)                      \
    X(8)

namespace lookback {

// Accumulator type of an element type. Integers accumulate in their own type (sums wrap, as the Rust API
// promises); f16 and bf16 accumulate in f32 and are rounded once per output item, which keeps long sums
// meaningful (an f16 running sum stalls at 2048 otherwise). host.rs follows the same rule.
template <class T> struct Acc {
    using type = T;
    static __device__ __forceinline__ T load(T x) { return x; }
    static __device__ __forceinline__ T store(T a) { return a; }
};
#if LOOKBACK_HAS_HALF
template <> struct Acc<__half> {
    using type = float;
    static __device__ __forceinline__ float load(__half x) { return __half2float(x); }
    static __device__ __forceinline__ __half store(float a) { return __float2half_rn(a); }
};
template <> struct Acc<__nv_bfloat16> {
    using type = float;
    static __device__ __forceinline__ float load(__nv_bfloat16 x) { return __bfloat162float(x); }
    static __device__ __forceinline__ __nv_bfloat16 store(float a) { return __float2bfloat16_rn(a); }
};
#endif

// Same-size unsigned integer: the bit pattern an item travels as (status payloads, seeds from the host).
template <int BYTES> struct Bits;
template <> struct Bits<1> { using type = uint8_t; };
template <> struct Bits<2> { using type = uint16_t; };
template <> struct Bits<4> { using type = uint32_t; };
template <> struct Bits<8> { using type = uint64_t; };

template <class T> __device__ __forceinline__ typename Bits<sizeof(T)>::type to_bits(T x) {
    typename Bits<sizeof(T)>::type b;
    memcpy(&b, &x, sizeof(T));
    return b;
}
template <class T> __device__ __forceinline__ T from_bits(typename Bits<sizeof(T)>::type b) {
    T x;
    memcpy(&x, &b, sizeof(T));
    return x;
}

// A seed the host passes as the bits of an element of T (an exclusive scan's initial value), as the
// accumulator type (f16 → f32).
template <class T> __device__ __forceinline__ typename Acc<T>::type load_seed(uint64_t raw) {
    return Acc<T>::load(from_bits<T>((typename Bits<sizeof(T)>::type)raw));
}

}  // namespace lookback
