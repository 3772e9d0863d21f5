//! [`UserScanOp`]: a scan operator in the user's CUDA C++, with Rust closures for the host.
use super::device_type::{DeviceType, TypeInfo, declare_types, layout_error};
use super::eq::EqCode;
use super::pred::check_source;
use super::{CompileReport, compile};
use crate::error::{Error, Result};
use std::fmt;
use std::sync::Arc;

/// An associative operator, its identity and optional conversions on load and store, written as CUDA C++
/// for the GPU and as Rust closures for the host: what [`Workspace::inclusive_scan_user_into`](crate::Workspace::inclusive_scan_user_into)
/// (and the other `_user` scans) scan with.
///
/// A scan reads items of type `In`, combines values of the accumulator type `A` and writes items of type
/// `Out`:
/// `out[i] = store(load(in[0]) ⊕ … ⊕ load(in[i]))` (inclusive), or with `init ⊕` in front and item `i`
/// left out (exclusive). In CUDA C++:
/// - the combine is an expression (or a function body) over `a` and `b` of type `A`. It must be
///   associative, `(a ⊕ b) ⊕ c == a ⊕ (b ⊕ c)`, but need not commute: the engine combines in item order;
/// - the identity is an expression of type `A` with `identity ⊕ a == a ⊕ identity == a`;
/// - `load` (optional, [`UserScanOp::with_load`]) turns an item `x` of type `In` into an `A`; without it
///   `In` is `A`;
/// - `store` (optional, [`UserScanOp::with_store`]) turns a scanned `a` into an `Out`; without it `Out`
///   is `A`.
///
/// Types are [`DeviceType`]s: the element types (`float`, `uint64_t`, … in CUDA) or your own
/// `#[repr(C)]` structs. Items of 1, 2, 4, 8 or 16 bytes (the larger of `In` and `Out` at most 8 times the
/// smaller), accumulators of 1 to 32 bytes. An accumulator of more than 8 bytes travels between tiles in
/// a status entry of one 16-byte unit per 8 bytes (each 64-bit word holds 32 bits of it beside a tag),
/// so a look-back step loads that many units per tile: wider accumulators cost more per tile, not per
/// item.
///
/// The keyed primitives take it too: [`Workspace::reduce_by_key_user_into`](crate::Workspace::reduce_by_key_user_into)
/// and the scans by key ([`Workspace::inclusive_scan_by_key_user_into`](crate::Workspace::inclusive_scan_by_key_user_into),
/// [`Workspace::exclusive_scan_by_key_user_into`](crate::Workspace::exclusive_scan_by_key_user_into)) combine each
/// run's values in order with it, on the classic run agent only, for values `In` and accumulators of 1, 2, 4
/// or 8 bytes and results `Out` of `In`'s size ([`UserScanOp::compile_by_key`]).
///
/// The code is compiled at run time by NVRTC into the crate's own scan agents (classic and persistent),
/// cached like [`UserPred`](super::UserPred)'s ([module docs](crate::rtc)); [`UserScanOp::compile`]
/// compiles ahead of the first call. [`host::inclusive_scan_user`](crate::host::inclusive_scan_user) runs
/// the closures.
///
/// Float operators: by default the look-back groups tiles' values by timing, so a float combine that is
/// only approximately associative (a float sum, an affine composition) gives results that can differ in
/// the last bits from one run to the next and from the sequential host loop.
/// [`Workspace::set_deterministic`](crate::Workspace::set_deterministic) covers user operators as it covers
/// the built-in float sums: every user operator, float or not, then combines tiles in a grouping fixed by
/// their positions, and its results are the same bits on every run.
///
/// # Safety of the constructors
/// As [`UserPred`'s](super::UserPred#safety-of-the-constructors): the code runs inside the crate's kernels
/// with nothing between it and the GPU. The caller promises that each part is a pure function of its
/// arguments that returns (no memory access but its own constants, no endless loop, no `__trap`, no
/// `asm`, no block- or warp-wide operation), and that the closures compute the same as the CUDA code if
/// host and GPU results are compared. A combine that is not associative, or an identity that is not one,
/// is not unsafe: the results are then unspecified (they depend on the tiling and timing).
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::rtc::UserScanOp;
/// // Running maximum of |x|, into u32: a transform on load.
/// // SAFETY: pure expressions of their arguments.
/// let op = unsafe {
///     UserScanOp::new("a > b ? a : b", "0u", |a: u32, b: u32| a.max(b), 0)?
///         .with_load("(uint32_t)(x < 0 ? -(int64_t)x : x)", |x: i32| x.unsigned_abs())?
/// };
/// assert_eq!(lookback::host::inclusive_scan_user(&[3, -7, 2, -1], &op), [3u32, 7, 7, 7]);
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
/// let input = stream.clone_htod(&[3, -7, 2, -1])?;
/// assert_eq!(stream.clone_dtoh(&lookback::inclusive_scan_user(&input, &op)?)?, [3, 7, 7, 7]);
/// # Ok(()) }
/// ```
pub struct UserScanOp<In, A, Out = A> {
    pub(crate) code: ScanCode,
    pub(crate) host: HostScan<In, A, Out>,
}

