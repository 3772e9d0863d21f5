//! User code on the GPU: predicates, scan operators and element types written in CUDA C++, compiled at run
//! time into the crate's own kernels.
//!
//! [`UserScanOp`] takes an associative combine over `a` and `b` (it need not commute), its identity, and
//! optional conversions on load (`x` of the input type to the accumulator: `u8` flags into `u64` counts)
//! and on store (the accumulator to the output type), with Rust closures for the host. The `_user` scans
//! ([`Workspace::inclusive_scan_user_into`](crate::Workspace::inclusive_scan_user_into),
//! [`inclusive_scan_user`](crate::inclusive_scan_user), …) take it on both engines; the types are
//! [`DeviceType`]s: the element types, or your `#[repr(C)]` structs with their CUDA declaration. Items
//! may have 1, 2, 4, 8 or 16 bytes (the larger of input and output at most 8 times the smaller),
//! accumulators 1 to 32 bytes (a `#[repr(C)]` struct of several fields: a Welford accumulator, an affine
//! map over `f64`); anything else is [`Error::UnsupportedSize`](crate::Error::UnsupportedSize) before any
//! compile. [`linear_recurrence`] is a ready-made one: the recurrence `h[t] = a[t]·h[t-1] + b[t]` over
//! [`Affine`] steps of `f32` or `f64`. The keyed primitives take a [`UserScanOp`] too, on the classic run agent:
//! [`Workspace::reduce_by_key_user_into`](crate::Workspace::reduce_by_key_user_into) and the scans by key
//! ([`Workspace::inclusive_scan_by_key_user_into`](crate::Workspace::inclusive_scan_by_key_user_into), …),
//! with keys of the element types, values of 1, 2, 4 or 8 bytes, results of the values' size and
//! accumulators of 1, 2, 4 or 8 bytes.
//!
//! [`UserEq`] takes an expression (or function body) over `a` and `b`, two *adjacent* items (`a` the
//! earlier), true when `b` continues `a`'s run, and a Rust closure that says the same on the host. It is
//! asked about each adjacent pair once, so it need not be transitive. Keys are any [`DeviceType`] of 1, 2, 4
//! or 8 bytes — your `#[repr(C)]` structs included, not only the element types. It drives unique
//! ([`Workspace::unique_by_into`](crate::Workspace::unique_by_into), in place and one-shot, on both engines),
//! the run encodings ([`Workspace::run_length_encode_by_into`](crate::Workspace::run_length_encode_by_into),
//! …), unique_by_key ([`Workspace::unique_by_key_by_into`](crate::Workspace::unique_by_key_by_into)) and, with
//! a [`UserScanOp`], reduce_by_key and the scans by key
//! ([`Workspace::reduce_by_key_user_by_into`](crate::Workspace::reduce_by_key_user_by_into),
//! [`Workspace::inclusive_scan_by_key_user_by_into`](crate::Workspace::inclusive_scan_by_key_user_by_into), …);
//! the run-based ones always on the classic run agent (not its register-tile variants nor the persistent
//! engine). The keyed primitives with a built-in [`ScanOp`](crate::ScanOp) take no user equality yet:
//! write the operator as a [`UserScanOp`] (`a + b`, identity `0`) and use the `_user_by` forms.
//!
//! [`UserPred`] takes a CUDA C++ expression (or function body) over the item `x`, and a Rust closure that
//! says the same on the host. The selection primitives take it wherever they take a [`Pred`](crate::Pred)
//! (both implement [`Predicate`](crate::Predicate)): `select_if` and its in-place and `_into` forms,
//! `count_if`, `mask_if`, the partitions and the three-way partition, on the classic and the persistent
//! engine. [`host`](crate::host) runs the closure.
//!
//! [`UserPred2`] takes a CUDA C++ expression (or body) over a row of two columns, `a` and `b`, of any
//! [`DeviceType`]s of 1, 2, 4 or 8 bytes: what decides a [table filter](crate::table) by two columns
//! ([`FilterBy::pred2`](crate::table::FilterBy::pred2)), which moves the kept rows of other columns,
//! writes their indices or only counts them. The table filter's kernel is itself compiled here, for each
//! column signature, whatever decides it (a mask and a built-in `Pred` too).
//!
//! # How it works
//! NVRTC, the CUDA run-time compiler, compiles a short program: the user's code as a functor, then one of
//! the crate's entry headers (`cuda/rtc/`), which instantiate the very agents that nvcc builds for
//! [`Pred`](crate::Pred), with the user's functor where the predicate interpreter was. The engine's
//! headers are embedded in the crate, so there is one source of truth: the same tiles, tuning, look-back
//! and launch parameters, planned and launched by the same host code. The result is a cubin for the GPU's
//! own architecture (not PTX: an NVRTC newer than the driver then still produces code the driver loads).
//!
//! # Caches
//! A compile costs about a second per kernel family. Each cubin is kept in memory for the process and on
//! disk for the next one, keyed by the program, the options and architecture, NVRTC's version and this
//! crate's version and headers. The disk cache is in `LOOKBACK_CACHE_DIR`, else `$XDG_CACHE_HOME/lookback`,
//! else `$HOME/.cache/lookback`; `LOOKBACK_CACHE_DIR=off` turns it off. [`UserPred::compile`] compiles
//! ahead of the first call and reports where the cubin came from and how long that took.
//!
//! `LOOKBACK_NVRTC_FLAGS` adds NVRTC options, split on whitespace, to every compile (for experiments, as
//! `LOOKBACK_NVCC_FLAGS` is for the built-in kernels: `-D` switches that select a variant of the embedded
//! headers, timed against the built-in kernels without rebuilding them). They are part of the cache key.
//!
//! # Finding NVRTC
//! `LOOKBACK_NVRTC` (a library file), else `libnvrtc.so.13` / `libnvrtc.so` on the loader's path
//! (`LD_LIBRARY_PATH`), else under `CUDA_HOME`, `CUDA_PATH` or `/usr/local/cuda`. Without it, calls with user
//! code return [`Error::NvrtcNotFound`](crate::Error::NvrtcNotFound), which says how to install it; nothing
//! else needs it. Code over f16/bf16 also needs the CUDA headers (`cuda_fp16.h`): `LOOKBACK_CUDA_INCLUDE`,
//! else the toolkit's `include` folder.
//!
//! # What user code may do
//! See [`UserPred`]'s, [`UserScanOp`]'s and [`UserEq`]'s safety sections: pure functions of their arguments, which
//! return, without block- or warp-wide operations. It may call CUDA's device math functions (`sqrtf`, `__popc`, …) and define
//! constants; it sees the crate's headers (namespace `lookback`) but should not rely on them.
use crate::error::Result;
use crate::kernels::{DType, Kernel};
use cudarc::driver::CudaContext;
use std::sync::Arc;

