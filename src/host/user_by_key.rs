//! reduce_by_key and the scans by key with a user operator on the host: its Rust closures, run by run and
//! item by item, runs being as in the built-in keyed references (IEEE `==` for float keys).
use super::runs::{runs, runs_by};
use crate::element::Element;
#[cfg(doc)]
use crate::error::Error;
use crate::error::{Result, check_len};
use crate::rtc::{DeviceType, UserEq, UserScanOp};

/// The first key of each run of equal adjacent keys and `store(load(v₀) ⊕ … ⊕ load(vₖ))` of the run's
/// values, combined left to right from the first (the identity is not used: every run has an item).
///
/// # Errors
/// [`Error::LengthMismatch`] if `values` is not as long as `keys`.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::{host, rtc::UserScanOp};
/// // Affine maps x -> m·x + c (mod 2^32) composed in order: (m, c) packed in a u64, m high.
/// // SAFETY: pure expressions.
/// let compose = unsafe {
///     UserScanOp::new(
///         "((uint64_t)((uint32_t)(a >> 32) * (uint32_t)(b >> 32)) << 32) | (uint32_t)((uint32_t)(b >> 32) * (uint32_t)a + (uint32_t)b)",
///         "1ull << 32",
///         |a: u64, b: u64| {
///             let (am, ac, bm, bc) = ((a >> 32) as u32, a as u32, (b >> 32) as u32, b as u32);
///             (u64::from(am.wrapping_mul(bm)) << 32) | u64::from(bm.wrapping_mul(ac).wrapping_add(bc))
///         },
///         1 << 32,
///     )?
/// };
/// let (keys, maps) = host::reduce_by_key_user(&[0u8, 0, 1], &[2 << 32 | 1, 3 << 32 | 5, 7 << 32], &compose)?;
/// // 3·(2x + 1) + 5 = 6x + 8.
/// assert_eq!((keys, maps), (vec![0, 1], vec![6 << 32 | 8, 7 << 32]));
/// # Ok(()) }
/// ```
pub fn reduce_by_key_user<K: Element, In: DeviceType, A: DeviceType, Out: DeviceType>(
    keys: &[K],
    values: &[In],
    op: &UserScanOp<In, A, Out>,
) -> Result<(Vec<K>, Vec<Out>)> {
    reduce_runs(keys, values, op, runs(keys))
}

/// [`reduce_by_key_user`] with runs cut by a user equality's closure (each adjacent pair asked once, in
/// order): the first key of each run and the reduction of its values.
///
/// # Errors
/// [`Error::LengthMismatch`] if `values` is not as long as `keys`.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::{host, rtc::{UserEq, UserScanOp}};
/// // SAFETY: pure expressions.
/// let sum = unsafe { UserScanOp::new("a + b", "0", |a: i32, b: i32| a.wrapping_add(b), 0)? };
/// // SAFETY: as above.
/// let minute = unsafe { UserEq::new("a / 60 == b / 60", |a: u32, b: u32| a / 60 == b / 60)? };
/// let (firsts, sums) = host::reduce_by_key_user_by(&[0u32, 30, 59, 60, 130], &[1, 2, 3, 4, 5], &sum, &minute)?;
/// assert_eq!((firsts, sums), (vec![0, 60, 130], vec![6, 4, 5]));
/// # Ok(()) }
/// ```
pub fn reduce_by_key_user_by<K: DeviceType, In: DeviceType, A: DeviceType, Out: DeviceType>(
    keys: &[K],
    values: &[In],
    op: &UserScanOp<In, A, Out>,
    eq: &UserEq<K>,
) -> Result<(Vec<K>, Vec<Out>)> {
    reduce_runs(keys, values, op, runs_by(keys, |a, b| eq.same_run(a, b)))
}

/// The first key and the reduction of each of `runs` (`(start, end)`, in order).
fn reduce_runs<K: Copy, In: DeviceType, A: DeviceType, Out: DeviceType>(
    keys: &[K],
    values: &[In],
    op: &UserScanOp<In, A, Out>,
    runs: impl Iterator<Item = (usize, usize)>,
) -> Result<(Vec<K>, Vec<Out>)> {
    check_len("values", keys.len(), values.len())?;
    let h = &op.host;
    Ok(runs
        .map(|(s, e)| {
            let first = (h.load)(values[s]);
            let total = values[s + 1..e].iter().fold(first, |run, &v| (h.combine)(run, (h.load)(v)));
            (keys[s], (h.store)(total))
        })
        .unzip())
}

