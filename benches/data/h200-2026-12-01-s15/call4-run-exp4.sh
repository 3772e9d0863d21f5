#!/usr/bin/env bash
# Call 4 of session 15: more compute warps per SM for compaction (w24: 24 x 2 chunks, 24 KB tiles, ring
# of 8; w20: 20 x 4, 40 KB tiles, ring of 5; both 3 ahead) against es (16 x 4, 32 KB, 6), persistent
# engine forced, two rounds; their select tests first; then the final es build's sweep (the plot).
set -u
cd "$(dirname "$0")"
R=${OUT:-/tmp/h200}; export OUT=/tmp/logs; mkdir -p $OUT $R
exec > >(tee -a "$R/summary-exp4.txt") 2>&1
export LOOKBACK_REQUIRE_GPU=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for v in w24 w20; do
  for t in $v/test-*; do
    echo "== $t"; timeout 100 $t --nocapture >$OUT/$(basename $t)-$v.log 2>&1; echo "rc $?"
    grep -E "^test result|panicked|FAILED|least room" $OUT/$(basename $t)-$v.log | head
  done
done
rows() { grep -E "n=2\^|CHECK|rror|panicked" "$1" | grep -v "^memcpy" | awk '{print $1,$3,$5,$NF}'; }
A="--types i32 --sizes 24,26,28 --engine persistent --algos count_if_50,select_if_50,select_if_1,select_if_in_place_50,unique_run4,partition_reversed_50"
for round in 1 2; do
  for v in es w24 w20; do
    timeout 100 env -u OUT $v/bench-select $A --reps 20 --csv $OUT/$v-$round.csv >$OUT/$v-$round.txt 2>&1
    echo "== $v round $round (rc $?)"
    rows $OUT/$v-$round.txt | grep -v cub: | sed "s/^/$v$round /"
  done
  tar czf $R/logs-exp4.tgz -C /tmp logs
done
timeout 280 env -u OUT es/bench-select --sizes 10,12,14,16,18,20,22,24,26,28,30 --reps 20 --csv $OUT/sweep.csv >$OUT/sweep.txt 2>&1
echo "== sweep (rc $?)"
tar czf $R/logs-exp4.tgz -C /tmp logs
