//! The run encodings and unique_by_key by a user equality ([`UserEq`]): the `Workspace` methods and the
//! one-shot functions. The kernel is the classic run agent (`cuda/classic/runs.cuh`) compiled at run time
//! with the user's equality deciding where runs start (`cuda/rtc/runs.cuh`): one module per equality and
//! value size (none for the encodings). The register-tile kernels and the persistent engine have no
//! such kernel: the [`Engine`](crate::Engine) setting does not change these launches.
use crate::encode::one_shot_runs;
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::launch::{Workspace, zero_counts};
use crate::plan::Primitive;
use crate::rtc::{self, DeviceType, UserEq};
use crate::runs::{KeyedCall, RunLength, Runs, RunsMode};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

impl Workspace {
    /// One encoding launch by `eq`: `first`/`second` get (run's first item, length or end) or (offset,
    /// length).
    #[allow(clippy::too_many_arguments)]
    fn encode_by_into<K, L, FT, I, F, S, N>(
        &mut self,
        input: &I,
        first: &mut F,
        second: &mut S,
        num_runs: &mut N,
        mode: RunsMode,
        eq: &UserEq<K>,
    ) -> Result<()>
    where
        K: DeviceType,
        L: RunLength,
        I: DevicePtr<K>,
        F: DevicePtrMut<FT>,
        S: DevicePtrMut<L>,
        N: DevicePtrMut<u64>,
    {
        self.encode_call::<K, L, FT, I, F, S, N>(input, first, second, num_runs, mode, |ws, stream, call| {
            ws.runs_by::<K>(stream, call, mode, size_of::<L>() as u32, 0, eq)
        })
    }

    /// Compiles (or finds) the run agent for `eq` and values of `value_bytes` (0: the encodings), then
    /// launches it in `mode`. An empty input compiles nothing and writes a count of 0.
    fn runs_by<K: DeviceType>(
        &mut self,
        stream: &Arc<CudaStream>,
        call: KeyedCall,
        mode: RunsMode,
        length_bytes: u32,
        value_bytes: usize,
        eq: &UserEq<K>,
    ) -> Result<()> {
        if call.n == 0 {
            return zero_counts(stream, call.num_runs, 1);
        }
        let (kernel, _) = rtc::runs_kernel(stream.context(), &eq.code, value_bytes)?;
        let primitive = Primitive::UserByKey { kernel, key_bytes: size_of::<K>(), value_bytes };
        let job = call.job(primitive, mode, 0, length_bytes);
        // The user's equality reads no key parameters.
        self.runs_raw_with(stream, job, (0, 0))
    }

    /// Run-length encoding by a user equality: for each run (a maximal stretch of items each of which
    /// `eq` says continues the one before it), its **first** item into `values` and its length into
    /// `lengths`, in order, and the number of runs into `num_runs[0]`, on the device: nothing blocks the
    /// host. Both outputs must hold `input.len()` items; items past the count are left alone.
    ///
    /// Items are any [`DeviceType`] of 1, 2, 4 or 8 bytes. Runs on the classic run agent compiled at run
    /// time for the equality (the first call compiles it or finds it in the caches;
    /// [`UserEq::compile_encodings`] does that ahead, and must be called before capturing the call into
    /// a CUDA graph); the [`Engine`](crate::Engine) setting does not change the launch.
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`], [`Error::Overlap`] if an output overlaps the input or another output,
    /// [`Error::Unsupported`] for `u32` lengths of an input of 2^32 items or more,
    /// [`Error::ContextMismatch`], the errors of [`UserEq::compile`], [`Error::KernelsNotBuilt`],
    /// [`Error::Driver`]. On error nothing is written. An empty input writes a count of 0 and compiles
    /// nothing.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::UserEq};
    /// // Bit 5 ignored: ASCII letters compared without case.
    /// // SAFETY: a pure expression.
    /// let caseless = unsafe {
    ///     UserEq::new("(a | 0x20) == (b | 0x20)", |a: u8, b: u8| a | 0x20 == b | 0x20)?
    /// };
    /// let input = stream.clone_htod(b"aAAbBc")?;
    /// let mut values = stream.alloc_zeros::<u8>(6)?;
    /// let mut lengths = stream.alloc_zeros::<u32>(6)?;
    /// let mut num_runs = stream.alloc_zeros::<u64>(1)?;
    /// Workspace::new(&stream).run_length_encode_by_into(&input, &mut values, &mut lengths, &mut num_runs, &caseless)?;
    /// assert_eq!(stream.clone_dtoh(&num_runs)?, [3]);
    /// assert_eq!(stream.clone_dtoh(&values.slice(..3))?, b"abc");
    /// assert_eq!(stream.clone_dtoh(&lengths.slice(..3))?, [3, 2, 1]);
    /// # Ok(()) }
    /// ```
    pub fn run_length_encode_by_into<K, L, I, O, C, N>(
        &mut self,
        input: &I,
        values: &mut O,
        lengths: &mut C,
        num_runs: &mut N,
        eq: &UserEq<K>,
    ) -> Result<()>
    where
        K: DeviceType,
        L: RunLength,
        I: DevicePtr<K>,
        O: DevicePtrMut<K>,
        C: DevicePtrMut<L>,
        N: DevicePtrMut<u64>,
    {
        self.encode_by_into::<K, L, K, _, _, _, _>(input, values, lengths, num_runs, RunsMode::Encode, eq)
    }