mod affine;
mod cache;
mod code;
mod compile;
mod device_type;
mod eq;
mod headers;
mod memo;
mod nvrtc;
mod pred;
mod pred2;
mod scan_op;
mod table;

pub use affine::{Affine, RecurrenceFloat, linear_recurrence};
pub use cache::CacheHit;
pub use compile::CompileReport;
pub use device_type::DeviceType;
pub use eq::UserEq;
pub use nvrtc::nvrtc_available;
pub use pred::UserPred;
pub use pred2::UserPred2;
pub use scan_op::UserScanOp;

pub(crate) use cache::cubin;
pub(crate) use code::UserCode;
pub(crate) use eq::{EqCode, check_value_size, runs_kernel, unique_kernels};
pub(crate) use nvrtc::INSTALL_HINT as NVRTC_HINT;
pub(crate) use table::{Decision, TableSignature, table_for_arch, table_kernel};

/// The kernels of a selection family compiled for user code (`cuda/rtc/select.cuh`), by the role the
/// planner gives a launch: the classic agent, the persistent compaction and the persistent partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SelectKernels {
    pub classic: Kernel,
    pub pipe_select: Kernel,
    pub pipe_partition: Kernel,
}

/// The selection family for `code` on the GPU of `ctx`, and how it was obtained.
pub(crate) fn select_kernels(ctx: &Arc<CudaContext>, code: &UserCode) -> Result<(SelectKernels, CompileReport)> {
    let arch = compile::arch(ctx)?;
    let compiled = code
        .memo
        .get_or(memo::Family::Select, &arch, || compile::compile_for(&arch, &select_program(code), code.half()))?;
    let kernel = |name| Kernel::runtime(name, compiled.image);
    let kernels = SelectKernels {
        classic: kernel("lookback_rtc_select"),
        pipe_select: kernel("lookback_rtc_pipe_select"),
        pipe_partition: kernel("lookback_rtc_pipe_partition"),
    };
    Ok((kernels, compiled.report))
}

