#!/usr/bin/env bash
# Per-tile timelines of the classic agents (benches/probes/trace_tiles.cu) on the device: every probe
# build carried in target/gpu-bundle/probes/ (tt_<variant>, e.g. tt_base, or one compiled against a
# modified copy of cuda/) for each kind and size, TRACE_ROUNDS times (default 2) with the variants
# alternating, since one process's medians vary by a few % from the next's (TRACE_VARIANTS="base x":
# only those; TRACE_REPS: timed launches per run, default 30). Prints one line per run (event median,
# median span of the traced launches) and the bucket table of tt_base at the size named third; the
# per-tile CSVs go to the logs archive. Build a probe here with
#   nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I cuda -o target/gpu-bundle/probes/tt_base \
#        benches/probes/trace_tiles.cu          (the pinned PyPI nvcc: add -L<its lib> for cudart_static)
#   scripts/h200-trace.sh "rle nontrivial unique" "21 22 23" 22
source "$(dirname "$0")/h200-prologue.sh" trace
kinds=${1:-rle}
sizes=${2:-22}
table=${3:-22}
for round in $(seq 1 "${TRACE_ROUNDS:-2}"); do
  for exe in target/gpu-bundle/probes/tt_*; do
    v=${exe##*/tt_}
    case " ${TRACE_VARIANTS:-$v} " in *" $v "*) ;; *) continue ;; esac
    for k in $kinds; do
      for n in $sizes; do
        log=$OUT/trace-$v-$k-$n-$round
        timeout 60 "$exe" "$k" "$n" "${TRACE_REPS:-30}" "$log.csv" >"$log.txt" 2>&1
        rc=$?
        if [ "$v" = base ] && [ "$n" = "$table" ] && [ "$round" = 1 ]; then cat "$log.txt"; fi
        awk -v r="$round" -v v="$v" -v rc="$rc" 'NR == 1 {
          for (i = 1; i <= NF; i++) { if ($i == "median") m = $(i + 1); if ($i == "traced") t = $(i + 1); if ($i == "(median") { s = $(i + 1); gsub(/\)/, "", s) } }
          printf "R%s %-9s %-10s %-6s median %6s traced %6s span %7s %s\n", r, v, $1, $2, m, t, s, (rc == 0 ? "" : "rc=" rc) }' "$log.txt"
      done
    done
  done
  pack
done
