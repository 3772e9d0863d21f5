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
checks=${VAR_CHECKS:-1}
[ "$checks" = 1 ] && run_tests
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
sanitize_cases ${VAR_SANITIZE:-select}
