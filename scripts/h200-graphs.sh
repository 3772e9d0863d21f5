#!/usr/bin/env bash
# Device check of the CUDA-graph and device-size work (carry target/bundle.tar.xz, a tests-only bundle:
# ../shared/tools/gpu-bundle --no-benches --no-examples, then the xz line of h200-final.sh's header):
# every test binary (TESTS=0 skips them), then compute-sanitizer on tests/graphs.rs (memcheck of every test; racecheck and
# synccheck of the defect's replay test). Summary in $OUT/summary-graphs.txt, logs in $OUT/logs-graphs.tgz.
source "$(dirname "$0")/h200-prologue.sh" graphs
[ "${TESTS:-1}" = 1 ] && run_tests
g=$(basename $b/test-graphs-*)
echo "== memcheck graphs"
timeout ${MEMCHECK_S:-240} compute-sanitizer --tool memcheck --error-exitcode 3 $b/$g --test-threads 1 >$OUT/san-memcheck-graphs.txt 2>&1
echo "rc $?"; grep -E "ERROR SUMMARY|test result|FAILED|panicked" $OUT/san-memcheck-graphs.txt | head -8
pack
for tool in racecheck synccheck; do
  echo "== $tool graphs (captured_scan_replays_with_new_input, chained_pipeline)"
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 $b/$g --test-threads 1 chained_pipeline >$OUT/san-$tool-graphs.txt 2>&1
  echo "rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result|FAILED" $OUT/san-$tool-graphs.txt | head -6
  pack
done
