//! [`UserPred`]: a predicate in the user's CUDA C++, with a Rust closure for the host.
use super::UserCode;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::pred::predicate::{DevicePred, Predicate, sealed};
use std::fmt;
use std::sync::Arc;

/// A predicate written as CUDA C++ for the GPU and as a Rust closure for the host.
///
/// On the GPU the code is compiled at run time by NVRTC into the crate's own selection kernels (the same
/// agents, tiles and look-back as [`Pred`](crate::Pred)), once per GPU architecture and element type, and
/// cached in memory and on disk ([module docs](crate::rtc)). The first call that needs it compiles;
/// [`UserPred::compile`] does so ahead of time and reports how long it took. On the host, and in
/// [`lookback::host`](crate::host), the closure decides.
///
/// The item is `x`, of the element's CUDA type (`int32_t` for `i32`, `float` for `f32`, `__half` for
/// `f16`, …: [`DType::c_type`](crate::DType::c_type)).
///
/// # Safety of the constructors
/// They are `unsafe` because the code runs inside the crate's kernels with nothing between it and the
/// GPU: the compiler cannot check that it is memory-safe, and the kernels cannot recover from what it
/// might do. The caller promises that the code
/// - is a pure function of `x`: it reads no memory but constants of its own (no pointers cast from
///   integers, no globals written), and it writes none;
/// - returns for every `x` (no endless loop, no `__trap`, no `asm`);
/// - calls no block- or warp-wide operation (`__syncthreads`, `__shfl_sync`, atomics): each thread runs it on
///   its own items, and lanes of a warp may run it on different item counts;
/// - and agrees with the closure for every `x` that matters, if host and GPU results are compared.
///
/// Breaking the first three can corrupt memory or hang the GPU; breaking the last gives different answers
/// on host and GPU. Code that does not compile is not unsafe: it is an [`Error::Compile`] at the first
/// call, with NVRTC's log and the offending line.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::rtc::UserPred;
/// // SAFETY: a pure expression of x.
/// let third = unsafe { UserPred::new("x % 3 == 0", |x: i32| x % 3 == 0)? };
/// assert_eq!(lookback::host::select_if(&[1, 3, 4, 6, 9], &third), [3, 6, 9]);
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
/// let input = stream.clone_htod(&[1, 3, 4, 6, 9])?;
/// assert_eq!(lookback::select_if(&input, &third)?.to_vec()?, [3, 6, 9]);
/// # Ok(()) }
/// ```
pub struct UserPred<T> {
    code: UserCode,
    host: Arc<dyn Fn(T) -> bool + Send + Sync>,
}

impl<T: Element> UserPred<T> {
    /// A predicate from a CUDA C++ *expression* over `x` (`x % 3 == 0 && x > 0`), and the same test in Rust
    /// for the host.
    ///
    /// # Safety
    /// See [the type's docs](UserPred#safety-of-the-constructors): the code must be a pure function of `x`.
    ///
    /// # Errors
    /// [`Error::InvalidSource`] for an empty expression or one holding a NUL byte. Compile errors come at
    /// the first use (or [`UserPred::compile`]).
    pub unsafe fn new(cuda_expr: &str, host: impl Fn(T) -> bool + Send + Sync + 'static) -> Result<Self> {
        check_source(cuda_expr)?;
        Ok(Self::from_parts(UserCode::expression::<T>(cuda_expr), host))
    }

    /// A predicate from the *body* of a CUDA C++ function `bool f(T x)`: statements ending in `return`.
    ///
    /// # Safety
    /// As [`UserPred::new`].
    ///
    /// # Errors
    /// As [`UserPred::new`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// use lookback::rtc::UserPred;
    /// // SAFETY: pure arithmetic on x.
    /// let perfect_square = unsafe {
    ///     UserPred::from_body(
    ///         "const unsigned r = (unsigned)sqrtf((float)x);\n\
    ///          return r * r == x || (r + 1) * (r + 1) == x;",
    ///         |x: u32| { let r = (x as f32).sqrt() as u32; r * r == x || (r + 1) * (r + 1) == x },
    ///     )?
    /// };
    /// assert_eq!(lookback::host::count_if(&[0u32, 1, 2, 4, 8, 9, 16], &perfect_square), 5);
    /// # Ok(()) }
    /// ```
    pub unsafe fn from_body(cuda_body: &str, host: impl Fn(T) -> bool + Send + Sync + 'static) -> Result<Self> {
        check_source(cuda_body)?;
        Ok(Self::from_parts(UserCode::body::<T>(cuda_body), host))
    }

