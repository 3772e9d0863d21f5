//! Scan and reduction operators.
use crate::error::{Error, Result};
use crate::kernels::{DType, OpKind};

/// The associative operator of a scan.
///
/// Integer `Sum` wraps around on overflow. Float `Sum` is rounded at every step and the order in which
/// the look-back combines tiles varies from run to run, so float sums match a sequential sum only within
/// rounding (see the crate docs). Float `Min`/`Max` ignore NaN (IEEE minNum/maxNum, like `f32::min`):
/// the result is NaN only where every item so far is NaN. The bitwise operators exist for integers only.
///
/// # Example
/// ```
/// use lookback::{host, ScanOp};
/// let xs = [6u8, 3, 5];
/// assert_eq!(host::inclusive_scan(&xs, ScanOp::Sum)?, [6, 9, 14]);
/// assert_eq!(host::inclusive_scan(&xs, ScanOp::Min)?, [6, 3, 3]);
/// assert_eq!(host::inclusive_scan(&xs, ScanOp::Max)?, [6, 6, 6]);
/// assert_eq!(host::inclusive_scan(&xs, ScanOp::BitAnd)?, [6, 2, 0]);
/// assert_eq!(host::inclusive_scan(&xs, ScanOp::BitOr)?, [6, 7, 7]);
/// assert_eq!(host::inclusive_scan(&xs, ScanOp::BitXor)?, [6, 5, 0]);
/// // Integer sums wrap; float Min/Max ignore NaN.
/// assert_eq!(host::inclusive_scan(&[250u8, 10], ScanOp::Sum)?, [250, 4]);
/// assert_eq!(host::inclusive_scan(&[1.0f32, f32::NAN, 3.0], ScanOp::Max)?, [1.0, 1.0, 3.0]);
/// # Ok::<(), lookback::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ScanOp {
    /// `a + b` (wrapping for integers).
    Sum,
    /// The smaller of `a` and `b`.
    Min,
    /// The larger of `a` and `b`.
    Max,
    /// `a & b` (integers only).
    BitAnd,
    /// `a | b` (integers only).
    BitOr,
    /// `a ^ b` (integers only).
    BitXor,
}

impl ScanOp {
    /// Every operator.
    ///
    /// # Example
    /// ```
    /// use lookback::{DType, ScanOp};
    /// assert_eq!(ScanOp::ALL.len(), 6);
    /// let for_floats = ScanOp::ALL.iter().filter(|op| op.supports(DType::F32));
    /// assert_eq!(for_floats.map(|op| op.name()).collect::<Vec<_>>(), ["sum", "min", "max"]);
    /// ```
    pub const ALL: [ScanOp; 6] = [ScanOp::Sum, ScanOp::Min, ScanOp::Max, ScanOp::BitAnd, ScanOp::BitOr, ScanOp::BitXor];

    /// Whether the operator is defined for an element type.
    ///
    /// # Example
    /// ```
    /// use lookback::{DType, Element, ScanOp};
    /// assert!(ScanOp::Sum.supports(DType::F32));
    /// assert!(ScanOp::BitXor.supports(DType::U8));
    /// assert!(!ScanOp::BitXor.supports(DType::F64));
    /// assert!(!ScanOp::BitAnd.supports(<lookback::half::bf16 as Element>::DTYPE));
    /// ```
    pub const fn supports(self, dtype: DType) -> bool {
        !self.is_bitwise() || dtype.is_integer()
    }

    /// Whether this is one of the integer-only bitwise operators.
    ///
    /// # Example
    /// ```
    /// use lookback::ScanOp;
    /// assert!(ScanOp::BitAnd.is_bitwise() && ScanOp::BitOr.is_bitwise() && ScanOp::BitXor.is_bitwise());
    /// assert!(!ScanOp::Sum.is_bitwise() && !ScanOp::Min.is_bitwise() && !ScanOp::Max.is_bitwise());
    /// ```
    pub const fn is_bitwise(self) -> bool {
        matches!(self, ScanOp::BitAnd | ScanOp::BitOr | ScanOp::BitXor)
    }

    /// `Ok` if the operator is defined for `dtype`, else [`Error::Unsupported`] (shared by the GPU and
    /// host paths, so both reject the same calls).
    pub(crate) fn check(self, dtype: DType) -> Result<()> {
        if self.supports(dtype) {
            Ok(())
        } else {
            Err(Error::Unsupported { operation: self.name(), dtype: dtype.name() })
        }
    }

    pub(crate) const fn kind(self) -> OpKind {
        match self {
            ScanOp::Sum => OpKind::Sum,
            ScanOp::Min => OpKind::Min,
            ScanOp::Max => OpKind::Max,
            ScanOp::BitAnd => OpKind::And,
            ScanOp::BitOr => OpKind::Or,
            ScanOp::BitXor => OpKind::Xor,
        }
    }

    /// A short name, as used in error messages.
    ///
    /// # Example
    /// ```
    /// use lookback::{host, Error, ScanOp};
    /// assert_eq!(ScanOp::Sum.name(), "sum");
    /// assert_eq!(ScanOp::BitXor.name(), "bitxor");
    /// let err = host::inclusive_scan(&[1.0f32], ScanOp::BitXor).unwrap_err();
    /// assert!(matches!(err, Error::Unsupported { operation: "bitxor", dtype: "f32" }));
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            ScanOp::Sum => "sum",
            ScanOp::Min => "min",
            ScanOp::Max => "max",
            ScanOp::BitAnd => "bitand",
            ScanOp::BitOr => "bitor",
            ScanOp::BitXor => "bitxor",
        }
    }
}
