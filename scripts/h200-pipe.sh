#!/usr/bin/env bash
# Device check of the persistent scan engine (agent_pipe_scan.cuh), one call:
#   here:    ../shared/tools/gpu-bundle --cub && tar cf - -C target gpu-bundle | xz -9 -T2 > target/bundle.tar.xz
#   device:  scripts/h200-pipe.sh [all]   (carry ["target/bundle.tar.xz", "scripts"])
# Scan tests, the sanitizer on the persistent kernels, the scan bench with both engines and CUB's scan;
# with `all`, every other test binary too; with `quick`, only the scan tests and the benchmark.
set -u
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/h200}; export OUT=/tmp/logs; rm -rf $OUT; mkdir -p $OUT $R
tar xJf target/bundle.tar.xz -C target
b=target/gpu-bundle/bin
s=$(basename $b/test-scan-*)
echo "== scan tests"
LOOKBACK_REQUIRE_GPU=1 timeout 200 $b/$s >$OUT/scan-tests.txt 2>&1
grep -E "test result|FAILED|panicked" $OUT/scan-tests.txt | head -20
grep -A4 "panicked" $OUT/scan-tests.txt | head -30
if [ "${1:-}" != quick ]; then
  echo "== sanitize $s sanitizer_cases"
  timeout 200 target/gpu-bundle/run.sh sanitize $s sanitizer_cases >$OUT/san.txt 2>&1
  grep -E "SUMMARY|FAILED|rror" $OUT/san.txt | head -8
fi
echo "== bench scan"
engines="persistent classic"; [ "${1:-}" = quick ] && engines=persistent
for e in $engines; do
  timeout 100 $b/bench-scan --sizes 16,20,21,22,23,24,28,30 --reps 20 --engine $e --types i32 --algos inclusive_sum,exclusive_sum,inclusive_sum_in_place >$OUT/bench-$e.txt 2>&1
  grep -E "n=2\^|CHECK|rror" $OUT/bench-$e.txt | grep -v "^memcpy" | cut -c1-100
done
timeout 100 $b/bench-scan --sizes 28 --reps 20 --engine persistent --types u8,i64,f16,f64 --algos inclusive_sum >$OUT/bench-types.txt 2>&1
grep -E "inclusive|CHECK|rror" $OUT/bench-types.txt
[ "${1:-}" != quick ] && timeout 90 $b/cub_baseline --sizes 16,20,24,28,30 --reps 20 >$OUT/cub.txt 2>&1
[ -f $OUT/cub.txt ] && grep -E "scan|memcpy" $OUT/cub.txt | awk '{print $1,$2,$3,$4,$NF}'
if [ "${1:-}" = all ]; then
  echo "== all tests"
  timeout 300 target/gpu-bundle/run.sh tests >$OUT/tests.txt 2>&1
  grep -E "^==|test result|FAILED|panicked" $OUT/tests.txt | grep -v "ok. 0 passed"
fi
cp $OUT/*.txt $R/ 2>/dev/null