/// The program of the selection family for `code`.
fn select_program(code: &UserCode) -> String {
    format!(
        "// lookback: the selection family over {dtype}, for a user predicate\n#include \"core/types.cuh\"\n\
         {functor}#define LOOKBACK_RTC_ITEM {ty}\n#define LOOKBACK_RTC_PRED lookback_user_pred\n\
         #include \"rtc/select.cuh\"\n",
        dtype = code.dtype.name(),
        functor = code.functor("lookback_user_pred", compile::USER_FILE),
        ty = code.dtype.c_type(),
    )
}

/// The selection family for `code`, compiled for architecture `arch` (`sm_90`) without a GPU.
pub(crate) fn select_for_arch(code: &UserCode, arch: &str) -> Result<CompileReport> {
    Ok(compile::compile_for(arch, &select_program(code), code.half())?.report)
}
/// The scan kernels compiled for a user operator (`cuda/rtc/scan.cuh`), by engine.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScanKernels {
    /// The classic agent.
    pub classic: Kernel,
    /// The persistent engine's scan (sm_90+).
    pub persistent: Kernel,
}

/// The scan kernels for `code` on the GPU of `ctx`, and how they were obtained.
pub(crate) fn scan_kernels(ctx: &Arc<CudaContext>, code: &scan_op::ScanCode) -> Result<(ScanKernels, CompileReport)> {
    code.check_sizes()?;
    let arch = compile::arch(ctx)?;
    let compiled = code.memo.get_or(memo::Family::Scan, &arch, || {
        compile::compile_for(&arch, &code.program(), code.half()).map_err(|e| code.map_error(e))
    })?;
    let kernels = ScanKernels {
        classic: Kernel::runtime("lookback_rtc_scan", compiled.image),
        persistent: Kernel::runtime("lookback_rtc_pipe_scan", compiled.image),
    };
    Ok((kernels, compiled.report))
}

/// The scan kernels for `code`, compiled for architecture `arch` (`sm_90`) without a GPU.
pub(crate) fn scan_for_arch(code: &scan_op::ScanCode, arch: &str) -> Result<CompileReport> {
    code.check_sizes()?;
    Ok(compile::compile_for(arch, &code.program(), code.half()).map_err(|e| code.map_error(e))?.report)
}

/// The keyed kernel (`cuda/rtc/by_key.cuh`: reduce_by_key and the scans by key) for `code` and keys of
/// `key_bytes`, compared by the user equality `eq` if there is one, on the GPU of `ctx`, and how it was
/// obtained.
pub(crate) fn by_key_kernel(
    ctx: &Arc<CudaContext>,
    code: &scan_op::ScanCode,
    key_bytes: usize,
    eq: Option<&EqCode>,
) -> Result<(Kernel, CompileReport)> {
    code.check_by_key_sizes()?;
    let arch = compile::arch(ctx)?;
    let compile = || {
        let program = code.by_key_program(key_bytes, eq);
        let half = code.half() || eq.is_some_and(EqCode::half);
        compile::compile_for(&arch, &program, half).map_err(|e| by_key_error(code, eq, e))
    };
    // The operator's memo knows its programs without an equality; one with a user equality is looked up.
    let compiled = match eq {
        None => code.memo.get_or(memo::Family::ByKey(key_bytes), &arch, compile)?,
        Some(_) => compile()?,
    };
    Ok((Kernel::runtime("lookback_rtc_by_key", compiled.image), compiled.report))
}

