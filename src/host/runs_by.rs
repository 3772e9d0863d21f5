//! Sequential references of unique and the run encodings by a user equality ([`UserEq`]): its closure
//! asked about each adjacent pair once, in order, `a` the earlier item, as the kernels ask the CUDA code.
use super::runs::runs_by;
#[cfg(doc)]
use crate::error::Error;
use crate::error::{Result, check_len};
use crate::rtc::{DeviceType, UserEq};

/// `(start, end)` of every run by `eq`.
fn runs_of<'a, K: DeviceType>(keys: &'a [K], eq: &'a UserEq<K>) -> impl Iterator<Item = (usize, usize)> + 'a {
    runs_by(keys, |a, b| eq.same_run(a, b))
}

/// The first item of each run, a run being a maximal stretch of items each of which `eq` says continues
/// the one before it.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::{host, rtc::UserEq};
/// // Not transitive: each step is small, so one run drifts from 1.0 to 2.2.
/// // SAFETY: a pure expression.
/// let near = unsafe { UserEq::new("fabsf(a - b) < 0.5f", |a: f32, b: f32| (a - b).abs() < 0.5)? };
/// assert_eq!(host::unique_by(&[1.0f32, 1.4, 1.8, 2.2, 9.0], &near), [1.0, 9.0]);
/// # Ok(()) }
/// ```
pub fn unique_by<K: DeviceType>(input: &[K], eq: &UserEq<K>) -> Vec<K> {
    runs_of(input, eq).map(|(s, _)| input[s]).collect()
}

/// The first item and the length of each run by `eq`.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::{host, rtc::UserEq};
/// // SAFETY: a pure expression.
/// let parity = unsafe { UserEq::new("(a & 1) == (b & 1)", |a: u16, b: u16| a & 1 == b & 1)? };
/// assert_eq!(host::run_length_encode_by(&[2u16, 4, 7, 9, 11, 6], &parity), (vec![2, 7, 6], vec![2, 3, 1]));
/// # Ok(()) }
/// ```
pub fn run_length_encode_by<K: DeviceType>(input: &[K], eq: &UserEq<K>) -> (Vec<K>, Vec<u64>) {
    runs_of(input, eq).map(|(s, e)| (input[s], (e - s) as u64)).unzip()
}

/// The first item of each run by `eq` and its end, the index one past its last item.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::{host, rtc::UserEq};
/// // SAFETY: a pure expression.
/// let parity = unsafe { UserEq::new("(a & 1) == (b & 1)", |a: u16, b: u16| a & 1 == b & 1)? };
/// assert_eq!(host::run_end_encode_by(&[2u16, 4, 7, 9, 11, 6], &parity), (vec![2, 7, 6], vec![2, 5, 6]));
/// # Ok(()) }
/// ```
pub fn run_end_encode_by<K: DeviceType>(input: &[K], eq: &UserEq<K>) -> (Vec<K>, Vec<u64>) {
    runs_of(input, eq).map(|(s, e)| (input[s], e as u64)).unzip()
}

/// The offset and length of every run by `eq` longer than one item.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::{host, rtc::UserEq};
/// // SAFETY: a pure expression.
/// let parity = unsafe { UserEq::new("(a & 1) == (b & 1)", |a: u16, b: u16| a & 1 == b & 1)? };
/// assert_eq!(host::non_trivial_runs_by(&[2u16, 4, 7, 9, 11, 6], &parity), (vec![0, 2], vec![2, 3]));
/// # Ok(()) }
/// ```
pub fn non_trivial_runs_by<K: DeviceType>(input: &[K], eq: &UserEq<K>) -> (Vec<u64>, Vec<u64>) {
    runs_of(input, eq).filter(|(s, e)| e - s > 1).map(|(s, e)| (s as u64, (e - s) as u64)).unzip()
}

/// The first key of each run of `keys` by `eq` and the value at the same position.
///
/// # Errors
/// [`Error::LengthMismatch`] if `values` is not as long as `keys`.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::{host, rtc::UserEq};
/// // SAFETY: a pure expression.
/// let block = unsafe { UserEq::new("(a >> 4) == (b >> 4)", |a: u32, b: u32| a >> 4 == b >> 4)? };
/// let (keys, values) = host::unique_by_key_by(&[1u32, 15, 16, 40, 47], &[10u16, 11, 12, 13, 14], &block)?;
/// assert_eq!((keys, values), (vec![1, 16, 40], vec![10, 12, 13]));
/// # Ok(()) }
/// ```
pub fn unique_by_key_by<K: DeviceType, V: Copy>(keys: &[K], values: &[V], eq: &UserEq<K>) -> Result<(Vec<K>, Vec<V>)> {
    check_len("values", keys.len(), values.len())?;
    Ok(runs_of(keys, eq).map(|(s, _)| (keys[s], values[s])).unzip())
}
