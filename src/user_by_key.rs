//! reduce_by_key and the scans by key with a user operator ([`UserScanOp`]): the workspace methods and
//! one-shot functions. The kernel is the classic run agent (`cuda/classic/runs.cuh`) compiled at run time
//! for the operator and the key size (`cuda/rtc/by_key.cuh`); there is no persistent kernel for them.
use crate::by_key::one_shot_scan;
use crate::element::Element;
use crate::encode::one_shot_runs;
#[cfg(doc)]
use crate::error::Error;
use crate::error::{Result, check_len};
use crate::launch::{Span, Workspace, check_disjoint, check_room, same_context, zero_counts};
use crate::plan::Primitive;
use crate::rtc::{DeviceType, EqCode, UserScanOp};
use crate::runs::{KeyedCall, Runs, RunsMode, key_equality};
use crate::user_scan::seed_words;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

/// How a keyed call's adjacent keys compare.
#[derive(Clone, Copy)]
pub(crate) enum KeyCompare<'a> {
    /// As the element type says (`crate::runs::key_equality`: IEEE `==` for floats).
    Params((u64, u64)),
    /// By a user equality compiled into the kernel.
    User(&'a EqCode),
}

impl KeyCompare<'_> {
    fn of<K: Element>() -> Self {
        KeyCompare::Params(key_equality(K::DTYPE))
    }
}

impl Workspace {
    /// reduce_by_key with a user operator: for each run of equal adjacent keys (as
    /// [`reduce_by_key_into`](Self::reduce_by_key_into) compares them: IEEE `==` for float keys, each NaN
    /// a run of its own), the run's **first** key into `keys_out` and `store(load(v₀) ⊕ … ⊕ load(vₖ))` of
    /// its values, combined in item order, into `values_out`, and the number of runs into `num_runs[0]`,
    /// on the device: nothing blocks the host. Both outputs must hold `keys.len()` items. The operator
    /// need not commute.
    ///
    /// Runs on the classic run agent, compiled at run time for the operator and the key size (the first
    /// call compiles it or finds it in the caches; [`UserScanOp::compile_by_key`] does that ahead, and
    /// must be called before capturing the call into a CUDA graph). The persistent engine has no kernel
    /// for user operators: the [`Engine`](crate::Engine) setting does not change the launch. Values `In`
    /// and accumulators `A` of 1, 2, 4 or 8 bytes; results `Out` of `In`'s size.
    /// [`Workspace::set_deterministic`] covers user operators here as in the user scans.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `values` is not as long as `keys`; [`Error::UnsupportedSize`] for
    /// sizes the run agent does not carry; [`Error::OutputTooSmall`]; [`Error::Overlap`] if an output
    /// overlaps an input or another output; [`Error::ContextMismatch`]; the errors of
    /// [`UserScanOp::compile_by_key`]; [`Error::KernelsNotBuilt`], [`Error::Driver`]. On error nothing is
    /// written. An empty input writes a count of 0 and compiles nothing.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::UserScanOp};
    /// // The largest |v| of each run, as u32.
    /// // SAFETY: pure expressions.
    /// let op = unsafe {
    ///     UserScanOp::new("a > b ? a : b", "0u", |a: u32, b: u32| a.max(b), 0)?
    ///         .with_load("(uint32_t)(x < 0 ? -(int64_t)x : x)", |x: i32| x.unsigned_abs())?
    ///         .with_store("(int32_t)a", |a: u32| a as i32)?
    /// };
    /// let keys = stream.clone_htod(&[1u8, 1, 2, 2, 2, 1])?;
    /// let values = stream.clone_htod(&[-10i32, 2, 1, -7, 3, 5])?;
    /// let mut keys_out = stream.alloc_zeros::<u8>(6)?;
    /// let mut maxima = stream.alloc_zeros::<i32>(6)?;
    /// let mut num_runs = stream.alloc_zeros::<u64>(1)?;
    /// let mut ws = Workspace::new(&stream);
    /// ws.reduce_by_key_user_into(&keys, &values, &mut keys_out, &mut maxima, &mut num_runs, &op)?;
    /// assert_eq!(stream.clone_dtoh(&num_runs)?, [3]);
    /// assert_eq!(stream.clone_dtoh(&keys_out.slice(..3))?, [1, 2, 1]);
    /// assert_eq!(stream.clone_dtoh(&maxima.slice(..3))?, [10, 7, 5]);
    /// # Ok(()) }
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn reduce_by_key_user_into<K, In, A, Out, IK, IV, OK, OV, N>(
        &mut self,
        keys: &IK,
        values: &IV,
        keys_out: &mut OK,
        values_out: &mut OV,
        num_runs: &mut N,
        op: &UserScanOp<In, A, Out>,
    ) -> Result<()>
    where
        K: Element,
        In: DeviceType,
        A: DeviceType,
        Out: DeviceType,
        IK: DevicePtr<K>,
        IV: DevicePtr<In>,
        OK: DevicePtrMut<K>,
        OV: DevicePtrMut<Out>,
        N: DevicePtrMut<u64>,
    {
        self.reduce_by_key_user_with(keys, values, keys_out, values_out, num_runs, op, KeyCompare::of::<K>())
    }

