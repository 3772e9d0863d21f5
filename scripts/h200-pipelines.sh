#!/usr/bin/env bash
# Device check of the graph / device-size work, part 2 (carry target/bundle.tar.xz of
# scripts/bundle-cub.sh --cub): the clean_sensors batch mode (eager vs graph replay per batch), then the
# scan / select / runs benches at 2^16, 2^24 and 2^28 (i32, CUB in the same process): the default rows,
# the device-sized rows beside their host-sized base, and the five-stage chain at 2^16.
# PART=example or PART=bench runs one half; PART=dev the example, the device-sized rows and the chain.
# Summary in $OUT/summary-pipelines.txt, logs in
# $OUT/logs-pipelines.tgz.
source "$(dirname "$0")/h200-prologue.sh" pipelines
if [ "${PART:-all}" != bench ]; then
  for shape in "50 1000000" "200 65536"; do
    set -- $shape
    echo "== clean_sensors --batches $1 --batch-rows $2"
    timeout 200 $b/example-clean_sensors --batches $1 --batch-rows $2 >$OUT/example-batches-$2.txt 2>&1
    echo "rc $?"; grep -E "batch pipeline|checked|found|rror|mismatch" $OUT/example-batches-$2.txt | head -8
    pack
  done
fi
if [ "${PART:-all}" != example ]; then
  bench_spec scan 120 "bench-scan --sizes 16,24,28 --types i32 --algos inclusive_sum,inclusive_sum_devsize,exclusive_sum,inclusive_sum_in_place"
  [ "${PART:-all}" = dev ] || bench_spec select 200 "bench-select --sizes 16,24,28 --types i32"
  bench_spec select-dev 120 "bench-select --sizes 16,24,28 --types i32 --algos select_if_50_devsize"
  bench_spec chain 120 "bench-select --sizes 16 --types i32 --algos chain5"
  [ "${PART:-all}" = dev ] || bench_spec runs 200 "bench-runs --sizes 16,24,28 --types i32"
  bench_spec runs-dev 120 "bench-runs --sizes 16,24,28 --types i32 --algos reduce_by_key_sum_run4_devsize"
fi
