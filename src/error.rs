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
    /// A predicate compiles to more instructions or a deeper stack than the device program holds.
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
    /// The buffers live on different GPUs (contexts).
    #[error("buffers belong to different CUDA contexts")]
    ContextMismatch,
    /// A CUDA driver call failed.
    #[error("CUDA driver error: {0}")]
    Driver(#[from] DriverError),
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
