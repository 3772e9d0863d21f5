// Entry points of a run-time compiled unique (src/rtc/eq.rs, Workspace::unique_by_into): the classic
// selection agent and the persistent engine's compaction, over the bits of the user's key type, with the
// user's equality deciding where runs start (rtc/user_eq.cuh). The program that includes this header
// defines first
//   LOOKBACK_RTC_EQ  the generated equality type (K and `static __device__ bool equal(K, K)`).
// The kernels are the ones select.cu and pipe_select.cu build for the unsigned type of the key's size,
// with the same tiles, tuning rows, launch bounds and parameter block, so the host plans and launches
// them as it does the built-in unique of that type. They are launched with SOURCE_UNIQUE only: the
// predicate policy selects nothing and compiles no interpreter. Each module holds one equality, so the
// names are fixed.
#pragma once
#include "../kernels/pipe_select.cuh"
#include "user_eq.cuh"

namespace lookback {

// The predicate policy of a module that only runs unique (never asked: SOURCE_UNIQUE).
struct NoPredicate {
    template <class T, int N> static __device__ __forceinline__ uint32_t mask(const PredProgram&, const T (&)[N]) {
        return 0u;
    }
};

}  // namespace lookback

using lookback_rtc_unique_item = typename lookback::Bits<sizeof(typename LOOKBACK_RTC_EQ::K)>::type;
using lookback_rtc_unique_agent =
    lookback::SelectAgent<lookback_rtc_unique_item, lookback::NoPredicate, lookback::UserKeyEq<LOOKBACK_RTC_EQ>>;

extern "C" __global__ void __launch_bounds__(lookback_rtc_unique_agent::BLOCK_THREADS, lookback_rtc_unique_agent::MIN_BLOCKS)
    lookback_rtc_unique(lookback::SelectParams p) {
    lookback_rtc_unique_agent::run(p);
}

LOOKBACK_PIPE_SELECT_ENTRY(lookback_rtc_pipe_unique,
                           lookback::PipeSelectWork<lookback_rtc_unique_item, lookback::Algo::select,
                                                    lookback::NoPredicate, lookback::UserKeyEq<LOOKBACK_RTC_EQ>>)
