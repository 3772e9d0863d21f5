//! Sequential reference implementations of every primitive: the test oracle, and the path to use on a
//! machine without a GPU. They follow the kernels' rules exactly (wrapping integer sums, NaN-ignoring
//! float min/max, f16/bf16 accumulated in f32 and rounded once per output item).
use crate::element::Element;
use crate::error::{Error, Result};
use crate::op::ScanOp;

fn check_op<T: Element>(op: ScanOp) -> Result<()> {
    if op.supports(T::DTYPE) { Ok(()) } else { Err(Error::Unsupported { operation: op.name(), dtype: T::DTYPE.name() }) }
}

fn apply<T: Element>(op: ScanOp, a: T::Acc, b: T::Acc) -> Result<T::Acc> {
    T::apply(op, a, b).ok_or(Error::Unsupported { operation: op.name(), dtype: T::DTYPE.name() })
}

/// Inclusive scan: `out[i] = input[0] op … op input[i]`.
///
/// # Errors
/// [`Error::Unsupported`] for a bitwise operator on floats.
///
/// # Example
/// ```
/// use lookback::{host, ScanOp};
/// assert_eq!(host::inclusive_scan(&[3i32, 1, 4, 1, 5], ScanOp::Sum)?, [3, 4, 8, 9, 14]);
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn inclusive_scan<T: Element>(input: &[T], op: ScanOp) -> Result<Vec<T>> {
    check_op::<T>(op)?;
    let mut out = Vec::with_capacity(input.len());
    let mut iter = input.iter();
    if let Some(&first) = iter.next() {
        let mut run = first.to_acc();
        out.push(T::from_acc(run));
        for &x in iter {
            run = apply::<T>(op, run, x.to_acc())?;
            out.push(T::from_acc(run));
        }
    }
    Ok(out)
}

/// Exclusive scan seeded with `init`: `out[0] = init`, `out[i] = init op input[0] op … op input[i-1]`.
///
/// # Errors
/// [`Error::Unsupported`] for a bitwise operator on floats.
///
/// # Example
/// ```
/// use lookback::{host, ScanOp};
/// assert_eq!(host::exclusive_scan(&[3u8, 1, 4], 10, ScanOp::Sum)?, [10, 13, 14]);
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn exclusive_scan<T: Element>(input: &[T], init: T, op: ScanOp) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(input.len());
    check_op::<T>(op)?;
    let mut run = init.to_acc();
    for &x in input {
        out.push(T::from_acc(run));
        run = apply::<T>(op, run, x.to_acc())?;
    }
    Ok(out)
}