    /// reduce_by_key with a user operator, keys compared as `compare` says.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn reduce_by_key_user_with<K, In, A, Out, IK, IV, OK, OV, N>(
        &mut self,
        keys: &IK,
        values: &IV,
        keys_out: &mut OK,
        values_out: &mut OV,
        num_runs: &mut N,
        op: &UserScanOp<In, A, Out>,
        compare: KeyCompare<'_>,
    ) -> Result<()>
    where
        In: DeviceType,
        A: DeviceType,
        Out: DeviceType,
        IK: DevicePtr<K>,
        IV: DevicePtr<In>,
        OK: DevicePtrMut<K>,
        OV: DevicePtrMut<Out>,
        N: DevicePtrMut<u64>,
    {
        let check = || op.code.check_by_key_sizes();
        self.keyed_runs_call(keys, values, keys_out, values_out, num_runs, check, |ws, stream, call| {
            ws.user_runs::<K, In, A, Out>(stream, call, RunsMode::Reduce, 0, op, compare)
        })
    }

    /// Segmented inclusive scan with a user operator: `output[i] = store(load(vₛ) ⊕ … ⊕ load(vᵢ))`, `s`
    /// being the first item of `i`'s run of equal adjacent keys (compared as in
    /// [`reduce_by_key_user_into`](Self::reduce_by_key_user_into)). `output` must hold `keys.len()` items
    /// and may not overlap the inputs. Engine, compile, sizes and determinism as in
    /// [`reduce_by_key_user_into`](Self::reduce_by_key_user_into).
    ///
    /// # Errors
    /// As [`reduce_by_key_user_into`](Self::reduce_by_key_user_into). An empty input writes nothing.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::UserScanOp};
    /// // Running products per run, mod 2^32.
    /// // SAFETY: pure expressions.
    /// let product = unsafe { UserScanOp::new("a * b", "1u", |a: u32, b: u32| a.wrapping_mul(b), 1)? };
    /// let keys = stream.clone_htod(&[7i16, 7, 7, 3, 3])?;
    /// let values = stream.clone_htod(&[2u32, 3, 4, 5, 6])?;
    /// let mut out = stream.alloc_zeros::<u32>(5)?;
    /// Workspace::new(&stream).inclusive_scan_by_key_user_into(&keys, &values, &mut out, &product)?;
    /// assert_eq!(stream.clone_dtoh(&out)?, [2, 6, 24, 5, 30]);
    /// # Ok(()) }
    /// ```
    pub fn inclusive_scan_by_key_user_into<K, In, A, Out, IK, IV, O>(
        &mut self,
        keys: &IK,
        values: &IV,
        output: &mut O,
        op: &UserScanOp<In, A, Out>,
    ) -> Result<()>
    where
        K: Element,
        In: DeviceType,
        A: DeviceType,
        Out: DeviceType,
        IK: DevicePtr<K>,
        IV: DevicePtr<In>,
        O: DevicePtrMut<Out>,
    {
        self.scan_by_key_user_into(keys, values, output, None, op)
    }

    /// Segmented exclusive scan with a user operator, seeded with `init`: the first item of each run gets
    /// `store(init)`, every other item `store(init ⊕ load(vₛ) ⊕ … ⊕ load(vᵢ₋₁))` over its run's values
    /// before it. Otherwise as [`inclusive_scan_by_key_user_into`](Self::inclusive_scan_by_key_user_into).
    ///
    /// # Errors
    /// As [`reduce_by_key_user_into`](Self::reduce_by_key_user_into). An empty input writes nothing.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::UserScanOp};
    /// // Offsets within each run, from 100.
    /// // SAFETY: pure expressions.
    /// let sum = unsafe { UserScanOp::new("a + b", "0", |a: u64, b: u64| a.wrapping_add(b), 0)? };
    /// let keys = stream.clone_htod(&[0u32, 0, 0, 9, 9])?;
    /// let values = stream.clone_htod(&[1u64, 2, 3, 4, 5])?;
    /// let mut out = stream.alloc_zeros::<u64>(5)?;
    /// Workspace::new(&stream).exclusive_scan_by_key_user_into(&keys, &values, &mut out, 100, &sum)?;
    /// assert_eq!(stream.clone_dtoh(&out)?, [100, 101, 103, 100, 104]);
    /// # Ok(()) }
    /// ```
    pub fn exclusive_scan_by_key_user_into<K, In, A, Out, IK, IV, O>(
        &mut self,
        keys: &IK,
        values: &IV,
        output: &mut O,
        init: A,
        op: &UserScanOp<In, A, Out>,
    ) -> Result<()>
    where
        K: Element,
        In: DeviceType,
        A: DeviceType,
        Out: DeviceType,
        IK: DevicePtr<K>,
        IV: DevicePtr<In>,
        O: DevicePtrMut<Out>,
    {
        self.scan_by_key_user_into(keys, values, output, Some(init), op)
    }

    fn scan_by_key_user_into<K, In, A, Out, IK, IV, O>(
        &mut self,
        keys: &IK,
        values: &IV,
        output: &mut O,
        init: Option<A>,
        op: &UserScanOp<In, A, Out>,
    ) -> Result<()>
    where
        K: Element,
        In: DeviceType,
        A: DeviceType,
        Out: DeviceType,
        IK: DevicePtr<K>,
        IV: DevicePtr<In>,
        O: DevicePtrMut<Out>,
    {
        self.scan_by_key_user_with(keys, values, output, init, op, KeyCompare::of::<K>())
    }

    /// A scan by key with a user operator (exclusive with `init`), keys compared as `compare` says.
    pub(crate) fn scan_by_key_user_with<K, In, A, Out, IK, IV, O>(
        &mut self,
        keys: &IK,
        values: &IV,
        output: &mut O,
        init: Option<A>,
        op: &UserScanOp<In, A, Out>,
        compare: KeyCompare<'_>,
    ) -> Result<()>
    where
        In: DeviceType,
        A: DeviceType,
        Out: DeviceType,
        IK: DevicePtr<K>,
        IV: DevicePtr<In>,
        O: DevicePtrMut<Out>,
    {
        let n = keys.len();
        check_len("values", n, values.len())?;
        op.code.check_by_key_sizes()?;
        check_room("output", n, output.len())?;
        let stream = keys.stream().clone();
        same_context(&stream, values.stream())?;
        same_context(&stream, output.stream())?;
        self.enter(&stream)?;
        let (k, _k) = keys.device_ptr(&stream);
        let (v, _v) = values.device_ptr(&stream);
        let out_len = output.len();
        let (o, _o) = output.device_ptr_mut(&stream);
        check_disjoint(
            &[Span::new::<K>("keys", k, n), Span::new::<In>("values", v, n)],
            &[Span::new::<Out>("output", o, out_len)],
        )?;
        let call = KeyedCall { keys: k, values: v, out_keys: 0, out_values: o, num_runs: 0, n };
        let (mode, seed) = match init {
            Some(init) => (RunsMode::ScanExclusive, seed_words(init)[0]),
            None => (RunsMode::ScanInclusive, 0),
        };
        self.user_runs::<K, In, A, Out>(&stream, call, mode, seed, op, compare)
    }

    /// Compiles (or finds) the keyed kernel for `op` and keys of type `K` compared as `compare` says, then
    /// launches it in `mode`. An empty input compiles nothing: reduce_by_key writes a count of 0, the
    /// scans nothing.
    #[allow(clippy::too_many_arguments)]
    fn user_runs<K, In: DeviceType, A: DeviceType, Out: DeviceType>(
        &mut self,
        stream: &Arc<CudaStream>,
        call: KeyedCall,
        mode: RunsMode,
        seed: u64,
        op: &UserScanOp<In, A, Out>,
        compare: KeyCompare<'_>,
    ) -> Result<()> {
        if call.n == 0 {
            if mode == RunsMode::Reduce {
                zero_counts(stream, call.num_runs, 1)?;
            }
            return Ok(());
        }
        let (eq, key_params) = match compare {
            KeyCompare::Params(params) => (None, params),
            // The user's equality reads no key parameters.
            KeyCompare::User(code) => (Some(code), (0, 0)),
        };
        let (kernel, _) = crate::rtc::by_key_kernel(stream.context(), &op.code, size_of::<K>(), eq)?;
        let primitive = Primitive::UserByKey { kernel, key_bytes: size_of::<K>(), value_bytes: size_of::<In>() };
        self.runs_raw_with(stream, call.job(primitive, mode, seed, 8), key_params)
    }
}

