//! [`UserPred2`]: a predicate over two columns (`a[i] > b[i]`) in the user's CUDA C++, with a Rust closure
//! for the host.
use super::device_type::{DeviceType, TypeInfo};
use super::device_type::{declare_types, layout_error};
use super::scan_op::Part;
use super::{CompileReport, compile};
use crate::error::{Error, Result};
use std::fmt;
use std::sync::Arc;

/// A predicate over a row of two columns, written as CUDA C++ for the GPU and as a Rust closure for the
/// host: what decides a [table filter](crate::table) by two columns
/// ([`FilterBy::pred2`](crate::table::FilterBy::pred2)), or selects rows, their indices or just their
/// count by comparing two columns.
///
/// The code sees `a`, row `i` of the first column, and `b`, row `i` of the second, of their CUDA types
/// (`float`, `int64_t`, … or your own [`DeviceType`] structs) of 1, 2, 4 or 8 bytes each. It is compiled
/// at run time by NVRTC into the table filter's kernel (`cuda/classic/table.cuh`: one decision, one
/// look-back per tile), once per GPU architecture, column signature and code, and cached like
/// [`UserPred`](super::UserPred)'s ([module docs](crate::rtc)). [`host::filter_rows`](crate::host::filter_rows)
/// and [`host::count_if2`](crate::host::count_if2) run the closure.
///
/// # Safety of the constructors
/// As [`UserPred`'s](super::UserPred#safety-of-the-constructors): the code runs inside the crate's kernels
/// with nothing between it and the GPU, so the caller promises that it is a pure function of `a` and `b`
/// (no memory access but its own constants, no writes), that it returns for every input (no endless
/// loop, no `__trap`, no `asm`), that it calls no block- or warp-wide operation (each thread tests its
/// own rows), and that the closure says the same for every row that matters if host and GPU results are
/// compared. Code that does not compile is not unsafe: it is an [`Error::Compile`] at the first call.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::rtc::UserPred2;
/// // SAFETY: a pure expression of a and b.
/// let above = unsafe { UserPred2::new("a > b", |a: f32, b: f64| a as f64 > b)? };
/// assert!(above.holds(2.0, 1.5));
/// let a = [1.0f32, 5.0, 3.0];
/// let b = [2.0f64, 4.0, 3.0];
/// assert_eq!(lookback::host::count_if2(&a, &b, &above)?, 1);
/// # Ok(()) }
/// ```
pub struct UserPred2<A, B> {
    pub(crate) code: Code2,
    host: Arc<dyn Fn(A, B) -> bool + Send + Sync>,
}

/// The CUDA side of a [`UserPred2`]: the two types and the code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Code2 {
    pub a: TypeInfo,
    pub b: TypeInfo,
    code: Part,
}

impl Code2 {
    /// The column types' declarations and the functor `name` whose call operator runs the code.
    pub(crate) fn functor(&self, name: &str) -> String {
        let mut p = declare_types(&[&self.a, &self.b]);
        p += &format!("struct {name} {{\n");
        let params = format!("const {} a, const {} b", self.a.name, self.b.name);
        p += &self.code.function("bool", "test", &params, compile::USER_FILE);
        p += &format!(
            "    __device__ __forceinline__ bool operator()(const {} a, const {} b) const {{ return test(a, b); }}\n}};\n",
            self.a.name, self.b.name
        );
        p
    }

    /// Whether the program needs the CUDA headers of the half types.
    pub(crate) fn half(&self) -> bool {
        self.a.half() || self.b.half()
    }

    /// A compile error turned into [`Error::LayoutMismatch`] where a column type's layout differs.
    pub(crate) fn map_error(&self, e: Error) -> Error {
        layout_error(e, &[&self.a, &self.b])
    }
}

impl<A: DeviceType, B: DeviceType> UserPred2<A, B> {
    /// A predicate from a CUDA C++ *expression* over `a` and `b` (`a > b`, `a * 2 < b && b != 0`), and the
    /// same test in Rust for the host.
    ///
    /// # Safety
    /// See [the type's docs](UserPred2#safety-of-the-constructors): the code must be a pure function of
    /// `a` and `b`.
    ///
    /// # Errors
    /// [`Error::InvalidSource`] for an empty expression or one holding a NUL byte. Compile errors come at
    /// the first use (or [`UserPred2::compile_for_arch`]); a column type of another size than 1, 2, 4 or 8
    /// bytes is an [`Error::UnsupportedSize`] at the first use.
    pub unsafe fn new(cuda_expr: &str, host: impl Fn(A, B) -> bool + Send + Sync + 'static) -> Result<Self> {
        Ok(Self::from_parts(Part::expression(cuda_expr)?, host))
    }

