#!/usr/bin/env bash
# The device bundle with the CUB baseline inside the benches: runs ../shared/tools/gpu-bundle as usual
# (its options passed on), then builds the scan, select and runs benches again with
# `--features cub-baseline` and puts them in place of target/gpu-bundle/bin/bench-{scan,select,runs}, the
# names run.sh and scripts/h200-*.sh call. Each then prints a cub:<row> line after every lookback row CUB
# has (benches/README.md, "CUB in the same process").
#
#   scripts/bundle-cub.sh [gpu-bundle options]          # from anywhere; e.g. --cub --no-examples
#
# CUB is the pinned toolkit's (3.0.1) unless LOOKBACK_CUB_INCLUDE names another CCCL include directory,
# which build/cub_shim.rs then compiles the shim against; the benches print the CUB they carry. The newest:
#
#   LOOKBACK_CUB_INCLUDE=$(scripts/fetch-cub.sh) scripts/bundle-cub.sh [gpu-bundle options]
#
# The arrow and doc_examples test binaries are built with `--features arrow` (they test more with it).
#
# The CUDA runtime is linked statically: the benches need only the driver (libcuda, loaded at run time)
# and the C++ runtime; the script fails if one links libcudart dynamically.
set -euo pipefail
# build.rs runs in the crate root, but a relative LOOKBACK_CUB_INCLUDE is meant from where this was called.
if [ -n "${LOOKBACK_CUB_INCLUDE:-}" ]; then
  LOOKBACK_CUB_INCLUDE=$(cd "$LOOKBACK_CUB_INCLUDE" && pwd)
  export LOOKBACK_CUB_INCLUDE
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
gpu_bundle=${GPU_BUNDLE:-../shared/tools/gpu-bundle}
# As gpu-bundle does: only the H200's architecture unless set, so the binaries stay small enough to carry.
export LOOKBACK_CUDA_ARCHS=${LOOKBACK_CUDA_ARCHS:-90}
# Every persistent run-based kernel (build/persistent_runs.rs), so that the tests and benches that force
# Engine::Persistent run them rather than the classic engine. LOOKBACK_PERSISTENT_RUNS=0 builds the default set.
export LOOKBACK_PERSISTENT_RUNS=${LOOKBACK_PERSISTENT_RUNS:-1}
"$gpu_bundle" "$@"

out=target/gpu-bundle
# The tests that the `arrow` feature adds to (tests/arrow.rs: GPU uploads and downloads; the doc examples of
# src/arrow/), built with it and put in place of the default builds' binaries of the same tests.
ajson=$out/test-arrow.json
if ! cargo test --release --features arrow --no-run --test arrow --test doc_examples \
    --message-format=json >"$ajson" 2>"$out/test-arrow.log"; then
  echo "bundle-cub: cargo test --features arrow --no-run failed:" >&2
  tail -40 "$out/test-arrow.log" >&2
  exit 1
fi
for name in arrow doc_examples; do
  exe=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == sys.argv[2]:
        print(m["executable"])
' "$ajson" "$name")
  [ -n "$exe" ] || { echo "bundle-cub: no $name test binary in $ajson" >&2; exit 1; }
  rm -f "$out/bin/test-$name-"*
  cp "$exe" "$out/bin/test-$(basename "$exe")"; strip --strip-debug "$out/bin/test-$(basename "$exe")" 2>/dev/null || true
  echo "bundle-cub: $out/bin/test-$(basename "$exe") built with --features arrow"
done

if [ -n "${LOOKBACK_CUB_INCLUDE:-}" ]; then
  echo "bundle-cub: CUB from LOOKBACK_CUB_INCLUDE=$LOOKBACK_CUB_INCLUDE"
else
  echo "bundle-cub: CUB from the toolkit's headers (LOOKBACK_CUB_INCLUDE unset)"
fi
json=$out/bench-cub.json
if ! cargo bench --features cub-baseline --no-run --bench scan --bench select --bench runs \
    --message-format=json >"$json" 2>"$out/bench-cub.log"; then
  echo "bundle-cub: cargo bench --features cub-baseline --no-run failed:" >&2
  tail -40 "$out/bench-cub.log" >&2
  exit 1
fi
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"][0] == "bench":
        print(m["target"]["name"] + "\t" + m["executable"])
' "$json" >"$out/bench-cub.tsv"
[ "$(wc -l <"$out/bench-cub.tsv")" = 3 ] || { echo "bundle-cub: expected 3 bench binaries, got:" >&2; cat "$out/bench-cub.tsv" >&2; exit 1; }

while IFS=$'\t' read -r name exe; do
  if ldd "$exe" | grep -q cudart; then
    echo "bundle-cub: $exe links libcudart dynamically; it must be static (build.rs links cudart_static)" >&2
    exit 1
  fi
  d=$out/bin/bench-$name
  cp "$exe" "$d"; strip --strip-debug "$d" 2>/dev/null || true
  echo "bundle-cub: $d now times CUB too ($(du -m "$d" | cut -f1) MiB; needs: $(ldd "$d" | awk '{print $1}' | tr '\n' ' '))"
done <"$out/bench-cub.tsv"
# The CUB code adds about 2 MiB per bench; carry the bundle xz-compressed as scripts/h200-final.sh's header
# says (identical kernel images across binaries compress away).
echo "bundle-cub: $(du -sm "$out" | cut -f1) MiB in $out; next: tar cf - -C target gpu-bundle | xz -T1 --lzma2=preset=3,dict=256MiB > target/bundle.tar.xz"
