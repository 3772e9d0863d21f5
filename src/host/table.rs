//! References of the table filter (`crate::table`) and of predicates over two columns.
use crate::error::{Result, check_len};
use crate::rtc::{DeviceType, UserPred2};

/// The indices of the rows `0..rows` for which `keep` holds, in order: what
/// [`Workspace::filter_indices_into`](crate::Workspace::filter_indices_into) writes.
///
/// # Example
/// ```
/// use lookback::host;
/// let mask = [true, false, true, true];
/// assert_eq!(host::filter_rows(mask.len(), |i| mask[i]), [0, 2, 3]);
/// let (a, b) = ([1, 5, 3], [2.0, 4.0, 3.0]);
/// assert_eq!(host::filter_rows(3, |i| a[i] as f64 > b[i]), [1]);
/// ```
pub fn filter_rows(rows: usize, mut keep: impl FnMut(usize) -> bool) -> Vec<usize> {
    (0..rows).filter(|&i| keep(i)).collect()
}

/// The rows of each column for which `keep(row)` holds, in order: what
/// [`Workspace::filter_columns_into`](crate::Workspace::filter_columns_into) writes, for columns of one
/// type (call it once per type for a table of several; `keep` decides by the row, so every call keeps the
/// same rows). `keep` runs once per row.
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) (`what: "column"`) if the columns differ in
/// length.
///
/// # Example
/// ```
/// use lookback::host;
/// let price = [9.5f32, 12.0, 30.0, 4.0];
/// let limit = [10.0f32, 10.0, 40.0, 1.0];
/// let ids = [7u32, 8, 9, 10];
/// let stock = [1u32, 0, 5, 2];
/// let kept = host::filter_columns(&[&ids, &stock], |i| price[i] < limit[i])?;
/// assert_eq!(kept, [vec![7, 9], vec![1, 5]]);
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn filter_columns<T: Copy>(columns: &[&[T]], keep: impl FnMut(usize) -> bool) -> Result<Vec<Vec<T>>> {
    let rows = columns.first().map_or(0, |c| c.len());
    for c in columns {
        check_len("column", rows, c.len())?;
    }
    let kept = filter_rows(rows, keep);
    Ok(columns.iter().map(|c| kept.iter().map(|&i| c[i]).collect()).collect())
}

/// The indices of the rows where `pred(a[i], b[i])` holds (the closure), in order.
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) (`what: "second predicate column"`) if `b`'s
/// length differs from `a`'s.
///
/// # Example
/// ```
/// use lookback::{host, rtc::UserPred2};
/// // SAFETY: a pure expression of a and b.
/// let greater = unsafe { UserPred2::new("a > b", |a: i32, b: i32| a > b)? };
/// assert_eq!(host::select_if2(&[1, 5, 3, 8], &[2, 4, 3, 1], &greater)?, [1, 3]);
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn select_if2<A: DeviceType, B: DeviceType>(a: &[A], b: &[B], pred: &UserPred2<A, B>) -> Result<Vec<usize>> {
    check_len("second predicate column", a.len(), b.len())?;
    Ok(filter_rows(a.len(), |i| pred.holds(a[i], b[i])))
}

/// The number of rows where `pred(a[i], b[i])` holds (the closure).
///
/// # Errors
/// As [`select_if2`].
///
/// # Example
/// ```
/// use lookback::{host, rtc::UserPred2};
/// // SAFETY: a pure expression of a and b.
/// let below = unsafe { UserPred2::new("a < b", |a: f64, b: f64| a < b)? };
/// assert_eq!(host::count_if2(&[1.0, f64::NAN, 3.0], &[2.0, 5.0, 3.0], &below)?, 1);
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn count_if2<A: DeviceType, B: DeviceType>(a: &[A], b: &[B], pred: &UserPred2<A, B>) -> Result<usize> {
    Ok(select_if2(a, b, pred)?.len())
}
