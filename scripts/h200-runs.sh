#!/usr/bin/env bash
# (Uncompressed carry of target/gpu-bundle: trim it below 64 MiB first, or use the bundle.tar.xz pattern of h200-final.sh.)
# One device call for the run-based primitives and the clean_sensors example (carry
# ["target/gpu-bundle", "scripts"]): sanitizer on the runs kernels, every test binary, the runs benchmark
# and the CUB baseline in the same device call, the example on the shipped sample and on 50 M generated rows.
set -u
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/h200-runs}; export OUT=/tmp/logs; rm -rf $OUT; mkdir -p $OUT $R
b=target/gpu-bundle/bin
r=$(basename $b/test-runs-*)
echo "== sanitize $r sanitizer_cases"
timeout 150 target/gpu-bundle/run.sh sanitize $r sanitizer_cases >$OUT/san.txt 2>&1
grep -E "SUMMARY|FAILED|test result" $OUT/san.txt | head
echo "== tests"
timeout 240 target/gpu-bundle/run.sh tests >$OUT/tests.txt 2>&1
grep -E "^==|test result|FAILED|panicked" $OUT/tests.txt | grep -v "ok. 0 passed"
grep -h -A3 "panicked" $OUT/*.log 2>/dev/null | head -30
echo "== bench runs"
timeout 150 $b/bench-runs --sizes 16,20,24,28 --reps 20 >$OUT/runs.txt 2>&1
grep -E "vs_memcpy|CHECK|rror" $OUT/runs.txt | grep -v "^memcpy" | awk '{print $1,$2,$3,$5,$10}'
# Back-off sensitivity of the two rows compared with CUB (2^28).
for bo in 0:0 300:100 2500:1000; do
  timeout 60 $b/bench-runs --sizes 28 --reps 20 --algos reduce_by_key_sum_run4,rle_run4 --backoff $bo --csv /tmp/bo.csv 2>&1 | grep -E "vs_memcpy" | grep -v "^memcpy" | awk -v bo=$bo '{print "backoff", bo, $1,$3,$5,$10}'
done
timeout 120 $b/cub_baseline --sizes 16,20,24,28 --reps 20 >$OUT/cub.txt 2>&1
grep -E "rle|reduce_by_key|memcpy" $OUT/cub.txt | awk '{print $1,$2,$3,$4,$NF}'
# Where the time goes in the RLE kernel (2^24).
timeout 90 ncu --kernel-name regex:lookback_runs --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis $b/bench-runs --sizes 24 --reps 20 --algos rle_run4 >$OUT/ncu.txt 2>&1
grep -E "Throughput|Occupancy|Stall|Registers|Block Limit|Duration|Active Warps|L2 Hit|Mem Busy|Max Bandwidth" $OUT/ncu.txt | head -40
if [ "${1:-}" = example ]; then
echo "== clean_sensors"
timeout 60 target/gpu-bundle/run.sh example clean_sensors examples/data/sensors_sample.csv --out /tmp/clean.csv >$OUT/sample.txt 2>&1; tail -40 $OUT/sample.txt
timeout 150 target/gpu-bundle/run.sh example clean_sensors --generate 50000000 >$OUT/gen.txt 2>&1; tail -50 $OUT/gen.txt
fi
cp $OUT/ncu.txt $OUT/runs.txt $OUT/cub.txt $OUT/sample.txt $OUT/gen.txt $R/ 2>/dev/null
tar czf $R/logs.tgz -C /tmp logs
