// Entry points of a run-time compiled selection family (src/rtc): the classic agent and the persistent
// engine's compaction and partition kernels, instantiated for a user predicate. The program that includes
// this header defines first
//   LOOKBACK_RTC_ITEM  the element's C type (a row of LOOKBACK_TYPES);
//   LOOKBACK_RTC_PRED  a type whose `__device__ bool operator()(LOOKBACK_RTC_ITEM) const` decides an item.
// The kernels are the ones select.cu, pipe_select.cu and pipe_partition.cu build for every type, with the
// predicate program's interpreter replaced by the user's code (core/predicate.cuh, FunctorPredicate): the
// same tiles, tuning rows, launch bounds and parameter block, so the host plans and launches them as it
// does the built-in ones. Each module holds one family, so the names are fixed.
#pragma once
#include "../kernels/pipe_select.cuh"

using lookback_rtc_agent = lookback::SelectAgent<LOOKBACK_RTC_ITEM, lookback::FunctorPredicate<LOOKBACK_RTC_PRED>>;

extern "C" __global__ void __launch_bounds__(lookback_rtc_agent::BLOCK_THREADS, lookback_rtc_agent::MIN_BLOCKS)
    lookback_rtc_select(lookback::SelectParams p) {
    lookback_rtc_agent::run(p);
}

LOOKBACK_PIPE_SELECT_ENTRY(lookback_rtc_pipe_select,
                           lookback::PipeSelectWork<LOOKBACK_RTC_ITEM, lookback::Algo::select,
                                                    lookback::FunctorPredicate<LOOKBACK_RTC_PRED>>)
LOOKBACK_PIPE_SELECT_ENTRY(lookback_rtc_pipe_partition,
                           lookback::PipeSelectWork<LOOKBACK_RTC_ITEM, lookback::Algo::partition,
                                                    lookback::FunctorPredicate<LOOKBACK_RTC_PRED>>)
