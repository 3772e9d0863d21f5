// Entry point of a run-time compiled run encoding or unique_by_key (src/rtc/eq.rs: Workspace::
// run_length_encode_by_into, run_end_encode_by_into, non_trivial_runs_by_into, unique_by_key_by_into): the
// classic run agent (classic/runs.cuh) that runs.cu instantiates, with the user's equality deciding where
// runs start (rtc/user_eq.cuh). The program that includes this header defines first
//   LOOKBACK_RTC_EQ           the generated equality type (K and `static __device__ bool equal(K, K)`)
//   LOOKBACK_RTC_VALUE_BYTES  0 (the encodings: no value column) or 1, 2, 4 or 8 (unique_by_key's values,
//                             carried as their bits)
// The kernel is runs.cu's lookback_runs_k<key bytes>_v<value bytes> with that policy: the same tuning row
// (encode, or runs by the larger of key and value), launch bounds and parameter block, so the host plans
// and launches it as the built-in one (src/plan.rs, Primitive::UserByKey). The mode picks the primitive;
// the float-key parameters are not read. The register-tile kernels (classic/runs_at_heads.cuh) and the
// persistent engine are not compiled for user equalities. One kernel per module, so its name is fixed.
#pragma once
#include "../classic/runs.cuh"
#include "user_eq.cuh"

using lookback_rtc_runs_value = typename lookback::ValueBits<LOOKBACK_RTC_VALUE_BYTES>::type;
using lookback_rtc_runs_agent =
    lookback::RunsAgent<sizeof(typename LOOKBACK_RTC_EQ::K), lookback_rtc_runs_value, lookback::OpMax, false, false,
                        lookback::AccValues<lookback_rtc_runs_value>, lookback::UserKeyEq<LOOKBACK_RTC_EQ>>;

extern "C" __global__ void __launch_bounds__(lookback_rtc_runs_agent::BLOCK_THREADS, lookback_rtc_runs_agent::MIN_BLOCKS)
    lookback_rtc_runs(lookback::RunsParams p) {
    lookback_rtc_runs_agent::run(p);
}