/// Segmented inclusive scan with a user operator's closures: each item gets `store` of its run's values
/// up to and including it, combined left to right.
///
/// # Errors
/// [`Error::LengthMismatch`] if `values` is not as long as `keys`.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::{host, rtc::UserScanOp};
/// // SAFETY: pure expressions.
/// let product = unsafe { UserScanOp::new("a * b", "1u", |a: u32, b: u32| a.wrapping_mul(b), 1)? };
/// assert_eq!(host::inclusive_scan_by_key_user(&[7i16, 7, 7, 3, 3], &[2, 3, 4, 5, 6], &product)?, [2, 6, 24, 5, 30]);
/// # Ok(()) }
/// ```
pub fn inclusive_scan_by_key_user<K: Element, In: DeviceType, A: DeviceType, Out: DeviceType>(
    keys: &[K],
    values: &[In],
    op: &UserScanOp<In, A, Out>,
) -> Result<Vec<Out>> {
    scan_runs(keys.len(), values, None, op, runs(keys))
}

/// Segmented exclusive scan with a user operator's closures, seeded with `init`: the first item of each
/// run gets `store(init)`, every other item `store(init ⊕ …)` of its run's values before it.
///
/// # Errors
/// [`Error::LengthMismatch`] if `values` is not as long as `keys`.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::{host, rtc::UserScanOp};
/// // SAFETY: pure expressions.
/// let sum = unsafe { UserScanOp::new("a + b", "0", |a: u64, b: u64| a.wrapping_add(b), 0)? };
/// let keys = [0u32, 0, 0, 9, 9];
/// assert_eq!(host::exclusive_scan_by_key_user(&keys, &[1, 2, 3, 4, 5], 100, &sum)?, [100, 101, 103, 100, 104]);
/// # Ok(()) }
/// ```
pub fn exclusive_scan_by_key_user<K: Element, In: DeviceType, A: DeviceType, Out: DeviceType>(
    keys: &[K],
    values: &[In],
    init: A,
    op: &UserScanOp<In, A, Out>,
) -> Result<Vec<Out>> {
    scan_runs(keys.len(), values, Some(init), op, runs(keys))
}

/// [`inclusive_scan_by_key_user`] with runs cut by a user equality's closure (each adjacent pair asked
/// once, in order).
///
/// # Errors
/// [`Error::LengthMismatch`] if `values` is not as long as `keys`.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::{host, rtc::{UserEq, UserScanOp}};
/// // SAFETY: pure expressions.
/// let sum = unsafe { UserScanOp::new("a + b", "0u", |a: u32, b: u32| a.wrapping_add(b), 0)? };
/// // SAFETY: as above.
/// let close = unsafe { UserEq::new("b - a < 10", |a: i32, b: i32| b - a < 10)? };
/// assert_eq!(host::inclusive_scan_by_key_user_by(&[0, 5, 12, 40, 41], &[1, 2, 3, 4, 5], &sum, &close)?, [1, 3, 6, 4, 9]);
/// # Ok(()) }
/// ```
pub fn inclusive_scan_by_key_user_by<K: DeviceType, In: DeviceType, A: DeviceType, Out: DeviceType>(
    keys: &[K],
    values: &[In],
    op: &UserScanOp<In, A, Out>,
    eq: &UserEq<K>,
) -> Result<Vec<Out>> {
    scan_runs(keys.len(), values, None, op, runs_by(keys, |a, b| eq.same_run(a, b)))
}

/// [`exclusive_scan_by_key_user`] with runs cut by a user equality's closure.
///
/// # Errors
/// [`Error::LengthMismatch`] if `values` is not as long as `keys`.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::{host, rtc::{UserEq, UserScanOp}};
/// // SAFETY: pure expressions.
/// let sum = unsafe { UserScanOp::new("a + b", "0u", |a: u32, b: u32| a.wrapping_add(b), 0)? };
/// // SAFETY: as above.
/// let close = unsafe { UserEq::new("b - a < 10", |a: i32, b: i32| b - a < 10)? };
/// assert_eq!(host::exclusive_scan_by_key_user_by(&[0, 5, 12, 40, 41], &[1, 2, 3, 4, 5], 0, &sum, &close)?, [0, 1, 3, 0, 4]);
/// # Ok(()) }
/// ```
pub fn exclusive_scan_by_key_user_by<K: DeviceType, In: DeviceType, A: DeviceType, Out: DeviceType>(
    keys: &[K],
    values: &[In],
    init: A,
    op: &UserScanOp<In, A, Out>,
    eq: &UserEq<K>,
) -> Result<Vec<Out>> {
    scan_runs(keys.len(), values, Some(init), op, runs_by(keys, |a, b| eq.same_run(a, b)))
}

/// The scan of each of `runs` (`(start, end)`, in order, covering `keys` keys), exclusive from `init`.
fn scan_runs<In: DeviceType, A: DeviceType, Out: DeviceType>(
    keys: usize,
    values: &[In],
    init: Option<A>,
    op: &UserScanOp<In, A, Out>,
    runs: impl Iterator<Item = (usize, usize)>,
) -> Result<Vec<Out>> {
    check_len("values", keys, values.len())?;
    let mut out = Vec::with_capacity(values.len());
    for (s, e) in runs {
        out.extend(op.host_scan(&values[s..e], init));
    }
    Ok(out)
}
