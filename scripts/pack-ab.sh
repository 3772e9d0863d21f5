#!/usr/bin/env bash
# Packs a two-build bundle for scripts/h200-ab.sh: the trial build's target/gpu-bundle (run from the trial's
# crate root, after ../shared/tools/gpu-bundle) with main's binaries (the bin/ of main's bundle) as ab/.
#   scripts/pack-ab.sh MAIN_BIN_DIR OUT.tar.xz
# Each ab/ binary is put beside its bin/ twin and xz runs single-threaded, so that one dictionary window
# holds both: twins share all but their kernels (main's bundle and a trial's took 38 MB together on
# 2026-12-07, against 68-70 MB packed folder by folder or multi-threaded; the carry limit is 64 MiB).
set -euo pipefail
main_bin=$1 out=$2
g=target/gpu-bundle
[ -d $g/bin ] || { echo "pack-ab: run it from the trial's crate root, after gpu-bundle" >&2; exit 2; }
rm -rf $g/ab && cp -r "$main_bin" $g/ab
python3 - <<'PY' >target/pack-ab.list
import os, re
os.chdir('target')
g = 'gpu-bundle'
stem = lambda x: re.sub(r'-[0-9a-f]{16}$', '', x)  # test binaries carry a hash that differs per build
order = [f'{g}/{x}' for x in sorted(os.listdir(g)) if x not in ('bin', 'ab')]
ab = {stem(x): x for x in os.listdir(f'{g}/ab')}
for x in sorted(os.listdir(f'{g}/bin')):
    order.append(f'{g}/bin/{x}')
    if stem(x) in ab:
        order.append(f'{g}/ab/{ab.pop(stem(x))}')
order += [f'{g}/ab/{x}' for x in ab.values()]
print('\n'.join(order))
PY
tar cf - -C target --no-recursion -T "$PWD/target/pack-ab.list" | xz -T1 --lzma2=preset=3,dict=256MiB >"$out"
ls -la "$out"