    /// Run-end encoding by a user equality: as [`run_length_encode_by_into`](Self::run_length_encode_by_into),
    /// each run's end (the index one past its last item) instead of its length.
    ///
    /// # Errors
    /// As [`run_length_encode_by_into`](Self::run_length_encode_by_into).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::UserEq};
    /// // SAFETY: a pure expression.
    /// let parity = unsafe { UserEq::new("(a & 1) == (b & 1)", |a: u16, b: u16| a & 1 == b & 1)? };
    /// let input = stream.clone_htod(&[2u16, 4, 7, 9, 11, 6])?;
    /// let mut values = stream.alloc_zeros::<u16>(6)?;
    /// let mut ends = stream.alloc_zeros::<u64>(6)?;
    /// let mut num_runs = stream.alloc_zeros::<u64>(1)?;
    /// Workspace::new(&stream).run_end_encode_by_into(&input, &mut values, &mut ends, &mut num_runs, &parity)?;
    /// assert_eq!(stream.clone_dtoh(&num_runs)?, [3]);
    /// assert_eq!(stream.clone_dtoh(&ends.slice(..3))?, [2, 5, 6]);
    /// # Ok(()) }
    /// ```
    pub fn run_end_encode_by_into<K, L, I, O, E, N>(
        &mut self,
        input: &I,
        values: &mut O,
        ends: &mut E,
        num_runs: &mut N,
        eq: &UserEq<K>,
    ) -> Result<()>
    where
        K: DeviceType,
        L: RunLength,
        I: DevicePtr<K>,
        O: DevicePtrMut<K>,
        E: DevicePtrMut<L>,
        N: DevicePtrMut<u64>,
    {
        self.encode_by_into::<K, L, K, _, _, _, _>(input, values, ends, num_runs, RunsMode::Ends, eq)
    }

