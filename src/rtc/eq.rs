//! [`UserEq`]: a key equality in the user's CUDA C++, with a Rust closure for the host, and the programs
//! it is compiled into (`cuda/rtc/unique.cuh`, `cuda/rtc/runs.cuh`, and `cuda/rtc/by_key.cuh` beside a
//! user operator).
use super::device_type::{DeviceType, TypeInfo, declare_types, layout_error};
use super::scan_op::Part;
use super::{CompileReport, SelectKernels, compile};
use crate::error::{Error, Result};
use crate::kernels::Kernel;
use cudarc::driver::{CudaContext, CudaStream};
use std::fmt;
use std::sync::Arc;

/// Whether two *adjacent* items belong to the same run, written as CUDA C++ for the GPU and as a Rust
/// closure for the host: what [`Workspace::unique_by_into`](crate::Workspace::unique_by_into), the
/// encodings ([`Workspace::run_length_encode_by_into`](crate::Workspace::run_length_encode_by_into), …),
/// [`Workspace::unique_by_key_by_into`](crate::Workspace::unique_by_key_by_into) and, with a
/// [`UserScanOp`](super::UserScanOp), [`Workspace::reduce_by_key_user_by_into`](crate::Workspace::reduce_by_key_user_by_into)
/// and the scans by key ([`Workspace::inclusive_scan_by_key_user_by_into`](crate::Workspace::inclusive_scan_by_key_user_by_into),
/// [`Workspace::exclusive_scan_by_key_user_by_into`](crate::Workspace::exclusive_scan_by_key_user_by_into))
/// cut runs with, in place of `==`. The keyed primitives with a built-in [`ScanOp`](crate::ScanOp) take
/// none: write the operator as a `UserScanOp` for that.
///
/// The code is an expression (or a function body) over `a` and `b` of the key type `K`, `a` the earlier
/// item of the two, and is `true` when `b` continues `a`'s run. It is asked about each adjacent pair
/// once, and only about adjacent pairs, so it need not be an equivalence: it need not be transitive (a
/// tolerance such as `fabsf(a - b) < 0.5f` chains a slowly drifting sequence into one run, exactly as the
/// sequential loop of [`host::unique_by`](crate::host::unique_by) does), nor symmetric, nor reflexive.
/// The output keeps each run's *first* item.
///
/// `K` is a [`DeviceType`] of 1, 2, 4 or 8 bytes: an element type, or your `#[repr(C)]` struct with its
/// CUDA declaration, which is the point: keys need not be [`Element`](crate::Element)s. Items travel as
/// the bits of their size and are turned back into `K` for the comparison. Other sizes are
/// [`Error::UnsupportedSize`] at construction, before anything is compiled.
///
/// The code is compiled at run time by NVRTC, once per GPU architecture and primitive family, into the
/// crate's own agents, and cached like [`UserPred`](super::UserPred)'s ([module docs](crate::rtc)):
/// unique on the classic selection agent and the persistent engine's compaction (the
/// [`Engine`](crate::Engine) setting applies as for the built-in unique); the encodings, unique_by_key and
/// the keyed primitives with a user operator on the classic run agent only (`cuda/classic/runs.cuh`: the
/// register-tile kernels and the persistent engine are not compiled for user equalities, whatever the
/// engine setting). The first call compiles; [`UserEq::compile`] and its siblings do so ahead of time,
/// and must be called before capturing such calls into a CUDA graph.
///
/// # Safety of the constructors
/// As [`UserPred`'s](super::UserPred#safety-of-the-constructors): the code runs inside the crate's
/// kernels with nothing between it and the GPU. The caller promises that it is a pure function of `a` and
/// `b` (it reads no memory but constants of its own and writes none), that it returns for every pair (no
/// endless loop, no `__trap`, no `asm`), that it calls no block- or warp-wide operation (`__syncthreads`,
/// `__shfl_sync`, atomics: each thread runs it on its own pairs), and that the closure agrees with it for
/// every pair that matters if host and GPU results are compared. Breaking the first three can corrupt
/// memory or hang the GPU; breaking the last gives different answers on host and GPU. An equality that
/// is not transitive is not unsafe: runs are then exactly what the adjacent comparisons say. The kernels
/// also ask it about the padding of a partial tile (keys whose bits are all zero) and ignore the answers,
/// so it must return for those too (an integer division by a key's field, say, must not assume it is
/// nonzero; on the GPU such a division does not trap, it gives an unspecified value).
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::rtc::UserEq;
/// // ASCII letters compared without case (bit 5 ignored: a sketch that is exact for letters).
/// // SAFETY: a pure expression of a and b.
/// let caseless = unsafe {
///     UserEq::new("(a | 0x20) == (b | 0x20)", |a: u8, b: u8| a | 0x20 == b | 0x20)?
/// };
/// assert_eq!(lookback::host::unique_by(b"aAbBBa", &caseless), b"aba");
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
/// let input = stream.clone_htod(b"aAbBBa")?;
/// assert_eq!(lookback::unique_by(&input, &caseless)?.to_vec()?, b"aba");
/// # Ok(()) }
/// ```
pub struct UserEq<K> {
    pub(crate) code: EqCode,
    host: Arc<dyn Fn(K, K) -> bool + Send + Sync>,
}

