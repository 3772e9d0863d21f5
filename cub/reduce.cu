// CUB's device-wide reductions, the counterparts of benches/scan.rs's reduce_sum and arg_min rows
// (conventions: shim.cuh).
#include "shim.cuh"

namespace {
using lookback_cub::Sum;

// DeviceReduce::Reduce with the scans' Sum<T> (f16 adds in f32, as lookback does), from a zero of the
// accumulator: DeviceReduce::Sum for every type but f16. `out`: one T.
template <class T>
cudaError_t reduce_sum(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* in, void* out) {
  return cub::DeviceReduce::Reduce(temp, bytes, static_cast<const T*>(in), static_cast<T*>(out), n,
                                   typename Sum<T>::Op{}, typename Sum<T>::Acc{}, s);
}

// DeviceReduce::ArgMin with separate outputs, written where lookback::ArgItem<T> keeps them: the index
// (a 64-bit integer) at byte 0, the value at byte 8 (`out`: 16 bytes).
template <class T>
cudaError_t arg_min(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* in, void* out) {
  auto* index = static_cast<int64_t*>(out);
  auto* value = reinterpret_cast<T*>(static_cast<char*>(out) + 8);
  return cub::DeviceReduce::ArgMin(temp, bytes, static_cast<const T*>(in), value, index, n, s);
}

}  // namespace

#define LOOKBACK_CUB_REDUCE(suffix, T)                                                                   \
  LOOKBACK_CUB_EXPORT(reduce_sum_##suffix, reduce_sum<T>, (const void* in, void* out), (in, out))        \
  LOOKBACK_CUB_EXPORT(arg_min_##suffix, arg_min<T>, (const void* in, void* out), (in, out))

// The types of benches/scan.rs; `scan_fns!` in benches/common/cub.rs names the same suffixes.
LOOKBACK_CUB_REDUCE(i32, int32_t)
LOOKBACK_CUB_REDUCE(u8, uint8_t)
LOOKBACK_CUB_REDUCE(i64, int64_t)
LOOKBACK_CUB_REDUCE(f16, __half)
LOOKBACK_CUB_REDUCE(f32, float)
LOOKBACK_CUB_REDUCE(f64, double)
