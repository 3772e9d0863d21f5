// CUB's run-to-run deterministic sums, the counterparts of benches/scan.rs's inclusive_sum_det and
// exclusive_sum_det rows (conventions: shim.cuh). CUB has them from 3.5.0 on: DeviceScan's environment
// overloads under `cuda::execution::require(determinism::run_to_run)` combine tiles in a fixed order for
// floating-point `plus`. With an older CUB every entry point here answers cudaErrorNotSupported and
// lookback_cub_deterministic_scan() says 0, so that the shim builds against every CUB the benches use
// and the bench leaves those rows without a CUB line.
#include "shim.cuh"

#if CUB_VERSION >= 300500
#  define LOOKBACK_CUB_DETERMINISTIC_SCAN 1
#  include <cuda/execution>
#  include <cuda/memory_resource>
#  include <cuda/stream_ref>
#  include <new>
#else
#  define LOOKBACK_CUB_DETERMINISTIC_SCAN 0
#endif

// 1 when the entry points below run CUB's deterministic scan, 0 when they only answer cudaErrorNotSupported.
extern "C" int lookback_cub_deterministic_scan() { return LOOKBACK_CUB_DETERMINISTIC_SCAN; }

namespace {

#if LOOKBACK_CUB_DETERMINISTIC_SCAN
// The environment overloads take no temporary storage: they allocate it from the environment's memory
// resource on every call. This resource hands out the storage the caller allocated once, so that, as for
// every other row, no allocation falls inside the timed interval. Its size comes from CUB's own protocol:
// with no storage (`base` null) the resource records the size CUB asks for and returns null, and CUB,
// given null storage, only computes sizes and launches nothing.
struct CallerStorage {
  void* base;
  size_t capacity;
  size_t* asked;

  void* allocate_sync(size_t bytes, size_t /* alignment: the caller's allocation is 256-byte aligned */) {
    *asked = bytes;
    if (base != nullptr && bytes > capacity) throw std::bad_alloc();  // CUB returns cudaErrorMemoryAllocation
    return base;
  }
  void deallocate_sync(void*, size_t, size_t) noexcept {}
  void* allocate(cuda::stream_ref, size_t bytes, size_t alignment) { return allocate_sync(bytes, alignment); }
  void deallocate(cuda::stream_ref, void*, size_t, size_t) noexcept {}
  bool operator==(const CallerStorage& other) const { return base == other.base; }
  bool operator!=(const CallerStorage& other) const { return !(*this == other); }
};

template <bool Inclusive, class T>
cudaError_t sum_det(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* in, void* out) {
  namespace exec = cuda::std::execution;
  const auto env = exec::env{cuda::stream_ref{s}, cuda::execution::require(cuda::execution::determinism::run_to_run),
                             exec::prop{cuda::mr::get_memory_resource, CallerStorage{temp, bytes, &bytes}}};
  const auto* first = static_cast<const T*>(in);
  if constexpr (Inclusive) {
    return cub::DeviceScan::InclusiveSum(first, static_cast<T*>(out), n, env);
  } else {
    return cub::DeviceScan::ExclusiveSum(first, static_cast<T*>(out), n, env);
  }
}
#else
template <bool Inclusive, class T>
cudaError_t sum_det(cudaStream_t, int64_t, void*, size_t&, const void*, void*) {
  return cudaErrorNotSupported;
}
#endif

}  // namespace

#define LOOKBACK_CUB_SCAN_DET(suffix, T)                                                                           \
  LOOKBACK_CUB_EXPORT(inclusive_sum_det_##suffix, (sum_det<true, T>), (const void* in, void* out), (in, out))    \
  LOOKBACK_CUB_EXPORT(exclusive_sum_det_##suffix, (sum_det<false, T>), (const void* in, void* out), (in, out))

// CUB's run-to-run guarantee for floats covers `plus` on float types; `scan_fns!(_, det)` in
// benches/common/cub.rs names the same suffixes.
LOOKBACK_CUB_SCAN_DET(f32, float)
LOOKBACK_CUB_SCAN_DET(f64, double)
