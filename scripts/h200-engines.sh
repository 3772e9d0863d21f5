#!/usr/bin/env bash
# Both engines of the primitives that have two, same call, CUB in the same process (carry
# target/bundle.tar.xz; ~6 minutes): what Engine::Auto should pick per primitive and size.
#   scripts/h200-engines.sh
source "$(dirname "$0")/h200-prologue.sh" engines
i=0
for spec in \
  "bench-runs --types i32 --sizes 20,22,24,26,28,30 --engine classic" \
  "bench-runs --types i32 --sizes 20,22,24,26,28,30 --engine persistent" \
  "bench-runs --types f64 --sizes 20,22,24,26,28 --engine classic" \
  "bench-runs --types f64 --sizes 20,22,24,26,28 --engine persistent" \
  "bench-select --sizes 20,22,24 --engine classic" \
  "bench-select --sizes 20,22,24 --engine persistent"; do
  i=$((i + 1))
  bench_spec eng-$i 150 "$spec"
done
