#!/usr/bin/env bash
# The whole device check of a build, one call (carry target/bundle.tar.xz; ~9 minutes):
#   here:    scripts/bundle-cub.sh --cub --no-examples &&
#            tar cf - -C target gpu-bundle | xz -T1 --lzma2=preset=3,dict=256MiB > target/bundle.tar.xz
#            (the large dictionary folds the binaries' identical kernel images: ~20-30 MB; wait for xz to
#            finish before the call: a partial archive fails on the device)
#   device:  scripts/h200-final.sh
# Every test binary (LOOKBACK_REQUIRE_GPU=1), compute-sanitizer on the scan, select, runs and determinism
# sanitizer cases (and partition3's i32 edge cases), then the scan / select / runs benches from 2^10 to 2^30 (Auto
# engine; runs at 2^28 also persistent; other scan types at 2^10-2^28 with 2^21 and 2^23, f64 runs at 2^16-2^28) with CUB timed in the same process
# after each row it has (cub:<row> lines, lookback/cub).
# Prints a summary (also $OUT/summary-final.txt): test results, sanitizer summaries, the 2^16 and 2^28
# rows, and every row slower than CUB. Full logs and CSVs, packed after each step so that a call cut
# short keeps what ran, in $OUT/logs-final.tgz (8 files at most come back). FINAL_CHECKS=0 skips the tests
# and sanitizers (for a bundle whose kernels an earlier device call already checked).
source "$(dirname "$0")/h200-prologue.sh" final
rows() { grep -E "n=2\^|CHECK|rror|panicked" "$1" | grep -v "^memcpy" | cut -c1-150; }
slower() { awk '/lookback\/cub/ { if ($NF + 0 < 1.0) print }' "$1" | cut -c1-150; }
if [ "${FINAL_CHECKS:-1}" = 1 ]; then
echo "== all tests"
timeout 420 target/gpu-bundle/run.sh tests >$OUT/tests.txt 2>&1
grep -E "^==|test result|FAILED|panicked" $OUT/tests.txt | grep -v "ok. 0 passed"
pack
for t in scan select runs determinism; do
  s=$(basename $b/test-$t-*)
  echo "== sanitize $t"
  timeout 130 target/gpu-bundle/run.sh sanitize $s sanitizer_cases >$OUT/san-$t.txt 2>&1
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|FAILED|overall" $OUT/san-$t.txt | head -8
  pack
done
# The three-way partition has no sanitizer_cases filter: its i32 edge cases (sizes around tiles).
echo "== sanitize partition3"
timeout 130 target/gpu-bundle/run.sh sanitize $(basename $b/test-partition3-*) edge_i32 >$OUT/san-partition3.txt 2>&1
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|FAILED|overall" $OUT/san-partition3.txt | head -8
pack
fi
if [ "${FINAL_BENCHES:-1}" = 1 ]; then
sizes=10,12,14,16,18,20,22,24,26,28,30
echo "== benches (2^16 and 2^28 rows; then every row slower than CUB, 2^10-2^30)"
timeout 100 $b/bench-scan --sizes $sizes --reps 20 >$OUT/bench-scan.txt 2>&1
# The other types at every even size up to 2^28, with 2^21 and 2^23 beside the engines' switch (32 MB: 2^22 8-byte items):
# the classic f64 sum's 13 % behind CUB at 2^21 (benches/log/2026-12-07.md, 23:17) fell between 2^20 and 2^22.
timeout 150 env -u OUT $b/bench-scan --sizes 10,12,14,16,18,20,21,22,23,24,26,28 --reps 20 --types u8,i64,f16,f64 --algos inclusive_sum \
  --csv $OUT/bench-scan-types.csv >$OUT/bench-scan-types.txt 2>&1
# Deterministic float sums against the default (t/base on each _det row).
timeout 60 env -u OUT $b/bench-scan --sizes 20,24,28 --reps 20 --types f32,f64 --algos inclusive_sum_det,exclusive_sum_det \
  --csv $OUT/bench-scan-det.csv >$OUT/bench-scan-det.txt 2>&1
timeout 60 env -u OUT $b/bench-runs --sizes 20,24,28 --reps 20 --types f32,f64 --algos reduce_by_key_sum_run4_det \
  --csv $OUT/bench-runs-det.csv >$OUT/bench-runs-det.txt 2>&1
pack
timeout 150 $b/bench-select --sizes $sizes --reps 20 >$OUT/bench-select.txt 2>&1
pack
timeout 150 $b/bench-runs --sizes $sizes --reps 20 >$OUT/bench-runs.txt 2>&1
# OUT unset: the bench would also copy its CSV over $OUT/bench-runs.csv (the Auto rows).
timeout 60 env -u OUT $b/bench-runs --sizes 28 --reps 20 --engine persistent --csv $OUT/bench-runs-persistent.csv \
  >$OUT/bench-runs-persistent.txt 2>&1
# 8-byte keys and values (the 16-byte status entries of the 8-byte reductions).
timeout 120 env -u OUT $b/bench-runs --sizes 16,18,20,21,22,23,24,26,28 --reps 20 --types f64 --csv $OUT/bench-runs-f64.csv \
  >$OUT/bench-runs-f64.txt 2>&1
pack
for f in bench-scan bench-scan-types bench-select bench-runs bench-runs-persistent bench-runs-f64; do
  echo "-- $f"; rows $OUT/$f.txt | grep -E "2\^(16|28) |CHECK|rror"
done
for f in bench-scan-det bench-runs-det; do echo "-- $f"; grep -E "_det|CHECK|rror" $OUT/$f.txt | cut -c1-230; done
echo "== slower than CUB"
for f in bench-scan bench-scan-types bench-select bench-runs bench-runs-f64; do slower $OUT/$f.txt; done
fi
