//! The run-based primitives' shared parts: the result type, run-length types, key equality and the one
//! launcher of their classic kernels (`cuda/classic/runs.cuh`, and the register tiles
//! `cuda/classic/scan_by_key_tile.cuh` and `cuda/classic/runs_at_heads.cuh`) and persistent ones. The primitives are in
//! `encode.rs` (run-length and run-end encoding, non-trivial runs) and `by_key.rs` (reduce, unique and
//! scan by key).
//!
//! A run is a maximal stretch of equal adjacent keys. Keys compare with `==` on integers and IEEE `==` on
//! floats: `-0.0` and `0.0` are one run, and a NaN equals nothing, so each NaN is a run of its own.
//!
//! None of these primitives works in place, and overlapping buffers are an error
//! ([`Error::Overlap`]): a tile reads the key just before its first item, which the previous tile may
//! already have overwritten, and a run's outputs are written as soon as the run ends, before later tiles
//! have read their inputs.
//!
//! Engines: every run-based primitive also runs on the persistent engine (`cuda/persistent/runs_work.cuh`,
//! `cuda/persistent/scan_by_key_work.cuh`, sm_90+) under [`Engine::Persistent`](crate::Engine) when the keys
//! and values (and a scan's output) are 16-byte aligned; [`Engine::Auto`](crate::Engine) takes it only for
//! the scans by key of 1-byte keys and values. On the classic engine the encodings, reduce_by_key and
//! unique_by_key take a register tile whose run heads write every output where one is compiled
//! (`cuda/classic/runs_at_heads.cuh`), the scans by key of 8-byte values a register tile of their own
//! (`cuda/classic/scan_by_key_tile.cuh`), everything else the run agent (`cuda/classic/runs.cuh`), and small
//! encodings a small-grid kernel. `src/plan.rs` makes these choices, with the measurements behind them.
use crate::element::Element;
use crate::error::{Error, Result, check_len};
use crate::kernels::DType;
use crate::launch::{RunsParams, Span, Workspace, check_disjoint, check_room, same_context, zero_counts};
use crate::plan::{Buffers, Primitive};
use cudarc::driver::{CudaSlice, CudaStream, CudaView, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits};
use std::sync::Arc;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// The integer type of run lengths, run ends and offsets: `u32` or `u64`.
///
/// `u32` halves the output traffic but only fits inputs of fewer than 2^32 items (a run can be as long as
/// the input); the GPU functions return [`Error::Unsupported`] for longer inputs with `u32`.
///
/// # Example
/// ```
/// use lookback::RunLength;
/// assert_eq!(<u32 as RunLength>::MAX_ITEMS, u32::MAX as u64);
/// assert_eq!(<u64 as RunLength>::MAX_ITEMS, u64::MAX);
/// ```
pub trait RunLength:
    sealed::Sealed + DeviceRepr + ValidAsZeroBits + Copy + Send + Sync + std::fmt::Debug + Into<u64> + 'static
{
    /// The longest input whose lengths and offsets this type holds.
    const MAX_ITEMS: u64;
    #[doc(hidden)]
    const NAME: &'static str;
}
impl RunLength for u32 {
    const MAX_ITEMS: u64 = u32::MAX as u64;
    const NAME: &'static str = "u32";
}
impl RunLength for u64 {
    const MAX_ITEMS: u64 = u64::MAX;
    const NAME: &'static str = "u64";
}

/// The result of a one-shot run-based primitive: two columns whose first [`len`](Self::len) items are
/// the result, one entry per run (sizing the buffers exactly would cost a second copy, so they keep the
/// input's length). Which columns they are depends on the function: keys and aggregates for
/// [`reduce_by_key`](crate::reduce_by_key), values and lengths for
/// [`run_length_encode`](crate::run_length_encode), and so on.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// let input = stream.clone_htod(&[5u8, 5, 5, 9, 9, 5])?;
/// let runs = lookback::run_length_encode::<u8, u32, _>(&input)?;
/// assert_eq!((runs.len(), runs.is_empty()), (3, false));
/// assert_eq!(runs.to_vecs()?, (vec![5, 9, 5], vec![3, 2, 1]));
/// assert_eq!(stream.clone_dtoh(&runs.second())?, [3, 2, 1]);
/// let (values, lengths, len) = runs.into_parts();
/// assert_eq!((values.len(), lengths.len(), len), (6, 6, 3));
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Runs<A, B> {
    first: CudaSlice<A>,
    second: CudaSlice<B>,
    len: usize,
}

