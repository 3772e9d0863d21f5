#!/usr/bin/env bash
# One device call that checks and measures the scan and selection families:
#   here:            ../shared/tools/gpu-bundle --cub && tar cf - -C target gpu-bundle | xz -9 -T2 > target/bundle.tar.xz
#   on the device:   scripts/h200-check.sh            (carry ["target/bundle.tar.xz", "scripts"])
# The uncompressed bundle (~85 MB since the run-based kernels) is over the 64 MiB carry limit; the binaries
# share their fatbins, so xz packs it into ~7 MB. scripts/h200-final.sh covers the run-based primitives.
# It runs every test binary (LOOKBACK_REQUIRE_GPU=1), compute-sanitizer on the edge-size tests of the scan
# and of the selection (memcheck, racecheck, synccheck), both benchmarks, the quickstart and the CUB
# baseline, and leaves the logs in $OUT (a tarball plus the summaries: at most 8 files come back).
# Each step has its own time limit so that the summaries survive a slow step. About 4-5 minutes.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/h200-check}
logs=/tmp/h200-logs
rm -rf "$logs"; mkdir -p "$logs" "$out"
[ -f target/bundle.tar.xz ] && tar xJf target/bundle.tar.xz -C target
b=target/gpu-bundle/bin
export OUT=$logs
step() { echo "== $*"; }

step tests
timeout 240 target/gpu-bundle/run.sh tests >"$logs/tests.txt" 2>&1
grep -E "^==|test result|FAILED|panicked" "$logs/tests.txt" | grep -v "ok. 0 passed"
grep -h -A3 "panicked" "$logs"/test-*.log 2>/dev/null | head -20

step sanitize
scan=$(basename $b/test-scan-*); select=$(basename $b/test-select-*)
for t in "$scan edge_sizes_i32" "$scan edge_sizes_f64" "$select edge_i32" "$select edge_u8"; do
  echo "-- $t"
  timeout 120 target/gpu-bundle/run.sh sanitize $t 2>&1 | grep -E "SUMMARY|FAILED"
done

step bench
timeout 150 $b/bench-scan --sizes 16,20,24,28,30 --reps 20 >"$logs/scan.txt" 2>&1
timeout 200 $b/bench-select --sizes 16,20,24,28,30 --reps 20 >"$logs/select.txt" 2>&1
grep -h -E "vs_memcpy|CHECK" "$logs/scan.txt" "$logs/select.txt" | grep -v "^memcpy" | awk '{print $1,$2,$3,$5,$10}'
timeout 150 $b/cub_baseline --sizes 16,20,24,28,30 --reps 20 >"$logs/cub.txt" 2>&1
grep -E "n=2\^28" "$logs/cub.txt"

step quickstart
timeout 60 target/gpu-bundle/run.sh example quickstart >"$logs/quickstart.txt" 2>&1; tail -2 "$logs/quickstart.txt"

cp "$logs"/tests.txt "$logs"/scan.txt "$logs"/select.txt "$logs"/cub.txt "$out"/ 2>/dev/null
tar czf "$out/logs.tgz" -C /tmp h200-logs