/// The closures of a [`UserScanOp`].
pub(crate) struct HostScan<In, A, Out> {
    pub load: Arc<dyn Fn(In) -> A + Send + Sync>,
    pub combine: Arc<dyn Fn(A, A) -> A + Send + Sync>,
    pub identity: A,
    pub store: Arc<dyn Fn(A) -> Out + Send + Sync>,
}

impl<In, A: Copy, Out> Clone for HostScan<In, A, Out> {
    fn clone(&self) -> Self {
        HostScan {
            load: self.load.clone(),
            combine: self.combine.clone(),
            identity: self.identity,
            store: self.store.clone(),
        }
    }
}

/// One part of user code: an expression (wrapped in `return (…);`) or a function body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Part {
    text: String,
    expression: bool,
}

impl Part {
    pub(super) fn expression(text: &str) -> Result<Self> {
        check_source(text)?;
        Ok(Part { text: text.trim_end().to_string(), expression: true })
    }
    pub(super) fn body(text: &str) -> Result<Self> {
        check_source(text)?;
        Ok(Part { text: text.trim_end().to_string(), expression: false })
    }
    fn default_conversion(var: &str) -> Self {
        Part { text: var.to_string(), expression: true }
    }

    /// `static __device__ RET NAME(PARAMS) { … }` with the user's lines under `#line 1 "<file>"`.
    pub(super) fn function(&self, ret: &str, name: &str, params: &str, file: &str) -> String {
        let (before, after) = if self.expression { ("return (", ");") } else { ("", "") };
        format!(
            "    static __device__ __forceinline__ {ret} {name}({params}) {{\n        {before}\n#line 1 \"{file}\"\n{}\n\
             #line 1 \"lookback-generated\"\n        {after}\n    }}\n",
            self.text
        )
    }
}

/// The CUDA side of a [`UserScanOp`]: its types and code, as they go into a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ScanCode {
    pub input: TypeInfo,
    pub acc: TypeInfo,
    pub output: TypeInfo,
    combine: Part,
    identity: Part,
    load: Part,
    store: Part,
    /// Whether the caller declared the combine commutative ([`UserScanOp::commutative`]).
    commutative: bool,
    /// Its cubins so far.
    pub(crate) memo: super::memo::Memo,
}

/// The sizes each role allows: tiles move items in 16-byte chunks; a scan's tile status holds an
/// accumulator of up to 32 bytes (`MultiState` in `cuda/core/tile_state.cuh`: the kernel parameters carry
/// a seed of that size, and its entry four 16-byte units); the keyed primitives' status holds one of at
/// most 8 bytes beside the run count.
const ITEM_SIZES: [usize; 5] = [1, 2, 4, 8, 16];
const ACC_SIZES: [usize; 4] = [1, 2, 4, 8];
const MAX_SCAN_ACC: usize = 32;