/// [`Workspace::reduce_by_key_user_into`] into new buffers: the first key of each run and its reduction
/// with a user operator (blocks until the number of runs is known).
///
/// # Errors
/// As [`Workspace::reduce_by_key_user_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
/// use lookback::rtc::UserScanOp;
/// // SAFETY: pure expressions.
/// let sum = unsafe { UserScanOp::new("a + b", "0", |a: i64, b: i64| a.wrapping_add(b), 0)? };
/// let keys = stream.clone_htod(&[1u32, 1, 2, 2, 2, 1])?;
/// let values = stream.clone_htod(&[10i64, 20, 1, 2, 3, 7])?;
/// let sums = lookback::reduce_by_key_user(&keys, &values, &sum)?;
/// assert_eq!(sums.to_vecs()?, (vec![1, 2, 1], vec![30, 6, 7]));
/// # Ok(()) }
/// ```
pub fn reduce_by_key_user<K, In, A, Out, IK, IV>(
    keys: &IK,
    values: &IV,
    op: &UserScanOp<In, A, Out>,
) -> Result<Runs<K, Out>>
where
    K: Element,
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType,
    IK: DevicePtr<K>,
    IV: DevicePtr<In>,
{
    op.code.check_by_key_sizes()?;
    one_shot_runs(keys.stream(), keys.len(), |ws, k, v, count| {
        ws.reduce_by_key_user_into(keys, values, k, v, count, op)
    })
}

