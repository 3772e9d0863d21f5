//! Keyed primitives: `reduce_by_key`, `unique_by_key`, and the segmented scans `inclusive_scan_by_key` /
//! `exclusive_scan_by_key` — one launch each (see `cuda/classic/runs.cuh`).
use crate::element::Element;
use crate::encode::one_shot_runs;
#[cfg(doc)]
use crate::error::Error;
use crate::error::{Result, check_len};
use crate::host::check_reduce_op;
use crate::launch::{Span, Workspace, check_disjoint, check_room, same_context};
use crate::op::ScanOp;
use crate::plan::{Elem, Primitive};
use crate::runs::{Runs, RunsJob, RunsMode};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr};
use std::sync::Arc;

impl Workspace {
    /// Reduce or unique by key: `keys_out[r]` = first key of run r, `values_out[r]` = its result.
    #[allow(clippy::too_many_arguments)]
    fn keyed_runs_into<K, V, IK, IV, OK, OV, N>(
        &mut self,
        keys: &IK,
        values: &IV,
        keys_out: &mut OK,
        values_out: &mut OV,
        num_runs: &mut N,
        reduce: Option<ScanOp>,
    ) -> Result<()>
    where
        K: Element,
        V: Element,
        IK: DevicePtr<K>,
        IV: DevicePtr<V>,
        OK: DevicePtrMut<K>,
        OV: DevicePtrMut<V>,
        N: DevicePtrMut<u64>,
    {
        let check = || reduce.map_or(Ok(()), check_reduce_op::<V>);
        self.keyed_runs_call(keys, values, keys_out, values_out, num_runs, check, |ws, stream, call| {
            let (key_bytes, value) = (size_of::<K>(), Elem::of::<V>());
            let (primitive, mode) = match reduce {
                Some(op) => (Primitive::ReduceByKey { op, key_bytes, value }, RunsMode::Reduce),
                None => (Primitive::UniqueByKey { key_bytes, value }, RunsMode::Unique),
            };
            ws.runs_raw::<K>(stream, call.job(primitive, mode, 0, 8))
        })
    }

