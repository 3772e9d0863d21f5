#!/usr/bin/env bash
# Fetches the CUB headers of one `nvidia-cuda-cccl` wheel from the package index into target/cccl-VERSION/
# and prints their include directory, for LOOKBACK_CUB_INCLUDE: the CUB baseline (`--features
# cub-baseline`, build/cub_shim.rs) is then built against that CUB instead of the pinned toolkit's.
# Needs pip and the network; the GPU machines have neither, so build there from a bundle made here.
#
#   export LOOKBACK_CUB_INCLUDE=$(scripts/fetch-cub.sh [VERSION])   # default: the newest that builds
#
# The default is the newest wheel whose CUB compiles the shim with the pinned nvcc 13.0.88 (benches/README.md,
# "CUB in the same process", lists the versions tried). A second run reuses what the first unpacked.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
version=${1:-13.3.5.0.6}
dir=target/cccl-$version

include() {
    local v
    v=$(find "$dir/unpacked" -path '*/include/cccl/cub/version.cuh' -print -quit 2>/dev/null) || return 1
    [ -n "$v" ] && (cd "$(dirname "$v")/.." && pwd)
}

if ! inc=$(include); then
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "fetch-cub: pip download nvidia-cuda-cccl==$version" >&2
    python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$dir" "nvidia-cuda-cccl==$version" >&2
    wheel=$(find "$dir" -maxdepth 1 -name 'nvidia_cuda_cccl-*.whl' -print -quit)
    [ -n "$wheel" ] || { echo "fetch-cub: pip left no wheel in $dir" >&2; exit 1; }
    python3 -m zipfile -e "$wheel" "$dir/unpacked"
    inc=$(include) || { echo "fetch-cub: no include/cccl/cub/version.cuh in $wheel" >&2; exit 1; }
fi
cub=$(sed -n 's/^#define CUB_VERSION \([0-9]*\).*/\1/p' "$inc/cub/version.cuh")
echo "fetch-cub: nvidia-cuda-cccl $version has CUB $((cub / 100000)).$((cub / 100 % 1000)).$((cub % 100)) in $inc" >&2
echo "$inc"
