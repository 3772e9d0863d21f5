#!/usr/bin/env bash
# Compares the sm_90 SASS of kernels between a git revision and the working tree, here (no GPU): for a change
# of cuda/ meant to leave the code as it was, or to see which kernels a change reaches.
#   scripts/sass-diff.sh BASE_REV [KERNEL_FILE...]   (default: every cuda/kernels/*.cu; about 1.5 minutes
#                                                      for the 12 classic ones on 2 cores)
# Prints, per .cu file, whether its SASS is identical, and for each kernel whose instruction mix changed,
# the instruction counts before and after. Needs cuobjdump and nvdisasm: CUOBJDUMP / NVDISASM, else PATH
# (PyPI wheels nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm: bin/ under site-packages/nvidia/cu13).
# Compiles as build.rs does (-O3, C++17) but to a cubin per file, without LOOKBACK_NVCC_FLAGS.
set -euo pipefail
base=$1; shift
nvcc=${NVCC:-nvcc}
cuobjdump=${CUOBJDUMP:-cuobjdump}
[ -n "${NVDISASM:-}" ] && export PATH=$(dirname "$NVDISASM"):$PATH
root=$(git rev-parse --show-toplevel)
w=$(mktemp -d /tmp/sass-diff.XXXX)
git -C "$root" worktree add -q --detach "$w/base" "$base"
trap 'git -C "$root" worktree remove --force "$w/base"; rm -rf "$w"' EXIT
files=("$@"); [ ${#files[@]} -gt 0 ] || files=($(cd "$root" && ls cuda/kernels/*.cu))
for side in base work; do
  src=$([ $side = base ] && echo "$w/base" || echo "$root"); mkdir -p "$w/$side.out"
  printf '%s\n' "${files[@]}" | (cd "$src" && xargs -P 2 -I{} sh -c \
    "n=\$(basename {} .cu); '$nvcc' -cubin -std=c++17 -O3 --expt-relaxed-constexpr -arch=sm_90 -o '$w/$side.out/'\$n.cubin {} && '$cuobjdump' -sass '$w/$side.out/'\$n.cubin > '$w/$side.out/'\$n.sass")
done
python3 - "$w" "${files[@]}" <<'PY'
import collections, os, re, sys
w, files = sys.argv[1], sys.argv[2:]
def kernels(path):
    out, cur = {}, None
    for line in open(path):
        m = re.match(r'\s*Function : (\S+)', line)
        if m:
            cur = out.setdefault(m.group(1), [collections.Counter(), []])
        elif cur is not None and (m := re.search(r'/\*[0-9a-f]{4,}\*/\s+(.*?);', line)):
            ins = m.group(1)
            cur[1].append(ins)
            op = re.sub(r'^@!?U?P\w+\s+', '', ins).split()[0].split('.')[0]
            cur[0][op] += 1
    return out
for f in files:
    n = os.path.basename(f)[:-3]
    a, b = kernels(f'{w}/base.out/{n}.sass'), kernels(f'{w}/work.out/{n}.sass')
    same = [k for k in a if k in b and a[k][1] == b[k][1]]
    print(f'{n}: {len(a)} kernels, {len(same)} with identical SASS, {len(set(a) ^ set(b))} added or removed')
    for k in a:
        if k in b and a[k][0] != b[k][0]:
            d = {op: b[k][0][op] - a[k][0][op] for op in sorted(set(a[k][0]) | set(b[k][0])) if a[k][0][op] != b[k][0][op]}
            print(f'  {k}: {sum(a[k][0].values())} -> {sum(b[k][0].values())} instructions {d}')
PY