impl ScanCode {
    /// The typed error for sizes the engine does not handle, before anything is compiled.
    pub(crate) fn check_sizes(&self) -> Result<()> {
        let unsupported = |role, t: &TypeInfo, allowed| {
            Err(Error::UnsupportedSize { role, type_name: t.name, bytes: t.size, allowed })
        };
        for (role, t) in [("input", &self.input), ("output", &self.output)] {
            if !ITEM_SIZES.contains(&t.size) {
                return unsupported(role, t, "1, 2, 4, 8 or 16 bytes");
            }
        }
        if !(1..=MAX_SCAN_ACC).contains(&self.acc.size) {
            return unsupported("accumulator", &self.acc, "1 to 32 bytes");
        }
        let (small, big) = (self.input.size.min(self.output.size), self.input.size.max(self.output.size));
        if big > 8 * small {
            let t = if self.input.size == big { &self.output } else { &self.input };
            let role = if self.input.size == big { "output" } else { "input" };
            return unsupported(role, t, "at least an eighth of the other item type's size");
        }
        Ok(())
    }

    /// Whether the program needs the CUDA headers of the half types.
    pub(crate) fn half(&self) -> bool {
        [&self.input, &self.acc, &self.output].iter().any(|t| t.half())
    }

    /// The typed error for sizes the run agent cannot carry (`cuda/rtc/by_key.cuh`), before anything is
    /// compiled: values of 1, 2, 4 or 8 bytes (whole 16-byte chunks per thread), results of the values'
    /// size (staged over them in the value tile), accumulators of 1, 2, 4 or 8 bytes (a tile's status
    /// entry holds the value beside the run count).
    pub(crate) fn check_by_key_sizes(&self) -> Result<()> {
        let unsupported = |role, t: &TypeInfo, allowed| {
            Err(Error::UnsupportedSize { role, type_name: t.name, bytes: t.size, allowed })
        };
        if !ACC_SIZES.contains(&self.input.size) {
            return unsupported("input", &self.input, "1, 2, 4 or 8 bytes for the values of a keyed primitive");
        }
        if self.output.size != self.input.size {
            return unsupported("output", &self.output, "the input type's size in a keyed primitive");
        }
        if !ACC_SIZES.contains(&self.acc.size) {
            return unsupported("accumulator", &self.acc, "1, 2, 4 or 8 bytes");
        }
        Ok(())
    }

    /// The program of the scan kernels (`cuda/rtc/scan.cuh`) for this code.
    pub(crate) fn program(&self) -> String {
        let head = format!(
            "// lookback: a scan of {} into {} over {}, for a user operator\n",
            self.input.name, self.output.name, self.acc.name
        );
        self.program_with(head, None, "#define LOOKBACK_RTC_SCAN lookback_user_scan\n#include \"rtc/scan.cuh\"\n")
    }

    /// The program of the keyed kernel (`cuda/rtc/by_key.cuh`) for this code and keys of `key_bytes`: one
    /// module per operator and key size (keys travel as their bits; float keys' equality comes with the
    /// launch), or per operator and user equality `eq` (whose key type fixes the size). Its text names the
    /// family, the key size, the types and the equality, so the caches never serve it for a scan, for
    /// another key size or for another equality.
    pub(crate) fn by_key_program(&self, key_bytes: usize, eq: Option<&EqCode>) -> String {
        let by = eq.map_or(String::new(), |e| format!(" compared by a user equality of {}", e.key.name));
        let head = format!(
            "// lookback: reduce_by_key and the scans by key of {key_bytes}-byte keys{by}, values {} \
             into {} over {}, for a user operator\n",
            self.input.name, self.output.name, self.acc.name
        );
        let eq_define = if eq.is_some() { "#define LOOKBACK_RTC_EQ lookback_user_eq\n" } else { "" };
        let tail = format!(
            "#define LOOKBACK_RTC_BY_KEY lookback_user_scan\n#define LOOKBACK_RTC_KEY_BYTES {key_bytes}\n\
             {eq_define}#include \"rtc/by_key.cuh\"\n"
        );
        self.program_with(head, eq, &tail)
    }

