#!/usr/bin/env bash
# One device call after a change to the run-based kernels (carry target/bundle.tar.xz, built by
# scripts/bundle-cub.sh --cub and xz as in h200-final.sh; ~6 minutes): the runs tests
# (LOOKBACK_REQUIRE_GPU=1), compute-sanitizer on their sanitizer cases, the scans by key on both engines
# from 2^18 to 2^30 with CUB in the same process, and the classic agent's look-back back-off at 2^20-2^23
# (where it is slower than CUB). Summary in $OUT/summary-runs-check.txt, logs in $OUT/logs-runs-check.tgz.
set -u
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/h200}; export OUT=/tmp/logs; mkdir -p $OUT $R
exec > >(tee -a $R/summary-runs-check.txt) 2>&1
tar xJf target/bundle.tar.xz -C target
b=target/gpu-bundle/bin
pack() { tar czf $R/logs-runs-check.tgz -C /tmp logs; }
t=$(basename $b/test-runs-*)
echo "== $t"
LOOKBACK_REQUIRE_GPU=1 timeout 120 $b/$t >$OUT/test-runs.txt 2>&1; echo "rc $?"
grep -E "^test result|FAILED|panicked" $OUT/test-runs.txt | head -20
pack
echo "== sanitize $t sanitizer_cases"
timeout 200 target/gpu-bundle/run.sh sanitize $t sanitizer_cases >$OUT/san-runs.txt 2>&1
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|FAILED|overall" $OUT/san-runs.txt | head -8
pack
rows() { grep -E "n=2\^|CHECK|rror|panicked" "$1" | grep -v "^memcpy" | awk '{print $1,$3,$5,$NF}'; }
for e in persistent auto; do
  echo "== scans by key, engine $e"
  timeout 90 env -u OUT $b/bench-runs --sizes 18,20,21,22,23,24,26,28,30 --reps 20 --engine $e \
    --algos scan_by_key_incl_sum_run4,scan_by_key_excl_sum_run4 --csv $OUT/sbk-$e.csv >$OUT/sbk-$e.txt 2>&1
  rows $OUT/sbk-$e.txt
  pack
done
echo "== classic back-off at 2^20-2^23 (F:P ns; default: 125:62 below 1024 tiles, 1000:500 from there)"
for bo in 0:0 125:62 300:150 1000:500; do
  timeout 40 env -u OUT $b/bench-runs --sizes 20,21,22,23 --reps 20 --engine classic --backoff $bo \
    --algos reduce_by_key_sum_run4,rle_run4,non_trivial_runs_run4 --csv $OUT/bo.csv >$OUT/bo-$bo.txt 2>&1
  rows $OUT/bo-$bo.txt | sed "s/^/$bo /"
done
pack