    /// The offset and length of every run longer than one item, runs as
    /// [`run_length_encode_by_into`](Self::run_length_encode_by_into) cuts them.
    ///
    /// # Errors
    /// As [`run_length_encode_by_into`](Self::run_length_encode_by_into).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::UserEq};
    /// // SAFETY: a pure expression.
    /// let parity = unsafe { UserEq::new("(a & 1) == (b & 1)", |a: u16, b: u16| a & 1 == b & 1)? };
    /// let input = stream.clone_htod(&[2u16, 4, 7, 9, 11, 6])?;
    /// let mut offsets = stream.alloc_zeros::<u32>(6)?;
    /// let mut lengths = stream.alloc_zeros::<u32>(6)?;
    /// let mut num_runs = stream.alloc_zeros::<u64>(1)?;
    /// Workspace::new(&stream).non_trivial_runs_by_into(&input, &mut offsets, &mut lengths, &mut num_runs, &parity)?;
    /// assert_eq!(stream.clone_dtoh(&num_runs)?, [2]);
    /// assert_eq!(stream.clone_dtoh(&offsets.slice(..2))?, [0, 2]);
    /// assert_eq!(stream.clone_dtoh(&lengths.slice(..2))?, [2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn non_trivial_runs_by_into<K, L, I, O, C, N>(
        &mut self,
        input: &I,
        offsets: &mut O,
        lengths: &mut C,
        num_runs: &mut N,
        eq: &UserEq<K>,
    ) -> Result<()>
    where
        K: DeviceType,
        L: RunLength,
        I: DevicePtr<K>,
        O: DevicePtrMut<L>,
        C: DevicePtrMut<L>,
        N: DevicePtrMut<u64>,
    {
        self.encode_by_into::<K, L, L, _, _, _, _>(input, offsets, lengths, num_runs, RunsMode::NonTrivial, eq)
    }

    /// unique_by_key by a user equality: the first key of each run of `keys` (runs as `eq` cuts them) and
    /// the value at the same position into `keys_out`/`values_out`, and the number of runs into
    /// `num_runs[0]` (on the device). Keys and values are any [`DeviceType`]s of 1, 2, 4 or 8 bytes. Engine
    /// and compile as in [`run_length_encode_by_into`](Self::run_length_encode_by_into)
    /// ([`UserEq::compile_unique_by_key`] ahead of a capture).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `values` is not as long as `keys`; [`Error::UnsupportedSize`] for
    /// values of other sizes; [`Error::OutputTooSmall`]; [`Error::Overlap`]; [`Error::ContextMismatch`];
    /// the errors of [`UserEq::compile`]; [`Error::KernelsNotBuilt`], [`Error::Driver`]. On error nothing
    /// is written.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::UserEq};
    /// // Keys in the same block of 16.
    /// // SAFETY: a pure expression.
    /// let block = unsafe { UserEq::new("(a >> 4) == (b >> 4)", |a: u32, b: u32| a >> 4 == b >> 4)? };
    /// let keys = stream.clone_htod(&[1u32, 15, 16, 40, 47])?;
    /// let values = stream.clone_htod(&[10u16, 11, 12, 13, 14])?;
    /// let mut keys_out = stream.alloc_zeros::<u32>(5)?;
    /// let mut values_out = stream.alloc_zeros::<u16>(5)?;
    /// let mut num_runs = stream.alloc_zeros::<u64>(1)?;
    /// Workspace::new(&stream)
    ///     .unique_by_key_by_into(&keys, &values, &mut keys_out, &mut values_out, &mut num_runs, &block)?;
    /// assert_eq!(stream.clone_dtoh(&num_runs)?, [3]);
    /// assert_eq!(stream.clone_dtoh(&keys_out.slice(..3))?, [1, 16, 40]);
    /// assert_eq!(stream.clone_dtoh(&values_out.slice(..3))?, [10, 12, 13]);
    /// # Ok(()) }
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn unique_by_key_by_into<K, V, IK, IV, OK, OV, N>(
        &mut self,
        keys: &IK,
        values: &IV,
        keys_out: &mut OK,
        values_out: &mut OV,
        num_runs: &mut N,
        eq: &UserEq<K>,
    ) -> Result<()>
    where
        K: DeviceType,
        V: DeviceType,
        IK: DevicePtr<K>,
        IV: DevicePtr<V>,
        OK: DevicePtrMut<K>,
        OV: DevicePtrMut<V>,
        N: DevicePtrMut<u64>,
    {
        self.keyed_runs_call(
            keys,
            values,
            keys_out,
            values_out,
            num_runs,
            rtc::check_value_size::<V>,
            |ws, stream, call| ws.runs_by::<K>(stream, call, RunsMode::Unique, 8, size_of::<V>(), eq),
        )
    }
}

