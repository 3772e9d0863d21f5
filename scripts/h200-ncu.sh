#!/usr/bin/env bash
# Hardware-counter profile of one persistent kernel (device side; run after scripts/h200-pipe.sh has
# unpacked the bundle, or carry target/bundle.tar.xz):
#   scripts/h200-ncu.sh NAME BENCH KERNEL_REGEX BENCH_ARGS...
# e.g. scripts/h200-ncu.sh count_if bench-select pipe_select --sizes 26 --algos count_if_50 --engine persistent
# Writes $OUT/ncu-NAME.txt (speed of light, warp states, scheduler, memory) and $OUT/ncu-NAME-sass.csv
# (per-instruction stall samples), and prints the headline lines.
set -u
cd "$(dirname "$0")/.."
[ -d target/gpu-bundle ] || tar xJf target/bundle.tar.xz -C target
name=$1 bench=$2 kernel=$3; shift 3
R=${OUT:-/tmp/h200}; mkdir -p $R
b=target/gpu-bundle/bin
timeout 240 ncu --clock-control none --kernel-name regex:$kernel --launch-skip 4 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
  --section Occupancy --section LaunchStats --section SourceCounters --import-source no \
  -o $R/ncu-$name -f $b/$bench --reps 6 "$@" >$R/ncu-$name-run.txt 2>&1
ncu -i $R/ncu-$name.ncu-rep --print-details all >$R/ncu-$name.txt 2>&1
ncu -i $R/ncu-$name.ncu-rep --page source --csv --print-source sass >$R/ncu-$name-sass.csv 2>&1
echo "== ncu $name"
grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Registers Per|Shared Memory Config" $R/ncu-$name.txt | head -20
grep -iE "stall|smsp__pcsamp" $R/ncu-$name.txt | head -30
