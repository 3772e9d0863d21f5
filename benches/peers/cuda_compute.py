#!/usr/bin/env python3
"""NVIDIA's `cuda.compute` (pip package `cuda-cccl`) on the jobs lookback measures (issue 32).

cuda.compute builds CUB kernels at run time: its C library compiles the CUB algorithm with NVRTC and
links the user operator (LTO-IR) into it with nvJitLink. This script times, in one process on GPU 0:

  select_if_50        x < t over i32 and f32, inputs whole numbers in 0..1000, t = 500 (about 50 % kept)
  inclusive_sum       inclusive scan with cuda.compute's built-in plus (OpKind.PLUS)
  inclusive_sum_user  inclusive scan with a user-written add
  affine_user         scan of {a, b} f32 pairs under (a1,b1)o(a2,b2) = (a1*a2, a2*b1 + b2), storing
                      h[t] = a[t]*h[t-1] + b[t] (f32) through a TransformOutputIterator (12 B/item)
  affine_pairs        the same scan storing the composed pairs (16 B/item)
  reduce_sum          sum with OpKind.PLUS (i32, f32)
  reduce_sum_user     sum with a user-written add (i32, f32)
  arg_min_user        (index, value) pairs from ZipIterator(CountingIterator, x), user-written min
                      (ties to the lower index) (i32)

User operators come in two forms (--ops): `cpp`, CUDA C++ compiled here to LTO-IR with NVRTC
(cuda.core.Program) and handed over as cuda.compute.op.RawOp; `py`, the same operator as a Python
function, which cuda.compute JIT-compiles itself (cuda-cccl >= 1.2 needs the numba-cuda-mlir package
for that, older versions numba-cuda; without it the py rows print SKIP).

Per (job, type, size) it prints one line and writes one CSV row: median time of one call (CUDA
events around each call, all calls enqueued behind a spin kernel so the host's Python overhead is
not timed), GB/s from the bytes read plus written, the ratio to a device-to-device memcpy of the
same input bytes measured in the same process, the first-call time of the algorithm object in
seconds (operator compile + make_* + temp-storage query + allocation + first call + synchronize),
the warm time of a repeated one-shot call in ms (make_* again, a cache hit, + query + allocation +
call + synchronize), and the cuda-cccl version. Every result is checked against cupy/numpy, with
outputs poisoned (0xFF bytes) before the runs; a wrong result or an error prints CHECK FAILED /
FAILED, the other rows still run, and the script exits 1 at the end.

    python3 benches/peers/cuda_compute.py --csv $OUT/cuda-compute.csv
    python3 benches/peers/cuda_compute.py --sizes 16,24,28 --types i32,f32 --reps 50 --csv out.csv

Exits 0 with a one-line message when cupy, a GPU or cuda.compute is missing.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import sys
import time
import traceback

ROTATION_BYTES = 256 << 20  # as benches/common: enough copies that one pass exceeds the L2
MAX_COPIES = 64
ROW_BUDGET_BYTES = 24 << 30
WARMUP = 3
CHECK_ITEMS = 1000
RANGE = 1000  # select inputs: whole numbers in 0..RANGE; threshold RANGE // 2

JOBS = (
    "select_if_50",
    "inclusive_sum",
    "inclusive_sum_user",
    "affine_user",
    "affine_pairs",
    "reduce_sum",
    "reduce_sum_user",
    "arg_min_user",
)
# job -> (types it runs on, op variants it has)
JOB_TYPES = {
    "select_if_50": (("i32", "f32"), ("cpp", "py")),
    "inclusive_sum": (("i32", "f32"), ("builtin",)),
    "inclusive_sum_user": (("i32", "f32"), ("cpp", "py")),
    "affine_user": (("f32",), ("cpp",)),
    "affine_pairs": (("f32",), ("cpp", "py")),
    "reduce_sum": (("i32", "f32"), ("builtin",)),
    "reduce_sum_user": (("i32", "f32"), ("cpp", "py")),
    "arg_min_user": (("i32",), ("cpp",)),
}

CSV_HEADER = [
    "algo", "op", "type", "log2n", "n", "median_us", "gbps", "vs_memcpy", "memcpy_gbps", "bytes",
    "first_s", "op_compile_s", "warm_ms", "make_ms", "reps", "copies", "check", "cccl_version",
    "device",
]


class Skip(Exception):
    """A row that cannot run here (e.g. no JIT backend for Python operators); not a failure."""


class CheckFailed(Exception):
    pass


def log(msg=""):
    print(msg, flush=True)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="16,24,28", help="log2 of the item count (default 16,24,28)")
    p.add_argument("--types", default="i32,f32", help="among i32,f32 (default both)")
    p.add_argument("--jobs", default=",".join(JOBS), help="comma list among " + ",".join(JOBS))
    p.add_argument("--ops", default="builtin,cpp,py", help="operator forms among builtin,cpp,py")
    p.add_argument("--reps", type=int, default=50, help="timed calls per row after 3 warm-ups (default 50)")
    p.add_argument("--warm-reps", type=int, default=5, help="repeated one-shot calls for warm_ms (median)")
    default_csv = os.path.join(os.environ["OUT"], "cuda-compute.csv") if os.environ.get("OUT") else "bench-cuda-compute.csv"
    p.add_argument("--csv", default=default_csv, help=f"CSV output (default {default_csv})")
    a = p.parse_args()
    a.sizes = [int(s) for s in a.sizes.split(",") if s]
    a.types = [t for t in a.types.split(",") if t]
    a.jobs = [j for j in a.jobs.split(",") if j]
    a.ops = [o for o in a.ops.split(",") if o]
    for t in a.types:
        if t not in ("i32", "f32"):
            p.error(f"unknown type {t}")
    for j in a.jobs:
        if j not in JOBS:
            p.error(f"unknown job {j}")
    if a.reps < 5:
        p.error("--reps must be at least 5")
    if a.warm_reps < 1:
        p.error("--warm-reps must be at least 1")
    return a


# ---------------------------------------------------------------------------------------------
# Environment
# ---------------------------------------------------------------------------------------------

def import_or_exit():
    try:
        import numpy as np
        import cupy as cp
    except Exception as e:  # noqa: BLE001
        log(f"cuda_compute.py: SKIPPED: numpy/cupy not importable ({type(e).__name__}: {e})")
        sys.exit(0)
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device")
    except Exception as e:  # noqa: BLE001
        log(f"cuda_compute.py: SKIPPED: no usable GPU ({type(e).__name__}: {e})")
        sys.exit(0)
    t0 = time.perf_counter()
    try:
        import cuda.compute as cc
        import cuda.cccl
        import cuda.compute.op  # noqa: F401  (RawOp: the user operators' form)
        if not getattr(cc, "_BINDINGS_AVAILABLE", True):
            raise ImportError("cuda.compute reports _BINDINGS_AVAILABLE = False")
        cc.make_inclusive_scan  # noqa: B018  (fails here, not mid-run, on a stub module)
    except Exception as e:  # noqa: BLE001
        log(
            "cuda_compute.py: SKIPPED: cuda.compute cannot be imported "
            f"({type(e).__name__}: {e}); install the wheels first (benches/README.md, "
            "'cuda.compute on the same jobs')"
        )
        sys.exit(0)
    import_s = time.perf_counter() - t0
    return np, cp, cc, cuda.cccl.__version__, import_s


def main():
    args = parse_args()
    np, cp, cc, version, import_s = import_or_exit()
    from cuda.compute.op import RawOp
    from cuda.core import Device, Program, ProgramOptions

    dev = Device(0)
    dev.set_current()
    cc_major, cc_minor = dev.compute_capability
    arch = f"sm_{cc_major}{cc_minor}"
    props = cp.cuda.runtime.getDeviceProperties(0)
    devname = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    cp.cuda.Device(0).use()

    try:
        import cuda.bindings as cb
        import cuda.core as ccore
        import cuda.pathfinder as cpf
        dep_versions = f"cuda-bindings {cb.__version__}, cuda-core {ccore.__version__}, cuda-pathfinder {getattr(cpf, '__version__', '?')}"
    except Exception as e:  # noqa: BLE001
        dep_versions = f"(versions unreadable: {e})"
    log(
        f"cuda.compute (cuda-cccl {version}) on {devname} ({arch}); {dep_versions}; cupy {cp.__version__}, "
        f"numpy {np.__version__}, Python {platform.python_version()}; driver {cp.cuda.runtime.driverGetVersion()}; "
        f"import cuda.compute {import_s:.2f} s ({os.path.dirname(cc.__file__)})"
    )
    stream = cp.cuda.Stream.null  # cuda.compute's stream=None is the legacy default stream too

    # ---- spin kernel: keeps the GPU busy while the host enqueues the timed calls ----
    spin_kernel = cp.RawKernel(
        r"""
