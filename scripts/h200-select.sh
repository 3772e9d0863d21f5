#!/usr/bin/env bash
# Device check of compaction on the persistent engine, one call (carry target/bundle.tar.xz, scripts):
#   here:    ../shared/tools/gpu-bundle --cub && tar cf - -C target gpu-bundle variants | xz -9 -T8 > target/bundle.tar.xz
#   device:  scripts/h200-select.sh
# select and scan tests, the select and scan benches on the persistent engine, any variant bench binaries
# in target/variants (bench-select-NAME: in-place and 50 % rows), CUB, then the sanitizer on the select
# cases. Prints a summary (also $OUT/summary-select.txt); full logs in $OUT/logs-select.tgz.
set -u
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/h200}; export OUT=/tmp/logs; mkdir -p $OUT $R
exec > >(tee -a $R/summary-select.txt) 2>&1
tar xJf target/bundle.tar.xz -C target
b=target/gpu-bundle/bin
rows() { grep -E "n=2\^|CHECK|rror|panicked" "$1" | grep -v "^memcpy" | cut -c1-92; }
for t in select scan; do
  s=$(basename $b/test-$t-*)
  echo "== $t tests"
  LOOKBACK_REQUIRE_GPU=1 timeout 200 $b/$s >$OUT/$t-tests.txt 2>&1
  grep -E "test result|FAILED" $OUT/$t-tests.txt | head -5
  grep -A6 "panicked" $OUT/$t-tests.txt | head -30
done
echo "== bench select persistent"
timeout 150 $b/bench-select --sizes 16,24,28 --reps 20 --engine persistent >$OUT/bench-select.txt 2>&1
rows $OUT/bench-select.txt | grep -E "2\^(16|28)"
for v in target/variants/bench-select-*; do
  [ -x "$v" ] || continue
  echo "== variant $(basename $v)"
  timeout 60 $v --sizes 28 --reps 20 --engine persistent --algos select_if_50,select_if_in_place_50,count_if_50 >$OUT/$(basename $v).txt 2>&1
  rows $OUT/$(basename $v).txt
done
echo "== bench scan persistent"
timeout 60 $b/bench-scan --sizes 16,28 --reps 20 --types i32 --algos inclusive_sum >$OUT/bench-scan.txt 2>&1
rows $OUT/bench-scan.txt
timeout 90 $b/cub_baseline --sizes 16,28 --reps 20 >$OUT/cub.txt 2>&1
grep -E "memcpy|select|partition|unique" $OUT/cub.txt | awk '{print $1,$2,$3,$4,$NF}'
for t in select scan; do
  s=$(basename $b/test-$t-*)
  echo "== sanitize $t"
  timeout 200 target/gpu-bundle/run.sh sanitize $s sanitizer_cases >$OUT/san-$t.txt 2>&1
  grep -E "ERROR SUMMARY|FAILED|overall" $OUT/san-$t.txt | head -8
done
tar czf $R/logs-select.tgz -C /tmp logs
