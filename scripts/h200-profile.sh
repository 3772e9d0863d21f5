#!/usr/bin/env bash
# Stall breakdown of the runs kernels against the scan (ncu, 2^24 i32), from the compressed bundle.
# carry ["target/bundle.tar.xz", "scripts"]
set -u
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/h200}; mkdir -p $R
tar xJf target/bundle.tar.xz -C target
b=target/gpu-bundle/bin
prof() {  # NAME KERNEL-REGEX BIN ARGS...
  local name=$1 re=$2; shift 2
  timeout 100 ncu --kernel-name regex:$re --launch-skip 5 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
    --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio" \
    "$@" >$R/ncu-$name.txt 2>&1
  echo "== $name"
  grep -E "Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Active Warps|Registers Per|Warp Cycles Per Issued" $R/ncu-$name.txt | awk '{$1=$1; print}'
  grep -E "stalled_.*ratio" $R/ncu-$name.txt | awk '{v=$NF; sub(/smsp__average_warps_issue_stalled_/,"",$1); sub(/_per_issue_active.ratio/,"",$1); if (v+0 > 0.3) print "  stall", $1, v}'
}
prof rle lookback_runs $b/bench-runs --sizes 24 --reps 20 --algos rle_run4
prof rbk lookback_by_key $b/bench-runs --sizes 24 --reps 20 --algos reduce_by_key_sum_run4
prof scan lookback_scan_sum $b/bench-scan --sizes 24 --reps 20 --algos inclusive_sum
prof select lookback_select $b/bench-select --sizes 24 --reps 20 --algos select_if_50
