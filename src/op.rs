//! Scan and reduction operators.
use crate::kernels::{DType, OpKind};

/// The associative operator of a scan.
///
/// Integer `Sum` wraps around on overflow. Float `Sum` is rounded at every step and the order in which
/// the look-back combines tiles varies from run to run, so float sums match a sequential sum only within
/// rounding (see the crate docs). Float `Min`/`Max` ignore NaN (IEEE minNum/maxNum, like `f32::min`):
/// the result is NaN only where every item so far is NaN. The bitwise operators exist for integers only.
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
    pub const ALL: [ScanOp; 6] = [ScanOp::Sum, ScanOp::Min, ScanOp::Max, ScanOp::BitAnd, ScanOp::BitOr, ScanOp::BitXor];

    /// Whether the operator is defined for an element type.
    pub const fn supports(self, dtype: DType) -> bool {
        !self.is_bitwise() || dtype.is_integer()
    }

    /// Whether this is one of the integer-only bitwise operators.
    pub const fn is_bitwise(self) -> bool {
        matches!(self, ScanOp::BitAnd | ScanOp::BitOr | ScanOp::BitXor)
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
