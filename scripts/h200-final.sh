#!/usr/bin/env bash
# The whole device check of a session, one call (carry target/bundle.tar.xz; ~4-5 minutes):
#   here:    scripts/bundle-cub.sh --cub && tar cf - -C target gpu-bundle | xz -9 -T8 > target/bundle.tar.xz
#            (wait for xz to finish before the call: a partial archive fails on the device)
#   device:  scripts/h200-final.sh
# Every test binary (LOOKBACK_REQUIRE_GPU=1), the scan / select / runs benches (Auto engine; runs also
# classic) with CUB timed in the same process after each row it has (cub:<row> lines, lookback/cub), the
# standalone CUB baseline, then compute-sanitizer on the scan, select and runs
# sanitizer cases. Prints a summary (also $OUT/summary-final.txt); full logs and CSVs, packed after each
# step so that a call cut short keeps what ran, in $OUT/logs-final.tgz (8 files at most come back).
set -u
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/h200}; export OUT=/tmp/logs; mkdir -p $OUT $R
exec > >(tee -a $R/summary-final.txt) 2>&1
tar xJf target/bundle.tar.xz -C target
b=target/gpu-bundle/bin
pack() { tar czf $R/logs-final.tgz -C /tmp logs; }
rows() { grep -E "n=2\^|CHECK|rror|panicked" "$1" | grep -v "^memcpy" | cut -c1-150; }
echo "== all tests"
timeout 300 target/gpu-bundle/run.sh tests >$OUT/tests.txt 2>&1
grep -E "^==|test result|FAILED|panicked" $OUT/tests.txt | grep -v "ok. 0 passed"
pack
echo "== benches"
timeout 60 $b/bench-scan --sizes 16,20,24,28,30 --reps 20 --types i32 --algos inclusive_sum,exclusive_sum,inclusive_sum_in_place >$OUT/bench-scan.txt 2>&1
rows $OUT/bench-scan.txt | grep -E "2\^(16|28|30)"
timeout 40 $b/bench-scan --sizes 28 --reps 20 --types u8,i64,f16,f64 --algos inclusive_sum >$OUT/bench-scan-types.txt 2>&1
rows $OUT/bench-scan-types.txt
timeout 100 $b/bench-select --sizes 16,20,24,28 --reps 20 >$OUT/bench-select.txt 2>&1
rows $OUT/bench-select.txt | grep -E "2\^(16|28)"
pack
timeout 100 $b/bench-runs --sizes 16,20,24,28 --reps 20 >$OUT/bench-runs.txt 2>&1
rows $OUT/bench-runs.txt | grep -E "2\^(16|28)"
# OUT unset: the bench would also copy its CSV over $OUT/bench-runs.csv (the Auto rows).
timeout 60 env -u OUT $b/bench-runs --sizes 28 --reps 20 --engine classic --algos reduce_by_key_sum_run4,unique_by_key_run4,rle_run4 --csv $OUT/bench-runs-classic.csv >$OUT/bench-runs-classic.txt 2>&1
rows $OUT/bench-runs-classic.txt
timeout 90 $b/cub_baseline --sizes 16,20,24,28,30 --reps 20 >$OUT/cub.txt 2>&1
grep -E "n=2\^(16|28) " $OUT/cub.txt | awk '{print $1,$2,$3,$4,$NF}'
pack
for t in scan select runs; do
  s=$(basename $b/test-$t-*)
  echo "== sanitize $t"
  timeout 130 target/gpu-bundle/run.sh sanitize $s sanitizer_cases >$OUT/san-$t.txt 2>&1
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|FAILED|overall" $OUT/san-$t.txt | head -8
  pack
done
