//! reduce_by_key and the scans by key with a user operator ([`UserScanOp`]) whose runs a user equality
//! ([`UserEq`]) cuts: the `Workspace` methods and one-shot functions. The kernel is the classic run agent
//! compiled at run time for the operator and the equality together (`cuda/rtc/by_key.cuh` with
//! `LOOKBACK_RTC_EQ`); the shared checks and launch are `user_by_key.rs`'s.
use crate::by_key::one_shot_scan;
use crate::encode::one_shot_runs;
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::launch::Workspace;
use crate::rtc::{DeviceType, UserEq, UserScanOp};
use crate::runs::Runs;
use crate::user_by_key::KeyCompare;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

impl Workspace {
    /// reduce_by_key with a user operator whose runs a user equality cuts: for each run (a maximal stretch
    /// of keys each of which `eq` says continues the one before it), the run's **first** key into
    /// `keys_out` and `store(load(v₀) ⊕ … ⊕ load(vₖ))` of its values into `values_out`, and the number of
    /// runs into `num_runs[0]`, on the device. Keys are any [`DeviceType`] of 1, 2, 4 or 8 bytes (your
    /// `#[repr(C)]` structs included). Otherwise as [`reduce_by_key_user_into`](Workspace::reduce_by_key_user_into):
    /// the classic run agent, compiled at run time for the operator and the equality together
    /// ([`UserScanOp::compile_by_key_by`] ahead of a capture).
    ///
    /// The built-in keyed reductions ([`reduce_by_key_into`](Workspace::reduce_by_key_into) with a
    /// [`ScanOp`](crate::ScanOp)) take no user equality: write the operator as a [`UserScanOp`] (`a + b`,
    /// identity `0`) to combine it with one.
    ///
    /// # Errors
    /// As [`reduce_by_key_user_into`](Workspace::reduce_by_key_user_into); a compile error or layout mismatch
    /// may be the equality's.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::{UserEq, UserScanOp}};
    /// // Sums per minute of timestamped values.
    /// // SAFETY: pure expressions.
    /// let sum = unsafe { UserScanOp::new("a + b", "0", |a: i32, b: i32| a.wrapping_add(b), 0)? };
    /// // SAFETY: as above.
    /// let minute = unsafe { UserEq::new("a / 60 == b / 60", |a: u32, b: u32| a / 60 == b / 60)? };
    /// let stamps = stream.clone_htod(&[0u32, 30, 59, 60, 130])?;
    /// let values = stream.clone_htod(&[1i32, 2, 3, 4, 5])?;
    /// let mut firsts = stream.alloc_zeros::<u32>(5)?;
    /// let mut sums = stream.alloc_zeros::<i32>(5)?;
    /// let mut num_runs = stream.alloc_zeros::<u64>(1)?;
    /// Workspace::new(&stream)
    ///     .reduce_by_key_user_by_into(&stamps, &values, &mut firsts, &mut sums, &mut num_runs, &sum, &minute)?;
    /// assert_eq!(stream.clone_dtoh(&num_runs)?, [3]);
    /// assert_eq!(stream.clone_dtoh(&firsts.slice(..3))?, [0, 60, 130]);
    /// assert_eq!(stream.clone_dtoh(&sums.slice(..3))?, [6, 4, 5]);
    /// # Ok(()) }
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn reduce_by_key_user_by_into<K, In, A, Out, IK, IV, OK, OV, N>(
        &mut self,
        keys: &IK,
        values: &IV,
        keys_out: &mut OK,
        values_out: &mut OV,
        num_runs: &mut N,
        op: &UserScanOp<In, A, Out>,
        eq: &UserEq<K>,
    ) -> Result<()>
    where
        K: DeviceType,
        In: DeviceType,
        A: DeviceType,
        Out: DeviceType,
        IK: DevicePtr<K>,
        IV: DevicePtr<In>,
        OK: DevicePtrMut<K>,
        OV: DevicePtrMut<Out>,
        N: DevicePtrMut<u64>,
    {
        self.reduce_by_key_user_with(keys, values, keys_out, values_out, num_runs, op, KeyCompare::User(&eq.code))
    }