    /// A predicate from the *body* of a CUDA C++ function `bool f(A a, B b)`: statements ending in `return`.
    ///
    /// # Safety
    /// As [`UserPred2::new`].
    ///
    /// # Errors
    /// As [`UserPred2::new`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// use lookback::rtc::UserPred2;
    /// // SAFETY: pure arithmetic on a and b.
    /// let close = unsafe {
    ///     UserPred2::from_body(
    ///         "const double d = (double)a - b;\nreturn d < 0.5 && d > -0.5;",
    ///         |a: i32, b: f64| (a as f64 - b).abs() < 0.5,
    ///     )?
    /// };
    /// assert!(close.holds(3, 3.25) && !close.holds(3, 4.0));
    /// # Ok(()) }
    /// ```
    pub unsafe fn from_body(cuda_body: &str, host: impl Fn(A, B) -> bool + Send + Sync + 'static) -> Result<Self> {
        Ok(Self::from_parts(Part::body(cuda_body)?, host))
    }

    fn from_parts(code: Part, host: impl Fn(A, B) -> bool + Send + Sync + 'static) -> Self {
        UserPred2 { code: Code2 { a: TypeInfo::of::<A>(), b: TypeInfo::of::<B>(), code }, host: Arc::new(host) }
    }

    /// Whether the predicate holds for the row `(a, b)`, on the host (the closure).
    pub fn holds(&self, a: A, b: B) -> bool {
        (self.host)(a, b)
    }

    /// The CUDA C++ the code becomes: the column types' checks and a functor whose call operator takes `a`
    /// and `b`.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// use lookback::rtc::UserPred2;
    /// // SAFETY: a pure expression of a and b.
    /// let p = unsafe { UserPred2::new("a < b", |a: u16, b: u32| (a as u32) < b)? };
    /// assert!(p.cuda_function().contains("bool operator()(const uint16_t a, const uint32_t b) const"));
    /// # Ok(()) }
    /// ```
    pub fn cuda_function(&self) -> String {
        self.code.functor("lookback_user_pred2")
    }

    /// Compiles the count-only table filter of this predicate (no payload columns: what
    /// [`Workspace::count_filtered_into`](crate::Workspace::count_filtered_into) runs) for GPU architecture `arch`
    /// (`"sm_90"`) without a GPU, into the caches; also checks that the code compiles. The kernels with
    /// payload columns are compiled per column signature at their first call.
    ///
    /// # Errors
    /// [`Error::Compile`] for code that does not compile, [`Error::LayoutMismatch`] for a user type whose
    /// CUDA layout differs, [`Error::UnsupportedSize`], [`Error::NvrtcNotFound`],
    /// [`Error::CudaHeadersNotFound`] (f16/bf16 without the CUDA headers), [`Error::InvalidSource`] for an
    /// architecture not named like `sm_90`.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::rtc::UserPred2;
    /// // SAFETY: a pure expression of a and b.
    /// let p = unsafe { UserPred2::new("a > b", |a: i64, b: i64| a > b)? };
    /// assert_eq!(p.compile_for_arch("sm_90")?.arch, "sm_90");
    /// # Ok(()) }
    /// ```
    pub fn compile_for_arch(&self, arch: &str) -> Result<CompileReport> {
        super::check_arch(arch)?;
        let signature = super::TableSignature { decision: super::Decision::User2(&self.code), columns: Vec::new() };
        super::table_for_arch(&signature, arch)
    }
}

impl<A, B> Clone for UserPred2<A, B> {
    fn clone(&self) -> Self {
        UserPred2 { code: self.code.clone(), host: self.host.clone() }
    }
}

impl<A, B> fmt::Debug for UserPred2<A, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserPred2").field("a", &self.code.a.name).field("b", &self.code.b.name).finish_non_exhaustive()
    }
}
