#!/usr/bin/env bash
# A short device check (carry target/bundle.tar.xz; ~2-3 minutes): the named test binaries
# (LOOKBACK_REQUIRE_GPU=1), then each quoted bench command line with CUB in the same process, then
# compute-sanitizer on the first named test binary's sanitizer cases. For the end of a device
# budget, after a small change on top of a full scripts/h200-final.sh run.
#   scripts/h200-quick.sh "select runs" "bench-select --sizes 20,28" "bench-runs --sizes 22 --algos rle_run4"
source "$(dirname "$0")/h200-prologue.sh" quick
tests=$1; shift
for t in $tests; do
  LOOKBACK_REQUIRE_GPU=1 timeout 90 $b/test-$t-* >$OUT/test-$t.txt 2>&1; echo "== test-$t rc $?"
  grep -E "^test result|FAILED|panicked" $OUT/test-$t.txt | head
done
pack
i=0
for spec in "$@"; do
  i=$((i + 1))
  bench_spec quick-$i 90 "$spec"
done
first=${tests%% *}
s=$(basename $b/test-$first-*)
echo "== sanitize $first"
timeout 100 target/gpu-bundle/run.sh sanitize $s sanitizer_cases >$OUT/san-$first.txt 2>&1
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|FAILED|overall" $OUT/san-$first.txt | head -8
pack