/// [`Workspace::run_length_encode_by_into`] into new buffers: the first item and the length of each run by
/// `eq` (blocks until the number of runs is known). `L` is `u32` or `u64`.
///
/// # Errors
/// As [`Workspace::run_length_encode_by_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
/// use lookback::rtc::UserEq;
/// // SAFETY: a pure expression.
/// let sign = unsafe { UserEq::new("(a < 0) == (b < 0)", |a: i64, b: i64| (a < 0) == (b < 0))? };
/// let input = stream.clone_htod(&[-3i64, -1, 4, 5, 9, -2])?;
/// let runs = lookback::run_length_encode_by::<i64, u32, _>(&input, &sign)?;
/// assert_eq!(runs.to_vecs()?, (vec![-3, 4, -2], vec![2, 3, 1]));
/// # Ok(()) }
/// ```
pub fn run_length_encode_by<K: DeviceType, L: RunLength, I: DevicePtr<K>>(
    input: &I,
    eq: &UserEq<K>,
) -> Result<Runs<K, L>> {
    one_shot_runs(input.stream(), input.len(), |ws, values, lengths, count| {
        ws.run_length_encode_by_into(input, values, lengths, count, eq)
    })
}

/// [`Workspace::run_end_encode_by_into`] into new buffers. `L` is `u32` or `u64`.
///
/// # Errors
/// As [`Workspace::run_length_encode_by_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
/// // SAFETY: a pure expression.
/// let parity = unsafe { lookback::rtc::UserEq::new("(a & 1) == (b & 1)", |a: u8, b: u8| a & 1 == b & 1)? };
/// let input = stream.clone_htod(&[2u8, 4, 7, 9, 11, 6])?;
/// assert_eq!(lookback::run_end_encode_by::<u8, u64, _>(&input, &parity)?.to_vecs()?, (vec![2, 7, 6], vec![2, 5, 6]));
/// # Ok(()) }
/// ```
pub fn run_end_encode_by<K: DeviceType, L: RunLength, I: DevicePtr<K>>(
    input: &I,
    eq: &UserEq<K>,
) -> Result<Runs<K, L>> {
    one_shot_runs(input.stream(), input.len(), |ws, values, ends, count| {
        ws.run_end_encode_by_into(input, values, ends, count, eq)
    })
}

/// [`Workspace::non_trivial_runs_by_into`] into new buffers. `L` is `u32` or `u64`.
///
/// # Errors
/// As [`Workspace::run_length_encode_by_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
/// // SAFETY: a pure expression.
/// let parity = unsafe { lookback::rtc::UserEq::new("(a & 1) == (b & 1)", |a: u8, b: u8| a & 1 == b & 1)? };
/// let input = stream.clone_htod(&[2u8, 4, 7, 9, 11, 6])?;
/// let runs = lookback::non_trivial_runs_by::<u8, u32, _>(&input, &parity)?;
/// assert_eq!(runs.to_vecs()?, (vec![0, 2], vec![2, 3]));
/// # Ok(()) }
/// ```
pub fn non_trivial_runs_by<K: DeviceType, L: RunLength, I: DevicePtr<K>>(
    input: &I,
    eq: &UserEq<K>,
) -> Result<Runs<L, L>> {
    one_shot_runs(input.stream(), input.len(), |ws, offsets, lengths, count| {
        ws.non_trivial_runs_by_into(input, offsets, lengths, count, eq)
    })
}

/// [`Workspace::unique_by_key_by_into`] into new buffers (blocks until the number of runs is known).
///
/// # Errors
/// As [`Workspace::unique_by_key_by_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
/// // SAFETY: a pure expression.
/// let block = unsafe { lookback::rtc::UserEq::new("(a >> 4) == (b >> 4)", |a: u32, b: u32| a >> 4 == b >> 4)? };
/// let keys = stream.clone_htod(&[1u32, 15, 16, 40, 47])?;
/// let values = stream.clone_htod(&[10i8, 11, 12, 13, 14])?;
/// let firsts = lookback::unique_by_key_by(&keys, &values, &block)?;
/// assert_eq!(firsts.to_vecs()?, (vec![1, 16, 40], vec![10, 12, 13]));
/// # Ok(()) }
/// ```
pub fn unique_by_key_by<K, V, IK, IV>(keys: &IK, values: &IV, eq: &UserEq<K>) -> Result<Runs<K, V>>
where
    K: DeviceType,
    V: DeviceType,
    IK: DevicePtr<K>,
    IV: DevicePtr<V>,
{
    rtc::check_value_size::<V>()?;
    one_shot_runs(keys.stream(), keys.len(), |ws, k, v, count| ws.unique_by_key_by_into(keys, values, k, v, count, eq))
}