/// The keyed kernel for `code` and keys of `key_bytes` (compared by `eq` if there is one), compiled for
/// architecture `arch` (`sm_90`) without a GPU.
pub(crate) fn by_key_for_arch(
    code: &scan_op::ScanCode,
    key_bytes: usize,
    eq: Option<&EqCode>,
    arch: &str,
) -> Result<CompileReport> {
    code.check_by_key_sizes()?;
    let program = code.by_key_program(key_bytes, eq);
    let half = code.half() || eq.is_some_and(EqCode::half);
    Ok(compile::compile_for(arch, &program, half).map_err(|e| by_key_error(code, eq, e))?.report)
}

/// A keyed kernel's compile error, a layout mismatch named for whichever type it is about.
fn by_key_error(code: &scan_op::ScanCode, eq: Option<&EqCode>, e: crate::Error) -> crate::Error {
    match (code.map_error(e), eq) {
        (e @ crate::Error::Compile { .. }, Some(eq)) => eq.map_error(e),
        (e, _) => e,
    }
}

/// `Ok` for an architecture named like `sm_90`.
pub(crate) fn check_arch(arch: &str) -> Result<()> {
    let digits = arch.strip_prefix("sm_").unwrap_or("");
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(crate::error::Error::InvalidSource { reason: "the architecture must be named like sm_90" });
    }
    Ok(())
}

/// The three-way partition's kernel when either predicate (or both) is user code (`None`: that part is
/// a built-in `Pred`, whose program the launch carries).
pub(crate) fn partition3_kernel(
    ctx: &Arc<CudaContext>,
    dtype: DType,
    first: Option<&UserCode>,
    second: Option<&UserCode>,
) -> Result<Kernel> {
    let compiled = compile::compile(ctx, &partition3_program(dtype, first, second), half(dtype))?;
    Ok(Kernel::runtime("lookback_rtc_partition3", compiled.image))
}

/// The three-way partition for these predicates, compiled for architecture `arch` without a GPU.
pub(crate) fn partition3_for_arch(
    dtype: DType,
    first: Option<&UserCode>,
    second: Option<&UserCode>,
    arch: &str,
) -> Result<CompileReport> {
    Ok(compile::compile_for(arch, &partition3_program(dtype, first, second), half(dtype))?.report)
}

/// Whether programs over `dtype` need the CUDA headers of the half types.
pub(crate) fn half(dtype: DType) -> bool {
    matches!(dtype, DType::F16 | DType::Bf16)
}

/// The program of the three-way partition: each part's user functor, or the built-in program policy.
fn partition3_program(dtype: DType, first: Option<&UserCode>, second: Option<&UserCode>) -> String {
    let part = |code: Option<&UserCode>, name: &str, file: &str| match code {
        Some(c) => (c.functor(name, file), format!("lookback::FunctorPredicate<{name}>")),
        None => (String::new(), "lookback::ProgramPredicate".to_string()),
    };
    let (first_fn, first_policy) = part(first, "lookback_user_first", compile::USER_FILE);
    let (second_fn, second_policy) = part(second, "lookback_user_second", "user-code-second");
    format!(
        "// lookback: the three-way partition over {dtype}, for user predicates\n#include \"core/types.cuh\"\n\
         #include \"core/predicate.cuh\"\n{first_fn}{second_fn}#define LOOKBACK_RTC_ITEM {ty}\n\
         #define LOOKBACK_RTC_FIRST {first_policy}\n#define LOOKBACK_RTC_SECOND {second_policy}\n\
         #include \"rtc/partition3.cuh\"\n",
        dtype = dtype.name(),
        ty = dtype.c_type(),
    )
}