/// [`Workspace::inclusive_scan_by_key_user_into`] into a new buffer.
///
/// # Errors
/// As [`Workspace::inclusive_scan_by_key_user_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
/// use lookback::rtc::UserScanOp;
/// // SAFETY: pure expressions.
/// let min = unsafe { UserScanOp::new("b < a ? b : a", "0xffffffffu", |a: u32, b: u32| a.min(b), u32::MAX)? };
/// let keys = stream.clone_htod(&[5i32, 5, 6, 6])?;
/// let values = stream.clone_htod(&[3u32, 1, 4, 2])?;
/// let mins = lookback::inclusive_scan_by_key_user(&keys, &values, &min)?;
/// assert_eq!(stream.clone_dtoh(&mins)?, [3, 1, 4, 2]);
/// # Ok(()) }
/// ```
pub fn inclusive_scan_by_key_user<K, In, A, Out, IK, IV>(
    keys: &IK,
    values: &IV,
    op: &UserScanOp<In, A, Out>,
) -> Result<CudaSlice<Out>>
where
    K: Element,
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType,
    IK: DevicePtr<K>,
    IV: DevicePtr<In>,
{
    op.code.check_by_key_sizes()?;
    one_shot_scan(keys.stream(), keys.len(), |ws, out| ws.inclusive_scan_by_key_user_into(keys, values, out, op))
}

/// [`Workspace::exclusive_scan_by_key_user_into`] into a new buffer, seeded with `init`.
///
/// # Errors
/// As [`Workspace::exclusive_scan_by_key_user_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
/// use lookback::rtc::UserScanOp;
/// // SAFETY: pure expressions.
/// let sum = unsafe { UserScanOp::new("a + b", "0u", |a: u32, b: u32| a.wrapping_add(b), 0)? };
/// let keys = stream.clone_htod(&[5i32, 5, 6, 6])?;
/// let values = stream.clone_htod(&[3u32, 1, 4, 2])?;
/// let sums = lookback::exclusive_scan_by_key_user(&keys, &values, 0, &sum)?;
/// assert_eq!(stream.clone_dtoh(&sums)?, [0, 3, 0, 4]);
/// # Ok(()) }
/// ```
pub fn exclusive_scan_by_key_user<K, In, A, Out, IK, IV>(
    keys: &IK,
    values: &IV,
    init: A,
    op: &UserScanOp<In, A, Out>,
) -> Result<CudaSlice<Out>>
where
    K: Element,
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType,
    IK: DevicePtr<K>,
    IV: DevicePtr<In>,
{
    op.code.check_by_key_sizes()?;
    one_shot_scan(keys.stream(), keys.len(), |ws, out| ws.exclusive_scan_by_key_user_into(keys, values, out, init, op))
}
