// CUB's selections, partition and unique, on the element types of benches/select.rs (conventions:
// shim.cuh). Thresholds arrive as a pointer to a host value of the element type.
#include "shim.cuh"

namespace {
using lookback_cub::Count;
using lookback_cub::host_value;
using lookback_cub::LessThan;

template <class T>
cudaError_t select_if(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* in, void* out,
                      void* count, const void* threshold) {
  return cub::DeviceSelect::If(temp, bytes, static_cast<const T*>(in), static_cast<T*>(out),
                               static_cast<Count*>(count), n, LessThan<T>{host_value<T>(threshold)}, s);
}

// CUB's in-place overload (one buffer), which has its own kernel path for the aliasing.
template <class T>
cudaError_t select_if_in_place(cudaStream_t s, int64_t n, void* temp, size_t& bytes, void* data, void* count,
                               const void* threshold) {
  return cub::DeviceSelect::If(temp, bytes, static_cast<T*>(data), static_cast<Count*>(count), n,
                               LessThan<T>{host_value<T>(threshold)}, s);
}

// Flags are bytes, any non-zero one selects (lookback's `Flag` for u8).
template <class T>
cudaError_t select_flagged(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* in,
                           const void* flags, void* out, void* count) {
  return cub::DeviceSelect::Flagged(temp, bytes, static_cast<const T*>(in), static_cast<const uint8_t*>(flags),
                                    static_cast<T*>(out), static_cast<Count*>(count), n, s);
}

// One output: the selected items in order, then the rejected ones in reverse order
// (lookback's partition_if_reversed).
template <class T>
cudaError_t partition_if(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* in, void* out,
                         void* count, const void* threshold) {
  return cub::DevicePartition::If(temp, bytes, static_cast<const T*>(in), static_cast<T*>(out),
                                  static_cast<Count*>(count), n, LessThan<T>{host_value<T>(threshold)}, s);
}

template <class T>
cudaError_t unique(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* in, void* out, void* count) {
  return cub::DeviceSelect::Unique(temp, bytes, static_cast<const T*>(in), static_cast<T*>(out),
                                   static_cast<Count*>(count), n, s);
}

}  // namespace

#define LOOKBACK_CUB_SELECT(suffix, T)                                                                    \
  LOOKBACK_CUB_EXPORT(select_if_##suffix, select_if<T>,                                                   \
                      (const void* in, void* out, void* count, const void* threshold),                    \
                      (in, out, count, threshold))                                                        \
  LOOKBACK_CUB_EXPORT(select_if_in_place_##suffix, select_if_in_place<T>,                                 \
                      (void* data, void* count, const void* threshold), (data, count, threshold))         \
  LOOKBACK_CUB_EXPORT(select_flagged_##suffix, select_flagged<T>,                                         \
                      (const void* in, const void* flags, void* out, void* count), (in, flags, out, count)) \
  LOOKBACK_CUB_EXPORT(partition_if_##suffix, partition_if<T>,                                             \
                      (const void* in, void* out, void* count, const void* threshold),                    \
                      (in, out, count, threshold))                                                        \
  LOOKBACK_CUB_EXPORT(unique_##suffix, unique<T>, (const void* in, void* out, void* count), (in, out, count))

// The types of benches/select.rs; `select_fns!` in benches/common/cub.rs names the same suffixes.
LOOKBACK_CUB_SELECT(i32, int32_t)
LOOKBACK_CUB_SELECT(u8, uint8_t)
LOOKBACK_CUB_SELECT(i64, int64_t)
LOOKBACK_CUB_SELECT(f32, float)
LOOKBACK_CUB_SELECT(f16, __half)