/// The CUDA side of a [`UserEq`]: its key type and code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EqCode {
    pub key: TypeInfo,
    equal: Part,
}

/// The file NVRTC gives the equality's lines in its messages (a `user-code` name, so that a compile error
/// names the user's line, distinct from an operator's in the same program).
const EQ_FILE: &str = "user-code-eq";

/// Key sizes the agents carry: keys travel as the bits of one unsigned type.
const KEY_SIZES: [usize; 4] = [1, 2, 4, 8];

impl EqCode {
    /// Whether the program needs the CUDA headers of the half types.
    pub(crate) fn half(&self) -> bool {
        self.key.half()
    }

    /// The struct `lookback_user_eq`: the key type `K` and `static bool equal(K a, K b)`.
    pub(crate) fn functor(&self) -> String {
        format!(
            "struct lookback_user_eq {{\n    using K = {};\n{}}};\n",
            self.key.name,
            self.equal.function("bool", "equal", "const K a, const K b", EQ_FILE)
        )
    }

    /// `head`, the key type, the equality, then `tail` (the entry header).
    fn program(&self, head: String, tail: &str) -> String {
        head + "#include \"core/types.cuh\"\n" + &declare_types(&[&self.key]) + &self.functor() + tail
    }

    /// The program of the unique family (`cuda/rtc/unique.cuh`).
    pub(crate) fn unique_program(&self) -> String {
        let head = format!("// lookback: unique of {} by a user equality\n", self.key.name);
        self.program(head, "#define LOOKBACK_RTC_EQ lookback_user_eq\n#include \"rtc/unique.cuh\"\n")
    }

    /// The program of the run agent (`cuda/rtc/runs.cuh`) for values of `value_bytes` (0: the encodings):
    /// one module per equality and value size.
    pub(crate) fn runs_program(&self, value_bytes: usize) -> String {
        let what = match value_bytes {
            0 => "the run encodings".to_string(),
            v => format!("unique_by_key with {v}-byte values"),
        };
        let head = format!("// lookback: {what} of {} keys by a user equality\n", self.key.name);
        let tail = format!(
            "#define LOOKBACK_RTC_EQ lookback_user_eq\n#define LOOKBACK_RTC_VALUE_BYTES {value_bytes}\n\
             #include \"rtc/runs.cuh\"\n"
        );
        self.program(head, &tail)
    }

    /// A compile error turned into [`Error::LayoutMismatch`] where the key type's layout differs.
    pub(crate) fn map_error(&self, e: Error) -> Error {
        layout_error(e, &[&self.key])
    }
}