    /// Segmented scan: `output[i]` = the scan of `values` restarted at each run of `keys`.
    fn scan_by_key_into<K, V, IK, IV, O>(
        &mut self,
        keys: &IK,
        values: &IV,
        output: &mut O,
        init: Option<V>,
        op: ScanOp,
    ) -> Result<()>
    where
        K: Element,
        V: Element,
        IK: DevicePtr<K>,
        IV: DevicePtr<V>,
        O: DevicePtrMut<V>,
    {
        let n = keys.len();
        check_len("values", n, values.len())?;
        check_reduce_op::<V>(op)?;
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
            &[Span::new::<K>("keys", k, n), Span::new::<V>("values", v, n)],
            &[Span::new::<V>("output", o, out_len)],
        )?;
        let job = RunsJob {
            primitive: Primitive::ScanByKey { op, key_bytes: size_of::<K>(), value: Elem::of::<V>() },
            keys: k,
            values: v,
            out_keys: 0,
            out_values: o,
            num_runs: 0,
            n,
            seed: init.map_or(0, Element::to_bits),
            mode: if init.is_some() { RunsMode::ScanExclusive } else { RunsMode::ScanInclusive },
            length_bytes: 8,
        };
        self.runs_raw::<K>(&stream, job)
    }

    /// Reduce by key: for each run of equal adjacent keys (IEEE `==` for float keys: each NaN is a run of
    /// its own), the run's **first** key into `keys_out` and the reduction of its values with `op` into
    /// `values_out`, in order, and the number of runs into `num_runs[0]` — on the device: nothing blocks
    /// the host. `op` is `Sum`, `Min` or `Max`; `f16`/`bf16` values are accumulated in `f32`, and float
    /// sums combine tiles in a timing-dependent order (see the crate docs on numerics). Both outputs must
    /// hold `keys.len()` items (every key may start a run).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `values` is not as long as `keys`; [`Error::Unsupported`] for a bitwise
    /// operator; [`Error::OutputTooSmall`]; [`Error::Overlap`] if an output overlaps an input or another
    /// output (not in-place safe: see [`Runs`]); [`Error::ContextMismatch`], [`Error::KernelsNotBuilt`],
    /// [`Error::Driver`]. On error nothing is written.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{ScanOp, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let keys = stream.clone_htod(&[1u32, 1, 2, 2, 2, 1])?;
    /// let values = stream.clone_htod(&[10i64, 20, 1, 2, 3, 7])?;
    /// let mut keys_out = stream.alloc_zeros::<u32>(6)?;
    /// let mut sums = stream.alloc_zeros::<i64>(6)?;
    /// let mut num_runs = stream.alloc_zeros::<u64>(1)?;
    /// ws.reduce_by_key_into(&keys, &values, &mut keys_out, &mut sums, &mut num_runs, ScanOp::Sum)?;
    /// assert_eq!(stream.clone_dtoh(&num_runs)?, [3]);
    /// assert_eq!(stream.clone_dtoh(&keys_out.slice(..3))?, [1, 2, 1]);
    /// assert_eq!(stream.clone_dtoh(&sums.slice(..3))?, [30, 6, 7]);
    /// # Ok(()) }
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn reduce_by_key_into<K, V, IK, IV, OK, OV, N>(
        &mut self,
        keys: &IK,
        values: &IV,
        keys_out: &mut OK,
        values_out: &mut OV,
        num_runs: &mut N,
        op: ScanOp,
    ) -> Result<()>
    where
        K: Element,
        V: Element,
        IK: DevicePtr<K>,
        IV: DevicePtr<V>,
        OK: DevicePtrMut<K>,
        OV: DevicePtrMut<V>,
        N: DevicePtrMut<u64>,
    {
        self.keyed_runs_into(keys, values, keys_out, values_out, num_runs, Some(op))
    }

    /// Unique by key: the first key of each run of equal adjacent keys and the value at the same position,
    /// into `keys_out`/`values_out`, and the number of runs into `num_runs[0]` (on the device).
    ///
    /// # Errors
    /// As [`reduce_by_key_into`](Self::reduce_by_key_into), without the operator.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Workspace;
    /// let mut ws = Workspace::new(&stream);
    /// let keys = stream.clone_htod(&[4i8, 4, 5, 4])?;
    /// let values = stream.clone_htod(&[1.5f64, 2.5, 3.5, 4.5])?;
    /// let mut keys_out = stream.alloc_zeros::<i8>(4)?;
    /// let mut values_out = stream.alloc_zeros::<f64>(4)?;
    /// let mut num_runs = stream.alloc_zeros::<u64>(1)?;
    /// ws.unique_by_key_into(&keys, &values, &mut keys_out, &mut values_out, &mut num_runs)?;
    /// assert_eq!(stream.clone_dtoh(&num_runs)?, [3]);
    /// assert_eq!(stream.clone_dtoh(&values_out.slice(..3))?, [1.5, 3.5, 4.5]);
    /// # Ok(()) }
    /// ```
    pub fn unique_by_key_into<K, V, IK, IV, OK, OV, N>(
        &mut self,
        keys: &IK,
        values: &IV,
        keys_out: &mut OK,
        values_out: &mut OV,
        num_runs: &mut N,
    ) -> Result<()>
    where
        K: Element,
        V: Element,
        IK: DevicePtr<K>,
        IV: DevicePtr<V>,
        OK: DevicePtrMut<K>,
        OV: DevicePtrMut<V>,
        N: DevicePtrMut<u64>,
    {
        self.keyed_runs_into(keys, values, keys_out, values_out, num_runs, None)
    }

    /// Segmented inclusive scan: `output[i]` = `op` over the values of `i`'s run (of equal adjacent keys)
    /// up to and including `i`. `output` must hold `keys.len()` items and may not overlap the inputs.
    ///
    /// # Errors
    /// As [`reduce_by_key_into`](Self::reduce_by_key_into).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{ScanOp, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let keys = stream.clone_htod(&[0u16, 0, 0, 9, 9])?;
    /// let values = stream.clone_htod(&[1i32, 2, 3, 4, 5])?;
    /// let mut out = stream.alloc_zeros::<i32>(5)?;
    /// ws.inclusive_scan_by_key_into(&keys, &values, &mut out, ScanOp::Sum)?;
    /// assert_eq!(stream.clone_dtoh(&out)?, [1, 3, 6, 4, 9]);
    /// # Ok(()) }
    /// ```
    pub fn inclusive_scan_by_key_into<K, V, IK, IV, O>(
        &mut self,
        keys: &IK,
        values: &IV,
        output: &mut O,
        op: ScanOp,
    ) -> Result<()>
    where
        K: Element,
        V: Element,
        IK: DevicePtr<K>,
        IV: DevicePtr<V>,
        O: DevicePtrMut<V>,
    {
        self.scan_by_key_into(keys, values, output, None, op)
    }

    /// Segmented exclusive scan: the first item of each run gets `init`, every other item `init` combined
    /// with the values of its run before it.
    ///
    /// # Errors
    /// As [`reduce_by_key_into`](Self::reduce_by_key_into).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{ScanOp, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let keys = stream.clone_htod(&[0u16, 0, 0, 9, 9])?;
    /// let values = stream.clone_htod(&[1i32, 2, 3, 4, 5])?;
    /// let mut out = stream.alloc_zeros::<i32>(5)?;
    /// ws.exclusive_scan_by_key_into(&keys, &values, &mut out, 100, ScanOp::Sum)?;
    /// assert_eq!(stream.clone_dtoh(&out)?, [100, 101, 103, 100, 104]);
    /// # Ok(()) }
    /// ```
    pub fn exclusive_scan_by_key_into<K, V, IK, IV, O>(
        &mut self,
        keys: &IK,
        values: &IV,
        output: &mut O,
        init: V,
        op: ScanOp,
    ) -> Result<()>
    where
        K: Element,
        V: Element,
        IK: DevicePtr<K>,
        IV: DevicePtr<V>,
        O: DevicePtrMut<V>,
    {
        self.scan_by_key_into(keys, values, output, Some(init), op)
    }
}