    fn from_parts(code: UserCode, host: impl Fn(T) -> bool + Send + Sync + 'static) -> Self {
        UserPred { code, host: Arc::new(host) }
    }

    /// The CUDA C++ function the code becomes (what NVRTC compiles, besides the crate's headers).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// use lookback::rtc::UserPred;
    /// // SAFETY: a pure expression of x.
    /// let p = unsafe { UserPred::new("x > 0.5f", |x: f32| x > 0.5)? };
    /// assert!(p.cuda_function().contains("bool operator()(const float x) const"));
    /// # Ok(()) }
    /// ```
    pub fn cuda_function(&self) -> String {
        self.code.functor("lookback_user_pred", "user-code")
    }

    /// Compiles the kernels of the selection family for the GPU of `stream` now, rather than at the first
    /// call (or finds them in the caches), loads them into its context, and says how: where they came from
    /// and how long it took. Call it before capturing calls with this predicate into a CUDA graph
    /// ([`crate::graph`]), so that nothing is compiled or loaded inside the capture.
    ///
    /// # Errors
    /// [`Error::Compile`] for code that does not compile; [`Error::NvrtcNotFound`] without NVRTC;
    /// [`Error::CudaHeadersNotFound`] for f16/bf16 without the CUDA headers; [`Error::Driver`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::rtc::{CacheHit, UserPred};
    /// // SAFETY: a pure expression of x.
    /// let p = unsafe { UserPred::new("(x & 7) == 1", |x: u64| x & 7 == 1)? };
    /// let first = p.compile(&stream)?;
    /// let again = p.compile(&stream)?;
    /// assert_eq!(again.hit, CacheHit::Memory);
    /// assert!(again.seconds <= first.seconds);
    /// # Ok(()) }
    /// ```
    pub fn compile(&self, stream: &cudarc::driver::CudaStream) -> Result<super::CompileReport> {
        let (kernels, report) = super::select_kernels(stream.context(), &self.code)?;
        // Loaded into the context too, so that a call captured into a CUDA graph later loads no module
        // inside the capture.
        for k in [kernels.classic, kernels.pipe_select, kernels.pipe_partition] {
            crate::kernels::function(stream.context(), k)?;
        }
        Ok(report)
    }
}

impl<T: Element> UserPred<T> {
    /// Compiles the selection family for GPU architecture `arch` (`"sm_90"`, `"sm_80"`, …) without a GPU,
    /// into the caches: a build machine can fill a disk cache (`LOOKBACK_CACHE_DIR`) that GPU machines of
    /// that architecture then start from. Also checks that the code compiles.
    ///
    /// # Errors
    /// As [`UserPred::compile`], but no driver error: no GPU is used.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::rtc::UserPred;
    /// // SAFETY: a pure expression of x.
    /// let p = unsafe { UserPred::new("x != 0", |x: i8| x != 0)? };
    /// let report = p.compile_for_arch("sm_80")?;
    /// assert_eq!(report.arch, "sm_80");
    /// // Code that does not compile says where.
    /// // SAFETY: as above (it never runs).
    /// let bad = unsafe { UserPred::new("x >> nope", |_: i8| true)? };
    /// match bad.compile_for_arch("sm_80") {
    ///     Err(lookback::Error::Compile { line, .. }) => assert_eq!(line, Some((1, "x >> nope".to_string()))),
    ///     other => panic!("{other:?}"),
    /// }
    /// # Ok(()) }
    /// ```
    pub fn compile_for_arch(&self, arch: &str) -> Result<super::CompileReport> {
        super::check_arch(arch)?;
        super::select_for_arch(&self.code, arch)
    }

    /// The user code this predicate compiles.
    pub(crate) fn code(&self) -> &UserCode {
        &self.code
    }
}

impl<T: Element> Clone for UserPred<T> {
    fn clone(&self) -> Self {
        UserPred { code: self.code.clone(), host: self.host.clone() }
    }
}

impl<T> fmt::Debug for UserPred<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserPred").field("cuda", &self.code.user).finish_non_exhaustive()
    }
}

impl<T: Element> Predicate<T> for UserPred<T> {
    fn holds(&self, x: T) -> bool {
        (self.host)(x)
    }
}

impl<T: Element> sealed::Sealed<T> for UserPred<T> {
    fn device(&self) -> Result<DevicePred<'_>> {
        Ok(DevicePred::Code(&self.code))
    }
}

pub(super) fn check_source(code: &str) -> Result<()> {
    if code.trim().is_empty() {
        return Err(Error::InvalidSource { reason: "the code is empty" });
    }
    if code.contains('\0') {
        return Err(Error::InvalidSource { reason: "the code contains a NUL byte" });
    }
    Ok(())
}
