// The CUB baseline shim (cargo feature `cub-baseline`): C entry points that run CUB's device-wide
// algorithms on raw device pointers and a stream, so that the benchmarks time CUB in their own process,
// on the very buffers and stream they time lookback on. Never part of the library's API: build.rs
// links it only when the feature is on, and only benches/common/cub.rs declares its functions.
//
// Every algorithm `<name>` is exported as two functions, both returning the cudaError_t as an int
// (0: success):
//   lookback_cub_<name>_temp_bytes(int64_t n, size_t* bytes)   // CUB's temporary storage for n items
//   lookback_cub_<name>(void* temp, size_t temp_bytes, <buffers...>, int64_t n, cudaStream_t stream)
// The second only enqueues work on `stream` (the driver's CUstream is the same handle as the runtime's
// cudaStream_t): it never synchronizes, so CUDA events around it time the GPU's work, as for lookback.
// Buffers are type-erased (`const void*` / `void*`); the exported name says the element type.
//
// `n` is int64_t, as in shared/baseline: CUB then uses 64-bit offsets wherever it picks them from
// num_items' type, as lookback always does. Counts are written as uint64_t, like lookback's.
#pragma once

#include <cub/device/device_partition.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/functional>
#include <cuda/std/functional>
#include <cuda_fp16.h>

#include <climits>
#include <cstdint>
#include <cstring>

namespace lookback_cub {

using Count = unsigned long long;  // lookback's uint64_t run / selection counts

// A host value of T behind an untyped pointer (thresholds, scan seeds). Null reads as T{}: the size
// query passes null for every pointer, and CUB sizes its storage without looking at the value.
template <class T>
T host_value(const void* p) {
  T v{};
  if (p != nullptr) std::memcpy(&v, p, sizeof(T));
  return v;
}

// The sum of T's scans and reductions, and its accumulator: f16 adds in f32, as lookback does
// (cuda/core/types.cuh), so both compute the same sums (an f16 running sum stalls at 2048 otherwise). For the
// other types this is what CUB's *Sum entry points use.
template <class T>
struct Sum {
  using Acc = T;
  using Op  = cuda::std::plus<>;
};
template <>
struct Sum<__half> {
  using Acc = float;
  using Op  = cuda::std::plus<float>;
};

// `x < threshold`: the benches' `Pred::lt(threshold)`.
template <class T>
struct LessThan {
  T threshold;
  __device__ bool operator()(const T& x) const { return x < threshold; }
};

// The size query of an algorithm `run(stream, n, temp, bytes, buffers...)`: CUB's own protocol (null
// temporary storage) with every buffer null, which CUB does not dereference then. The stream and item
// count come first so that the buffers' types can be deduced as the trailing pack.
template <class... Buffers>
int query(cudaError_t (*run)(cudaStream_t, int64_t, void*, size_t&, Buffers...), int64_t n, size_t* bytes) {
  if (bytes == nullptr || n < 0) return cudaErrorInvalidValue;
  *bytes = 0;
  return run(nullptr, n, nullptr, *bytes, Buffers{}...);
}

// For the algorithms whose CUB entry point takes `int num_items` (run-length encoding).
inline bool fits_int(int64_t n) { return n >= 0 && n <= INT_MAX; }

}  // namespace lookback_cub

#define LOOKBACK_CUB_UNPAREN(...) __VA_ARGS__

// Exports `lookback_cub_<name>_temp_bytes` and `lookback_cub_<name>` from `run`, a function
// `cudaError_t(cudaStream_t, int64_t n, void* temp, size_t& temp_bytes, <params>)`; `params` is the
// parenthesized buffer parameter list and `args` the parenthesized names that forward them. A C++
// exception must not unwind into the Rust caller: it becomes cudaErrorUnknown.
#define LOOKBACK_CUB_EXPORT(name, run, params, args)                                                   \
  extern "C" int lookback_cub_##name##_temp_bytes(int64_t n, size_t* bytes) {                         \
    try {                                                                                              \
      return lookback_cub::query(run, n, bytes);                                                       \
    } catch (...) {                                                                                    \
      return cudaErrorUnknown;                                                                         \
    }                                                                                                  \
  }                                                                                                    \
  extern "C" int lookback_cub_##name(void* temp, size_t temp_bytes, LOOKBACK_CUB_UNPAREN params,        \
                                     int64_t n, cudaStream_t stream) {                                 \
    if (n < 0) return cudaErrorInvalidValue;                                                           \
    try {                                                                                              \
      return run(stream, n, temp, temp_bytes, LOOKBACK_CUB_UNPAREN args);                              \
    } catch (...) {                                                                                    \
      return cudaErrorUnknown;                                                                         \
    }                                                                                                  \
  }