/// Allocates an output of `n` items and runs `f` with a temporary workspace (the one-shot scans by key,
/// also with user operators).
pub(crate) fn one_shot_scan<V: DeviceRepr>(
    stream: &Arc<CudaStream>,
    n: usize,
    f: impl FnOnce(&mut Workspace, &mut CudaSlice<V>) -> Result<()>,
) -> Result<CudaSlice<V>> {
    // SAFETY: the kernel writes every item before the buffer is returned (or the call fails).
    let mut out = unsafe { stream.alloc::<V>(n) }?;
    f(&mut Workspace::new(stream), &mut out)?;
    Ok(out)
}

/// [`Workspace::reduce_by_key_into`] into new buffers: the first key of each run and the reduction of its
/// values (blocks until the number of runs is known).
///
/// # Errors
/// As [`Workspace::reduce_by_key_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::ScanOp;
/// let keys = stream.clone_htod(&[1u32, 1, 2, 2, 2, 1])?;
/// let values = stream.clone_htod(&[10i64, 20, 1, 2, 3, 7])?;
/// let maxima = lookback::reduce_by_key(&keys, &values, ScanOp::Max)?;
/// assert_eq!(maxima.to_vecs()?, (vec![1, 2, 1], vec![20, 3, 7]));
/// # Ok(()) }
/// ```
pub fn reduce_by_key<K, V, IK, IV>(keys: &IK, values: &IV, op: ScanOp) -> Result<Runs<K, V>>
where
    K: Element,
    V: Element,
    IK: DevicePtr<K>,
    IV: DevicePtr<V>,
{
    one_shot_runs(keys.stream(), keys.len(), |ws, k, v, count| ws.reduce_by_key_into(keys, values, k, v, count, op))
}

/// [`Workspace::unique_by_key_into`] into new buffers: the first (key, value) of each run.
///
/// # Errors
/// As [`Workspace::unique_by_key_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// let keys = stream.clone_htod(&[3u8, 3, 1, 1, 3])?;
/// let values = stream.clone_htod(&[0.5f32, 1.5, 2.5, 3.5, 4.5])?;
/// let firsts = lookback::unique_by_key(&keys, &values)?;
/// assert_eq!(firsts.to_vecs()?, (vec![3, 1, 3], vec![0.5, 2.5, 4.5]));
/// # Ok(()) }
/// ```
pub fn unique_by_key<K, V, IK, IV>(keys: &IK, values: &IV) -> Result<Runs<K, V>>
where
    K: Element,
    V: Element,
    IK: DevicePtr<K>,
    IV: DevicePtr<V>,
{
    one_shot_runs(keys.stream(), keys.len(), |ws, k, v, count| ws.unique_by_key_into(keys, values, k, v, count))
}

/// Segmented inclusive scan into a new buffer.
///
/// # Errors
/// As [`Workspace::inclusive_scan_by_key_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::ScanOp;
/// let keys = stream.clone_htod(&[5i32, 5, 6, 6])?;
/// let values = stream.clone_htod(&[3u32, 1, 4, 2])?;
/// let mins = lookback::inclusive_scan_by_key(&keys, &values, ScanOp::Min)?;
/// assert_eq!(stream.clone_dtoh(&mins)?, [3, 1, 4, 2]);
/// # Ok(()) }
/// ```
pub fn inclusive_scan_by_key<K, V, IK, IV>(keys: &IK, values: &IV, op: ScanOp) -> Result<CudaSlice<V>>
where
    K: Element,
    V: Element,
    IK: DevicePtr<K>,
    IV: DevicePtr<V>,
{
    one_shot_scan(keys.stream(), keys.len(), |ws, out| ws.inclusive_scan_by_key_into(keys, values, out, op))
}

/// Segmented exclusive scan into a new buffer.
///
/// # Errors
/// As [`Workspace::exclusive_scan_by_key_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::ScanOp;
/// let keys = stream.clone_htod(&[5i32, 5, 6, 6])?;
/// let values = stream.clone_htod(&[3u32, 1, 4, 2])?;
/// let sums = lookback::exclusive_scan_by_key(&keys, &values, 0, ScanOp::Sum)?;
/// assert_eq!(stream.clone_dtoh(&sums)?, [0, 3, 0, 4]);
/// # Ok(()) }
/// ```
pub fn exclusive_scan_by_key<K, V, IK, IV>(keys: &IK, values: &IV, init: V, op: ScanOp) -> Result<CudaSlice<V>>
where
    K: Element,
    V: Element,
    IK: DevicePtr<K>,
    IV: DevicePtr<V>,
{
    one_shot_scan(keys.stream(), keys.len(), |ws, out| ws.exclusive_scan_by_key_into(keys, values, out, init, op))
}