impl<K: DeviceType> UserEq<K> {
    /// An equality from a CUDA C++ *expression* over `a` and `b` (`a.x == b.x`, `fabsf(a - b) < 0.5f`),
    /// `a` the earlier of two adjacent items, and the same test in Rust for the host.
    ///
    /// # Safety
    /// See [the type's docs](UserEq#safety-of-the-constructors): the code must be a pure function of `a`
    /// and `b`.
    ///
    /// # Errors
    /// [`Error::UnsupportedSize`] for a key type of other than 1, 2, 4 or 8 bytes;
    /// [`Error::InvalidSource`] for an empty expression or one holding a NUL byte. Compile errors come at
    /// the first use (or [`UserEq::compile`]).
    pub unsafe fn new(cuda_expr: &str, host: impl Fn(K, K) -> bool + Send + Sync + 'static) -> Result<Self> {
        Self::from_parts(Part::expression(cuda_expr), host)
    }

    /// An equality from the *body* of a CUDA C++ function `bool f(K a, K b)`: statements ending in
    /// `return`.
    ///
    /// # Safety
    /// As [`UserEq::new`].
    ///
    /// # Errors
    /// As [`UserEq::new`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// use lookback::rtc::UserEq;
    /// // Timestamps (seconds) within the same minute.
    /// // SAFETY: pure arithmetic on a and b.
    /// let same_minute = unsafe {
    ///     UserEq::from_body("const uint64_t m = 60;\nreturn a / m == b / m;", |a: u64, b: u64| a / 60 == b / 60)?
    /// };
    /// let (minutes, counts) = lookback::host::run_length_encode_by(&[0u64, 59, 60, 61, 200], &same_minute);
    /// assert_eq!((minutes, counts), (vec![0, 60, 200], vec![2, 2, 1]));
    /// # Ok(()) }
    /// ```
    pub unsafe fn from_body(cuda_body: &str, host: impl Fn(K, K) -> bool + Send + Sync + 'static) -> Result<Self> {
        Self::from_parts(Part::body(cuda_body), host)
    }

    fn from_parts(equal: Result<Part>, host: impl Fn(K, K) -> bool + Send + Sync + 'static) -> Result<Self> {
        let key = TypeInfo::of::<K>();
        if !KEY_SIZES.contains(&key.size) {
            return Err(Error::UnsupportedSize {
                role: "key",
                type_name: key.name,
                bytes: key.size,
                allowed: "1, 2, 4 or 8 bytes for a key compared by a user equality",
            });
        }
        Ok(UserEq { code: EqCode { key, equal: equal? }, host: Arc::new(host) })
    }

    /// Whether `b`, the item after `a`, continues `a`'s run, by the closure (what [`host`](crate::host)
    /// uses).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// // SAFETY: a pure expression.
    /// let near = unsafe { lookback::rtc::UserEq::new("fabsf(a - b) < 0.5f", |a: f32, b: f32| (a - b).abs() < 0.5)? };
    /// assert!(near.same_run(1.0, 1.25) && !near.same_run(1.0, 2.0));
    /// # Ok(()) }
    /// ```
    pub fn same_run(&self, a: K, b: K) -> bool {
        (self.host)(a, b)
    }

    /// The CUDA C++ the code becomes (what NVRTC compiles, besides the crate's headers and the key type's
    /// declaration).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// // SAFETY: a pure expression.
    /// let eq = unsafe { lookback::rtc::UserEq::new("a == b", |a: i16, b: i16| a == b)? };
    /// assert!(eq.cuda_function().contains("static __device__ __forceinline__ bool equal(const K a, const K b)"));
    /// # Ok(()) }
    /// ```
    pub fn cuda_function(&self) -> String {
        self.code.functor()
    }