    /// `head`, the types, the operator struct `lookback_user_scan` and the equality `eq`'s struct, then
    /// `tail` (the entry header).
    fn program_with(&self, head: String, eq: Option<&EqCode>, tail: &str) -> String {
        let mut types = vec![&self.input, &self.acc, &self.output];
        types.extend(eq.map(|e| &e.key));
        let mut p = head + "#include \"core/types.cuh\"\n" + &declare_types(&types);
        let (i, a, o) = (self.input.name, self.acc.name, self.output.name);
        p += &format!("struct lookback_user_scan {{\n    using In = {i};\n    using A = {a};\n    using Out = {o};\n");
        p += &format!("    static constexpr bool COMMUTATIVE = {};\n", self.commutative);
        p += &self.combine.function("A", "apply", "const A a, const A b", compile::USER_FILE);
        p += &self.identity.function("A", "identity", "", &format!("{}-identity", compile::USER_FILE));
        p += &self.load.function("A", "load", "const In x", &format!("{}-load", compile::USER_FILE));
        p += &self.store.function("Out", "store", "const A a", &format!("{}-store", compile::USER_FILE));
        p += "};\n";
        if let Some(eq) = eq {
            p += &eq.functor();
        }
        p += tail;
        p
    }

    /// A compile error turned into [`Error::LayoutMismatch`] where a layout assertion failed.
    pub(crate) fn map_error(&self, e: Error) -> Error {
        layout_error(e, &[&self.input, &self.acc, &self.output])
    }
}

impl<A: DeviceType> UserScanOp<A, A, A> {
    /// An operator from a CUDA C++ *expression* combining `a` and `b` (`a + b`), an identity expression
    /// (`0`), and the same in Rust for the host. Items, accumulator and results are all of type `A` until
    /// [`with_load`](UserScanOp::with_load) or [`with_store`](UserScanOp::with_store) change them.
    ///
    /// # Safety
    /// See [the type's docs](UserScanOp#safety-of-the-constructors): pure code that returns.
    ///
    /// # Errors
    /// [`Error::InvalidSource`] for empty code or code holding a NUL byte. Compile errors come at the first
    /// use (or [`UserScanOp::compile`]).
    pub unsafe fn new(
        cuda_combine: &str,
        cuda_identity: &str,
        host_combine: impl Fn(A, A) -> A + Send + Sync + 'static,
        host_identity: A,
    ) -> Result<Self> {
        Self::from_parts(Part::expression(cuda_combine)?, cuda_identity, host_combine, host_identity)
    }

    /// As [`UserScanOp::new`], with the combine as the *body* of a CUDA C++ function `A f(A a, A b)`:
    /// statements ending in `return`.
    ///
    /// # Safety
    /// As [`UserScanOp::new`].
    ///
    /// # Errors
    /// As [`UserScanOp::new`].
    pub unsafe fn from_body(
        cuda_combine_body: &str,
        cuda_identity: &str,
        host_combine: impl Fn(A, A) -> A + Send + Sync + 'static,
        host_identity: A,
    ) -> Result<Self> {
        Self::from_parts(Part::body(cuda_combine_body)?, cuda_identity, host_combine, host_identity)
    }

    fn from_parts(
        combine: Part,
        cuda_identity: &str,
        host_combine: impl Fn(A, A) -> A + Send + Sync + 'static,
        host_identity: A,
    ) -> Result<Self> {
        let t = TypeInfo::of::<A>();
        let code = ScanCode {
            input: t.clone(),
            acc: t.clone(),
            output: t,
            combine,
            identity: Part::expression(cuda_identity)?,
            load: Part::default_conversion("x"),
            store: Part::default_conversion("a"),
            commutative: false,
            memo: Default::default(),
        };
        let host = HostScan {
            load: Arc::new(|x| x),
            combine: Arc::new(host_combine),
            identity: host_identity,
            store: Arc::new(|a| a),
        };
        Ok(UserScanOp { code, host })
    }
}

