//! The crate's error type.
use cudarc::driver::DriverError;

/// Everything a `lookback` call can fail with. Bad input is always reported here, never by a panic, and
/// a call that returns an error has not written to the caller's output buffers.
///
/// # Example
/// ```
/// use lookback::{Error, ScanOp, host};
/// let err = Error::OutputTooSmall { what: "output", needed: 5, actual: 3 };
/// assert_eq!(err.to_string(), "output too small: output has room for 3 items, 5 needed");
/// let err = host::inclusive_scan(&[1.0f64], ScanOp::BitAnd).unwrap_err();
/// assert_eq!(err.to_string(), "bitand is not supported for element type f64");
/// let err = host::select_flagged(&[1u8, 2, 3], &[true, false]).unwrap_err();
/// assert!(matches!(err, Error::LengthMismatch { what: "flags", expected: 3, actual: 2 }));
/// assert_eq!(err.to_string(), "length mismatch: flags has 2 items, expected 3");
/// let err = Error::PredicateTooComplex { instructions: 17, depth: 2 };
/// let text = "predicate too complex: 17 instructions (at most 16) and stack depth 2 (at most 8)";
/// assert_eq!(err.to_string(), text);
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No CUDA driver library (`libcuda.so`) could be loaded on this machine. Host paths (`host`) work.
    #[error(
        "no CUDA driver found (libcuda could not be loaded); the host reference path in `lookback::host` still works"
    )]
    NoCudaDriver,
    /// The crate was built without nvcc, so it carries no GPU kernels.
    #[error(
        "lookback was built without nvcc, so it has no GPU kernels; install nvcc (e.g. `pip install \
         nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime==13.0.96 \
         nvidia-cuda-cccl==13.0.85`) \
         and rebuild"
    )]
    KernelsNotBuilt,
    /// Two inputs that must have the same length do not.
    #[error("length mismatch: {what} has {actual} items, expected {expected}")]
    LengthMismatch {
        /// Which argument.
        what: &'static str,
        /// The length it must have.
        expected: usize,
        /// The length it has.
        actual: usize,
    },
    /// An output buffer is shorter than the result.
    #[error("output too small: {what} has room for {actual} items, {needed} needed")]
    OutputTooSmall {
        /// Which argument.
        what: &'static str,
        /// Items the call must write.
        needed: usize,
        /// Items the buffer holds.
        actual: usize,
    },
    /// The operation is not defined for the element type (e.g. a bitwise scan of floats).
    #[error("{operation} is not supported for element type {dtype}")]
    Unsupported {
        /// What was asked for.
        operation: &'static str,
        /// The element type's name.
        dtype: &'static str,
    },
    /// A predicate kept as written (one with a bit test, or whose comparisons select more than 8 separate
    /// intervals: [`Pred`](crate::Pred) says when) needs more instructions or a deeper stack than the
    /// device program holds.
    #[error(
        "predicate too complex: {instructions} instructions (at most {max_i}) and stack depth {depth} (at most {max_d})",
        max_i = crate::pred::MAX_INSTRUCTIONS,
        max_d = crate::pred::MAX_DEPTH
    )]
    PredicateTooComplex {
        /// Instructions the predicate needs.
        instructions: usize,
        /// Stack depth it needs.
        depth: usize,
    },
    /// An output buffer overlaps an input (or another output) of a primitive that cannot work in place.
    #[error("{what} overlaps {other}: this primitive cannot work in place")]
    Overlap {
        /// The output argument.
        what: &'static str,
        /// The argument it overlaps.
        other: &'static str,
    },
    /// A call inside a CUDA stream capture that the capture cannot hold; nothing was enqueued, and the
    /// capture is still valid.
    #[error("not capturable in a CUDA graph: {reason}")]
    NotCapturable {
        /// Why, and what to do instead.
        reason: &'static str,
    },
    /// [`crate::Workspace::with_count`] was given an empty buffer: the count is its first `u64`.
    #[error("the device count buffer is empty: it must hold at least one u64")]
    EmptyCount,
    /// A table filter ([`crate::table`]) was given more columns than one launch moves (the row indices
    /// count as a column).
    #[error("too many columns: {columns} in one table filter, at most {max}")]
    TooManyColumns {
        /// Columns asked for.
        columns: usize,
        /// The most one call takes.
        max: usize,
    },
    /// The buffers live on different GPUs (contexts).
    #[error("buffers belong to different CUDA contexts")]
    ContextMismatch,
    /// A CUDA driver call failed.
    #[error("CUDA driver error: {0}")]
    Driver(#[from] DriverError),
    /// An Arrow array has null slots where only values fit (`lookback::arrow`, feature `arrow`): a null
    /// slot's value is unspecified and would be taken for data. Upload the values and the validity apart
    /// (`lookback::arrow::upload_nullable`).
    #[error(
        "the Arrow array has {null_count} null slots, whose values are unspecified; upload its values and \
         validity apart (lookback::arrow::upload_nullable)"
    )]
    ArrowNulls {
        /// How many slots are null.
        null_count: usize,
    },
    /// An Arrow array is not of the data type the call needs (`lookback::arrow`, feature `arrow`).
    #[error("Arrow data type mismatch: expected {expected}, found {actual}")]
    ArrowType {
        /// The data type needed, as Arrow writes it (`Int32`, …).
        expected: String,
        /// The array's data type.
        actual: String,
    },
    /// A run end does not fit the signed run-end type of an Arrow `RunArray` (`lookback::arrow`, feature
    /// `arrow`): lookback's run ends are unsigned, Arrow's `Int16`, `Int32` or `Int64`.
    #[error("run end {end} of run {index} does not fit Arrow run ends of type {run_end_type}")]
    ArrowRunEndOverflow {
        /// The run whose end it is.
        index: usize,
        /// The end (wide enough for any sum of `u64` run lengths).
        end: u128,
        /// The run-end type: `Int16`, `Int32` or `Int64`.
        run_end_type: &'static str,
    },
    /// Run ends that Arrow's run-end encoding forbids (`lookback::arrow`, feature `arrow`): each must be
    /// positive and greater than the one before (so no run is empty), and the last must reach the end of
    /// the array.
    #[error("invalid run ends at run {index}: {reason}")]
    ArrowInvalidRunEnds {
        /// The first run whose end breaks the rule.
        index: usize,
        /// Which rule.
        reason: &'static str,
    },
    /// arrow-rs refused to build an array (`lookback::arrow`, feature `arrow`). The conversions check
    /// their input first, so this only reports a rule that arrow-rs has and they do not know.
    #[error("Arrow error: {message}")]
    Arrow {
        /// arrow-rs's message.
        message: String,
    },
    /// User code ([`crate::rtc`]) needs NVRTC, the CUDA run-time compiler, and none could be loaded.
    #[error("NVRTC (the CUDA run-time compiler) could not be loaded: {hint}; searched: {searched}", hint = crate::rtc::NVRTC_HINT)]
    NvrtcNotFound {
        /// The library files and names tried, in order.
        searched: String,
    },
    /// NVRTC itself failed (not the user's code): out of memory, or a broken install.
    #[error("NVRTC call {what} failed with status {status}")]
    NvrtcFailed {
        /// The NVRTC entry point.
        what: String,
        /// Its `nvrtcResult`.
        status: i32,
    },
    /// User code did not compile. `log` is NVRTC's whole log; `line` the first line of the user's code it
    /// complains about (1-based number, text), when it names one.
    #[error("user code did not compile{}:\n{log}", line.as_ref().map(|(n, t)| format!(" (line {n}: `{}`)", t.trim())).unwrap_or_default())]
    Compile {
        /// NVRTC's log.
        log: String,
        /// The user's line the first error is on.
        line: Option<(usize, String)>,
    },
    /// User code that cannot be handed to the compiler at all.
    #[error("invalid user code: {reason}")]
    InvalidSource {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// User code over f16 or bf16 needs the CUDA headers that define them (`cuda_fp16.h`), and none were found.
    #[error(
        "user code over f16/bf16 needs the CUDA headers (cuda_fp16.h): set LOOKBACK_CUDA_INCLUDE or CUDA_HOME, \
         or install the CUDA toolkit"
    )]
    CudaHeadersNotFound,
    /// A type of user code ([`crate::rtc::DeviceType`]) whose CUDA declaration has another size or
    /// alignment than the Rust type. The CUDA values are `None` where they agree with Rust's (or, for a
    /// size, exceed 64 bytes).
    #[error(
        "the CUDA type {type_name} does not match its Rust type: Rust has size {rust_size} and alignment          {rust_align}, CUDA {}",
        describe_layout(*cuda_size, *cuda_align)
    )]
    LayoutMismatch {
        /// The CUDA name of the type.
        type_name: String,
        /// `size_of` the Rust type.
        rust_size: usize,
        /// `align_of` the Rust type.
        rust_align: usize,
        /// `sizeof` the CUDA type, where it differs.
        cuda_size: Option<usize>,
        /// `alignof` the CUDA type, where it differs.
        cuda_align: Option<usize>,
    },
    /// A type of user code whose size the engine does not handle in that role (input and output items:
    /// 1, 2, 4, 8 or 16 bytes, the larger at most 8 times the smaller; accumulators of scans and reductions:
    /// 1 to 32 bytes; accumulators and values of the keyed primitives: 1, 2, 4 or 8 bytes).
    #[error("{role} type {type_name} has {bytes} bytes; supported: {allowed}")]
    UnsupportedSize {
        /// `input`, `accumulator` or `output`.
        role: &'static str,
        /// The CUDA name of the type.
        type_name: &'static str,
        /// Its size.
        bytes: usize,
        /// The sizes the role allows.
        allowed: &'static str,
    },
    /// The NCCL library could not be loaded (`lookback::shard`, feature `nccl`): cudarc looks for
    /// `libnccl.so`, which NVIDIA's packages ship as `libnccl.so.2` only.
    #[error(
        "NCCL could not be loaded: cudarc looks for libnccl.so; install NCCL (e.g. `pip install nvidia-nccl-cu13`), \
         link libnccl.so -> libnccl.so.2 in its lib folder, and put that folder on LD_LIBRARY_PATH"
    )]
    NcclNotFound,
    /// An NCCL call failed (`lookback::shard`, feature `nccl`).
    #[error("NCCL call {what} failed: {message}")]
    Nccl {
        /// The NCCL operation.
        what: &'static str,
        /// NCCL's error.
        message: String,
    },
    /// The shards of a sharded call do not match its group (`lookback::shard`): another number of shards
    /// than the group's local ranks, or a shard on another GPU than its rank's stream.
    #[error("shard mismatch: {reason}")]
    ShardMismatch {
        /// What does not match.
        reason: String,
    },
}

fn describe_layout(size: Option<usize>, align: Option<usize>) -> String {
    let size = size.map_or("size as Rust's (or over 64)".to_string(), |s| format!("size {s}"));
    let align = align.map_or("alignment as Rust's".to_string(), |a| format!("alignment {a}"));
    format!("{size} and {align}")
}

/// `Ok` if `actual` (the length of argument `what`) equals `expected`, else [`Error::LengthMismatch`].
pub(crate) fn check_len(what: &'static str, expected: usize, actual: usize) -> Result<()> {
    if expected == actual { Ok(()) } else { Err(Error::LengthMismatch { what, expected, actual }) }
}

/// `Result` with [`Error`].
///
/// # Example
/// ```
/// use lookback::{ScanOp, host};
/// fn running_total(xs: &[u32]) -> lookback::Result<Vec<u32>> {
///     host::inclusive_scan(xs, ScanOp::Sum)
/// }
/// assert_eq!(running_total(&[1, 2, 3])?, [1, 3, 6]);
/// # Ok::<(), lookback::Error>(())
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;
