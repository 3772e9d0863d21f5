#!/usr/bin/env bash
# A/B of two builds in one device call (carry target/bundle.tar.xz whose gpu-bundle holds the new build
# in bin/ and the old bench binaries in ab/): every test binary of the new build, then each bench row
# alternately old / new / old / new (same process order, CUB in each), then compute-sanitizer on the
# scan, select and runs sanitizer cases of the new build. ~6 minutes. Its ab/ may hold every binary of the
# old build (tests too: BUNDLE_SWAP in h200-prologue.sh then runs any script on it); pack such a bundle
# with each ab/ binary beside its bin/ twin and single-threaded xz, so that the dictionary sees both.
#   scripts/h200-ab.sh "bench-runs --sizes 22,24,28 --algos unique_by_key_run4" ["bench-select ..."] ...
# AB_CHECKS=0 skips the tests and the sanitizers (a second A/B call on the same build); AB_ROUNDS sets the
# rounds of old / new (default 2). AB_SIDES lists the
# bundle's binary folders to alternate (default "ab bin"; e.g. "ab p bin" with a third build in p/), and
# AB_TIMEOUT the seconds one bench process may take (default 60), AB_SANITIZE the test binaries whose
# sanitizer cases run (default "runs select scan").
source "$(dirname "$0")/h200-prologue.sh" ab
g=target/gpu-bundle
checks=${AB_CHECKS:-1}
[ "$checks" = 1 ] && run_tests_parallel "${TEST_JOBS:-4}"
i=0
for spec in "$@"; do
  i=$((i + 1)); set -- $spec; bench=$1; shift
  for round in $(seq "${AB_ROUNDS:-2}"); do
    for side in ${AB_SIDES:-ab bin}; do
      timeout ${AB_TIMEOUT:-60} env -u OUT $g/$side/$bench "$@" --reps 20 --csv $OUT/ab-$i-$side-$round.csv >$OUT/ab-$i-$side-$round.txt 2>&1
      rows $OUT/ab-$i-$side-$round.txt | sed "s/^/$side$round /"
    done
  done
  pack
done
[ "$checks" = 1 ] || exit 0
sanitize_cases ${AB_SANITIZE:-runs select scan}