impl<In: DeviceType, A: DeviceType, Out: DeviceType> UserScanOp<In, A, Out> {
    /// The same operator reading items of type `I`, each turned into an `A` by a CUDA C++ expression over
    /// `x` (`(uint64_t)x`, `(double)x * x`) and the same closure for the host.
    ///
    /// # Safety
    /// As [`UserScanOp::new`].
    ///
    /// # Errors
    /// As [`UserScanOp::new`].
    pub unsafe fn with_load<I: DeviceType>(
        self,
        cuda_expr: &str,
        host: impl Fn(I) -> A + Send + Sync + 'static,
    ) -> Result<UserScanOp<I, A, Out>> {
        let load = Part::expression(cuda_expr)?;
        let code = ScanCode { input: TypeInfo::of::<I>(), load, memo: Default::default(), ..self.code };
        let h = self.host;
        Ok(UserScanOp {
            code,
            host: HostScan { load: Arc::new(host), combine: h.combine, identity: h.identity, store: h.store },
        })
    }

    /// The same operator writing items of type `O`, each made from a scanned `a` by a CUDA C++ expression
    /// (`a.b`, `(float)a`) and the same closure for the host.
    ///
    /// # Safety
    /// As [`UserScanOp::new`].
    ///
    /// # Errors
    /// As [`UserScanOp::new`].
    pub unsafe fn with_store<O: DeviceType>(
        self,
        cuda_expr: &str,
        host: impl Fn(A) -> O + Send + Sync + 'static,
    ) -> Result<UserScanOp<In, A, O>> {
        let store = Part::expression(cuda_expr)?;
        let code = ScanCode { output: TypeInfo::of::<O>(), store, memo: Default::default(), ..self.code };
        let h = self.host;
        Ok(UserScanOp {
            code,
            host: HostScan { load: h.load, combine: h.combine, identity: h.identity, store: Arc::new(host) },
        })
    }

    /// The same operator, declared commutative: `a ⊕ b == b ⊕ a` for every `a` and `b` (a sum, a
    /// maximum, a bitwise or), besides associative. The scan agents then combine a tile's items in the
    /// order they arrive (the built-in operators' order: each lane's items first, then across lanes),
    /// which saves a warp reduction per row of items on the persistent engine and lets the classic agent
    /// publish a tile's aggregate before its items are staged in shared memory: a user sum then runs the
    /// built-in sum's code.
    ///
    /// A combine that does not commute gives unspecified results with this (as a non-associative one
    /// does without it): not undefined behaviour, so this is not `unsafe`. Float sums commute but are not
    /// exactly associative: declared commutative, their grouping changes, not their determinism under
    /// [`Workspace::set_deterministic`](crate::Workspace::set_deterministic). The scans by key and
    /// reduce_by_key ignore it (the run agent combines in item order either way).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// use lookback::rtc::UserScanOp;
    /// // SAFETY: pure expressions.
    /// let sum = unsafe { UserScanOp::new("a + b", "0", |a: i32, b: i32| a.wrapping_add(b), 0)? }.commutative();
    /// assert!(sum.is_commutative());
    /// assert_eq!(lookback::host::inclusive_scan_user(&[1, 2, 3], &sum), [1, 3, 6]);
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn commutative(self) -> Self {
        UserScanOp { code: ScanCode { commutative: true, memo: Default::default(), ..self.code }, host: self.host }
    }

    /// Whether the operator was declared commutative ([`UserScanOp::commutative`]).
    pub fn is_commutative(&self) -> bool {
        self.code.commutative
    }

    /// The program NVRTC compiles for this operator (besides the crate's headers).
    pub fn cuda_program(&self) -> String {
        self.code.program()
    }

    /// Compiles the scan kernels (classic and persistent) for the GPU of `stream` now, rather than at the
    /// first call (or finds them in the caches), loads them into its context, and says how. Call it
    /// before capturing calls with this operator into a CUDA graph ([`crate::graph`]), so that nothing is
    /// compiled or loaded inside the capture.
    ///
    /// # Errors
    /// [`Error::UnsupportedSize`] for types of sizes the engine does not handle; [`Error::LayoutMismatch`]
    /// for a type whose CUDA declaration differs from the Rust type in size or alignment;
    /// [`Error::Compile`] for code that does not compile; [`Error::NvrtcNotFound`] without NVRTC;
    /// [`Error::CudaHeadersNotFound`] for f16/bf16 without the CUDA headers; [`Error::Driver`].
    pub fn compile(&self, stream: &cudarc::driver::CudaStream) -> Result<CompileReport> {
        let (kernels, report) = super::scan_kernels(stream.context(), &self.code)?;
        // Loaded into the context too, so that a call captured into a CUDA graph later loads no module
        // inside the capture.
        for k in [kernels.classic, kernels.persistent] {
            crate::kernels::function(stream.context(), k)?;
        }
        Ok(report)
    }

