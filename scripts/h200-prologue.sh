# Sourced by the device scripts (h200-final.sh, h200-quick.sh, h200-ab.sh) as
#   source "$(dirname "$0")/h200-prologue.sh" NAME
# On the device machine: cd to the crate root; $R is the call's $OUT (what comes back: at most 8 files),
# $OUT becomes /tmp/logs (the full logs, which the benches also write their CSVs to); everything printed
# is also appended to $R/summary-NAME.txt; the carried target/bundle.tar.xz (or $BUNDLE) is unpacked
# (BUNDLE_SWAP, below); $b is the bundle's bin/; `pack` archives /tmp/logs into $R/logs-NAME.tgz (call it
# after each step, so that a call cut short keeps what ran).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
R=${OUT:-/tmp/h200}; export OUT=/tmp/logs; mkdir -p "$OUT" "$R"
prologue_name=$1
exec > >(tee -a "$R/summary-$prologue_name.txt") 2>&1
# BUNDLE_SWAP=DIR: the bundle's DIR/ and bin/ trade places. A bundle may carry two builds (a trial in bin/,
# main in ab/: scripts/h200-ab.sh); BUNDLE_SWAP=ab then runs main's binaries as bin/ in any script.
# A warm machine's next call finds the bundle unpacked: the stamp (the archive's checksum and the swap)
# skips unpacking it again (20-40 s).
bundle_stamp="$(cksum <"${BUNDLE:-target/bundle.tar.xz}") ${BUNDLE_SWAP:-}"
if [ "$(cat target/gpu-bundle/.stamp 2>/dev/null)" != "$bundle_stamp" ]; then
  rm -rf target/gpu-bundle
  tar xJf "${BUNDLE:-target/bundle.tar.xz}" -C target
  if [ -n "${BUNDLE_SWAP:-}" ]; then
    (cd target/gpu-bundle && mv bin bin.swap && mv "$BUNDLE_SWAP" bin && mv bin.swap "$BUNDLE_SWAP")
  fi
  echo "$bundle_stamp" >target/gpu-bundle/.stamp
fi
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
# rows FILE: a bench output's rows (name, n, µs, last column) and any failure lines.
rows() { grep -E "n=2\^|CHECK|rror|panicked" "$1" | grep -v "^memcpy" | awk '{print $1,$3,$5,$NF}'; }
# run_tests: every test binary of the bundle (run.sh tests), its summary lines printed.
run_tests() {
  echo "== all tests"
  timeout 280 target/gpu-bundle/run.sh tests >$OUT/tests.txt 2>&1
  grep -E "^==|test result|FAILED|panicked" $OUT/tests.txt | grep -v "ok. 0 passed"
  pack
}
# sanitize_cases T...: compute-sanitizer (run.sh sanitize) on each test-T binary's sanitizer_cases.
sanitize_cases() {
  local t s
  for t in "$@"; do
    s=$(basename target/gpu-bundle/bin/test-$t-*)
    echo "== sanitize $t"
    timeout 240 target/gpu-bundle/run.sh sanitize $s sanitizer_cases >$OUT/san-$t.txt 2>&1
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|FAILED|overall" $OUT/san-$t.txt | head -8
    pack
  done
}
# run_tests_parallel N: the same binaries, N at a time (each with 4 test threads, LOOKBACK_REQUIRE_GPU=1,
# its output in $OUT/<binary>.txt, at most TEST_TIMEOUT seconds, default 200): the binaries that fail, the
# summed counts, the first panics.
run_tests_parallel() {
  echo "== all tests ($1 binaries at a time)"
  ls $b/test-* | LOOKBACK_REQUIRE_GPU=1 xargs -P "$1" -I{} sh -c \
    't={}; timeout ${TEST_TIMEOUT:-200} env -u OUT $t --test-threads 4 > $OUT/$(basename $t).txt 2>&1; echo "$(basename $t) rc=$?"' \
    >$OUT/test-rcs.txt
  echo "binaries: $(wc -l <$OUT/test-rcs.txt), failing: $(grep -vc 'rc=0$' $OUT/test-rcs.txt)"
  grep -v 'rc=0$' $OUT/test-rcs.txt
  cat $OUT/test-*-*.txt | grep -E "^test result" | awk '{p += $4; f += $6} END {print "passed", p, "failed", f}'
  grep -hE "panicked|FAILED" $OUT/test-*-*.txt | head -20
  pack
}
