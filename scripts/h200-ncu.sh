#!/usr/bin/env bash
# Hardware-counter profile of one persistent kernel (device side; run after scripts/h200-final.sh has
# unpacked the bundle, or carry target/bundle.tar.xz):
#   scripts/h200-ncu.sh NAME BENCH KERNEL_REGEX BENCH_ARGS...
# e.g. scripts/h200-ncu.sh count_if bench-select pipe_select --sizes 26 --algos count_if_50 --engine persistent
# Packs ncu-NAME.txt (speed of light, warp states, scheduler, memory) and ncu-NAME-sass.csv
# (per-instruction stall samples) into $OUT/ncu-NAME.tgz (one file: 8 come back), and prints the headlines.
# NCU_SKIP (default 4) is how many launches of the kernel pass before the profiled one. A row that is
# timed against a base row (the `_det` rows: t/base) runs the base row first, WARMUP (3) + reps calls and
# its check, so skip past them: NCU_SKIP=30 with --reps 20 profiles the row itself.
# BENCH_ARGS must include --reps (at least 20). NCU_FLAGS adds ncu options, e.g. "--cache-control none
# --replay-mode application" to profile a launch in the L2 state the previous call left (ncu flushes caches).
set -u
cd "$(dirname "$0")/.."
[ -d target/gpu-bundle ] || tar xJf target/bundle.tar.xz -C target
name=$1 bench=$2 kernel=$3; shift 3
R=${OUT:-/tmp/h200}; W=/tmp/ncu; mkdir -p $R $W
b=target/gpu-bundle/bin
timeout 240 ncu --clock-control none ${NCU_FLAGS:-} --kernel-name regex:$kernel --launch-skip ${NCU_SKIP:-4} --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
  --section Occupancy --section LaunchStats --section SourceCounters --import-source no \
  -o $W/ncu-$name -f env OUT=$W $b/$bench "$@" >$W/ncu-$name-run.txt 2>&1
ncu -i $W/ncu-$name.ncu-rep --print-details all >$W/ncu-$name.txt 2>&1
ncu -i $W/ncu-$name.ncu-rep --page source --csv --print-source sass >$W/ncu-$name-sass.csv 2>&1
tail -3 $W/ncu-$name-run.txt
tar czf $R/ncu-$name.tgz -C $W ncu-$name.txt ncu-$name-sass.csv ncu-$name-run.txt
echo "== ncu $name"
grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Registers Per|Shared Memory Config" $W/ncu-$name.txt | head -20
grep -iE "stall|smsp__pcsamp" $W/ncu-$name.txt | head -30
