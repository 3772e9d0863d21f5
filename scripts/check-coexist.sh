#!/usr/bin/env bash
# Whether lookback builds in one dependency graph with the current candle-core (CUDA) and burn-cuda
# releases: both depend on cudarc too, and cargo unifies its features, so a linking mode or CUDA version
# that cudarc's build script cannot combine fails every build of such a project. Checks cudarc (its build
# script runs with the unified features: it panics on a conflict) and lookback (which must compile in the
# linking mode the others chose), without nvcc: lookback is a dependency with `default-features = false`,
# as a dependent that needs no kernels declares it (build/opt_out.rs), so no kernel is compiled and a
# missing nvcc is no error. Needs crates.io; no GPU, no CUDA.
#
#   scripts/check-coexist.sh [CRATE_DIR]      # default: this checkout
set -euo pipefail
crate=$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/src"
echo 'fn main() {}' >"$scratch/src/main.rs"
cat >"$scratch/Cargo.toml" <<TOML
[package]
name = "coexist"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
lookback = { path = "$crate", default-features = false }
candle-core = { version = "*", features = ["cuda"] }
burn-cuda = "*"
TOML
cd "$scratch"
export CARGO_TARGET_DIR=${COEXIST_TARGET_DIR:-$scratch/target}
cargo generate-lockfile --quiet
for p in candle-core burn-cuda cudarc; do
  echo "$p $(cargo pkgid "$p" | sed 's/.*[@#]//')"
done
echo "cudarc's features, unified: $(cargo tree -i cudarc -e features --prefix none 2>/dev/null |
  sed -n 's/^cudarc feature "\([^"]*\)".*/\1/p' | sort -u | tr '\n' ' ')"
cargo check --quiet -p cudarc
cargo check --quiet -p lookback
echo "coexist: lookback builds beside candle-core (cuda) and burn-cuda"