    /// Segmented inclusive scan with a user operator whose runs a user equality cuts:
    /// `output[i] = store(load(vₛ) ⊕ … ⊕ load(vᵢ))`, `s` being the first item of `i`'s run (a maximal
    /// stretch of keys each of which `eq` says continues the one before it). Keys are any [`DeviceType`]
    /// of 1, 2, 4 or 8 bytes. Otherwise as [`Workspace::inclusive_scan_by_key_user_into`]; the kernel is
    /// [`reduce_by_key_user_by_into`](Self::reduce_by_key_user_by_into)'s.
    ///
    /// # Errors
    /// As [`reduce_by_key_user_by_into`](Self::reduce_by_key_user_by_into). An empty input writes nothing.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::{UserEq, UserScanOp}};
    /// // Running sums that restart when the key jumps by 10 or more.
    /// // SAFETY: pure expressions.
    /// let sum = unsafe { UserScanOp::new("a + b", "0u", |a: u32, b: u32| a.wrapping_add(b), 0)? };
    /// // SAFETY: as above.
    /// let close = unsafe { UserEq::new("b - a < 10", |a: i32, b: i32| b - a < 10)? };
    /// let keys = stream.clone_htod(&[0i32, 5, 12, 40, 41])?;
    /// let values = stream.clone_htod(&[1u32, 2, 3, 4, 5])?;
    /// let mut out = stream.alloc_zeros::<u32>(5)?;
    /// Workspace::new(&stream).inclusive_scan_by_key_user_by_into(&keys, &values, &mut out, &sum, &close)?;
    /// assert_eq!(stream.clone_dtoh(&out)?, [1, 3, 6, 4, 9]);
    /// # Ok(()) }
    /// ```
    pub fn inclusive_scan_by_key_user_by_into<K, In, A, Out, IK, IV, O>(
        &mut self,
        keys: &IK,
        values: &IV,
        output: &mut O,
        op: &UserScanOp<In, A, Out>,
        eq: &UserEq<K>,
    ) -> Result<()>
    where
        K: DeviceType,
        In: DeviceType,
        A: DeviceType,
        Out: DeviceType,
        IK: DevicePtr<K>,
        IV: DevicePtr<In>,
        O: DevicePtrMut<Out>,
    {
        self.scan_by_key_user_with(keys, values, output, None, op, KeyCompare::User(&eq.code))
    }

    /// Segmented exclusive scan with a user operator, seeded with `init`, whose runs a user equality cuts:
    /// as [`inclusive_scan_by_key_user_by_into`](Self::inclusive_scan_by_key_user_by_into), each item
    /// getting `store(init)` at its run's head and `store(init ⊕ load(vₛ) ⊕ … ⊕ load(vᵢ₋₁))` after it.
    ///
    /// # Errors
    /// As [`reduce_by_key_user_by_into`](Self::reduce_by_key_user_by_into). An empty input writes nothing.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::{UserEq, UserScanOp}};
    /// // SAFETY: pure expressions.
    /// let sum = unsafe { UserScanOp::new("a + b", "0u", |a: u32, b: u32| a.wrapping_add(b), 0)? };
    /// // SAFETY: as above.
    /// let close = unsafe { UserEq::new("b - a < 10", |a: i32, b: i32| b - a < 10)? };
    /// let keys = stream.clone_htod(&[0i32, 5, 12, 40, 41])?;
    /// let values = stream.clone_htod(&[1u32, 2, 3, 4, 5])?;
    /// let mut out = stream.alloc_zeros::<u32>(5)?;
    /// Workspace::new(&stream).exclusive_scan_by_key_user_by_into(&keys, &values, &mut out, 100, &sum, &close)?;
    /// assert_eq!(stream.clone_dtoh(&out)?, [100, 101, 103, 100, 104]);
    /// # Ok(()) }
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn exclusive_scan_by_key_user_by_into<K, In, A, Out, IK, IV, O>(
        &mut self,
        keys: &IK,
        values: &IV,
        output: &mut O,
        init: A,
        op: &UserScanOp<In, A, Out>,
        eq: &UserEq<K>,
    ) -> Result<()>
    where
        K: DeviceType,
        In: DeviceType,
        A: DeviceType,
        Out: DeviceType,
        IK: DevicePtr<K>,
        IV: DevicePtr<In>,
        O: DevicePtrMut<Out>,
    {
        self.scan_by_key_user_with(keys, values, output, Some(init), op, KeyCompare::User(&eq.code))
    }
}