    /// Compiles the unique kernels (classic and persistent: [`Workspace::unique_by_into`](crate::Workspace::unique_by_into))
    /// for the GPU of `stream` now, rather than at the first call (or finds them in the caches), loads them
    /// into its context, and says how.
    ///
    /// # Errors
    /// [`Error::Compile`] for code that does not compile; [`Error::LayoutMismatch`] for a key type whose
    /// CUDA declaration differs from the Rust type in size or alignment; [`Error::NvrtcNotFound`] without
    /// NVRTC; [`Error::CudaHeadersNotFound`] for f16/bf16 keys without the CUDA headers; [`Error::Driver`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::rtc::{CacheHit, UserEq};
    /// // SAFETY: a pure expression.
    /// let eq = unsafe { UserEq::new("(a >> 4) == (b >> 4)", |a: u32, b: u32| a >> 4 == b >> 4)? };
    /// eq.compile(&stream)?;
    /// assert_eq!(eq.compile(&stream)?.hit, CacheHit::Memory);
    /// # Ok(()) }
    /// ```
    pub fn compile(&self, stream: &CudaStream) -> Result<CompileReport> {
        let (kernels, report) = unique_kernels(stream.context(), &self.code)?;
        // Loaded too, so that a call captured into a CUDA graph later loads no module inside the capture.
        for k in [kernels.classic, kernels.pipe_select] {
            crate::kernels::function(stream.context(), k)?;
        }
        Ok(report)
    }

    /// Compiles the kernel of the run encodings ([`Workspace::run_length_encode_by_into`](crate::Workspace::run_length_encode_by_into),
    /// [`run_end_encode_by_into`](crate::Workspace::run_end_encode_by_into),
    /// [`non_trivial_runs_by_into`](crate::Workspace::non_trivial_runs_by_into)) for the GPU of `stream`
    /// now, and loads it.
    ///
    /// # Errors
    /// As [`UserEq::compile`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// // SAFETY: a pure expression.
    /// let eq = unsafe { lookback::rtc::UserEq::new("a / 8 == b / 8", |a: u16, b: u16| a / 8 == b / 8)? };
    /// assert!(eq.compile_encodings(&stream)?.cubin_bytes > 0);
    /// # Ok(()) }
    /// ```
    pub fn compile_encodings(&self, stream: &CudaStream) -> Result<CompileReport> {
        self.compile_runs(stream, 0)
    }

    /// Compiles the kernel of [`Workspace::unique_by_key_by_into`](crate::Workspace::unique_by_key_by_into)
    /// for values of type `V` (one kernel per value size) for the GPU of `stream` now, and loads it.
    ///
    /// # Errors
    /// [`Error::UnsupportedSize`] for values of other than 1, 2, 4 or 8 bytes; otherwise as
    /// [`UserEq::compile`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// // SAFETY: a pure expression.
    /// let eq = unsafe { lookback::rtc::UserEq::new("a / 8 == b / 8", |a: u16, b: u16| a / 8 == b / 8)? };
    /// assert!(eq.compile_unique_by_key::<f64>(&stream)?.cubin_bytes > 0);
    /// # Ok(()) }
    /// ```
    pub fn compile_unique_by_key<V: DeviceType>(&self, stream: &CudaStream) -> Result<CompileReport> {
        check_value_size::<V>()?;
        self.compile_runs(stream, size_of::<V>())
    }

    fn compile_runs(&self, stream: &CudaStream, value_bytes: usize) -> Result<CompileReport> {
        let (kernel, report) = runs_kernel(stream.context(), &self.code, value_bytes)?;
        crate::kernels::function(stream.context(), kernel)?;
        Ok(report)
    }

    /// Compiles the unique kernels for GPU architecture `arch` (`"sm_90"`, `"sm_80"`, …) without a GPU,
    /// into the caches (see [`UserPred::compile_for_arch`](super::UserPred::compile_for_arch)). Also checks
    /// that the code compiles and that the key type's layouts agree.
    ///
    /// # Errors
    /// As [`UserEq::compile`], but no driver error; [`Error::InvalidSource`] for an architecture not named
    /// like `sm_90`.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::rtc::UserEq;
    /// // SAFETY: a pure expression.
    /// let eq = unsafe { UserEq::new("a / 10 == b / 10", |a: i32, b: i32| a / 10 == b / 10)? };
    /// assert_eq!(eq.compile_for_arch("sm_80")?.arch, "sm_80");
    /// // Code that does not compile says where.
    /// // SAFETY: as above (it never runs).
    /// let bad = unsafe { UserEq::new("a == nope", |_: i32, _: i32| true)? };
    /// match bad.compile_for_arch("sm_80") {
    ///     Err(lookback::Error::Compile { line, .. }) => assert_eq!(line, Some((1, "a == nope".to_string()))),
    ///     other => panic!("{other:?}"),
    /// }
    /// # Ok(()) }
    /// ```
    pub fn compile_for_arch(&self, arch: &str) -> Result<CompileReport> {
        super::check_arch(arch)?;
        let program = self.code.unique_program();
        Ok(compile::compile_for(arch, &program, self.code.half()).map_err(|e| self.code.map_error(e))?.report)
    }

