#!/usr/bin/env bash
# Variants of one bench in one device call, alternating: each argument is "LABEL=DIR/BENCH ARGS", DIR a
# folder of target/gpu-bundle (bin: the new build; ab: an old build's benches copied there by hand), so a
# runtime switch (e.g. --backoff) and an old binary can be compared in the same process order. Every
# variant runs VAR_ROUNDS times (default 2; --reps 20 is added). VAR_CHECKS=1 (default) first runs every
# test binary and, after the benches, the sanitizer cases of VAR_SANITIZE (default "select").
#   scripts/h200-variants.sh "old=ab/bench-select --sizes 28" "new=bin/bench-select --sizes 28"
# carry ["target/bundle.tar.xz", "scripts"] (the bundle packed as in h200-ab.sh).
source "$(dirname "$0")/h200-prologue.sh" variants
g=target/gpu-bundle
rows() { grep -E "n=2\^|CHECK|rror|panicked" "$1" | grep -v "^memcpy" | awk '{print $1,$3,$5,$NF}'; }
checks=${VAR_CHECKS:-1}
if [ "$checks" = 1 ]; then
  echo "== all tests"
  timeout 200 $g/run.sh tests >$OUT/tests.txt 2>&1
  grep -E "^==|test result|FAILED|panicked" $OUT/tests.txt | grep -v "ok. 0 passed"
  pack
fi
for round in $(seq 1 "${VAR_ROUNDS:-2}"); do
  for spec in "$@"; do
    label=${spec%%=*}; cmd=${spec#*=}
    timeout ${VAR_TIMEOUT:-90} env -u OUT $g/$cmd --reps 20 --csv $OUT/$label-$round.csv >$OUT/$label-$round.txt 2>&1
    echo "== $label round $round (rc $?)"
    rows $OUT/$label-$round.txt | sed "s/^/$label$round /"
    pack
  done
done
[ "$checks" = 1 ] || exit 0
for t in ${VAR_SANITIZE:-select}; do
  s=$(basename $g/bin/test-$t-*)
  echo "== sanitize $t"
  timeout 150 $g/run.sh sanitize $s sanitizer_cases >$OUT/san-$t.txt 2>&1
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|FAILED|overall" $OUT/san-$t.txt | head -8
  pack
done