/// [`Workspace::reduce_by_key_user_by_into`] into new buffers: the first key of each run by `eq` and its
/// reduction with a user operator (blocks until the number of runs is known).
///
/// # Errors
/// As [`Workspace::reduce_by_key_user_by_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
/// use lookback::rtc::{UserEq, UserScanOp};
/// // SAFETY: pure expressions.
/// let max = unsafe { UserScanOp::new("a > b ? a : b", "0u", |a: u32, b: u32| a.max(b), 0)? };
/// // SAFETY: as above.
/// let decade = unsafe { UserEq::new("a / 10 == b / 10", |a: u8, b: u8| a / 10 == b / 10)? };
/// let keys = stream.clone_htod(&[1u8, 9, 10, 25, 29])?;
/// let values = stream.clone_htod(&[4u32, 8, 1, 6, 3])?;
/// let maxima = lookback::reduce_by_key_user_by(&keys, &values, &max, &decade)?;
/// assert_eq!(maxima.to_vecs()?, (vec![1, 10, 25], vec![8, 1, 6]));
/// # Ok(()) }
/// ```
pub fn reduce_by_key_user_by<K, In, A, Out, IK, IV>(
    keys: &IK,
    values: &IV,
    op: &UserScanOp<In, A, Out>,
    eq: &UserEq<K>,
) -> Result<Runs<K, Out>>
where
    K: DeviceType,
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType,
    IK: DevicePtr<K>,
    IV: DevicePtr<In>,
{
    op.code.check_by_key_sizes()?;
    one_shot_runs(keys.stream(), keys.len(), |ws, k, v, count| {
        ws.reduce_by_key_user_by_into(keys, values, k, v, count, op, eq)
    })
}

/// [`Workspace::inclusive_scan_by_key_user_by_into`] into a new buffer.
///
/// # Errors
/// As [`Workspace::inclusive_scan_by_key_user_by_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
/// use lookback::rtc::{UserEq, UserScanOp};
/// // SAFETY: pure expressions.
/// let sum = unsafe { UserScanOp::new("a + b", "0u", |a: u32, b: u32| a.wrapping_add(b), 0)? };
/// // SAFETY: as above.
/// let decade = unsafe { UserEq::new("a / 10 == b / 10", |a: u8, b: u8| a / 10 == b / 10)? };
/// let keys = stream.clone_htod(&[1u8, 9, 10, 25, 29])?;
/// let values = stream.clone_htod(&[4u32, 8, 1, 6, 3])?;
/// let sums = lookback::inclusive_scan_by_key_user_by(&keys, &values, &sum, &decade)?;
/// assert_eq!(stream.clone_dtoh(&sums)?, [4, 12, 1, 6, 9]);
/// # Ok(()) }
/// ```
pub fn inclusive_scan_by_key_user_by<K, In, A, Out, IK, IV>(
    keys: &IK,
    values: &IV,
    op: &UserScanOp<In, A, Out>,
    eq: &UserEq<K>,
) -> Result<CudaSlice<Out>>
where
    K: DeviceType,
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType,
    IK: DevicePtr<K>,
    IV: DevicePtr<In>,
{
    op.code.check_by_key_sizes()?;
    one_shot_scan(keys.stream(), keys.len(), |ws, out| ws.inclusive_scan_by_key_user_by_into(keys, values, out, op, eq))
}

/// [`Workspace::exclusive_scan_by_key_user_by_into`] into a new buffer, seeded with `init`.
///
/// # Errors
/// As [`Workspace::exclusive_scan_by_key_user_by_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
/// use lookback::rtc::{UserEq, UserScanOp};
/// // SAFETY: pure expressions.
/// let sum = unsafe { UserScanOp::new("a + b", "0u", |a: u32, b: u32| a.wrapping_add(b), 0)? };
/// // SAFETY: as above.
/// let decade = unsafe { UserEq::new("a / 10 == b / 10", |a: u8, b: u8| a / 10 == b / 10)? };
/// let keys = stream.clone_htod(&[1u8, 9, 10, 25, 29])?;
/// let values = stream.clone_htod(&[4u32, 8, 1, 6, 3])?;
/// let sums = lookback::exclusive_scan_by_key_user_by(&keys, &values, 0, &sum, &decade)?;
/// assert_eq!(stream.clone_dtoh(&sums)?, [0, 4, 0, 0, 6]);
/// # Ok(()) }
/// ```
pub fn exclusive_scan_by_key_user_by<K, In, A, Out, IK, IV>(
    keys: &IK,
    values: &IV,
    init: A,
    op: &UserScanOp<In, A, Out>,
    eq: &UserEq<K>,
) -> Result<CudaSlice<Out>>
where
    K: DeviceType,
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType,
    IK: DevicePtr<K>,
    IV: DevicePtr<In>,
{
    op.code.check_by_key_sizes()?;
    one_shot_scan(keys.stream(), keys.len(), |ws, out| {
        ws.exclusive_scan_by_key_user_by_into(keys, values, out, init, op, eq)
    })
}
