#!/usr/bin/env python3
"""Per-kernel resources of a build's sm_90 fatbins, read here (no GPU): registers, stack frame, static
shared memory, local-memory loads and stores in the SASS, the launch bound's threads, and the resident
blocks per SM those allow on sm_90.

    scripts/kernel-resources.py [--build DIR] [--against DIR] [--match REGEX] [--local] [--tsv]

--build   the folder of the fatbins (default: the newest target/release/build/lookback-*/out)
--against a second build's folder: print only the kernels whose figures differ, old -> new
--match   only kernels whose name matches REGEX (re.search)
--local   only kernels with a stack frame or local loads/stores (spills, or arrays indexed at run time)
--tsv     tab-separated output with a header, for data files

Why: a kernel's register count decides how many of its blocks fit an SM. The scan kernels' launch bounds
named no minimum of blocks, and ptxas gave the f64 sum 40 registers where the others got 30-32, so 6 blocks
of 256 threads fit instead of 8; the 8-byte non-trivial runs sat at their register cap with a stack frame
(benches/STATUS.md, leads 2 and 3). Both showed here before any GPU ran.

Blocks per SM count registers (per warp, in units of 256, from each SM sub-partition's 16384), static
shared memory (228 KB per SM), threads (2048) and the 32-block limit. The shared figure is cuobjdump's,
which for sm_90 already holds the 1 KB the runtime reserves per block (the kernel's .nv.shared section
begins with it): HeadsAgent<4, NoValues, ...>::Storage is 36960 bytes (sizeof, compiled for the host)
and cuobjdump gives its kernels 37984. Dynamic
shared memory is not in the binary: the persistent engine's kernels (`pipe_*`) size theirs at launch, so
their figure is an upper bound. A stack frame is not always a spill: an array indexed at run time lives
there too; the local loads and stores say how often the SASS touches it, not how often it runs.

Needs cuobjdump (CUOBJDUMP, else PATH; the PyPI wheel nvidia-cuda-cuobjdump: bin/ under
site-packages/nvidia/cu13) and nvdisasm beside it for the SASS.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

SM_REGS_PER_PARTITION = 16384  # sm_90: 64K 32-bit registers, 4 sub-partitions
SM_SHARED = 233472  # 228 KB of shared memory per SM, the 1 KB per block reserved by the runtime included
SM_THREADS = 2048
SM_BLOCKS = 32


def cuobjdump(*args):
    tool = os.environ.get("CUOBJDUMP", "cuobjdump")
    return subprocess.run([tool, *args], check=True, capture_output=True, text=True).stdout


def by_kernel(text, header):
    """(kernel, line) for each line of cuobjdump's text after a line naming a kernel (`header`'s group 1)."""
    name = None
    for line in text.splitlines():
        m = re.search(header, line)
        if m:
            name = m.group(1)
        elif name:
            yield name, line


def res_usage(fatbin):
    """name -> (registers, stack, static shared) from `cuobjdump -res-usage`."""
    out = {}
    for name, line in by_kernel(cuobjdump("-res-usage", fatbin), r"Function (\S+):"):
        m = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+)", line)
        if m and name not in out:
            out[name] = tuple(int(x) for x in m.groups())
    return out


def max_threads(fatbin):
    """name -> the launch bound's threads per block (EIATTR_MAX_THREADS of the kernel's .nv.info)."""
    out, want = {}, None
    for name, line in by_kernel(cuobjdump("-elf", fatbin), r"^\.nv\.info\.(\S+)$"):
        if "EIATTR_MAX_THREADS" in line:
            want = name
        elif want == name and line.strip().startswith("Value:"):
            x, y, z = (int(v, 16) for v in line.split()[1:4])
            out[name] = x * y * z
            want = None
    return out


def local_accesses(fatbin):
    """name -> (local stores, local loads) counted in the SASS."""
    out = {}
    for name, line in by_kernel(cuobjdump("-sass", fatbin), r"^\s*Function : (\S+)"):
        counts = out.setdefault(name, [0, 0])
        if re.search(r"\bSTL(\.\w+)*\s", line):
            counts[0] += 1
        elif re.search(r"\bLDL(\.\w+)*\s", line):
            counts[1] += 1
    return out


def blocks_per_sm(regs, shared, threads):
    """Resident blocks per SM on sm_90, and what limits them (figures of main 9d864e0's kernels).

    >>> blocks_per_sm(40, 17568, 256)  # lookback_scan_sum_f64
    (6, 'regs')
    >>> blocks_per_sm(36, 17568, 256)  # lookback_scan_max_f64: 36 registers are given as 40
    (6, 'regs')
    >>> blocks_per_sm(32, 17504, 256)  # lookback_scan_sum_i32
    (8, 'threads')
    >>> blocks_per_sm(56, 37984, 192)  # lookback_heads_runs_k4_v0: 6 by registers and by shared memory
    (6, 'regs')
    >>> blocks_per_sm(64, 31840, 192)  # lookback_heads_sum_k4_f32
    (5, 'regs')
    >>> blocks_per_sm(118, 2176, 352)  # lookback_pipe_scan_sum_f64 (its ring is dynamic: not counted)
    (1, 'regs')
    """
    if not threads:
        return None, "?"
    warps = -(-threads // 32)
    regs_per_warp = -(-max(regs, 1) * 32 // 256) * 256
    by = {
        "regs": 4 * (SM_REGS_PER_PARTITION // regs_per_warp) // warps,
        "shared": SM_SHARED // max(shared, 1),
        "threads": SM_THREADS // threads,
        "blocks": SM_BLOCKS,
    }
    limit = min(by, key=lambda k: (by[k], k != "threads"))
    return by[limit], limit


def read_build(folder):
    """name -> figures, over every fatbin of the folder."""
    kernels = {}
    fatbins = sorted(glob.glob(os.path.join(folder, "*.fatbin")))
    with ThreadPoolExecutor(os.cpu_count()) as pool:
        read = list(pool.map(lambda f: (res_usage(f), max_threads(f), local_accesses(f)), fatbins))
    for fatbin, (res, threads, local) in zip(fatbins, read):
        module = os.path.basename(fatbin)[: -len(".fatbin")]
        for name, (regs, stack, shared) in res.items():
            t = threads.get(name)
            blocks, limit = blocks_per_sm(regs, shared, t)
            stl, ldl = local.get(name, (0, 0))
            kernels[name] = dict(module=module, regs=regs, stack=stack, shared=shared, threads=t,
                                 blocks=blocks, limit=limit, stl=stl, ldl=ldl)
    return kernels


def newest_build():
    outs = glob.glob("target/release/build/lookback-*/out")
    outs = [o for o in outs if glob.glob(os.path.join(o, "*.fatbin"))]
    if not outs:
        sys.exit("kernel-resources: no target/release/build/lookback-*/out with fatbins; build first or pass --build")
    return max(outs, key=os.path.getmtime)


COLUMNS = ["module", "kernel", "regs", "stack", "shared", "threads", "blocks", "limit", "stl", "ldl"]


def row(name, k):
    return [k["module"], name] + [("-" if k[c] is None else str(k[c])) for c in COLUMNS[2:]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build")
    ap.add_argument("--against")
    ap.add_argument("--match")
    ap.add_argument("--local", action="store_true")
    ap.add_argument("--tsv", action="store_true")
    a = ap.parse_args()
    build = a.build or newest_build()
    new = read_build(build)
    keep = lambda n, k: (not a.match or re.search(a.match, n)) and (not a.local or k["stack"] or k["stl"] or k["ldl"])
    names = sorted(n for n, k in new.items() if keep(n, k))
    if a.against:
        old = read_build(a.against)
        print(f"# {a.against} -> {build}: kernels whose figures differ (old -> new)")
        for n in names:
            o, k = old.get(n), new[n]
            if o is None:
                print(f"{n}: new kernel  {' '.join(row(n, k)[2:])}")
                continue
            diffs = [f"{c} {o[c]} -> {k[c]}" for c in COLUMNS[2:] if o[c] != k[c]]
            if diffs:
                print(f"{n}: " + ", ".join(diffs))
        for n in sorted(set(old) - set(new)):
            if keep(n, old[n]):
                print(f"{n}: gone")
        return
    rows = [row(n, new[n]) for n in names]
    if a.tsv:
        print(f"# {build}")
        print("\t".join(COLUMNS))
        for r in rows:
            print("\t".join(r))
        return
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(COLUMNS)]
    print(f"# {build}: {len(rows)} kernels")
    for r in [COLUMNS] + rows:
        print("  ".join(x.ljust(w) if i < 2 or i == 7 else x.rjust(w) for i, (x, w) in enumerate(zip(r, widths))))


if __name__ == "__main__":
    main()
