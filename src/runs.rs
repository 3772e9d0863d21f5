//! The run-based primitives' shared parts: the result type, run-length types, key equality and the one
//! launcher of their classic kernels (`cuda/agent_runs.cuh`, and the register tiles
//! `cuda/agent_scan_by_key.cuh` and `cuda/agent_heads.cuh`) and persistent ones. The primitives are in
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
//! Engines: every run-based primitive also runs on the persistent engine (`cuda/agent_pipe_runs.cuh`,
//! `cuda/agent_pipe_scan_by_key.cuh`, sm_90+) under [`Engine::Persistent`](crate::Engine) when the keys
//! and values (and a scan's output) are 16-byte aligned. [`Engine::Auto`](crate::Engine) takes it only for
//! the scans by key of 1-byte keys and values, from the runs row's `min_tiles` of `cuda/tuning.cuh` up,
//! counted on the keys alone (1024 tiles of keys: 2^23 i32 keys); everything else runs on the classic
//! agent, measured faster at every size (`auto_persistent`). On the classic agent the encodings have tile
//! shapes of their own (no value column) and two kernels: one for inputs of at most
//! [`ENCODE_SMALL_GRID_TILES`] tiles (fewer resident threads per SM; larger tiles for 1- and 2-byte keys)
//! and one for larger inputs; the launcher picks by the tile count. Classic reduce_by_key and
//! unique_by_key of 4-byte keys and values, and the encodings (run-length, run-end, non-trivial runs) of
//! 4- and 8-byte keys run on a register tile whose run heads write every output (`cuda/agent_heads.cuh`;
//! up to 256 of its tiles the encodings take the small-grid kernel).
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernels::{self, Algo, DType, Kernel};
use crate::launch::{RunsParams, Shape, Workspace, zero_counts};
use cudarc::driver::{CudaSlice, CudaStream, CudaView, DeviceRepr, ValidAsZeroBits};
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

/// What a launch computes (`RUNS_*` in `cuda/params.cuh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum RunsMode {
    Reduce = 0,
    ScanInclusive = 1,
    ScanExclusive = 2,
    Encode = 3,
    Ends = 4,
    NonTrivial = 5,
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
    pub kernel: Kernel,
    /// The classic kernel for inputs of at most [`small_grid_tiles`] tiles of `kernel`, if the
    /// primitive has one (the encodings: `runs_small_kernel`, with a tile of its own); `None`: `kernel`
    /// at every size.
    pub small_kernel: Option<Kernel>,
    /// The persistent kernel of the same launch, if the mode has one (`None`: always classic).
    pub pipe_kernel: Option<Kernel>,
    /// Bytes of a value item that the kernel reads (0: no value column); with the key's, it sets the
    /// persistent tile ([`pipe_tile_items`]).
    pub value_bytes: usize,
    /// The tuning row of `kernel`'s classic tile (`cuda/tuning.cuh`): Runs (keyed reductions and scans,
    /// unique_by_key), Encode (no value column) or ScanByKey (the register tile of 8-byte values).
    pub algo: Algo,
    /// Larger of the key and value sizes: selects the tile shape within the row.
    pub tile_bytes: usize,
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

