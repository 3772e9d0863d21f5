#!/usr/bin/env bash
# (Uncompressed carry of target/gpu-bundle: trim it below 64 MiB first, or use the bundle.tar.xz pattern of h200-final.sh.)
# Device call: runs tests + sanitizer, then the runs benchmark built for 1024 (default), 1536 and 2048
# resident threads per SM (-DLOOKBACK_RUNS_MIN_THREADS; bench-runs-<N> copied into the bundle by hand), and
# CUB's rows, in one device call. carry ["target/gpu-bundle", "scripts"].
set -u
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/h200}; export OUT=/tmp/logs; rm -rf $OUT; mkdir -p $OUT $R
b=target/gpu-bundle/bin
r=$(basename $b/test-runs-*)
echo "== sanitize $r sanitizer_cases"
timeout 150 target/gpu-bundle/run.sh sanitize $r sanitizer_cases >$OUT/san.txt 2>&1
grep -E "SUMMARY|FAILED" $OUT/san.txt | head
echo "== tests"
timeout 240 target/gpu-bundle/run.sh tests >$OUT/tests.txt 2>&1
grep -E "^==|test result|FAILED|panicked" $OUT/tests.txt | grep -v "ok. 0 passed"
grep -h -A3 "panicked" $OUT/*.log 2>/dev/null | head -30
for v in "" -1536 -2048; do
  echo "== bench-runs$v"
  timeout 100 $b/bench-runs$v --sizes 20,24,28 --reps 20 --csv /tmp/r$v.csv >$OUT/runs$v.txt 2>&1
  grep -E "vs_memcpy|CHECK|rror" $OUT/runs$v.txt | grep -v "^memcpy" | awk '{print $1,$3,$5,$10}'
done
timeout 60 $b/cub_baseline --sizes 28 --reps 20 >$OUT/cub.txt 2>&1
grep -E "rle|reduce_by_key|memcpy" $OUT/cub.txt | awk '{print $1,$2,$3,$4,$NF}'
cp $OUT/runs*.txt $OUT/cub.txt $R/ 2>/dev/null
tar czf $R/logs.tgz -C /tmp logs
