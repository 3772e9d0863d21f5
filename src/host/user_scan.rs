//! Scans with a user operator on the host: its Rust closures, item by item.
use crate::rtc::{DeviceType, UserScanOp};

/// Inclusive scan with a user operator's closures: `out[i] = store(load(input[0]) ⊕ … ⊕ load(input[i]))`,
/// combined left to right. The GPU combines in the same order but groups the operations differently, so
/// a float operator's results may differ from these in the last bits.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::rtc::UserScanOp;
/// // SAFETY: pure expressions.
/// let product = unsafe { UserScanOp::new("a * b", "1u", |a: u32, b: u32| a.wrapping_mul(b), 1)? };
/// assert_eq!(lookback::host::inclusive_scan_user(&[2, 3, 4], &product), [2, 6, 24]);
/// # Ok(()) }
/// ```
pub fn inclusive_scan_user<In: DeviceType, A: DeviceType, Out: DeviceType>(
    input: &[In],
    op: &UserScanOp<In, A, Out>,
) -> Vec<Out> {
    op.host_scan(input, None)
}

/// Exclusive scan with a user operator's closures, seeded with `init`: `out[0] = store(init)`, `out[i] =
/// store(init ⊕ load(input[0]) ⊕ … ⊕ load(input[i-1]))`.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::rtc::UserScanOp;
/// // SAFETY: pure expressions.
/// let offsets = unsafe {
///     UserScanOp::new("a + b", "0", |a: u64, b: u64| a + b, 0)?.with_load("(uint64_t)x", |x: u8| u64::from(x))?
/// };
/// assert_eq!(lookback::host::exclusive_scan_user(&[1u8, 0, 1, 1], 10, &offsets), [10, 11, 11, 12]);
/// # Ok(()) }
/// ```
pub fn exclusive_scan_user<In: DeviceType, A: DeviceType, Out: DeviceType>(
    input: &[In],
    init: A,
    op: &UserScanOp<In, A, Out>,
) -> Vec<Out> {
    op.host_scan(input, Some(init))
}
