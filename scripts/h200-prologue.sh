# Sourced by the device scripts (h200-final.sh, h200-quick.sh, h200-ab.sh) as
#   source "$(dirname "$0")/h200-prologue.sh" NAME
# On the device machine: cd to the crate root; $R is the call's $OUT (what comes back: at most 8 files),
# $OUT becomes /tmp/logs (the full logs, which the benches also write their CSVs to); everything printed
# is also appended to $R/summary-NAME.txt; the carried target/bundle.tar.xz is unpacked; $b is the
# bundle's bin/; `pack` archives /tmp/logs into $R/logs-NAME.tgz (call it after each step, so that a call
# cut short keeps what ran).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
R=${OUT:-/tmp/h200}; export OUT=/tmp/logs; mkdir -p "$OUT" "$R"
prologue_name=$1
exec > >(tee -a "$R/summary-$prologue_name.txt") 2>&1
tar xJf target/bundle.tar.xz -C target
b=target/gpu-bundle/bin
pack() { tar czf "$R/logs-$prologue_name.tgz" -C /tmp logs; }
# bench_spec LOG SECONDS "bench-x ARGS": one bench command line (20 reps, CUB in the same process), its
# output in $OUT/LOG.txt and .csv, its rows printed (name, type, n, µs, last column), then pack.
bench_spec() {
  local log=$1 secs=$2 spec=$3
  timeout "$secs" env -u OUT $b/$spec --reps 20 --csv $OUT/$log.csv >$OUT/$log.txt 2>&1
  echo "== $spec (rc $?)"
  grep -E "n=2\^|CHECK|rror|panicked" $OUT/$log.txt | grep -v "^memcpy" | awk '{print $1,$2,$3,$5,$NF}'
  pack
}
