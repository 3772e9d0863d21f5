//! Sequential references of the run-based primitives: runs are maximal stretches of equal adjacent keys,
//! equality being IEEE `==` for floats (`-0.0 == 0.0`; a NaN equals nothing, so each NaN is a run of its
//! own).
use crate::element::Element;
use crate::error::{Error, Result, check_len};
use crate::op::ScanOp;

/// Whether `a` and `b` belong to the same run (IEEE `==` for floats).
fn same<T: Element>(a: T, b: T) -> bool {
    a.to_acc() == b.to_acc()
}

/// `(start, end)` of every run, in order.
pub(super) fn runs<T: Element>(keys: &[T]) -> impl Iterator<Item = (usize, usize)> + '_ {
    runs_by(keys, same)
}

/// `(start, end)` of every run, in order, item `i + 1` continuing item `i`'s run when `same(keys[i],
/// keys[i + 1])`: each adjacent pair asked once, in order, so `same` need not be transitive.
pub(super) fn runs_by<'a, T: Copy>(
    keys: &'a [T],
    same: impl Fn(T, T) -> bool + 'a,
) -> impl Iterator<Item = (usize, usize)> + 'a {
    let mut start = 0;
    (0..keys.len()).filter_map(move |i| {
        let last = i + 1 == keys.len() || !same(keys[i], keys[i + 1]);
        if !last {
            return None;
        }
        let run = (start, i + 1);
        start = i + 1;
        Some(run)
    })
}

fn check_pair(keys: usize, values: usize) -> Result<()> {
    check_len("values", keys, values)
}

/// Keyed reductions support `Sum`, `Min` and `Max`.
pub(crate) fn check_reduce_op<V: Element>(op: ScanOp) -> Result<()> {
    match op {
        ScanOp::Sum | ScanOp::Min | ScanOp::Max => Ok(()),
        _ => Err(Error::Unsupported { operation: op.name(), dtype: V::DTYPE.name() }),
    }
}

fn reduce<V: Element>(op: ScanOp, a: V::Acc, b: V::Acc) -> V::Acc {
    V::apply(op, a, b).expect("Sum, Min and Max exist for every element type")
}

/// The first key of each run of equal adjacent keys and the reduction of the run's values.
///
/// # Errors
/// [`Error::LengthMismatch`] if `values` is not as long as `keys`; [`Error::Unsupported`] for an operator
/// other than `Sum`, `Min` and `Max`.
///
/// # Example
/// ```
/// use lookback::{host, ScanOp};
/// let keys = [1u32, 1, 2, 2, 2, 1];
/// let values = [10i64, 20, 1, 2, 3, 7];
/// assert_eq!(host::reduce_by_key(&keys, &values, ScanOp::Sum)?, (vec![1, 2, 1], vec![30, 6, 7]));
/// assert_eq!(host::reduce_by_key(&keys, &values, ScanOp::Max)?.1, [20, 3, 7]);
/// // Each NaN key is a run of its own; -0.0 and 0.0 are one run.
/// let (k, v) = host::reduce_by_key(&[f32::NAN, f32::NAN, -0.0, 0.0], &[1u8, 2, 3, 4], ScanOp::Sum)?;
/// assert_eq!((k.len(), v), (3, vec![1, 2, 7]));
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn reduce_by_key<K: Element, V: Element>(keys: &[K], values: &[V], op: ScanOp) -> Result<(Vec<K>, Vec<V>)> {
    check_pair(keys.len(), values.len())?;
    check_reduce_op::<V>(op)?;
    Ok(runs(keys)
        .map(|(s, e)| {
            let total = values[s + 1..e].iter().fold(values[s].to_acc(), |acc, &v| reduce::<V>(op, acc, v.to_acc()));
            (keys[s], V::from_acc(total))
        })
        .unzip())
}

