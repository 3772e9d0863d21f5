//! Sequential reference implementations of every primitive: the test oracle, and the path to use on a
//! machine without a GPU. They follow the kernels' rules exactly (wrapping integer sums, NaN-ignoring
//! float min/max, f16/bf16 accumulated in f32 and rounded once per output item).
use crate::element::{Element, Flag};
use crate::error::{Error, Result, check_len};
use crate::op::ScanOp;
use crate::pred::Predicate;

fn apply<T: Element>(op: ScanOp, a: T::Acc, b: T::Acc) -> Result<T::Acc> {
    T::apply(op, a, b).ok_or(Error::Unsupported { operation: op.name(), dtype: T::DTYPE.name() })
}

/// Inclusive scan: `out[i] = input[0] op … op input[i]`.
///
/// Float `Min`/`Max` ignore NaN: `out[i]` is NaN only while every item so far is NaN.
///
/// # Errors
/// [`Error::Unsupported`] for a bitwise operator on floats.
///
/// # Example
/// ```
/// use lookback::{host, ScanOp};
/// assert_eq!(host::inclusive_scan(&[3i32, 1, 4, 1, 5], ScanOp::Sum)?, [3, 4, 8, 9, 14]);
/// let mins = host::inclusive_scan(&[f32::NAN, 2.0, f32::NAN, 1.0], ScanOp::Min)?;
/// assert!(mins[0].is_nan());
/// assert_eq!(&mins[1..], [2.0, 2.0, 1.0]);
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn inclusive_scan<T: Element>(input: &[T], op: ScanOp) -> Result<Vec<T>> {
    op.check(T::DTYPE)?;
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
    op.check(T::DTYPE)?;
    let mut run = init.to_acc();
    for &x in input {
        out.push(T::from_acc(run));
        run = apply::<T>(op, run, x.to_acc())?;
    }
    Ok(out)
}

/// The items for which `pred` holds, in order.
///
/// # Example
/// ```
/// use lookback::{host, Pred};
/// assert_eq!(host::select_if(&[5i32, -1, 8, 0], &Pred::gt(0)), [5, 8]);
/// ```
pub fn select_if<T: Element>(input: &[T], pred: &impl Predicate<T>) -> Vec<T> {
    input.iter().copied().filter(|&x| pred.holds(x)).collect()
}

/// The items whose flag is set, in order.
///
/// # Errors
/// [`Error::LengthMismatch`] if the lengths differ.
///
/// # Example
/// ```
/// use lookback::{Error, host};
/// assert_eq!(host::select_flagged(&[1.5f32, 2.5, 3.5], &[1u8, 0, 2])?, [1.5, 3.5]);
/// assert_eq!(host::select_flagged(&[1i8, 2, 3], &[false, true, true])?, [2, 3]);
/// let short = host::select_flagged(&[1i8, 2, 3], &[true]);
/// assert!(matches!(short, Err(Error::LengthMismatch { expected: 3, actual: 1, .. })));
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn select_flagged<T: Element, F: Flag>(input: &[T], flags: &[F]) -> Result<Vec<T>> {
    check_len("flags", input.len(), flags.len())?;
    Ok(input.iter().zip(flags).filter(|(_, f)| f.is_set()).map(|(&x, _)| x).collect())
}

/// The first item of each run of equal adjacent items (IEEE `==` for floats: every NaN is kept).
///
/// # Example
/// ```
/// use lookback::host;
/// assert_eq!(host::unique(&[1u8, 1, 2, 2, 1]), [1, 2, 1]);
/// ```
pub fn unique<T: Element>(input: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for (i, &x) in input.iter().enumerate() {
        if i == 0 || x.to_acc() != input[i - 1].to_acc() {
            out.push(x);
        }
    }
    out
}

/// How many items satisfy `pred`.
///
/// # Example
/// ```
/// use lookback::{host, Pred};
/// assert_eq!(host::count_if(&[3i32, -1, 0, -8], &Pred::lt(0)), 2);
/// // `ne` is true for NaN.
/// assert_eq!(host::count_if(&[1.0f32, f32::NAN, 3.0], &Pred::ne(1.0)), 2);
/// ```
pub fn count_if<T: Element>(input: &[T], pred: &impl Predicate<T>) -> usize {
    input.iter().filter(|&&x| pred.holds(x)).count()
}