    /// Compiles the scan kernels for GPU architecture `arch` (`"sm_90"`, `"sm_80"`, …) without a GPU, into
    /// the caches (see [`UserPred::compile_for_arch`](super::UserPred::compile_for_arch)). Also checks
    /// that the code compiles and that the types' layouts agree.
    ///
    /// # Errors
    /// As [`UserScanOp::compile`], but no driver error; [`Error::InvalidSource`] for an architecture not
    /// named like `sm_90`.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::rtc::UserScanOp;
    /// // SAFETY: pure expressions.
    /// let sum = unsafe { UserScanOp::new("a + b", "0", |a: i64, b: i64| a.wrapping_add(b), 0)? };
    /// assert_eq!(sum.compile_for_arch("sm_80")?.arch, "sm_80");
    /// # Ok(()) }
    /// ```
    pub fn compile_for_arch(&self, arch: &str) -> Result<CompileReport> {
        super::check_arch(arch)?;
        super::scan_for_arch(&self.code, arch)
    }

    /// Compiles the keyed kernel (reduce_by_key and the scans by key, `cuda/rtc/by_key.cuh`) for keys of
    /// type `K` on the GPU of `stream` now, rather than at the first keyed call (or finds it in the
    /// caches), loads it into its context, and says how. Keys of one size share the kernel. Call it before
    /// capturing keyed calls with this operator into a CUDA graph ([`crate::graph`]).
    ///
    /// # Errors
    /// [`Error::UnsupportedSize`] for sizes the run agent does not carry (values and accumulators of 1, 2,
    /// 4 or 8 bytes, results of the values' size); otherwise as [`UserScanOp::compile`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::rtc::UserScanOp;
    /// // SAFETY: pure expressions.
    /// let max = unsafe { UserScanOp::new("a > b ? a : b", "0u", |a: u32, b: u32| a.max(b), 0)? };
    /// let report = max.compile_by_key::<u64>(&stream)?;
    /// assert!(report.cubin_bytes > 0);
    /// # Ok(()) }
    /// ```
    pub fn compile_by_key<K: crate::Element>(&self, stream: &cudarc::driver::CudaStream) -> Result<CompileReport> {
        let (kernel, report) = super::by_key_kernel(stream.context(), &self.code, size_of::<K>(), None)?;
        crate::kernels::function(stream.context(), kernel)?;
        Ok(report)
    }

    /// Compiles the keyed kernel whose runs the user equality `eq` cuts
    /// ([`Workspace::reduce_by_key_user_by_into`](crate::Workspace::reduce_by_key_user_by_into) and the scans
    /// by key, [`Workspace::inclusive_scan_by_key_user_by_into`](crate::Workspace::inclusive_scan_by_key_user_by_into), …) for the GPU
    /// of `stream` now, rather than at the first call (or finds it in the caches), and loads it: one
    /// kernel per operator and equality. Call it before capturing such calls into a CUDA graph.
    ///
    /// # Errors
    /// As [`UserScanOp::compile_by_key`]; a layout mismatch or compile error may be the equality's.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::rtc::{CacheHit, UserEq, UserScanOp};
    /// // SAFETY: pure expressions.
    /// let sum = unsafe { UserScanOp::new("a + b", "0", |a: i64, b: i64| a.wrapping_add(b), 0)? };
    /// // SAFETY: as above.
    /// let decade = unsafe { UserEq::new("a / 10 == b / 10", |a: u16, b: u16| a / 10 == b / 10)? };
    /// sum.compile_by_key_by(&decade, &stream)?;
    /// assert_eq!(sum.compile_by_key_by(&decade, &stream)?.hit, CacheHit::Memory);
    /// # Ok(()) }
    /// ```
    pub fn compile_by_key_by<K: DeviceType>(
        &self,
        eq: &super::UserEq<K>,
        stream: &cudarc::driver::CudaStream,
    ) -> Result<CompileReport> {
        let (kernel, report) = super::by_key_kernel(stream.context(), &self.code, size_of::<K>(), Some(&eq.code))?;
        crate::kernels::function(stream.context(), kernel)?;
        Ok(report)
    }