extern "C" __global__ void lb_spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
""",
        "lb_spin",
    )

    def spin(ns):
        spin_kernel((1,), (1,), (np.uint64(int(ns)),))  # on the current stream: the null stream

    spin(1000)
    stream.synchronize()

    # ---- the operators, in CUDA C++ ----
    def compile_ltoir(source):
        opts = ProgramOptions(arch=arch, relocatable_device_code=True, link_time_optimization=True)
        return Program(source, "c++", options=opts).compile("ltoir").code

    def cpp_op(name, source):
        """RawOp from C++ source; returns (op, seconds NVRTC took)."""
        t0 = time.perf_counter()
        ltoir = compile_ltoir(source)
        return RawOp(ltoir=ltoir, name=name), time.perf_counter() - t0

    CT = {"i32": "int", "f32": "float"}
    NP = {"i32": np.int32, "f32": np.float32}

    def src_lt(name, ty, t):
        lit = f"{t}" if ty == "i32" else f"{t}.0f"
        return (
            f'extern "C" __device__ void {name}(void* x, void* r) {{\n'
            f"    *static_cast<unsigned char*>(r) = *static_cast<const {CT[ty]}*>(x) < {lit} ? 1 : 0;\n}}\n"
        )

    def src_add(name, ty):
        c = CT[ty]
        return (
            f'extern "C" __device__ void {name}(void* a, void* b, void* r) {{\n'
            f"    *static_cast<{c}*>(r) = *static_cast<const {c}*>(a) + *static_cast<const {c}*>(b);\n}}\n"
        )

    SRC_AFFINE = r"""