/// The first key of each run of equal adjacent keys and the value at the same position.
///
/// # Errors
/// [`Error::LengthMismatch`] if `values` is not as long as `keys`.
///
/// # Example
/// ```
/// use lookback::host;
/// let (keys, values) = host::unique_by_key(&[4i8, 4, 5, 4], &[1.5f64, 2.5, 3.5, 4.5])?;
/// assert_eq!((keys, values), (vec![4, 5, 4], vec![1.5, 3.5, 4.5]));
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn unique_by_key<K: Element, V: Element>(keys: &[K], values: &[V]) -> Result<(Vec<K>, Vec<V>)> {
    check_pair(keys.len(), values.len())?;
    Ok(runs(keys).map(|(s, _)| (keys[s], values[s])).unzip())
}

/// The value and the length of each run.
///
/// # Example
/// ```
/// use lookback::host;
/// assert_eq!(host::run_length_encode(&[7u8, 7, 7, 2, 7]), (vec![7, 2, 7], vec![3, 1, 1]));
/// ```
pub fn run_length_encode<T: Element>(input: &[T]) -> (Vec<T>, Vec<u64>) {
    runs(input).map(|(s, e)| (input[s], (e - s) as u64)).unzip()
}

/// The value of each run and its end: the index one past its last item (Apache Arrow's run-end
/// encoding; the last end is the input's length).
///
/// # Example
/// ```
/// use lookback::host;
/// assert_eq!(host::run_end_encode(&[7u8, 7, 7, 2, 7]), (vec![7, 2, 7], vec![3, 4, 5]));
/// ```
pub fn run_end_encode<T: Element>(input: &[T]) -> (Vec<T>, Vec<u64>) {
    runs(input).map(|(s, e)| (input[s], e as u64)).unzip()
}

/// The offset and length of every run longer than one item.
///
/// # Example
/// ```
/// use lookback::host;
/// assert_eq!(host::non_trivial_runs(&[1i32, 2, 2, 3, 4, 4, 4]), (vec![1, 4], vec![2, 3]));
/// ```
pub fn non_trivial_runs<T: Element>(input: &[T]) -> (Vec<u64>, Vec<u64>) {
    runs(input).filter(|(s, e)| e - s > 1).map(|(s, e)| (s as u64, (e - s) as u64)).unzip()
}

/// Segmented inclusive scan: the scan restarts at the first item of each run of equal adjacent keys.
///
/// # Errors
/// As [`reduce_by_key`].
///
/// # Example
/// ```
/// use lookback::{host, ScanOp};
/// let keys = [0u16, 0, 0, 9, 9];
/// assert_eq!(host::inclusive_scan_by_key(&keys, &[1i32, 2, 3, 4, 5], ScanOp::Sum)?, [1, 3, 6, 4, 9]);
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn inclusive_scan_by_key<K: Element, V: Element>(keys: &[K], values: &[V], op: ScanOp) -> Result<Vec<V>> {
    check_pair(keys.len(), values.len())?;
    check_reduce_op::<V>(op)?;
    let mut out = Vec::with_capacity(values.len());
    for (s, e) in runs(keys) {
        let mut acc = values[s].to_acc();
        out.push(V::from_acc(acc));
        for &v in &values[s + 1..e] {
            acc = reduce::<V>(op, acc, v.to_acc());
            out.push(V::from_acc(acc));
        }
    }
    Ok(out)
}

/// Segmented exclusive scan: the first item of each run gets `init`, every other item `init` combined
/// with the run's items before it.
///
/// # Errors
/// As [`reduce_by_key`].
///
/// # Example
/// ```
/// use lookback::{host, ScanOp};
/// let keys = [0u16, 0, 0, 9, 9];
/// assert_eq!(host::exclusive_scan_by_key(&keys, &[1i32, 2, 3, 4, 5], 100, ScanOp::Sum)?, [100, 101, 103, 100, 104]);
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn exclusive_scan_by_key<K: Element, V: Element>(keys: &[K], values: &[V], init: V, op: ScanOp) -> Result<Vec<V>> {
    check_pair(keys.len(), values.len())?;
    check_reduce_op::<V>(op)?;
    let mut out = Vec::with_capacity(values.len());
    for (s, e) in runs(keys) {
        let mut acc = init.to_acc();
        for &v in &values[s..e] {
            out.push(V::from_acc(acc));
            acc = reduce::<V>(op, acc, v.to_acc());
        }
    }
    Ok(out)
}
