#!/usr/bin/env bash
# Call 1 of session 15: select Work variants (A/B in one process order, two rounds), select tests of the
# early-staging builds, sanitizer cases of es7.
set -u
cd "$(dirname "$0")"
R=${OUT:-/tmp/h200}; export OUT=/tmp/logs; mkdir -p $OUT $R
exec > >(tee -a "$R/summary-exp.txt") 2>&1
export LOOKBACK_REQUIRE_GPU=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for v in es7 es; do
  for t in $v/test-*; do
    [ $v = es ] && [[ $t == *select* ]] && continue
    echo "== $t"; timeout 150 $t --nocapture >$OUT/$(basename $t)-$v.log 2>&1; echo "rc $?"
    grep -E "^test result|panicked|FAILED|least room" $OUT/$(basename $t)-$v.log | head
  done
done
rows() { grep -E "n=2\^|CHECK|rror|panicked" "$1" | grep -v "^memcpy" | awk '{print $1,$3,$5,$NF}'; }
A="--types i32 --sizes 24,26,28 --algos count_if_50,select_if_50,select_if_1,select_if_in_place_50,unique_run4,partition_reversed_50"
for round in 1 2; do
  for v in $VARIANTS; do
    timeout 120 env -u OUT $v/bench-select $A --reps 20 --csv $OUT/$v-$round.csv >$OUT/$v-$round.txt 2>&1
    echo "== $v round $round (rc $?)"
    rows $OUT/$v-$round.txt | sed "s/^/$v$round /"
  done
  E="--types i32,i64 --sizes 22,23,24 --algos select_if_50,select_if_1,select_if_in_place_50,unique_run4"
  for eng in classic persistent; do
    timeout 120 env -u OUT es7/bench-select $E --engine $eng --reps 20 --csv $OUT/eng-$eng-$round.csv >$OUT/eng-$eng-$round.txt 2>&1
    echo "== es7 --engine $eng round $round (rc $?)"
    rows $OUT/eng-$eng-$round.txt | sed "s/^/$eng$round /"
  done
  tar czf $R/logs-exp.tgz -C /tmp logs
done
s=$(ls es7/test-select-*)
for tool in memcheck racecheck synccheck; do
  echo "== compute-sanitizer --tool $tool es7 select sanitizer_cases"
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 $s sanitizer_cases >$OUT/san-$tool.txt 2>&1; echo "rc $?"
  tail -3 $OUT/san-$tool.txt
done
tar czf $R/logs-exp.tgz -C /tmp logs