struct Pair { float a, b; };
extern "C" __device__ void lb_affine(void* x, void* y, void* r) {
    const Pair p = *static_cast<const Pair*>(x);
    const Pair q = *static_cast<const Pair*>(y);
    Pair o;
    o.a = p.a * q.a;
    o.b = q.a * p.b + q.b;
    *static_cast<Pair*>(r) = o;
}
"""
    SRC_TAKE_B = r"""
extern "C" __device__ void lb_take_b(void* x, void* r) {
    *static_cast<float*>(r) = static_cast<const float*>(x)[1];
}
"""
    SRC_ARGMIN = r"""
struct IdxVal { long long i; int v; };
extern "C" __device__ void lb_arg_min(void* x, void* y, void* r) {
    const IdxVal p = *static_cast<const IdxVal*>(x);
    const IdxVal q = *static_cast<const IdxVal*>(y);
    const bool take_q = q.v < p.v || (q.v == p.v && q.i < p.i);
    *static_cast<IdxVal*>(r) = take_q ? q : p;
}
"""

    Pair = cc.gpu_struct({"a": np.float32, "b": np.float32}, name="Pair")
    pair_dtype = np.dtype(Pair.dtype)
    assert pair_dtype.itemsize == 8, pair_dtype

    def py_op(job, ty):
        """The operator as a Python function (cuda.compute JIT-compiles it)."""
        if job == "select_if_50":
            if ty == "i32":
                def lt_half(x):
                    return x < 500
            else:
                def lt_half(x):
                    return x < np.float32(500.0)
            return lt_half
        if job in ("inclusive_sum_user", "reduce_sum_user"):
            def add(a, b):
                return a + b
            return add
        if job == "affine_pairs":
            def affine(p, q):
                return Pair(p.a * q.a, q.a * p.b + q.b)
            return affine
        raise Skip(f"no Python operator for {job}")

    def user_op(job, ty, form):
        """(operator, seconds spent compiling it before make_*) for a job's user operator."""
        if form == "builtin":
            return cc.OpKind.PLUS, 0.0
        if form == "py":
            return py_op(job, ty), 0.0
        if job == "select_if_50":
            return cpp_op(f"lb_lt_{ty}", src_lt(f"lb_lt_{ty}", ty, RANGE // 2))
        if job in ("inclusive_sum_user", "reduce_sum_user"):
            return cpp_op(f"lb_add_{ty}", src_add(f"lb_add_{ty}", ty))
        if job in ("affine_user", "affine_pairs"):
            return cpp_op("lb_affine", SRC_AFFINE)
        if job == "arg_min_user":
            return cpp_op("lb_arg_min", SRC_ARGMIN)
        raise AssertionError(job)

    # ---- inputs ----
    rng = np.random.default_rng(0x10CBAC)

    def host_input(job, ty, n):
        if job == "select_if_50":
            return rng.integers(0, RANGE, n, dtype=np.int32).astype(NP[ty])
        if job in ("affine_user", "affine_pairs"):
            ab = np.empty(2 * n, dtype=np.float32)
            ab[0::2] = rng.uniform(0.5, 1.0, n).astype(np.float32)
            ab[1::2] = rng.uniform(-1.0, 1.0, n).astype(np.float32)
            return ab
        if ty == "i32":
            return rng.integers(0, RANGE, n, dtype=np.int32)
        # multiples of 1/8 in [-0.5, 0.5]: every partial sum is exact in f32 at these sizes
        return (rng.integers(-4, 5, n, dtype=np.int32).astype(np.float32) / np.float32(8.0))

    def copies_for(in_bytes, per_copy):
        budget = max(ROW_BUDGET_BYTES // per_copy, 1)
        return min(max(min(-(-ROTATION_BYTES // in_bytes), MAX_COPIES), 1), budget)

    def poison(arr):
        arr.view(cp.uint8).fill(0xFF)

    # ---- timing ----
    def median(v):
        v = sorted(v)
        m = len(v) // 2
        return v[m] if len(v) % 2 else 0.5 * (v[m - 1] + v[m])

    host_per_call = {}

    def time_calls(key, call, copies, reps):
        """Median µs of one call: WARMUP untimed, then reps calls each between its own events,
        all enqueued behind a spin kernel long enough to cover the host's enqueueing. Returns
        (median_us, index of the buffer the last call used)."""
        total = WARMUP + reps
        if key not in host_per_call:
            for i in range(WARMUP):
                call(i % copies)
            stream.synchronize()
            t0 = time.perf_counter()
            for i in range(4):
                call(i % copies)
            stream.synchronize()
            host_per_call[key] = (time.perf_counter() - t0) / 4  # an upper bound: includes GPU time
        for attempt in range(2):
            spin_ns = min(int(total * host_per_call[key] * 1e9 * (2.0 + 2 * attempt) + 2e6), int(2e9))
            starts = [cp.cuda.Event() for _ in range(reps)]
            ends = [cp.cuda.Event() for _ in range(reps)]
            done = cp.cuda.Event()
            spin(spin_ns)
            t0 = time.perf_counter()
            for i in range(total):
                t = i - WARMUP
                if t >= 0:
                    starts[t].record(stream)
                call(i % copies)
                if t >= 0:
                    ends[t].record(stream)
            enqueue_s = time.perf_counter() - t0
            done.record(stream)
            done.synchronize()
            us = [cp.cuda.get_elapsed_time(s, e) * 1e3 for s, e in zip(starts, ends)]
            if enqueue_s * 1e9 < 0.8 * spin_ns:
                break
            # the spin ended before the host finished enqueueing: host gaps may be in the events
            host_per_call[key] = max(host_per_call[key], enqueue_s / total)
        else:
            log(f"  note: host enqueueing outran the spin kernel ({enqueue_s * 1e3:.1f} ms); times may include host gaps")
        return median(us), (total - 1) % copies

    memcpy_cache = {}

    def memcpy_gbps(nbytes):
        if nbytes in memcpy_cache:
            return memcpy_cache[nbytes]
        copies = copies_for(nbytes, 2 * nbytes)
        src = [cp.empty(nbytes, dtype=cp.uint8) for _ in range(copies)]
        dst = [cp.empty(nbytes, dtype=cp.uint8) for _ in range(copies)]
        for s in src:
            s.fill(7)

        def call(i):
            dst[i].data.copy_from_device_async(src[i].data, nbytes, stream)

        us, last = time_calls(("memcpy", nbytes), call, copies, args.reps)
        if not bool((dst[last] == 7).all()):
            raise CheckFailed("memcpy copied wrong bytes")
        g = 2 * nbytes / (us * 1e3)
        log(f"{'memcpy':<34} {nbytes:>12} B  t={us:>11.1f} us   GB/s {g:>8.1f}  (copies {copies})")
        memcpy_cache[nbytes] = g
        return g

    # ---- the jobs: each returns a Runner ----
    class Runner:
        """One (job, type, op form) at one size: buffers in rotation, the one-shot call, the check."""

        bytes_moved = 0  # read + written by one call
        in_bytes = 0  # the memcpy it is compared with

    op_cache = {}

    def make_runner(job, ty, form, n, op):
        r = Runner()
        if job == "select_if_50":
            h = host_input(job, ty, n)
            nbytes = n * 4
            copies = copies_for(nbytes, 2 * nbytes)
            x0 = cp.asarray(h)
            xs = [x0] + [x0.copy() for _ in range(copies - 1)]
            outs = [cp.empty(n, dtype=NP[ty]) for _ in range(copies)]
            cnts = [cp.empty(2, dtype=cp.uint64) for _ in range(copies)]
            ref = x0[x0 < NP[ty](RANGE // 2)]
            k = int(ref.size)
            r.bytes_moved, r.in_bytes = nbytes + k * 4, nbytes

            def make():
                return cc.make_select(d_in=xs[0], d_out=outs[0], d_num_selected_out=cnts[0], cond=op)

            def run(alg, tmp, i):
                return alg(temp_storage=tmp, d_in=xs[i], d_out=outs[i], d_num_selected_out=cnts[i],
                           cond=op, num_items=n)

            def poison_all():
                for o in outs + cnts:
                    poison(o)

            def check(i):
                got = int(cnts[i][:1].get()[0])
                if got != k:
                    raise CheckFailed(f"count {got}, expected {k}")
                if not bool(cp.array_equal(outs[i][:k], ref)):
                    bad = int(cp.argmax(outs[i][:k] != ref).get())
                    raise CheckFailed(f"item {bad}: {outs[i][bad:bad + 1].get()[0]} != {ref[bad:bad + 1].get()[0]}")
                if k < n and int(outs[i][k:k + 1].view(cp.uint32).get()[0]) != 0xFFFFFFFF:
                    raise CheckFailed("wrote past the selected items")
            r.copies = copies

        elif job in ("inclusive_sum", "inclusive_sum_user"):
            h = host_input(job, ty, n)
            nbytes = n * 4
            copies = copies_for(nbytes, 2 * nbytes)
            x0 = cp.asarray(h)
            xs = [x0] + [x0.copy() for _ in range(copies - 1)]
            outs = [cp.empty(n, dtype=NP[ty]) for _ in range(copies)]
            ref = cp.cumsum(x0, dtype=NP[ty])  # i32 wraps as the scan does; f32 partial sums are exact
            r.bytes_moved, r.in_bytes = 2 * nbytes, nbytes

            def make():
                return cc.make_inclusive_scan(d_in=xs[0], d_out=outs[0], op=op, init_value=None)

            def run(alg, tmp, i):
                return alg(temp_storage=tmp, d_in=xs[i], d_out=outs[i], op=op, init_value=None,
                           num_items=n)

            def poison_all():
                for o in outs:
                    poison(o)

            def check(i):
                if not bool(cp.array_equal(outs[i], ref)):
                    bad = int(cp.argmax(outs[i] != ref).get())
                    raise CheckFailed(f"item {bad}: {outs[i][bad:bad + 1].get()[0]} != {ref[bad:bad + 1].get()[0]}")
            r.copies = copies

        elif job in ("affine_user", "affine_pairs"):
            h = host_input(job, ty, n)  # interleaved a, b
            nbytes = n * 8
            store_h = job == "affine_user"
            per_copy = nbytes + (n * 4 if store_h else nbytes)
            copies = copies_for(nbytes, per_copy)
            f0 = cp.asarray(h)
            fs = [f0] + [f0.copy() for _ in range(copies - 1)]
            xs = [f.view(pair_dtype) for f in fs]
            if store_h:
                if "take_b" not in op_cache:
                    op_cache["take_b"] = cpp_op("lb_take_b", SRC_TAKE_B)
                take_b, take_b_s = op_cache["take_b"]
                r.extra_compile_s = take_b_s
                outs_f = [cp.empty(n, dtype=cp.float32) for _ in range(copies)]
                outs = [cc.TransformOutputIterator(o, take_b, Pair._type_descriptor) for o in outs_f]
            else:
                outs_f = [cp.empty(2 * n, dtype=cp.float32) for _ in range(copies)]
                outs = [o.view(pair_dtype) for o in outs_f]
            r.bytes_moved, r.in_bytes = nbytes + (4 * n if store_h else nbytes), nbytes
            a64 = h[0::2].astype(np.float64)
            b64 = h[1::2].astype(np.float64)

            def make():
                return cc.make_inclusive_scan(d_in=xs[0], d_out=outs[0], op=op, init_value=None)

            def run(alg, tmp, i):
                return alg(temp_storage=tmp, d_in=xs[i], d_out=outs[i], op=op, init_value=None,
                           num_items=n)

            def poison_all():
                for o in outs_f:
                    poison(o)

            def windows():
                """Index ranges checked: the first and last CHECK_ITEMS, and 8 random windows."""
                w = [(0, min(CHECK_ITEMS, n)), (max(n - CHECK_ITEMS, 0), n)]
                for s in np.random.default_rng(n).integers(0, max(n - CHECK_ITEMS, 1), 8):
                    w.append((int(s), int(min(s + CHECK_ITEMS, n))))
                return w

            def check(i):
                got_all = outs_f[i]
                for lo, hi in windows():
                    # every a < 1 (mean log a about -0.31): 400 items back the state is forgotten
                    # to far below f32 precision, so the sequential f64 loop may start from h = 0 there
                    start = max(lo - 400, 0)
                    hv = 0.0
                    ref = np.empty(hi - lo)
                    for t in range(start, hi):
                        hv = a64[t] * hv + b64[t]
                        if t >= lo:
                            ref[t - lo] = hv
                    if store_h:
                        got = got_all[lo:hi].get().astype(np.float64)
                    else:
                        got = got_all[2 * lo:2 * hi].get()[1::2].astype(np.float64)
                    err = np.abs(got - ref) / np.maximum(1.0, np.abs(ref))
                    if not np.all(np.isfinite(got)) or err.max() > 1e-4:
                        bad = int(np.argmax(np.where(np.isfinite(got), err, np.inf)))
                        raise CheckFailed(f"h[{lo + bad}] = {got[bad]!r}, expected {ref[bad]!r}")
            r.copies = copies

        elif job in ("reduce_sum", "reduce_sum_user"):
            h = host_input(job, ty, n)
            nbytes = n * 4
            copies = copies_for(nbytes, nbytes)
            x0 = cp.asarray(h)
            xs = [x0] + [x0.copy() for _ in range(copies - 1)]
            outs = [cp.empty(1, dtype=NP[ty]) for _ in range(copies)]
            h_init = np.zeros(1, dtype=NP[ty])
            if ty == "i32":
                # the i32 sum wraps as the device's does (astype wraps out-of-range int64)
                ref = np.array([h.astype(np.int64).sum()], dtype=np.int64).astype(np.int32)[0]
            else:
                ref = np.float32(h.astype(np.float64).sum())  # exact: multiples of 1/8
            r.bytes_moved, r.in_bytes = nbytes + 4, nbytes

            def make():
                return cc.make_reduce_into(d_in=xs[0], d_out=outs[0], op=op, h_init=h_init)

            def run(alg, tmp, i):
                return alg(temp_storage=tmp, d_in=xs[i], d_out=outs[i], num_items=n, op=op,
                           h_init=h_init)

            def poison_all():
                for o in outs:
                    poison(o)

            def check(i):
                got = outs[i].get()[0]
                if got != ref:
                    raise CheckFailed(f"sum {got!r}, expected {ref!r}")
            r.copies = copies

        elif job == "arg_min_user":
            h = host_input(job, ty, n)
            nbytes = n * 4
            copies = copies_for(nbytes, nbytes)
            x0 = cp.asarray(h)
            xs = [x0] + [x0.copy() for _ in range(copies - 1)]
            zips = [cc.ZipIterator(cc.CountingIterator(np.int64(0)), x) for x in xs]
            zdt = np.dtype(zips[0].value_type.dtype)
            if zdt.itemsize != 16 or [zdt.fields[f][1] for f in zdt.names] != [0, 8]:
                raise CheckFailed(f"zip value type {zdt} is not {{int64 index, int32 value}} as the C++ op assumes")
            outs_raw = [cp.empty(2, dtype=cp.int64) for _ in range(copies)]
            outs = [o.view(zdt) for o in outs_raw]  # one 16-byte record each
            h_init = np.zeros(1, dtype=zdt)
            h_init[zdt.names[0]] = np.iinfo(np.int64).max
            h_init[zdt.names[1]] = np.iinfo(np.int32).max
            ref_i = int(np.argmin(h))  # first index of the least value
            ref_v = int(h[ref_i])
            r.bytes_moved, r.in_bytes = nbytes + 16, nbytes

            def make():
                return cc.make_reduce_into(d_in=zips[0], d_out=outs[0], op=op, h_init=h_init)

            def run(alg, tmp, i):
                return alg(temp_storage=tmp, d_in=zips[i], d_out=outs[i], num_items=n, op=op,
                           h_init=h_init)

            def poison_all():
                for o in outs_raw:
                    poison(o)

            def check(i):
                raw = outs_raw[i].get()
                got_i, got_v = int(raw[0]), int(raw.view(np.int32)[2])  # the value: bytes 8..11
                if (got_i, got_v) != (ref_i, ref_v):
                    raise CheckFailed(f"(index, value) = ({got_i}, {got_v}), expected ({ref_i}, {ref_v})")
            r.copies = copies
        else:
            raise AssertionError(job)

        r.make, r.run, r.poison_all, r.check = make, run, poison_all, check
        return r

    # ---- warm-up of the process: the first build loads NVRTC, nvJitLink and the headers ----
    t0 = time.perf_counter()
    try:
        wx = cp.arange(1024, dtype=cp.int64)
        wo = cp.empty(1, dtype=cp.int64)
        cc.reduce_into(d_in=wx, d_out=wo, num_items=1024, op=cc.OpKind.PLUS, h_init=np.zeros(1, dtype=np.int64))
        stream.synchronize()
        if int(wo.get()[0]) != 1023 * 1024 // 2:
            raise CheckFailed(f"warm-up i64 sum gave {int(wo.get()[0])}")
        log(f"process warm-up (first build: i64 reduce_into, OpKind.PLUS): {time.perf_counter() - t0:.2f} s")
    except Exception as e:  # noqa: BLE001
        log(f"FAILED process warm-up: {type(e).__name__}: {e}")
        traceback.print_exc()
        sys.exit(1)

    def clear_caches():
        """Forget every build, so each algorithm's first call below is a cold build."""
        clear = getattr(cc, "clear_all_caches", None)
        if clear is not None:
            clear()
        cp.get_default_memory_pool().free_all_blocks()

    clear_caches()

    # ---- the rows ----
    failures = []
    rows = []
    csv_dir = os.path.dirname(os.path.abspath(args.csv))
    os.makedirs(csv_dir, exist_ok=True)
    fcsv = open(args.csv, "w", newline="")
    w = csv.writer(fcsv)
    w.writerow(CSV_HEADER)
    fcsv.flush()
    sizes = sorted(args.sizes)

    for job in args.jobs:
        types, forms = JOB_TYPES[job]
        for ty in [t for t in args.types if t in types]:
            for form in [f for f in forms if f in args.ops]:
                label = f"cc:{job}[{form}]"
                first = None  # (first_s, op_compile_s)
                alg = None
                op = None
                try:
                    for log2n in sizes:
                        n = 1 << log2n
                        if first is None:
                            t0 = time.perf_counter()
                            try:
                                op, op_s = user_op(job, ty, form)
                                r = make_runner(job, ty, form, n, op)
                                t1 = time.perf_counter()  # buffers and references are not the build's
                                r.poison_all()
                                stream.synchronize()
                                t1b = time.perf_counter()
                                alg = r.make()
                                nb = r.run(alg, None, 0)
                                tmp = cp.empty(max(int(nb), 1), dtype=cp.uint8)
                                r.run(alg, tmp, 0)
                                stream.synchronize()
                                t2 = time.perf_counter()
                            except (ImportError, ModuleNotFoundError) as e:
                                if form == "py":
                                    raise Skip(f"no JIT backend for Python operators ({type(e).__name__}: {e})")
                                raise
                            extra = getattr(r, "extra_compile_s", 0.0)
                            op_s += extra
                            first = (op_s + (t2 - t1b), op_s)
                            r.check(0)  # the first call's result too
                        else:
                            r = make_runner(job, ty, form, n, op)
                        # warm: the one-shot call repeated (make_* hits the cache)
                        warm, makes = [], []
                        r.poison_all()
                        for _ in range(args.warm_reps):
                            stream.synchronize()
                            t0 = time.perf_counter()
                            a2 = r.make()
                            t1 = time.perf_counter()
                            nb = r.run(a2, None, 0)
                            tmp = cp.empty(max(int(nb), 1), dtype=cp.uint8)
                            r.run(a2, tmp, 0)
                            stream.synchronize()
                            t2 = time.perf_counter()
                            warm.append((t2 - t0) * 1e3)
                            makes.append((t1 - t0) * 1e3)
                            del tmp
                        r.check(0)
                        alg = a2
                        # timed calls: one temp buffer sized once, outputs poisoned first
                        nb = r.run(alg, None, 0)
                        tmp = cp.empty(max(int(nb), 1), dtype=cp.uint8)
                        r.poison_all()
                        stream.synchronize()
                        us, last = time_calls((job, ty, form, n), lambda i: r.run(alg, tmp, i), r.copies, args.reps)
                        check = "ok"
                        try:
                            r.check(last)
                        except CheckFailed as e:
                            check = f"CHECK FAILED: {e}"
                        mg = memcpy_gbps(r.in_bytes)
                        g = r.bytes_moved / (us * 1e3)
                        row = dict(
                            algo=f"cc:{job}", op=form, type=ty, log2n=log2n, n=n, median_us=f"{us:.2f}",
                            gbps=f"{g:.1f}", vs_memcpy=f"{g / mg:.3f}", memcpy_gbps=f"{mg:.1f}",
                            bytes=r.bytes_moved, first_s=f"{first[0]:.3f}", op_compile_s=f"{first[1]:.3f}",
                            warm_ms=f"{median(warm):.3f}", make_ms=f"{median(makes):.3f}", reps=args.reps,
                            copies=r.copies, check=check, cccl_version=version, device=devname,
                        )
                        w.writerow([row[c] for c in CSV_HEADER])
                        fcsv.flush()
                        rows.append(row)
                        log(
                            f"{label:<34} {ty} n=2^{log2n:<2} t={us:>11.1f} us   GB/s {g:>8.1f}  vs_memcpy {g / mg:.3f}"
                            f"  first {first[0]:.2f} s (op {first[1]:.2f})  warm {median(warm):.2f} ms"
                            f"  cuda-cccl {version}  {check}"
                        )
                        if check != "ok":
                            failures.append(f"{label} {ty} n=2^{log2n}: {check}")
                        del r, tmp
                        cp.get_default_memory_pool().free_all_blocks()
                except Skip as e:
                    log(f"{label:<34} {ty} SKIP: {e}")
                except CheckFailed as e:
                    log(f"{label:<34} {ty} CHECK FAILED: {e}")
                    failures.append(f"{label} {ty}: CHECK FAILED: {e}")
                except Exception as e:  # noqa: BLE001
                    log(f"{label:<34} {ty} FAILED: {type(e).__name__}: {e}")
                    traceback.print_exc(file=sys.stdout)
                    failures.append(f"{label} {ty}: FAILED: {type(e).__name__}: {e}")
                alg = a2 = op = r = tmp = None
                clear_caches()

    fcsv.close()
    top = max(sizes)
    log(f"\nsummary at 2^{top} (cuda-cccl {version}, {devname}):")
    for row in rows:
        if row["log2n"] == top:
            log(f"  {row['algo'] + '[' + row['op'] + ']':<34} {row['type']}  {row['gbps']:>8} GB/s  vs_memcpy {row['vs_memcpy']}"
                f"  first {row['first_s']} s  warm {row['warm_ms']} ms  {row['check']}")
    log(f"CSV: {args.csv}")
    if failures:
        log(f"\n{len(failures)} FAILED:")
        for f in failures:
            log(f"  {f}")
        sys.exit(1)


if __name__ == "__main__":
    main()
