#!/usr/bin/env bash
# One device call after a change to the persistent engine (carry target/bundle.tar.xz from
# scripts/bundle-cub.sh --cub, xz as in h200-final.sh; ~6 minutes): every test binary
# (LOOKBACK_REQUIRE_GPU=1), then the scan / select / runs benches with CUB in the same process at 2^16-2^28
# (Auto engine), and the persistent runs kernels at 2^16-2^23, below the runs row's min_tiles, to place it.
# Summary in $OUT/summary-engine.txt, logs in $OUT/logs-engine.tgz.
set -u
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/h200}; export OUT=/tmp/logs; mkdir -p $OUT $R
exec > >(tee -a $R/summary-engine.txt) 2>&1
tar xJf target/bundle.tar.xz -C target
b=target/gpu-bundle/bin
pack() { tar czf $R/logs-engine.tgz -C /tmp logs; }
rows() { grep -E "n=2\^|CHECK|rror|panicked" "$1" | grep -v "^memcpy" | awk '{print $1,$3,$5,$NF}'; }
echo "== all tests"
timeout 240 target/gpu-bundle/run.sh tests >$OUT/tests.txt 2>&1
grep -E "^==|test result|FAILED|panicked|fit;" $OUT/tests.txt | grep -v "ok. 0 passed"
pack
for bench in scan select runs; do
  echo "== $bench"
  timeout 100 env -u OUT $b/bench-$bench --sizes 16,20,22,24,28 --reps 20 --csv $OUT/$bench.csv >$OUT/$bench.txt 2>&1
  rows $OUT/$bench.txt | grep -E "2\^(22|24|28)|CHECK|rror"
  pack
done
echo "== persistent runs, 2^16-2^23"
timeout 60 env -u OUT $b/bench-runs --sizes 16,18,20,21,22,23 --reps 20 --engine persistent \
  --algos reduce_by_key_sum_run4,unique_by_key_run4,rle_run4,scan_by_key_incl_sum_run4,rle_run1000 \
  --csv $OUT/runs-persistent-small.csv >$OUT/runs-persistent-small.txt 2>&1
rows $OUT/runs-persistent-small.txt
pack
