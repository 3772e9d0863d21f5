// Entry point of a run-time compiled three-way partition (src/rtc): partition3.cu's kernel with either
// predicate, or both, the user's code. The program that includes this header defines first
//   LOOKBACK_RTC_ITEM    the element's C type (a row of LOOKBACK_TYPES);
//   LOOKBACK_RTC_FIRST,  the predicate policies of the two parts (core/predicate.cuh): ProgramPredicate
//   LOOKBACK_RTC_SECOND  for a built-in `Pred` (the launch carries its program), or
//                        FunctorPredicate<F> for user code.
#pragma once
#include "../classic/partition3.cuh"

using LookbackRtcPartition3 =
    lookback::Partition3Agent<LOOKBACK_RTC_ITEM, LOOKBACK_RTC_FIRST, LOOKBACK_RTC_SECOND>;

// Four resident blocks, as partition3.cu.
extern "C" __global__ void __launch_bounds__(LookbackRtcPartition3::BLOCK_THREADS, 4)
    lookback_rtc_partition3(lookback::Partition3Params p) {
    LookbackRtcPartition3::run(p);
}