    /// The run agent's kernel for values of `value_bytes` (0: the encodings), compiled for `arch` without
    /// a GPU (tests and build machines: `lookback::__private::eq_runs_for_arch`).
    pub(crate) fn runs_for_arch(&self, value_bytes: usize, arch: &str) -> Result<CompileReport> {
        super::check_arch(arch)?;
        let program = self.code.runs_program(value_bytes);
        Ok(compile::compile_for(arch, &program, self.code.half()).map_err(|e| self.code.map_error(e))?.report)
    }
}

impl<K> Clone for UserEq<K> {
    fn clone(&self) -> Self {
        UserEq { code: self.code.clone(), host: self.host.clone() }
    }
}

impl<K> fmt::Debug for UserEq<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserEq")
            .field("key", &self.code.key.name)
            .field("cuda", &self.code.equal)
            .finish_non_exhaustive()
    }
}

/// The typed error for values the run agent does not carry beside keys compared by a user equality.
pub(crate) fn check_value_size<V: DeviceType>() -> Result<()> {
    if KEY_SIZES.contains(&size_of::<V>()) {
        return Ok(());
    }
    Err(Error::UnsupportedSize {
        role: "value",
        type_name: V::CUDA_NAME,
        bytes: size_of::<V>(),
        allowed: "1, 2, 4 or 8 bytes for the values of unique_by_key",
    })
}

/// The unique family for `code` on the GPU of `ctx`: the classic agent and the persistent compaction
/// (`pipe_partition` is the compaction too: unique never partitions, so the planner never picks it).
pub(crate) fn unique_kernels(ctx: &Arc<CudaContext>, code: &EqCode) -> Result<(SelectKernels, CompileReport)> {
    let compiled = compile::compile(ctx, &code.unique_program(), code.half()).map_err(|e| code.map_error(e))?;
    let pipe = Kernel::runtime("lookback_rtc_pipe_unique", compiled.image);
    let kernels = SelectKernels {
        classic: Kernel::runtime("lookback_rtc_unique", compiled.image),
        pipe_select: pipe,
        pipe_partition: pipe,
    };
    Ok((kernels, compiled.report))
}

/// The run agent for `code` and values of `value_bytes` (0: the encodings) on the GPU of `ctx`.
pub(crate) fn runs_kernel(
    ctx: &Arc<CudaContext>,
    code: &EqCode,
    value_bytes: usize,
) -> Result<(Kernel, CompileReport)> {
    let compiled =
        compile::compile(ctx, &code.runs_program(value_bytes), code.half()).map_err(|e| code.map_error(e))?;
    Ok((Kernel::runtime("lookback_rtc_runs", compiled.image), compiled.report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_name_their_family_and_key() {
        // SAFETY: never runs.
        let eq = unsafe { UserEq::new("a == b", |a: u16, b: u16| a == b) }.unwrap();
        let unique = eq.code.unique_program();
        assert!(unique.contains("rtc/unique.cuh") && unique.contains("using K = uint16_t;"));
        assert!(unique.contains("#line 1 \"user-code-eq\"\na == b\n"));
        let encodings = eq.code.runs_program(0);
        let by_key = eq.code.runs_program(4);
        assert!(encodings.contains("LOOKBACK_RTC_VALUE_BYTES 0") && by_key.contains("LOOKBACK_RTC_VALUE_BYTES 4"));
        assert_ne!(encodings, by_key);
    }
}
