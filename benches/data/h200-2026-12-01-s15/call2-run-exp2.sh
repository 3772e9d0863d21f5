#!/usr/bin/env bash
# Call 2 of session 15: tile shapes on top of the early staging (es: 16 x 4, 3 ahead; es32: 32 x 2; esa2:
# 16 x 4, 2 ahead), two rounds; ncu of es at 2^28 (select_if 1 % and 50 %).
set -u
cd "$(dirname "$0")"
R=${OUT:-/tmp/h200}; export OUT=/tmp/logs; mkdir -p $OUT $R
exec > >(tee -a "$R/summary-exp2.txt") 2>&1
export LOOKBACK_REQUIRE_GPU=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
rows() { grep -E "n=2\^|CHECK|rror|panicked" "$1" | grep -v "^memcpy" | awk '{print $1,$3,$5,$NF}'; }
A="--types i32 --sizes 24,26,28 --algos count_if_50,select_if_50,select_if_1,select_if_in_place_50,unique_run4,partition_reversed_50"
for round in 1 2; do
  for v in $VARIANTS; do
    timeout 120 env -u OUT $v/bench-select $A --reps 20 --csv $OUT/$v-$round.csv >$OUT/$v-$round.txt 2>&1
    echo "== $v round $round (rc $?)"
    rows $OUT/$v-$round.txt | sed "s/^/$v$round /"
  done
  tar czf $R/logs-exp2.tgz -C /tmp logs
done
W=/tmp/ncu; mkdir -p $W
for a in select_if_1 select_if_50; do
  timeout 200 ncu --clock-control none --kernel-name regex:pipe_select --launch-skip 4 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    --section SourceCounters --import-source no -o $W/ncu-$a -f env OUT=$W es/bench-select --types i32 --sizes 28 --algos $a --reps 20 >$W/ncu-$a-run.txt 2>&1
  ncu -i $W/ncu-$a.ncu-rep --print-details all >$W/ncu-$a.txt 2>&1
  ncu -i $W/ncu-$a.ncu-rep --page source --csv --print-source sass >$W/ncu-$a-sass.csv 2>&1
  echo "== ncu $a"
  grep -E "Duration|DRAM Throughput|Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued" $W/ncu-$a.txt | head -12
  tar czf $R/ncu.tgz -C $W $(cd $W && ls *.txt *.csv)
done