impl<A, B> Runs<A, B> {
    pub(crate) fn new(first: CudaSlice<A>, second: CudaSlice<B>, len: usize) -> Self {
        Runs { first, second, len }
    }
    /// Number of entries (runs, or non-trivial runs).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// let input = stream.clone_htod(&[1i8, 1, 2])?;
    /// assert_eq!(lookback::run_length_encode::<i8, u32, _>(&input)?.len(), 2);
    /// # Ok(()) }
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether there are none (an empty input, or no non-trivial run).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// let input = stream.clone_htod(&[1i8, 2, 3])?;
    /// assert!(lookback::non_trivial_runs::<i8, u32, _>(&input)?.is_empty());
    /// # Ok(()) }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The first column: keys, or run values, or offsets.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// let keys = stream.clone_htod(&[4u16, 4, 6])?;
    /// let values = stream.clone_htod(&[1u64, 2, 3])?;
    /// let sums = lookback::reduce_by_key(&keys, &values, lookback::ScanOp::Sum)?;
    /// assert_eq!(stream.clone_dtoh(&sums.first())?, [4, 6]);
    /// # Ok(()) }
    /// ```
    pub fn first(&self) -> CudaView<'_, A> {
        self.first.slice(..self.len)
    }
    /// The second column: aggregates, values, lengths or ends.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// let keys = stream.clone_htod(&[4u16, 4, 6])?;
    /// let values = stream.clone_htod(&[1u64, 2, 3])?;
    /// let sums = lookback::reduce_by_key(&keys, &values, lookback::ScanOp::Sum)?;
    /// assert_eq!(stream.clone_dtoh(&sums.second())?, [3, 3]);
    /// # Ok(()) }
    /// ```
    pub fn second(&self) -> CudaView<'_, B> {
        self.second.slice(..self.len)
    }
    /// Both whole buffers and the number of entries at their front.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// let input = stream.clone_htod(&[0.5f32, 0.5, 1.0])?;
    /// let (values, ends, len) = lookback::run_end_encode::<f32, u64, _>(&input)?.into_parts();
    /// assert_eq!((values.len(), ends.len(), len), (3, 3, 2));
    /// assert_eq!(stream.clone_dtoh(&ends.slice(..len))?, [2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn into_parts(self) -> (CudaSlice<A>, CudaSlice<B>, usize) {
        (self.first, self.second, self.len)
    }
}

impl<A: DeviceRepr, B: DeviceRepr> Runs<A, B> {
    /// Copies both columns to the host (blocks until they are ready).
    ///
    /// # Errors
    /// [`Error::Driver`] if a copy fails.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// let keys = stream.clone_htod(&[9u8, 9, 1])?;
    /// let values = stream.clone_htod(&[2.0f64, 3.0, 4.0])?;
    /// let firsts = lookback::unique_by_key(&keys, &values)?;
    /// assert_eq!(firsts.to_vecs()?, (vec![9, 1], vec![2.0, 4.0]));
    /// # Ok(()) }
    /// ```
    pub fn to_vecs(&self) -> Result<(Vec<A>, Vec<B>)> {
        let stream = self.first.stream();
        Ok((stream.clone_dtoh(&self.first())?, stream.clone_dtoh(&self.second())?))
    }
}

/// What a launch computes (`RUNS_*` in `cuda/core/params.cuh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum RunsMode {
    /// reduce_by_key.
    Reduce = 0,
    /// inclusive_scan_by_key.
    ScanInclusive = 1,
    /// exclusive_scan_by_key.
    ScanExclusive = 2,
    /// Run-length encoding.
    Encode = 3,
    /// Run-end encoding.
    Ends = 4,
    /// The non-trivial runs.
    NonTrivial = 5,
    /// unique_by_key.
    Unique = 6,
}

impl RunsMode {
    /// Whether the launch writes a run count (the scans do not).
    fn counts(self) -> bool {
        !matches!(self, RunsMode::ScanInclusive | RunsMode::ScanExclusive)
    }
}

/// One run-based launch, with raw device addresses the caller keeps borrowed until it returns.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunsJob {
    /// What runs (`crate::plan` picks the kernel from it): one of the run-based primitives.
    pub primitive: Primitive,
    pub keys: u64,
    pub values: u64,
    pub out_keys: u64,
    pub out_values: u64,
    pub num_runs: u64,
    pub n: usize,
    pub seed: u64,
    pub mode: RunsMode,
    pub length_bytes: u32,
}

/// The device addresses and length of one checked run-based call (0 for a buffer the primitive has not).
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyedCall {
    pub keys: u64,
    pub values: u64,
    pub out_keys: u64,
    pub out_values: u64,
    pub num_runs: u64,
    pub n: usize,
}

impl KeyedCall {
    /// The launch of this call: `primitive` in `mode`, with an exclusive scan's `seed` and the run lengths'
    /// width.
    pub(crate) fn job(self, primitive: Primitive, mode: RunsMode, seed: u64, length_bytes: u32) -> RunsJob {
        RunsJob {
            primitive,
            keys: self.keys,
            values: self.values,
            out_keys: self.out_keys,
            out_values: self.out_values,
            num_runs: self.num_runs,
            n: self.n,
            seed,
            mode,
            length_bytes,
        }
    }
}

