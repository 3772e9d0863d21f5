#!/usr/bin/env bash
# Device checks of user code (issue 32), in two calls that each fit one 10-minute device command.
#   scripts/h200-user-code.sh verify   carry target/bundle.tar.xz (gpu-bundle, LOOKBACK_PERSISTENT_RUNS=1).
#       Every test binary, 4 at a time (run_tests_parallel, h200-prologue.sh); compute-sanitizer on rtc_wide_acc's
#       sanitizer cases; the user scans against the built-in ones (i32, f32, f64 at 2^16, 2^24, 2^28:
#       inclusive_sum_user, inclusive_sum_user_comm, affine_user); affine_user and inclusive_sum_user at
#       2^12-2^20 on each engine (affine_user at 2^16 took 53.7 µs on an H100 on 2026-12-06, far off its
#       other sizes: this row says at which size and on which engine that starts).
#   scripts/h200-user-code.sh peers    carry target/bundle.tar.xz and target/wheels (benches/README.md,
#       "Running it on the GPU machine": cuda-cccl and its three cuda-* wheels, 22 MB). The run-time
#       predicate against the built-in select_if_50, then benches/peers/cuda_compute.py on the same jobs, then
#       racecheck on the built-in selections' edge sizes (benches/STATUS.md lead 10).
source "$(dirname "$0")/h200-prologue.sh" "user-code-$1"
export LOOKBACK_CACHE_DIR=/tmp/lbcache
date +%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
case "$1" in
verify)
  run_tests_parallel 4; date +%T
  sanitize_cases rtc_wide_acc
  bench_spec scan-user 110 "bench-scan --types i32,f32,f64 --algos inclusive_sum,exclusive_sum,inclusive_sum_user,inclusive_sum_user_comm,affine_user --sizes 16,24,28"
  for e in classic persistent; do
    bench_spec affine-small-$e 40 "bench-scan --engine $e --types f32 --algos affine_user,inclusive_sum_user --sizes 12,14,16,18,20"
  done
  ;;
peers)
  bench_spec select-user 150 "bench-select --types i32,f32 --algos select_if_50,select_if_50_user --sizes 16,24,28"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    target/wheels/*.whl && export PYTHONPATH=/tmp/site
  PYTHONUNBUFFERED=1 timeout 330 python3 benches/peers/cuda_compute.py --sizes 16,24,28 --types i32,f32 \
    --csv $OUT/cuda-compute.csv >$OUT/cuda-compute.txt 2>&1
  echo "== cuda.compute rc $?"
  grep -v "^#" $OUT/cuda-compute.txt | head -40
  pack
  # STATUS lead 10: does the built-in persistent unique (edge sizes from 1 item, both engines) show the
  # hazards the user-equality one did? Hazards print as they are found, so a run cut short still tells.
  timeout 100 compute-sanitizer --tool racecheck $b/test-select-* edge_i32 --test-threads 1 \
    >$OUT/racecheck-select-edge_i32.txt 2>&1
  echo "== racecheck test-select edge_i32 (rc $?)"
  grep -E "Race reported|RACECHECK SUMMARY|test result" $OUT/racecheck-select-edge_i32.txt | sort | uniq -c | head -12
  pack
  ;;
*) echo "h200-user-code.sh: verify or peers" >&2; exit 2 ;;
esac
date +%T
