// CUB's device-wide scans, on the element types of benches/scan.rs (conventions: shim.cuh).
#include "shim.cuh"

namespace {
using lookback_cub::Sum;

// InclusiveScan / ExclusiveScan with Sum<T>: for every type but f16 the very dispatch of CUB's
// InclusiveSum / ExclusiveSum (plus<>, a zero of the input type as the seed); f16 adds in f32.
template <class T>
cudaError_t inclusive_sum(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* in, void* out) {
  // `in == out` is CUB's in-place scan (its docs allow exactly that overlap): the in-place row.
  return cub::DeviceScan::InclusiveScan(
      temp, bytes, static_cast<const T*>(in), static_cast<T*>(out), typename Sum<T>::Op{}, n, s);
}

template <class T>
cudaError_t exclusive_sum(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* in, void* out) {
  return cub::DeviceScan::ExclusiveScan(temp, bytes, static_cast<const T*>(in), static_cast<T*>(out),
                                        typename Sum<T>::Op{}, typename Sum<T>::Acc{}, n, s);
}

template <class T>
cudaError_t inclusive_max(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* in, void* out) {
  return cub::DeviceScan::InclusiveScan(
      temp, bytes, static_cast<const T*>(in), static_cast<T*>(out), cuda::maximum<>{}, n, s);
}

}  // namespace

#define LOOKBACK_CUB_SCAN(suffix, T)                                                                     \
  LOOKBACK_CUB_EXPORT(inclusive_sum_##suffix, inclusive_sum<T>, (const void* in, void* out), (in, out)) \
  LOOKBACK_CUB_EXPORT(exclusive_sum_##suffix, exclusive_sum<T>, (const void* in, void* out), (in, out)) \
  LOOKBACK_CUB_EXPORT(inclusive_max_##suffix, inclusive_max<T>, (const void* in, void* out), (in, out))

// The types of benches/scan.rs; `scan_fns!` in benches/common/cub.rs names the same suffixes.
LOOKBACK_CUB_SCAN(i32, int32_t)
LOOKBACK_CUB_SCAN(u8, uint8_t)
LOOKBACK_CUB_SCAN(i64, int64_t)
LOOKBACK_CUB_SCAN(f16, __half)
LOOKBACK_CUB_SCAN(f32, float)
LOOKBACK_CUB_SCAN(f64, double)
