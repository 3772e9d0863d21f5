#!/usr/bin/env bash
# Every test binary, then the sizes h200-final.sh does not time (2^10-2^14, 2^18, 2^22, 2^26, 2^30) for
# the scan / select / runs benches with CUB in the same process, and the persistent runs kernels at
# 2^16-2^23 (where Engine::Auto takes the classic agent) to place the runs row's min_tiles.
# Carry target/bundle.tar.xz (scripts/bundle-cub.sh --cub, then xz as in h200-final.sh). ~8 minutes.
set -u
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/h200}; export OUT=/tmp/logs; mkdir -p $OUT $R
exec > >(tee -a $R/summary-sweep.txt) 2>&1
tar xJf target/bundle.tar.xz -C target
b=target/gpu-bundle/bin
pack() { tar czf $R/logs-sweep.tgz -C /tmp logs; }
# lookback rows slower than CUB (lookback/cub < 1), and every CHECK / error line.
slower() { grep -E "CHECK|rror|panicked" "$1"; awk '/lookback\/cub/ { if ($NF + 0 < 1.0) print }' "$1" | cut -c1-150; }
if [ "${1:-}" != notests ]; then
  echo "== all tests"
  timeout 240 target/gpu-bundle/run.sh tests >$OUT/tests.txt 2>&1
  grep -E "^==|test result|FAILED|panicked" $OUT/tests.txt | grep -v "ok. 0 passed"
  pack
fi
echo "== persistent runs below 2^23 (rows [persistent]; Auto takes classic there)"
timeout 60 env -u OUT $b/bench-runs --sizes 16,18,20,21,22,23 --reps 20 --engine persistent \
  --algos reduce_by_key_sum_run4,unique_by_key_run4,rle_run4,run_ends_run4,rle_run1000 \
  --csv $OUT/runs-persistent-small.csv >$OUT/runs-persistent-small.txt 2>&1
grep -E "n=2\^" $OUT/runs-persistent-small.txt | grep -v "^memcpy" | awk '{print $1,$2,$3,$5,$NF}'
timeout 60 env -u OUT $b/bench-runs --sizes 16,18,20,21,22,23 --reps 20 --engine classic \
  --algos reduce_by_key_sum_run4,unique_by_key_run4,rle_run4,run_ends_run4,rle_run1000 \
  --csv $OUT/runs-classic-small.csv >$OUT/runs-classic-small.txt 2>&1
grep -E "n=2\^" $OUT/runs-classic-small.txt | grep -v "^memcpy" | grep -v "^cub:" | awk '{print $1,$2,$3,$5,$NF}'
pack
echo "== sweep: lookback slower than CUB"
for bench in scan select runs; do
  timeout 150 env -u OUT $b/bench-$bench --sizes 10,12,14,18,22,26,30 --reps 20 --csv $OUT/sweep-$bench.csv >$OUT/sweep-$bench.txt 2>&1
  echo "-- $bench (rc $?)"; slower $OUT/sweep-$bench.txt
  pack
done
