#!/usr/bin/env bash
# Device check of the persistent engine (cuda/persistent/engine.cuh), one call:
#   here:    ../shared/tools/gpu-bundle --cub && tar cf - -C target gpu-bundle | xz -9 -T2 > target/bundle.tar.xz
#   device:  scripts/h200-pipe.sh [quick|all]   (carry ["target/bundle.tar.xz", "scripts"])
# Scan and select tests, the sanitizer on the persistent kernels, the scan and select benches with both
# engines, and CUB; `all` adds every other test binary; `quick` runs only the scan/select tests and the
# persistent benches.
set -u
cd "$(dirname "$0")/.."
# At most 8 files come back from $OUT: the full logs go to /tmp/logs and, at the end, into
# $OUT/logs-pipe.tgz; what this script prints also goes to $OUT/summary-pipe.txt as it runs.
R=${OUT:-/tmp/h200}; export OUT=/tmp/logs; mkdir -p $OUT $R
exec > >(tee -a $R/summary-pipe.txt) 2>&1
tar xJf target/bundle.tar.xz -C target
b=target/gpu-bundle/bin
mode=${1:-}
for t in scan select; do
  s=$(basename $b/test-$t-*)
  echo "== $t tests"
  LOOKBACK_REQUIRE_GPU=1 timeout 240 $b/$s >$OUT/$t-tests.txt 2>&1
  grep -E "test result|FAILED|panicked" $OUT/$t-tests.txt | head -20
  grep -A4 "panicked" $OUT/$t-tests.txt | head -30
  if [ "$mode" != quick ]; then
    echo "== sanitize $s sanitizer_cases"
    timeout 200 target/gpu-bundle/run.sh sanitize $s sanitizer_cases >$OUT/san-$t.txt 2>&1
    grep -E "SUMMARY|FAILED|rror" $OUT/san-$t.txt | head -8
  fi
done
engines="persistent classic"; [ "$mode" = quick ] && engines=persistent
for e in $engines; do
  echo "== bench scan $e"
  timeout 100 $b/bench-scan --sizes 16,20,22,23,24,28,30 --reps 20 --engine $e --types i32 --algos inclusive_sum,exclusive_sum,inclusive_sum_in_place >$OUT/bench-scan-$e.txt 2>&1
  grep -E "n=2\^|CHECK|rror" $OUT/bench-scan-$e.txt | grep -v "^memcpy" | cut -c1-100
  echo "== bench select $e"
  timeout 150 $b/bench-select --sizes 16,20,24,28 --reps 20 --engine $e >$OUT/bench-select-$e.txt 2>&1
  grep -E "n=2\^2[48]|CHECK|rror" $OUT/bench-select-$e.txt | grep -v "^memcpy" | cut -c1-100
done
echo "== bench scan, other types"
timeout 100 $b/bench-scan --sizes 24,28 --reps 20 --engine persistent --types u8,i64,f16,f64 --algos inclusive_sum >$OUT/bench-types.txt 2>&1
grep -E "n=2\^|CHECK|rror" $OUT/bench-types.txt | grep -v "^memcpy" | cut -c1-100
if [ "$mode" != quick ]; then
  timeout 90 $b/cub_baseline --sizes 16,20,24,28,30 --reps 20 >$OUT/cub.txt 2>&1
  grep -E "n=2\^(16|28)|memcpy" $OUT/cub.txt | awk '{print $1,$2,$3,$4,$NF}'
fi
if [ "$mode" = all ]; then
  echo "== all tests"
  timeout 400 target/gpu-bundle/run.sh tests >$OUT/tests.txt 2>&1
  grep -E "^==|test result|FAILED|panicked" $OUT/tests.txt | grep -v "ok. 0 passed"
fi
tar czf $R/logs-pipe.tgz -C /tmp logs
