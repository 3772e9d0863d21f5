// Entry point of a run-time compiled table filter (src/rtc/table.rs): the table agent
// (classic/table.cuh) for one column signature and one decision. The program that includes this header
// defines first
//   LOOKBACK_RTC_DECIDE   the decision policy (DecideByFlags, DecideByColumn<T, Pred>, DecideByColumns<A, B, F>);
//   LOOKBACK_RTC_COLUMNS  the column codes, comma-separated (B > 0: items of B bytes; -B: row indices), or nothing.
// One kernel per module, so the name is fixed.
#pragma once
#include "../classic/table.cuh"

using lookback_rtc_table_agent = lookback::TableAgent<LOOKBACK_RTC_DECIDE, lookback::Columns<LOOKBACK_RTC_COLUMNS>>;

extern "C" __global__ void __launch_bounds__(lookback_rtc_table_agent::BLOCK_THREADS,
                                             lookback_rtc_table_agent::MIN_BLOCKS)
    lookback_rtc_table(lookback::TableParams p) {
    lookback_rtc_table_agent::run(p);
}
