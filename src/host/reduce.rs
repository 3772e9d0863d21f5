//! Reductions on the host: the total of an operator, and the index of the least or greatest item.
use crate::element::Element;
use crate::error::{Error, Result};
use crate::op::ScanOp;
use crate::rtc::{DeviceType, UserScanOp};

/// `input[0] op … op input[n-1]`, folded left to right from the operator's identity, which is what an
/// empty input gives: 0 for sums (-0.0 for floats), the type's largest value for an integer `Min`
/// (smallest for `Max`), all ones for `BitAnd`, NaN for a float `Min` or `Max`. f16 and bf16 are
/// accumulated in f32 and rounded once.
///
/// # Errors
/// [`Error::Unsupported`] for a bitwise operator on floats.
///
/// # Example
/// ```
/// use lookback::{host, ScanOp};
/// assert_eq!(host::reduce(&[3i32, 1, 4, 1, 5], ScanOp::Sum)?, 14);
/// assert_eq!(host::reduce(&[3u8, 9, 4], ScanOp::Max)?, 9);
/// assert_eq!(host::reduce(&[f32::NAN, 2.0, 1.5], ScanOp::Min)?, 1.5);
/// assert_eq!(host::reduce::<u16>(&[], ScanOp::Min)?, u16::MAX);
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn reduce<T: Element>(input: &[T], op: ScanOp) -> Result<T> {
    let mut acc = T::identity(op).ok_or(Error::Unsupported { operation: op.name(), dtype: T::DTYPE.name() })?;
    for &x in input {
        acc = super::apply::<T>(op, acc, x.to_acc())?;
    }
    Ok(T::from_acc(acc))
}

/// The index and value of the least item, `None` for an empty input. Ties, -0.0 against 0.0 included, go
/// to the first; NaNs are ignored unless every item is NaN (then the first NaN). f16 and bf16 compare as
/// their f32 values.
///
/// # Example
/// ```
/// use lookback::host;
/// assert_eq!(host::arg_min(&[4i32, 1, 7, 1]), Some((1, 1)));
/// assert_eq!(host::arg_min(&[f64::NAN, 2.0, -0.0, 0.0]), Some((2, -0.0)));
/// assert_eq!(host::arg_min::<u8>(&[]), None);
/// ```
pub fn arg_min<T: Element>(input: &[T]) -> Option<(usize, T)> {
    arg_best(input, false)
}

/// The index and value of the greatest item, `None` for an empty input; ties and NaNs as in
/// [`arg_min`].
///
/// # Example
/// ```
/// use lookback::host;
/// assert_eq!(host::arg_max(&[4i32, 9, 7, 9]), Some((1, 9)));
/// assert_eq!(host::arg_max(&[f32::NAN, f32::NAN]).map(|(i, _)| i), Some(0));
/// ```
pub fn arg_max<T: Element>(input: &[T]) -> Option<(usize, T)> {
    arg_best(input, true)
}

fn arg_best<T: Element>(input: &[T], max: bool) -> Option<(usize, T)> {
    let mut best: Option<(usize, T)> = None;
    for (i, &x) in input.iter().enumerate() {
        match best {
            Some((_, b)) if !beats(x.to_acc(), b.to_acc(), max) => {}
            _ => best = Some((i, x)),
        }
    }
    best
}

/// Whether a later item `x` replaces the best so far, `b`: a strictly better value; a number beats NaN.
#[allow(clippy::eq_op)] // `x != x` is the NaN test of a PartialOrd type
fn beats<A: PartialOrd>(x: A, b: A, max: bool) -> bool {
    let (x_nan, b_nan) = (x != x, b != b);
    if x_nan || b_nan {
        return !x_nan && b_nan;
    }
    if max { x > b } else { x < b }
}

/// The total of a user operator's closures: `store(load(input[0]) ⊕ … ⊕ load(input[n-1]))`, folded left to
/// right from its identity (`store(identity)` for an empty input).
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::rtc::UserScanOp;
/// // SAFETY: pure expressions.
/// let squares = unsafe {
///     UserScanOp::new("a + b", "0", |a: u64, b: u64| a + b, 0)?.with_load("(uint64_t)x * x", |x: u32| u64::from(x) * u64::from(x))?
/// };
/// assert_eq!(lookback::host::reduce_user(&[1u32, 2, 3], &squares), 14);
/// # Ok(()) }
/// ```
pub fn reduce_user<In: DeviceType, A: DeviceType, Out: DeviceType>(input: &[In], op: &UserScanOp<In, A, Out>) -> Out {
    op.host_reduce(input)
}
