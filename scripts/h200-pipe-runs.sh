#!/usr/bin/env bash
# Device check of the run-based primitives on the persistent engine (agent_pipe_runs.cuh), one call:
#   here:    ../shared/tools/gpu-bundle --cub && tar cf - -C target gpu-bundle | xz -9 -T2 > target/bundle.tar.xz
#   device:  scripts/h200-pipe-runs.sh [quick]   (carry ["target/bundle.tar.xz", "scripts"])
# The kernel table (every kernel loads), the runs tests (both engines), racecheck on their sanitizer
# cases, the runs bench with both engines at 2^24 and 2^28, and CUB. `quick`: tests and the persistent
# bench only.
set -u
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/h200}/logs; mkdir -p $OUT
tar xJf target/bundle.tar.xz -C target
b=target/gpu-bundle/bin
mode=${1:-}
for t in kernel_table runs large; do
  s=$(basename $b/test-$t-*)
  echo "== $t tests"
  LOOKBACK_REQUIRE_GPU=1 timeout 300 $b/$s >$OUT/$t-tests.txt 2>&1
  grep -E "test result|FAILED|panicked" $OUT/$t-tests.txt | head -20
  grep -A6 "panicked" $OUT/$t-tests.txt | head -40
done
if [ "$mode" != quick ]; then
  s=$(basename $b/test-runs-*)
  echo "== sanitize $s sanitizer_cases"
  timeout 300 target/gpu-bundle/run.sh sanitize $s sanitizer_cases >$OUT/san-runs.txt 2>&1
  grep -E "SUMMARY|FAILED|rror" $OUT/san-runs.txt | head -8
fi
engines="persistent classic"; [ "$mode" = quick ] && engines=persistent
for e in $engines; do
  echo "== bench runs $e"
  timeout 200 $b/bench-runs --sizes 24,28 --reps 20 --engine $e --types i32,u8,f64 >$OUT/bench-runs-$e.txt 2>&1
  grep -E "n=2\^|CHECK|rror" $OUT/bench-runs-$e.txt | grep -v "^memcpy" | cut -c1-110
done
if [ "$mode" != quick ]; then
  timeout 90 $b/cub_baseline --sizes 24,28 --reps 20 >$OUT/cub.txt 2>&1
  grep -E "n=2\^28|memcpy" $OUT/cub.txt | awk '{print $1,$2,$3,$4,$NF}'
fi
