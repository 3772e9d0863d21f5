//! The element types the kernels are compiled for.
use crate::kernels::DType;
use crate::op::ScanOp;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use half::{bf16, f16};

mod sealed {
    pub trait Sealed {}
}

/// An element type `lookback` can process: `i8`, `i16`, `i32`, `i64`, `u8`, `u16`, `u32`, `u64`, `f32`,
/// `f64`, [`half::f16`] and [`half::bf16`].
///
/// Sealed: it is implemented exactly for the types of `cuda/core/types.cuh`, the list the kernels are compiled
/// from (a test checks both lists agree).
///
/// # Safety contract (upheld by this crate, the only implementor)
/// 1. `Self` is plain old data with the size and bit layout of the C type of the same name in `cuda/`.
/// 2. Every bit pattern is a valid value (so device buffers may be read back unchecked).
/// 3. `DTYPE` names that C type.
///
/// # Example
/// ```
/// use lookback::half::{bf16, f16};
/// use lookback::{DType, Element};
/// assert_eq!(<i32 as Element>::DTYPE, DType::I32);
/// assert_eq!(<u64 as Element>::DTYPE, DType::U64);
/// assert_eq!(<f16 as Element>::DTYPE, DType::F16);
/// assert_eq!(<bf16 as Element>::DTYPE.name(), "bf16");
/// // Generic code over every element type:
/// fn total<T: Element>(xs: &[T]) -> lookback::Result<Option<T>> {
///     Ok(lookback::host::inclusive_scan(xs, lookback::ScanOp::Sum)?.last().copied())
/// }
/// assert_eq!(total(&[1i16, 2, 3])?, Some(6));
/// assert_eq!(total(&[0.5f64, 0.25])?, Some(0.75));
/// assert_eq!(total::<u8>(&[])?, None);
/// # Ok::<(), lookback::Error>(())
/// ```
pub trait Element:
    sealed::Sealed + DeviceRepr + ValidAsZeroBits + Copy + Send + Sync + std::fmt::Debug + PartialEq + 'static
{
    /// The element type as the kernel table knows it.
    ///
    /// # Example
    /// ```
    /// use lookback::{DType, Element};
    /// assert_eq!(<i8 as Element>::DTYPE, DType::I8);
    /// assert_eq!(<f64 as Element>::DTYPE, DType::F64);
    /// assert!(<u16 as Element>::DTYPE.is_integer() && !<f32 as Element>::DTYPE.is_integer());
    /// ```
    const DTYPE: DType;
    /// The type values are accumulated in: the element type itself, except `f32` for `f16`/`bf16`.
    #[doc(hidden)]
    type Acc: Copy + std::fmt::Debug + PartialOrd;
    #[doc(hidden)]
    fn to_acc(self) -> Self::Acc;
    #[doc(hidden)]
    fn from_acc(a: Self::Acc) -> Self;
    /// `a op b` in the accumulator type; `None` where the operator is not defined for the type.
    #[doc(hidden)]
    fn apply(op: ScanOp, a: Self::Acc, b: Self::Acc) -> Option<Self::Acc>;
    /// The identity of `op` in the accumulator type, as the kernels have it (`cuda/core/ops.cuh`): what a
    /// reduction of no items gives. `None` where the operator is not defined for the type.
    #[doc(hidden)]
    fn identity(op: ScanOp) -> Option<Self::Acc>;
    /// The bits of the value, zero-extended (how a value travels in kernel parameters).
    #[doc(hidden)]
    fn to_bits(self) -> u64;
    /// The value of a bit pattern made by `to_bits`.
    #[doc(hidden)]
    fn from_bits(bits: u64) -> Self;
    /// The all-zero value.
    #[doc(hidden)]
    fn zeroed() -> Self;
    /// Whether an accumulator value is finite (always true for integers).
    #[doc(hidden)]
    fn is_finite_acc(a: Self::Acc) -> bool;
}

macro_rules! int_element {
    ($($t:ty => $d:ident as $u:ty),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            type Acc = $t;
            fn to_acc(self) -> $t { self }
            fn from_acc(a: $t) -> $t { a }
            fn apply(op: ScanOp, a: $t, b: $t) -> Option<$t> {
                Some(match op {
                    ScanOp::Sum => a.wrapping_add(b),
                    ScanOp::Min => a.min(b),
                    ScanOp::Max => a.max(b),
                    ScanOp::BitAnd => a & b,
                    ScanOp::BitOr => a | b,
                    ScanOp::BitXor => a ^ b,
                })
            }
            fn identity(op: ScanOp) -> Option<$t> {
                Some(match op {
                    ScanOp::Sum | ScanOp::BitOr | ScanOp::BitXor => 0,
                    ScanOp::Min => <$t>::MAX,
                    ScanOp::Max => <$t>::MIN,
                    ScanOp::BitAnd => !0,
                })
            }
            fn from_bits(bits: u64) -> $t { bits as $u as $t }
            fn zeroed() -> $t { 0 }
            fn is_finite_acc(_: $t) -> bool { true }
            fn to_bits(self) -> u64 {
                // Zero-extend the same-size unsigned bit pattern (a sign-extended i8 would differ).
                self as $u as u64
            }
        }
    )*};
}
int_element!(
    i8 => I8 as u8, i16 => I16 as u16, i32 => I32 as u32, i64 => I64 as u64,
    u8 => U8 as u8, u16 => U16 as u16, u32 => U32 as u32, u64 => U64 as u64,
);