/// `(abs_mask, inf_bits)` of a key type: IEEE equality for float keys on the device, bitwise (0, 0)
/// for integers. The device compares float keys in its floating-point unit and tells bf16 from f16,
/// which share the 2-byte kernels and the magnitude mask, by `inf_bits` (`cuda/core/key_equality.cuh`).
pub(crate) fn key_equality(dtype: DType) -> (u64, u64) {
    match dtype {
        DType::F16 => (0x7fff, 0x7c00),
        DType::Bf16 => (0x7fff, 0x7f80),
        DType::F32 => (0x7fff_ffff, 0x7f80_0000),
        DType::F64 => (0x7fff_ffff_ffff_ffff, 0x7ff0_0000_0000_0000),
        _ => (0, 0),
    }
}

/// `Ok` if lengths of type `L` hold every length and offset of an input of `n` items.
pub(crate) fn check_length_type<L: RunLength>(n: usize) -> Result<()> {
    if n as u64 <= L::MAX_ITEMS {
        Ok(())
    } else {
        Err(Error::Unsupported { operation: "run lengths narrower than the input's length", dtype: L::NAME })
    }
}

impl Workspace {
    /// The checks and device addresses of a keyed call that writes each run's key, a value and the number
    /// of runs (reduce_by_key, unique_by_key and their forms with user code), then `launch` with them while
    /// the buffers stay borrowed. `check` runs after the lengths are compared and before the outputs are:
    /// the primitive's own typed errors (its operator or sizes).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn keyed_runs_call<K, V, W, IK, IV, OK, OV, N>(
        &mut self,
        keys: &IK,
        values: &IV,
        keys_out: &mut OK,
        values_out: &mut OV,
        num_runs: &mut N,
        check: impl FnOnce() -> Result<()>,
        launch: impl FnOnce(&mut Self, &Arc<CudaStream>, KeyedCall) -> Result<()>,
    ) -> Result<()>
    where
        IK: DevicePtr<K>,
        IV: DevicePtr<V>,
        OK: DevicePtrMut<K>,
        OV: DevicePtrMut<W>,
        N: DevicePtrMut<u64>,
    {
        let n = keys.len();
        check_len("values", n, values.len())?;
        check()?;
        check_room("keys_out", n, keys_out.len())?;
        check_room("values_out", n, values_out.len())?;
        check_room("num_runs", 1, num_runs.len())?;
        let stream: &Arc<CudaStream> = &keys.stream().clone();
        for s in [values.stream(), keys_out.stream(), values_out.stream(), num_runs.stream()] {
            same_context(stream, s)?;
        }
        self.enter(stream)?;
        let (k, _k) = keys.device_ptr(stream);
        let (v, _v) = values.device_ptr(stream);
        let (ko_len, vo_len) = (keys_out.len(), values_out.len());
        let (ko, _ko) = keys_out.device_ptr_mut(stream);
        let (vo, _vo) = values_out.device_ptr_mut(stream);
        let (count, _count) = num_runs.device_ptr_mut(stream);
        check_disjoint(
            &[Span::new::<K>("keys", k, n), Span::new::<V>("values", v, n)],
            &[
                Span::new::<K>("keys_out", ko, ko_len),
                Span::new::<W>("values_out", vo, vo_len),
                Span::new::<u64>("num_runs", count, 1),
            ],
        )?;
        launch(self, stream, KeyedCall { keys: k, values: v, out_keys: ko, out_values: vo, num_runs: count, n })
    }

    /// Launches one run-based kernel over the keys of type `K`.
    pub(crate) fn runs_raw<K: Element>(&mut self, stream: &Arc<CudaStream>, job: RunsJob) -> Result<()> {
        self.runs_raw_with(stream, job, key_equality(K::DTYPE))
    }

    /// Launches one run-based kernel whose keys compare as `(key_abs_mask, key_inf_bits)` say
    /// ([`key_equality`]; a kernel compiled for a user equality reads neither).
    pub(crate) fn runs_raw_with(&mut self, stream: &Arc<CudaStream>, job: RunsJob, key_eq: (u64, u64)) -> Result<()> {
        if job.n == 0 {
            // Invariant 6: an empty input writes a count of 0 and launches no kernel.
            if job.mode.counts() {
                zero_counts(stream, job.num_runs, 1)?;
            }
            return Ok(());
        }
        let buffers = Buffers { input: job.keys, output: job.out_values, values: job.values, flags: 0 };
        let launch = self.plan_launch(stream, job.primitive, job.n, buffers)?;
        let (key_abs_mask, key_inf_bits) = key_eq;
        self.launch(stream, launch, |lb, _scratch| RunsParams {
            keys: job.keys,
            values: job.values,
            out_keys: job.out_keys,
            out_values: job.out_values,
            num_runs: job.num_runs,
            n: job.n as u64,
            seed: job.seed,
            key_abs_mask,
            key_inf_bits,
            mode: job.mode as u32,
            length_bytes: job.length_bytes,
            lb,
        })
    }
}
