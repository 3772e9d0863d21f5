#!/usr/bin/env bash
# Device checks of user code (issue 32): two calls that each fit one 10-minute device command, or `all`,
# which runs both in one call by priority and skips what its deadline leaves no room for.
#   scripts/h200-user-code.sh verify   carry target/bundle.tar.xz (gpu-bundle, LOOKBACK_PERSISTENT_RUNS=1).
#       Every test binary, 4 at a time (run_tests_parallel, h200-prologue.sh); compute-sanitizer on rtc_wide_acc's
#       sanitizer cases; the user scans against the built-in ones (i32, f32, f64 at 2^16, 2^24, 2^28:
#       inclusive_sum_user, inclusive_sum_user_comm, affine_user); affine_user and inclusive_sum_user at
#       2^12-2^20 on each engine (affine_user at 2^16 took 53.7 µs once on an H100, 6.3-6.6 µs since:
#       benches/STATUS.md lead 11).
#   scripts/h200-user-code.sh peers    carry target/bundle.tar.xz and target/wheels (benches/README.md,
#       "Running it on the GPU machine": cuda-cccl and its three cuda-* wheels, 22 MB). The run-time
#       predicate against the built-in select_if_50, then benches/peers/cuda_compute.py on the same jobs, then
#       racecheck on the built-in selections' edge sizes (benches/STATUS.md lead 10).
#   scripts/h200-user-code.sh all      carry both: tests, sanitizer, user scans, user predicate, cuda.compute,
#       the racecheck probe, then the small affine rows, each only while ALL_DEADLINE (default 570) seconds
#       of the call leave room for it (for when device time allows one call only). TEST_JOBS (default 4)
#       test binaries run at a time. SKIP names steps an earlier call already ran (tests sanitize scan_user
#       select_user cuda_compute race_probe affine_small), so that a machine that may be taken back mid-call
#       can be used in short calls: ALL_DEADLINE=300 first, then SKIP="tests sanitize" on the warm machine.
source "$(dirname "$0")/h200-prologue.sh" "user-code-$1"
export LOOKBACK_CACHE_DIR=/tmp/lbcache
date +%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

tests_step() { run_tests_parallel "${TEST_JOBS:-4}"; date +%T; }
sanitize_step() { sanitize_cases rtc_wide_acc; }
scan_user_step() {
  bench_spec scan-user 110 "bench-scan --types i32,f32,f64 --algos inclusive_sum,exclusive_sum,inclusive_sum_user,inclusive_sum_user_comm,affine_user --sizes 16,24,28"
}
affine_small_step() {
  for e in classic persistent; do
    bench_spec affine-small-$e 40 "bench-scan --engine $e --types f32 --algos affine_user,inclusive_sum_user --sizes 12,14,16,18,20"
  done
}
select_user_step() {
  bench_spec select-user 150 "bench-select --types i32,f32 --algos select_if_50,select_if_50_user --sizes 16,24,28"
}
cuda_compute_step() {
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    target/wheels/*.whl && export PYTHONPATH=/tmp/site
  PYTHONUNBUFFERED=1 timeout "${1:-330}" python3 benches/peers/cuda_compute.py --sizes 16,24,28 --types i32,f32 \
    --csv $OUT/cuda-compute.csv >$OUT/cuda-compute.txt 2>&1
  echo "== cuda.compute rc $?"
  grep -v "^#" $OUT/cuda-compute.txt | head -40
  pack
}
# STATUS lead 10: racecheck of the selections' edge sizes (from 1 item, both engines). The built-in
# persistent select reported the compute-to-writer hand-over here on 2026-12-07; a build that fixes it
# reports 0 hazards. Hazards print as they are found (the first 10 in full), so a run cut short still
# tells. With the default hazard cap it printed only that the cap was reached, so the cap is raised.
race_probe_step() {
  NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS=100000 timeout "${1:-100}" compute-sanitizer --tool racecheck \
    --print-limit 10 $b/test-select-* edge_i32 --test-threads 1 >$OUT/racecheck-select-edge_i32.txt 2>&1
  echo "== racecheck test-select edge_i32 (rc $?)"
  grep -E "hazard detected|Write Thread|Read Thread|RACECHECK SUMMARY|test result" \
    $OUT/racecheck-select-edge_i32.txt | sort | uniq -c | head -12
  pack
}
# want STEP: whether SKIP leaves the step to this call.
want() { case " ${SKIP:-} " in *" $1 "*) echo "== $1 skipped (SKIP)"; return 1 ;; esac; }
# room N: whether a step that may take N seconds ends before the deadline (seconds since the script started).
deadline=${ALL_DEADLINE:-570}
room() {
  if [ $((SECONDS + $1)) -le "$deadline" ]; then return 0; fi
  echo "== skipped (needs $1 s, $SECONDS s gone of $deadline)"; return 1
}

case "$1" in
verify) tests_step; sanitize_step; scan_user_step; affine_small_step ;;
peers) select_user_step; cuda_compute_step; race_probe_step ;;
all)
  want tests && tests_step
  # Each room is the step's own timeout (sanitize_cases: 240 s, bench_spec's), so no step outlasts the
  # deadline; cuda.compute gets what is left but at least 100 s (13 cold builds of about 3 s, then the runs).
  want sanitize && room 240 && sanitize_step
  want scan_user && room 110 && scan_user_step
  want select_user && room 150 && select_user_step
  want cuda_compute && room 150 && cuda_compute_step $((deadline - SECONDS - 50))
  want race_probe && room 60 && race_probe_step 50
  want affine_small && room 80 && affine_small_step
  ;;
*) echo "h200-user-code.sh: verify, peers or all" >&2; exit 2 ;;
esac
date +%T