/// One byte per item: 1 where `pred` holds.
///
/// # Example
/// ```
/// use lookback::{host, Pred};
/// let mask = host::mask_if(&[21.0f64, -9999.0, f64::NAN, 19.5], &Pred::ne(-9999.0));
/// assert_eq!(mask, [1, 0, 1, 1]);
/// ```
pub fn mask_if<T: Element>(input: &[T], pred: &impl Predicate<T>) -> Vec<u8> {
    input.iter().map(|&x| pred.holds(x) as u8).collect()
}

/// Stable partition: the items for which `pred` holds, then the others, both in order; and the count.
///
/// # Example
/// ```
/// use lookback::{host, Pred};
/// let (items, k) = host::partition_if(&[4i16, 9, 1, 12, 7, 3], &Pred::ge(5));
/// assert_eq!(k, 3);
/// assert_eq!(items, [9, 12, 7, 4, 1, 3]);
/// ```
pub fn partition_if<T: Element>(input: &[T], pred: &impl Predicate<T>) -> (Vec<T>, usize) {
    let (mut sel, rej): (Vec<T>, Vec<T>) = input.iter().partition(|&&x| pred.holds(x));
    let k = sel.len();
    sel.extend(rej);
    (sel, k)
}

/// CUB's one-pass layout: the selected items in order, then the rejected ones in reverse order.
///
/// # Example
/// ```
/// use lookback::{host, Pred};
/// let (items, k) = host::partition_if_reversed(&[4i16, 9, 1, 12, 7, 3], &Pred::ge(5));
/// assert_eq!(k, 3);
/// assert_eq!(items, [9, 12, 7, 3, 1, 4]);
/// ```
pub fn partition_if_reversed<T: Element>(input: &[T], pred: &impl Predicate<T>) -> (Vec<T>, usize) {
    let (mut sel, mut rej): (Vec<T>, Vec<T>) = input.iter().partition(|&&x| pred.holds(x));
    let k = sel.len();
    rej.reverse();
    sel.extend(rej);
    (sel, k)
}

mod reduce;
mod runs;
mod runs_by;
mod table;
mod user_by_key;
mod user_scan;
pub use reduce::{arg_max, arg_min, reduce, reduce_user};
pub(crate) use runs::check_reduce_op;
pub use runs::{
    exclusive_scan_by_key, inclusive_scan_by_key, non_trivial_runs, reduce_by_key, run_end_encode, run_length_encode,
    unique_by_key,
};
pub use runs_by::{non_trivial_runs_by, run_end_encode_by, run_length_encode_by, unique_by, unique_by_key_by};
pub use table::{count_if2, filter_columns, filter_rows, select_if2};
pub use user_by_key::{
    exclusive_scan_by_key_user, exclusive_scan_by_key_user_by, inclusive_scan_by_key_user,
    inclusive_scan_by_key_user_by, reduce_by_key_user, reduce_by_key_user_by,
};
pub use user_scan::{exclusive_scan_user, inclusive_scan_user};

/// Three-way partition: the items for which `first` holds, the others for which `second` holds, and the
/// rest — each in input order.
///
/// # Example
/// ```
/// use lookback::{host, Pred};
/// let (neg, small, big) = host::partition_three_way(&[-5i32, 3, 120, -1, 7, 300], &Pred::lt(0), &Pred::le(100));
/// assert_eq!((neg, small, big), (vec![-5, -1], vec![3, 7], vec![120, 300]));
/// ```
pub fn partition_three_way<T: Element>(
    input: &[T],
    first: &impl Predicate<T>,
    second: &impl Predicate<T>,
) -> (Vec<T>, Vec<T>, Vec<T>) {
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for &x in input {
        if first.holds(x) {
            a.push(x);
        } else if second.holds(x) {
            b.push(x);
        } else {
            c.push(x);
        }
    }
    (a, b, c)
}
