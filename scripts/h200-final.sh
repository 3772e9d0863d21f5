#!/usr/bin/env bash
# The whole device check in one call, from a compressed bundle (the binaries share their embedded
# fatbins, so xz packs 85 MB into ~7 MB, under the 64 MiB carry limit):
#   here:    ../shared/tools/gpu-bundle --cub && tar cf - -C target gpu-bundle | xz -9 -T2 > target/bundle.tar.xz
#   device:  scripts/h200-final.sh    (carry ["target/bundle.tar.xz", "scripts"])
# Sanitizer on the runs and three-way partition kernels, every test binary, the runs benchmark, the CUB
# baseline and the clean_sensors example on 50 M rows.
set -u
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/h200}; export OUT=/tmp/logs; rm -rf $OUT; mkdir -p $OUT $R
tar xJf target/bundle.tar.xz -C target
b=target/gpu-bundle/bin
r=$(basename $b/test-runs-*); p3=$(basename $b/test-partition3-*)
for t in "$r sanitizer_cases" "$p3 edge_i32" "$p3 edge_u8"; do
  echo "== sanitize $t"
  timeout 120 target/gpu-bundle/run.sh sanitize $t >$OUT/san.txt 2>&1
  grep -E "SUMMARY|FAILED" $OUT/san.txt | head -6
done
echo "== tests"
timeout 300 target/gpu-bundle/run.sh tests >$OUT/tests.txt 2>&1
grep -E "^==|test result|FAILED|panicked" $OUT/tests.txt | grep -v "ok. 0 passed"
grep -h -A3 "panicked" $OUT/*.log 2>/dev/null | head -30
echo "== bench runs"
timeout 120 $b/bench-runs --sizes 16,20,24,28 --reps 20 >$OUT/runs.txt 2>&1
grep -E "vs_memcpy|CHECK|rror" $OUT/runs.txt | grep -v "^memcpy" | awk '{print $1,$3,$5,$10}'
timeout 90 $b/cub_baseline --sizes 16,20,24,28 --reps 20 >$OUT/cub.txt 2>&1
grep -E "rle|reduce_by_key|memcpy" $OUT/cub.txt | awk '{print $1,$2,$3,$4,$NF}'
echo "== clean_sensors 50M"
timeout 120 target/gpu-bundle/run.sh example clean_sensors --generate 50000000 >$OUT/gen.txt 2>&1; head -16 $OUT/gen.txt | tail -12
cp $OUT/runs.txt $OUT/cub.txt $OUT/gen.txt $R/ 2>/dev/null
tar czf $R/logs.tgz -C /tmp logs