    /// [`UserScanOp::compile_by_key_by`] for GPU architecture `arch` (`"sm_90"`, …) without a GPU, into the
    /// caches.
    ///
    /// # Errors
    /// As [`UserScanOp::compile_by_key_for_arch`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::rtc::{UserEq, UserScanOp};
    /// // SAFETY: pure expressions.
    /// let sum = unsafe { UserScanOp::new("a + b", "0", |a: i64, b: i64| a.wrapping_add(b), 0)? };
    /// // SAFETY: as above.
    /// let decade = unsafe { UserEq::new("a / 10 == b / 10", |a: u16, b: u16| a / 10 == b / 10)? };
    /// assert_eq!(sum.compile_by_key_by_for_arch(&decade, "sm_90")?.arch, "sm_90");
    /// # Ok(()) }
    /// ```
    pub fn compile_by_key_by_for_arch<K: DeviceType>(
        &self,
        eq: &super::UserEq<K>,
        arch: &str,
    ) -> Result<CompileReport> {
        super::check_arch(arch)?;
        super::by_key_for_arch(&self.code, size_of::<K>(), Some(&eq.code), arch)
    }

    /// Compiles the keyed kernel for keys of type `K` for GPU architecture `arch` (`"sm_90"`, …) without a
    /// GPU, into the caches, as [`UserScanOp::compile_for_arch`] does the scans'.
    ///
    /// # Errors
    /// As [`UserScanOp::compile_by_key`], but no driver error; [`Error::InvalidSource`] for an architecture
    /// not named like `sm_90`.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::rtc::UserScanOp;
    /// // SAFETY: pure expressions.
    /// let sum = unsafe { UserScanOp::new("a + b", "0", |a: i64, b: i64| a.wrapping_add(b), 0)? };
    /// assert_eq!(sum.compile_by_key_for_arch::<u32>("sm_80")?.arch, "sm_80");
    /// # Ok(()) }
    /// ```
    pub fn compile_by_key_for_arch<K: crate::Element>(&self, arch: &str) -> Result<CompileReport> {
        super::check_arch(arch)?;
        super::by_key_for_arch(&self.code, size_of::<K>(), None, arch)
    }

    /// The closures' total over `input`, folded left to right from the identity.
    pub(crate) fn host_reduce(&self, input: &[In]) -> Out {
        let h = &self.host;
        (h.store)(input.iter().fold(h.identity, |run, &x| (h.combine)(run, (h.load)(x))))
    }

    /// `store(init ⊕ load(x₀) ⊕ …)`, item by item, on the host: the closures' inclusive (`init` = None) or
    /// exclusive scan.
    pub(crate) fn host_scan(&self, input: &[In], init: Option<A>) -> Vec<Out> {
        let h = &self.host;
        let mut run = init.unwrap_or(h.identity);
        input
            .iter()
            .map(|&x| {
                let v = (h.load)(x);
                if init.is_some() {
                    let out = (h.store)(run);
                    run = (h.combine)(run, v);
                    out
                } else {
                    run = (h.combine)(run, v);
                    (h.store)(run)
                }
            })
            .collect()
    }
}

impl<In, A: Copy, Out> Clone for UserScanOp<In, A, Out> {
    fn clone(&self) -> Self {
        UserScanOp { code: self.code.clone(), host: self.host.clone() }
    }
}

impl<In, A, Out> fmt::Debug for UserScanOp<In, A, Out> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserScanOp")
            .field("input", &self.code.input.name)
            .field("acc", &self.code.acc.name)
            .field("output", &self.code.output.name)
            .field("combine", &self.code.combine.text)
            .finish_non_exhaustive()
    }
}