/// -0.0 for sums (it leaves every float unchanged, -0.0 included); NaN for min and max, which ignore it.
fn float_identity<F: num_traits::Float>(op: ScanOp) -> Option<F> {
    match op {
        ScanOp::Sum => Some(F::neg_zero()),
        ScanOp::Min | ScanOp::Max => Some(F::nan()),
        _ => None,
    }
}

fn float_apply<F: num_traits::Float>(op: ScanOp, a: F, b: F) -> Option<F> {
    match op {
        ScanOp::Sum => Some(a + b),
        // num_traits' min/max ignore NaN, as the kernels' fmin/fmax do.
        ScanOp::Min => Some(a.min(b)),
        ScanOp::Max => Some(a.max(b)),
        _ => None,
    }
}

macro_rules! float_element {
    ($($t:ty => $d:ident, $acc:ty, $to:expr, $from:expr, $bits:expr, $ubits:ty);* $(;)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            type Acc = $acc;
            fn to_acc(self) -> $acc { $to(self) }
            fn from_acc(a: $acc) -> $t { $from(a) }
            fn apply(op: ScanOp, a: $acc, b: $acc) -> Option<$acc> { float_apply(op, a, b) }
            fn identity(op: ScanOp) -> Option<$acc> { float_identity(op) }
            fn to_bits(self) -> u64 { $bits(self) as u64 }
            fn from_bits(bits: u64) -> $t { <$t>::from_bits(bits as $ubits) }
            fn zeroed() -> $t { $from(0.0) }
            fn is_finite_acc(a: $acc) -> bool { a.is_finite() }
        }
    )*};
}
float_element! {
    f32 => F32, f32, |x| x, |a| a, f32::to_bits, u32;
    f64 => F64, f64, |x| x, |a| a, f64::to_bits, u64;
    f16 => F16, f32, f16::to_f32, f16::from_f32, f16::to_bits, u16;
    bf16 => Bf16, f32, bf16::to_f32, bf16::from_f32, bf16::to_bits, u16;
}

/// The integer element types (bit tests in predicates, bitwise scans).
///
/// # Example
/// ```
/// use lookback::{IntElement, Pred};
/// fn has_bit<T: IntElement>(x: T, bit: T) -> bool {
///     Pred::any_bits(bit).eval(x)
/// }
/// assert!(has_bit(0b0110u8, 0b0100));
/// assert!(!has_bit(5i64, 2));
/// ```
pub trait IntElement: Element + Eq + std::ops::BitAnd<Output = Self> + num_traits::Zero {}
impl IntElement for i8 {}
impl IntElement for i16 {}
impl IntElement for i32 {}
impl IntElement for i64 {}
impl IntElement for u8 {}
impl IntElement for u16 {}
impl IntElement for u32 {}
impl IntElement for u64 {}

/// The floating-point element types (NaN and finiteness tests in predicates).
///
/// # Example
/// ```
/// use lookback::half::bf16;
/// use lookback::{FloatElement, Pred, host};
/// fn nan_count<T: FloatElement>(xs: &[T]) -> usize {
///     host::count_if(xs, &Pred::is_nan())
/// }
/// assert_eq!(nan_count(&[1.0f32, f32::NAN, f32::INFINITY, f32::NAN]), 2);
/// assert_eq!(nan_count(&[bf16::ONE, bf16::NAN]), 1);
/// ```
pub trait FloatElement: Element {
    #[doc(hidden)]
    fn is_nan_value(self) -> bool;
    #[doc(hidden)]
    fn is_finite_value(self) -> bool;
}
macro_rules! float_marker {
    ($($t:ty),*) => {$(
        impl FloatElement for $t {
            fn is_nan_value(self) -> bool { self.is_nan() }
            fn is_finite_value(self) -> bool { self.is_finite() }
        }
    )*};
}
float_marker!(f32, f64, f16, bf16);

/// A selection flag type: `u8` (nonzero selects) or `bool`.
///
/// # Example
/// ```
/// use lookback::host;
/// assert_eq!(host::select_flagged(&[10u16, 20, 30], &[1u8, 0, 255])?, [10, 30]);
/// assert_eq!(host::select_flagged(&[10u16, 20, 30], &[false, true, false])?, [20]);
/// # Ok::<(), lookback::Error>(())
/// ```
pub trait Flag: sealed::Sealed + DeviceRepr + Copy + 'static {
    #[doc(hidden)]
    fn is_set(self) -> bool;
}
impl Flag for u8 {
    fn is_set(self) -> bool {
        self != 0
    }
}
impl sealed::Sealed for bool {}
impl Flag for bool {
    fn is_set(self) -> bool {
        self
    }
}
