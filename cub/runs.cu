// CUB's run-based algorithms, on the key types of benches/runs.rs, values of the key's type
// (conventions: shim.cuh). Run lengths and offsets are uint32_t, like the bench's.
#include "shim.cuh"

namespace {
using lookback_cub::Count;
using lookback_cub::fits_int;
using lookback_cub::host_value;
using lookback_cub::Sum;

template <class T>
cudaError_t reduce_by_key_sum(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* keys_in,
                              void* keys_out, const void* values_in, void* sums_out, void* count) {
  return cub::DeviceReduce::ReduceByKey(temp, bytes, static_cast<const T*>(keys_in), static_cast<T*>(keys_out),
                                        static_cast<const T*>(values_in), static_cast<T*>(sums_out),
                                        static_cast<Count*>(count), typename Sum<T>::Op{}, n, s);
}

template <class T>
cudaError_t unique_by_key(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* keys_in,
                          const void* values_in, void* keys_out, void* values_out, void* count) {
  return cub::DeviceSelect::UniqueByKey(temp, bytes, static_cast<const T*>(keys_in),
                                        static_cast<const T*>(values_in), static_cast<T*>(keys_out),
                                        static_cast<T*>(values_out), static_cast<Count*>(count), n, s);
}

// CUB's encodings take `int num_items`: larger inputs are refused rather than truncated.
template <class T>
cudaError_t run_length_encode(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* in,
                              void* values_out, void* lengths_out, void* count) {
  if (!fits_int(n)) return cudaErrorInvalidValue;
  return cub::DeviceRunLengthEncode::Encode(temp, bytes, static_cast<const T*>(in), static_cast<T*>(values_out),
                                            static_cast<uint32_t*>(lengths_out), static_cast<Count*>(count),
                                            static_cast<int>(n), s);
}

template <class T>
cudaError_t non_trivial_runs(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* in,
                             void* offsets_out, void* lengths_out, void* count) {
  if (!fits_int(n)) return cudaErrorInvalidValue;
  return cub::DeviceRunLengthEncode::NonTrivialRuns(temp, bytes, static_cast<const T*>(in),
                                                    static_cast<uint32_t*>(offsets_out),
                                                    static_cast<uint32_t*>(lengths_out),
                                                    static_cast<Count*>(count), static_cast<int>(n), s);
}

// InclusiveScanByKey with Sum<T>: for every type but f16 the dispatch of CUB's InclusiveSumByKey.
template <class T>
cudaError_t inclusive_sum_by_key(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* keys,
                                 const void* values_in, void* values_out) {
  return cub::DeviceScan::InclusiveScanByKey(temp, bytes, static_cast<const T*>(keys),
                                             static_cast<const T*>(values_in), static_cast<T*>(values_out),
                                             typename Sum<T>::Op{}, n, cuda::std::equal_to<>{}, s);
}

// The seed arrives as a pointer to a host value (the bench seeds with 1, not 0: CUB's ExclusiveSumByKey
// would not do).
template <class T>
cudaError_t exclusive_scan_by_key(cudaStream_t s, int64_t n, void* temp, size_t& bytes, const void* keys,
                                  const void* values_in, void* values_out, const void* init) {
  using Acc = typename Sum<T>::Acc;
  return cub::DeviceScan::ExclusiveScanByKey(temp, bytes, static_cast<const T*>(keys),
                                             static_cast<const T*>(values_in), static_cast<T*>(values_out),
                                             typename Sum<T>::Op{}, static_cast<Acc>(host_value<T>(init)), n,
                                             cuda::std::equal_to<>{}, s);
}

}  // namespace

#define LOOKBACK_CUB_RUNS(suffix, T)                                                                       \
  LOOKBACK_CUB_EXPORT(reduce_by_key_sum_##suffix, reduce_by_key_sum<T>,                                    \
                      (const void* keys_in, void* keys_out, const void* values_in, void* sums_out, void* count), \
                      (keys_in, keys_out, values_in, sums_out, count))                                     \
  LOOKBACK_CUB_EXPORT(unique_by_key_##suffix, unique_by_key<T>,                                            \
                      (const void* keys_in, const void* values_in, void* keys_out, void* values_out,       \
                       void* count),                                                                       \
                      (keys_in, values_in, keys_out, values_out, count))                                   \
  LOOKBACK_CUB_EXPORT(run_length_encode_##suffix, run_length_encode<T>,                                    \
                      (const void* in, void* values_out, void* lengths_out, void* count),                  \
                      (in, values_out, lengths_out, count))                                                \
  LOOKBACK_CUB_EXPORT(non_trivial_runs_##suffix, non_trivial_runs<T>,                                      \
                      (const void* in, void* offsets_out, void* lengths_out, void* count),                 \
                      (in, offsets_out, lengths_out, count))                                               \
  LOOKBACK_CUB_EXPORT(inclusive_sum_by_key_##suffix, inclusive_sum_by_key<T>,                              \
                      (const void* keys, const void* values_in, void* values_out), (keys, values_in, values_out)) \
  LOOKBACK_CUB_EXPORT(exclusive_scan_by_key_##suffix, exclusive_scan_by_key<T>,                            \
                      (const void* keys, const void* values_in, void* values_out, const void* init),       \
                      (keys, values_in, values_out, init))

// The key types of benches/runs.rs; `runs_fns!` in benches/common/cub.rs names the same suffixes.
LOOKBACK_CUB_RUNS(i32, int32_t)
LOOKBACK_CUB_RUNS(u8, uint8_t)
LOOKBACK_CUB_RUNS(f32, float)
LOOKBACK_CUB_RUNS(f64, double)
LOOKBACK_CUB_RUNS(f16, __half)