/// `(abs_mask, inf_bits)` of a key type: IEEE equality for float keys on the device, bitwise (0, 0)
/// for integers. The device compares float keys in its floating-point unit and tells bf16 from f16,
/// which share the 2-byte kernels and the magnitude mask, by `inf_bits` (`cuda/key_equality.cuh`).
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
    /// Launches one run-based kernel over the keys of type `K`.
    pub(crate) fn runs_raw<K: Element>(&mut self, stream: &Arc<CudaStream>, job: RunsJob) -> Result<()> {
        if job.n == 0 {
            // Invariant 6: an empty input writes a count of 0 and launches no kernel.
            if job.mode.counts() {
                zero_counts(stream, job.num_runs, 1)?;
            }
            return Ok(());
        }
        // The persistent tile holds TILE_ITEMS keys and values in one slot, an item taking the next power
        // of two of their sizes (cuda/pipe_engine.cuh): the same tile count as n items of that size.
        let slot_item = (size_of::<K>() + job.value_bytes).next_power_of_two();
        // The inputs are bulk-copied; the scans by key store each lane's results with one vector store.
        let aligned = [
            job.keys,
            if job.value_bytes > 0 { job.values } else { 0 },
            if job.mode.counts() { 0 } else { job.out_values },
        ];
        // Engine::Auto takes the persistent kernel only for the scans by key of 1-byte keys and values,
        // counted on the keys alone against the runs row's min_tiles (2^23 keys); the classic agent is the
        // faster engine for everything else at every size measured (`auto_persistent`).
        let bytes = job.n.saturating_mul(slot_item);
        let auto_bytes = if auto_persistent(job.mode, job.tile_bytes) {
            job.n.saturating_mul(size_of::<K>().next_power_of_two())
        } else {
            0
        };
        let persistent = self.persistent_launch(
            stream,
            kernels::pipe_tuning(Algo::Runs),
            job.pipe_kernel,
            bytes,
            auto_bytes,
            &aligned,
        )?;
        let (kernel, shape, tiles) = match persistent {
            Some(plan) => plan,
            None => {
                let tuning = kernels::tuning(job.algo, job.tile_bytes);
                let tiles = job.n.div_ceil(tuning.tile_items(job.tile_bytes));
                match job.small_kernel {
                    Some(small) if self.small_grids && tiles <= small_grid_tiles(job.algo) => {
                        let small_tuning = kernels::tuning(Algo::EncodeSmall, job.tile_bytes);
                        (small, Shape::Classic(small_tuning), job.n.div_ceil(small_tuning.tile_items(job.tile_bytes)))
                    }
                    _ => (job.kernel, Shape::Classic(tuning), tiles),
                }
            }
        };
        let (key_abs_mask, key_inf_bits) = key_equality(K::DTYPE);
        self.launch_shaped(stream, kernel, shape, tiles, |lb, _scratch| RunsParams {
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

/// The most tiles (of the `encode` row) an input of a classic encoding may span to take the small-grid
/// kernel (`RunsJob::small_kernel`: 1024 resident threads per SM instead of 1536, and its own tile, the
/// `encode_small` row of `cuda/tuning.cuh`). H200, i32 runs of 4, A/B in one process (benches/NOTES.md,
/// session 11): run_length_encode and non-trivial runs at 2^20 / 2^21 / 2^22 (256 / 512 / 1024 tiles) 4 /
/// 6 / 11 % faster on it, at 2^23 (2048 tiles) 4.5 % and at 2^24 8.5 % slower. Its larger tiles for 1-
/// and 2-byte keys: session 12.
const ENCODE_SMALL_GRID_TILES: usize = 1024;

/// The most tiles of `algo`'s row an encoding may span to take the small-grid kernel: 1024 `encode` tiles
/// ([`ENCODE_SMALL_GRID_TILES`]), and 256 tiles of the register tile whose run heads write every output
/// (`heads_encode`: 6144 i32 items, so up to 1.5 M items; 3072 f64 items). H200, runs of mean 4, probe
/// `benches/probes/runs_tile.cu` (benches/NOTES.md, session 22): the i32 RLE small-grid kernel took 11.4 /
/// 13.6 / 20.0 µs at 2^20 + 1234 / 2^21 / 2^22 (171 / 342 / 683 tiles) against the register tile's 12.6 /
/// 13.5 / 16.9; at 2^20 + 1234 (session 23, `benches/probes/encode_tile.cu`) i32 non-trivial runs 11.9
/// against 13.4, f64 RLE 13.8 against 13.2 and non-trivial runs 12.8 against 13.3 (342 tiles).
const fn small_grid_tiles(algo: Algo) -> usize {
    match algo {
        Algo::HeadsEncode => 256,
        _ => ENCODE_SMALL_GRID_TILES,
    }
}

/// The largest inputs (in items) of the encodings of keys of `key_bytes` that take the small-grid kernel,
/// counted in the tiles of the kernel they take otherwise (`encode::encode_kernel`: the three encodings
/// share it, so they share the threshold). For tests; `None` for a key size without encodings.
pub(crate) fn encode_small_grid_items(key_bytes: usize) -> Option<usize> {
    let (_, algo) = crate::encode::encode_kernel(key_bytes, RunsMode::Encode).ok()?;
    debug_assert!(
        [RunsMode::Ends, RunsMode::NonTrivial]
            .iter()
            .all(|&m| crate::encode::encode_kernel(key_bytes, m).is_ok_and(|(_, a)| a == algo)),
        "the encodings of one key size take kernels of one tile"
    );
    Some(small_grid_tiles(algo) * kernels::tuning(algo, key_bytes).tile_items(key_bytes))
}

/// Whether [`Engine::Auto`](crate::Engine) may take the persistent kernel of a run-based launch (from the
/// runs row's `min_tiles` up). H200, session 8, both engines in one process: the classic agent was faster
/// at 2^20-2^30 for reduce_by_key (i32 2^28: 1055 against 1096 µs), unique_by_key (990 / 1266), non-trivial
/// runs (728 / 864), and for every primitive with f64 keys (scan_by_key 2775 / 2847, RLE 1212 / 1607). The
/// encodings split by the data (runs of 4: persistent 3-4 % faster from 2^26; runs of 1000: classic 13-25 %
/// faster) and stay classic. The scans by key: since session 9 a classic tile with a head publishes its
/// inclusive prefix at once and stores before it looks back (`cuda/agent_runs.cuh`), and the classic agent
/// is faster where the larger of key and value (`tile_bytes`) has 2 or 4 bytes (both engines, one process:
/// i32 2^28 888-900 against 939 µs, f16 803-837 against 1085) and 8 (f64, session 8); with 1-byte keys and
/// values its tiles hold 4 KB of keys, and the persistent engine stays faster (u8 2^28 608 against 742-772).
fn auto_persistent(mode: RunsMode, tile_bytes: usize) -> bool {
    matches!(mode, RunsMode::ScanInclusive | RunsMode::ScanExclusive) && tile_bytes == 1
}

/// Items per tile of the persistent run-based kernels with keys of `key_bytes` and a value column of
/// `value_bytes` (0: none): the slot's bytes over the next power of two of an item's bytes.
pub(crate) fn pipe_tile_items(key_bytes: usize, value_bytes: usize) -> usize {
    kernels::pipe_tuning(Algo::Runs).map_or(0, |p| p.tile_bytes() / (key_bytes + value_bytes).next_power_of_two())
}

/// The kernel for `(key bytes, value bytes or 0)` of the encodings and `unique_by_key`. Every element
/// size has one; the error only guards against a table that disagrees with `LOOKBACK_KEY_BYTES`.
pub(crate) fn positional_kernel(key_bytes: usize, value_bytes: usize) -> Result<Kernel> {
    kernels::runs_kernel(key_bytes, value_bytes)
        .ok_or(Error::Unsupported { operation: "run-based primitives of this key or value size", dtype: "any" })
}
