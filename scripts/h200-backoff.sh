#!/usr/bin/env bash
# Back-off sweep of the run-based kernels at 2^28 (i32, runs of 4), from the compressed bundle.
# carry ["target/bundle.tar.xz", "scripts"]
set -u
cd "$(dirname "$0")/.."
tar xJf target/bundle.tar.xz -C target
b=target/gpu-bundle/bin
for bo in 300:100 1000:500 1250:650 2500:1000 4000:1500; do
  timeout 60 $b/bench-runs --sizes 24,28 --reps 20 --algos reduce_by_key_sum_run4,unique_by_key_run4,rle_run4 \
    --backoff $bo --csv /tmp/bo.csv 2>&1 | grep -E "vs_memcpy" | grep -v "^memcpy\|^algo" | awk -v bo=$bo '{print bo, $1, $3, $5, $10}'
done
