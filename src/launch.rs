//! Grid sizing, the reusable look-back workspace, and the one place that launches kernels.
use crate::error::{Error, Result};
use crate::kernels::{self, Kernel, PipeTuning, Tuning};
use crate::pred::PredProgram;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, PushKernelArg, sys};
use std::collections::HashMap;
use std::sync::Arc;

/// Mirrors `LookbackParams` of `cuda/params.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LookbackParams {
    pub status: u64,
    /// The launch word: `round << 32 | tile ids taken` (`cuda/tile_state.cuh`).
    pub header: u64,
    /// The device count of a call sized on the device ([`Workspace::with_count`]), or 0.
    pub items: u64,
    /// Tiles of one status region (the workspace's capacity).
    pub status_tiles: u32,
    pub first_poll_ns: u32,
    pub poll_ns: u32,
    /// `LB_PREFETCH_GUESS` (see [`prefetch_guess`]).
    pub flags: u32,
}

/// `LB_PREFETCH_GUESS` of `cuda/params.cuh`: the classic agents prefetch tile `blockIdx.x` into L2
/// while their tile-id atomic is in flight (`prefetch_guessed_tile` in `cuda/tile_state.cuh`).
const LB_PREFETCH_GUESS: u32 = 1;

/// Whether a classic grid of `tiles` tiles on `sms` SMs prefetches its guessed tiles. Measured on the H200
/// (benches/NOTES.md, session 9; A/B against no prefetch, same call): grids of at most two tiles per SM
/// gained 3-9 % (i32 2^16-2^20: RLE 2^16 8.0 → 7.3 µs, select_flagged 2^20 11.4 → 10.8) and multi-wave
/// grids 2-7 % (f64 scan_by_key 2^22-2^28, i32 scan_by_key 2^24-2^28), but grids of 4-8 tiles per SM,
/// which start all at once and fill the GPU, lost 2-7 % (every i32 primitive at 2^22, 1024 tiles;
/// f64 scan_by_key at 2^20, 512 tiles).
fn prefetch_guess(tiles: usize, sms: usize) -> bool {
    tiles <= 2 * sms || tiles > 8 * sms
}

/// Mirrors `ScanParams` of `cuda/params.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ScanParams {
    pub input: u64,
    pub output: u64,
    pub n: u64,
    pub seed: u64,
    pub exclusive: u32,
    pub _pad: u32,
    pub lb: LookbackParams,
}

/// Mirrors `SelectParams` of `cuda/params.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SelectParams {
    pub input: u64,
    pub output: u64,
    pub output_rejected: u64,
    pub flags: u64,
    pub num_selected: u64,
    pub known_total: u64,
    pub n: u64,
    pub source: u32,
    pub mode: u32,
    pub pred: PredProgram,
    pub lb: LookbackParams,
}

/// Mirrors `RunsParams` of `cuda/params.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RunsParams {
    pub keys: u64,
    pub values: u64,
    pub out_keys: u64,
    pub out_values: u64,
    pub num_runs: u64,
    pub n: u64,
    pub seed: u64,
    pub key_abs_mask: u64,
    pub key_inf_bits: u64,
    pub mode: u32,
    pub length_bytes: u32,
    pub lb: LookbackParams,
}

/// Mirrors `Partition3Params` of `cuda/params.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Partition3Params {
    pub input: u64,
    pub out_first: u64,
    pub out_second: u64,
    pub out_rest: u64,
    pub num_selected: u64,
    pub n: u64,
    pub first: PredProgram,
    pub second: PredProgram,
    pub lb: LookbackParams,
}

// The C side asserts the same sizes (cuda/params.cuh).
const _: () = assert!(
    size_of::<LookbackParams>() == 40
        && size_of::<ScanParams>() == 80
        && size_of::<SelectParams>() == 384
        && size_of::<RunsParams>() == 120
        && size_of::<Partition3Params>() == 648
);

// SAFETY: #[repr(C)] plain-old-data structs of integers, laid out exactly as their C counterparts.
unsafe impl DeviceRepr for LookbackParams {}
unsafe impl DeviceRepr for ScanParams {}
unsafe impl DeviceRepr for SelectParams {}
unsafe impl DeviceRepr for RunsParams {}
unsafe impl DeviceRepr for Partition3Params {}

/// Back-off of the look-back's polling, in nanoseconds. The defaults come from `cuda/tuning.cuh`;
/// override them with [`Workspace::set_backoff`] (the benchmark sweeps them).
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::{Backoff, ScanOp, Workspace};
/// let mut ws = Workspace::new(&stream);
/// // Poll without sleeping: only the timing changes, never the result.
/// ws.set_backoff(Some(Backoff { first_poll_ns: 0, poll_ns: 0 }));
/// let input = stream.clone_htod(&[2u16, 4, 6])?;
/// let mut out = stream.alloc_zeros::<u16>(3)?;
/// ws.inclusive_scan_into(&input, &mut out, ScanOp::Sum)?;
/// assert_eq!(stream.clone_dtoh(&out)?, [2, 6, 12]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Sleep before the first poll of a predecessor's status.
    pub first_poll_ns: u32,
    /// Sleep between polls of a status that is not ready yet.
    pub poll_ns: u32,
}

/// Which kernel structure runs a primitive that has more than one.
///
/// Scans have two: the classic decoupled look-back (one tile per block, any GPU) and a persistent,
/// warp-specialised one for sm_90 and newer GPUs (`cuda/agent_pipe_scan.cuh`), which keeps several tiles
/// per SM in flight with bulk copies and resolves prefixes from tile aggregates only. `Auto` (the default)
/// picks the persistent one when the GPU, the buffers' 16-byte alignment and the size allow it (measured
/// in `benches/RESULTS.md`); the others force a choice, for benchmarks and tests. Results are the same
/// either way, up to the rounding of float sums.
///
/// The same choice applies to compaction, counting and partitions by predicate or uniqueness
/// (`select_if`, `unique`, `count_if`, `partition_if*`, in place too). Every run-based primitive has both
/// engines too (`cuda/agent_pipe_runs.cuh`, `cuda/agent_pipe_scan_by_key.cuh`, which need the keys and
/// values 16-byte aligned), but `Auto` takes the persistent one only for the scans by key of 1-byte keys
/// and values: the classic agent measured faster for the others. `select_flagged` and the three-way
/// partition have only the classic engine.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::{Engine, ScanOp, Workspace};
/// let mut ws = Workspace::new(&stream);
/// ws.set_engine(Engine::Classic);
/// let input = stream.clone_htod(&[1u32, 2, 3])?;
/// let mut out = stream.alloc_zeros::<u32>(3)?;
/// ws.inclusive_scan_into(&input, &mut out, ScanOp::Sum)?;
/// assert_eq!(stream.clone_dtoh(&out)?, [1, 3, 6]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// The persistent engine where it applies, else the classic one.
    #[default]
    Auto,
    /// Always the classic one-tile-per-block look-back.
    Classic,
    /// The persistent engine whenever the GPU (sm_90+, with about 220 KB of shared memory per block) and
    /// the buffers (16-byte aligned input — keys and values for the run-based primitives, items and flags
    /// for `select_flagged` — and output for scans) allow it, at every size; the classic one otherwise
    /// (also for `select_flagged` of 1- and 2-byte items, whose flags leave no room for the ring).
    Persistent,
}

/// How a launch is shaped: one block per tile, or one persistent block per SM. `Persistent` is built
/// only by [`Workspace::persistent_launch`], which opts the kernel in to its ring of shared memory.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Shape {
    Classic(Tuning),
    Persistent(PipeTuning),
}

/// What the launcher needs to know about the GPU of a workspace.
#[derive(Clone, Copy, Debug)]
struct DeviceInfo {
    sms: u32,
    sm90: bool,
    /// Shared memory a block may opt in to (bytes): 227 KB on sm_90 and sm_100, 99 KB on sm_120, which
    /// therefore takes the classic agents.
    smem_optin: usize,
}

/// Words before the status words: the launch word (`cuda/tile_state.cuh`) and one scratch word.
const HEADER: usize = 2;
/// Status words per tile: one for the one-word formats, two for the 16-byte entries (`WideState`,
/// `WidePairState`, 8-byte `RunsPairState` in `cuda/tile_state.cuh`).
const STATUS_WORDS: usize = 2;
/// Status regions: launches alternate between two every 255 epochs, and the first launch of one clears
/// the other (`cuda/tile_state.cuh`), so no host step ever clears status words.
const REGIONS: usize = 2;
// The 16-byte entries must be 16-byte aligned: the status words start HEADER words into the buffer.
const _: () = assert!(HEADER.is_multiple_of(2), "status words start 16-byte aligned");
/// Most tiles of one launch: the launch word counts the ids a launch takes (tiles, plus one per block
/// for the persistent engine) in 32 bits.
const MAX_TILES: usize = 1 << 31;

/// Reusable look-back state: tile-status words and the dynamic tile counter.
///
/// Every primitive needs a small device workspace (32 bytes per tile, a tile being a few thousand
/// items). The one-shot functions of this crate allocate one per call; keep a `Workspace` and call its
/// methods instead to make repeated calls allocate nothing. Status words are tagged with a per-launch
/// epoch that the kernels keep in the workspace's own device memory, so a reused workspace needs no
/// clearing launch (each call is one kernel launch), and a call captured in a CUDA graph is correct
/// however often the graph is replayed.
///
/// A workspace belongs to one CUDA context. Calls through it are ordered on the stream of their input
/// buffer; using it from two streams is safe as long as cudarc's event tracking is on (the default),
/// which orders accesses to the workspace's buffer.
///
/// # CUDA graphs and sizes on the device
/// Every `_into` call of a workspace can be captured in a CUDA graph ([`crate::graph::capture`]) and
/// replayed any number of times with new data in the same buffers, once the workspace holds enough state
/// ([`Workspace::reserve`], or one eager call of each size first). Inside a capture, a call that would
/// allocate, read a count back to the host or wait on work outside the capture returns
/// [`Error::NotCapturable`] before it enqueues anything. [`Workspace::with_count`] sizes calls from a
/// count in device memory (such as the `num_selected` of an earlier call), so a pipeline of several
/// primitives needs no host round trip.
///
/// When a workspace used in a capture grows later, it keeps its earlier state allocated until it is
/// dropped, since a graph may still use it: drop the graphs before the workspace.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::{Pred, ScanOp, Workspace};
/// let mut ws = Workspace::new(&stream);
/// let input = stream.clone_htod(&[3i32, -1, 4, -1, 5])?;
/// let mut sums = stream.alloc_zeros::<i32>(5)?;
/// ws.inclusive_scan_into(&input, &mut sums, ScanOp::Sum)?;
/// assert_eq!(stream.clone_dtoh(&sums)?, [3, 2, 6, 5, 10]);
/// let held = ws.device_bytes();
/// assert!(held > 0);
/// // The second call reuses the look-back state of the first one.
/// assert_eq!(ws.count_if(&input, &Pred::lt(0))?, 2);
/// assert_eq!(ws.device_bytes(), held);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Workspace {
    stream: Arc<CudaStream>,
    /// `[launch word, scratch, status × REGIONS·STATUS_WORDS·capacity]`, allocated on first use.
    buf: Option<CudaSlice<u64>>,
    capacity: usize,
    /// Earlier buffers of a workspace that was used in a stream capture: a graph may still launch with
    /// them, so they live as long as the workspace.
    retired: Vec<CudaSlice<u64>>,
    /// Whether a call was captured (its buffer may be in a graph).
    captured: bool,
    /// The device address of the count that sizes calls inside [`Workspace::with_count`], else `None`.
    pub(crate) device_count: Option<u64>,
    backoff: Option<Backoff>,
    engine: Engine,
    device: Option<DeviceInfo>,
    /// Persistent kernels already checked against the GPU's shared memory (and opted in to their ring
    /// when it fits), with the answer: the driver is asked once per kernel, not per call.
    persistent_fits: HashMap<&'static str, bool>,
    /// One u64 for counts that are read back to the host, kept across calls.
    pub(crate) count_buffer: Option<CudaSlice<u64>>,
    /// Whether small encodings may take their small-grid kernel (tests turn it off to reach the other
    /// kernels' code at small sizes: `__private::set_small_grids`).
    pub(crate) small_grids: bool,
}

impl Workspace {
    /// A workspace for buffers of `stream`'s context. Allocates nothing until the first call.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{ScanOp, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// assert_eq!(ws.device_bytes(), 0);
    /// let mut buf = stream.clone_htod(&[1u64, 2, 3, 4])?;
    /// ws.inclusive_scan_in_place(&mut buf, ScanOp::Sum)?;
    /// assert_eq!(stream.clone_dtoh(&buf)?, [1, 3, 6, 10]);
    /// # Ok(()) }
    /// ```
    pub fn new(stream: &Arc<CudaStream>) -> Self {
        Workspace {
            stream: stream.clone(),
            buf: None,
            capacity: 0,
            retired: Vec::new(),
            captured: false,
            device_count: None,
            backoff: None,
            engine: Engine::Auto,
            device: None,
            persistent_fits: HashMap::new(),
            count_buffer: None,
            small_grids: true,
        }
    }

    /// Overrides the look-back back-off of every later call (`None`: the tuned defaults).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{Backoff, ScanOp, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[5i8, -2, 7])?;
    /// let mut out = stream.alloc_zeros::<i8>(3)?;
    /// ws.set_backoff(Some(Backoff { first_poll_ns: 400, poll_ns: 100 }));
    /// ws.inclusive_scan_into(&input, &mut out, ScanOp::Max)?;
    /// assert_eq!(stream.clone_dtoh(&out)?, [5, 5, 7]);
    /// ws.set_backoff(None); // back to the tuned defaults
    /// ws.inclusive_scan_into(&input, &mut out, ScanOp::Min)?;
    /// assert_eq!(stream.clone_dtoh(&out)?, [5, -2, -2]);
    /// # Ok(()) }
    /// ```
    pub fn set_backoff(&mut self, backoff: Option<Backoff>) {
        self.backoff = backoff;
    }

    /// Chooses the kernel structure of later calls that have a choice (default [`Engine::Auto`]).
    pub fn set_engine(&mut self, engine: Engine) {
        self.engine = engine;
    }

    /// The persistent launch — (kernel, shape, tiles) — of a kernel of shape `pipe` (a row of
    /// `kernels::pipe_tuning`) for a call of `bytes` bytes of tiled items, if the engine setting, the GPU
    /// (sm_90+, enough shared memory for the ring plus the kernel's static shared memory), the size and the
    /// alignment of `addrs` allow it. [`Engine::Auto`] compares `auto_bytes` (usually `bytes`) with the
    /// row's `min_tiles` tiles.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn persistent_launch(
        &mut self,
        stream: &CudaStream,
        pipe: Option<PipeTuning>,
        kernel: Option<Kernel>,
        bytes: usize,
        auto_bytes: usize,
        addrs: &[u64],
    ) -> Result<Option<(Kernel, Shape, usize)>> {
        let (Some(pipe), Some(kernel)) = (pipe, kernel) else { return Ok(None) };
        if self.engine == Engine::Classic || addrs.iter().any(|a| a % 16 != 0) {
            return Ok(None);
        }
        let tiles = bytes.div_ceil(pipe.tile_bytes());
        if self.engine == Engine::Auto && auto_bytes.div_ceil(pipe.tile_bytes()) < pipe.min_tiles as usize {
            return Ok(None);
        }
        if u32::try_from(tiles).is_err() {
            return Ok(None);
        }
        let info = self.device_info(stream)?;
        if !info.sm90 {
            return Ok(None);
        }
        let fits = match self.persistent_fits.get(kernel.name) {
            Some(&fits) => fits,
            None => {
                let func = kernels::function(stream.context(), kernel)?;
                // Should the driver not say, the classic agent is the safe choice.
                let fits = func
                    .get_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
                    .is_ok_and(|static_smem| pipe.ring_bytes() + static_smem.max(0) as usize <= info.smem_optin);
                if fits {
                    // Above 48 KB of dynamic shared memory a kernel must opt in; once per function.
                    func.set_attribute(
                        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        pipe.ring_bytes() as i32,
                    )?;
                }
                self.persistent_fits.insert(kernel.name, fits);
                fits
            }
        };
        Ok(fits.then_some((kernel, Shape::Persistent(pipe), tiles)))
    }

    fn device_info(&mut self, stream: &CudaStream) -> Result<DeviceInfo> {
        if let Some(info) = self.device {
            return Ok(info);
        }
        let ctx = stream.context();
        let sms = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let major = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let optin = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
        let info = DeviceInfo { sms: sms.max(1) as u32, sm90: major >= 9, smem_optin: optin.max(0) as usize };
        self.device = Some(info);
        Ok(info)
    }

    /// Makes sure that calls of up to `items` items need no more look-back state, whatever the primitive,
    /// element type or engine: allocates now (on the workspace's stream) what a first call of that size
    /// would. Do this before capturing calls in a CUDA graph, where a workspace cannot grow.
    ///
    /// # Errors
    /// [`Error::NotCapturable`] inside a stream capture; [`Error::Driver`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Workspace;
    /// let mut ws = Workspace::new(&stream);
    /// ws.reserve(1 << 20)?;
    /// let held = ws.device_bytes();
    /// assert!(held > 0);
    /// ws.reserve(1000)?; // already enough: nothing changes
    /// assert_eq!(ws.device_bytes(), held);
    /// # Ok(()) }
    /// ```
    pub fn reserve(&mut self, items: usize) -> Result<()> {
        let stream = self.stream.clone();
        if is_capturing(&stream)? {
            return Err(Error::NotCapturable { reason: "Workspace::reserve allocates: call it before the capture" });
        }
        let tiles = items.div_ceil(kernels::MIN_TILE_ITEMS).min(MAX_TILES);
        if tiles > self.capacity || self.buf.is_none() {
            self.grow(&stream, tiles)?;
        }
        Ok(())
    }

    /// Runs `calls` with every call of this workspace sized on the device: a call takes as its number of
    /// items the `u64` at `count[0]` (for example the `num_selected` an earlier call wrote), bounded by
    /// the length of its input, which is its capacity: the grid is sized for the capacity, every buffer
    /// is checked against it as for an ordinary call, and tiles past the device count exit at once. A
    /// count above the capacity is taken as the capacity. The count is read on the device when each
    /// kernel starts, so the call does not block the host and can be captured in a CUDA graph.
    ///
    /// `count` must be ordered before the calls on their stream (written earlier on the same stream, or
    /// joined). It is an input of every call: it must not be one of their outputs, which the borrow
    /// checker enforces for `count` itself.
    ///
    /// # Errors
    /// [`Error::EmptyCount`] if `count` is empty; [`Error::ContextMismatch`]; whatever `calls` returns.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{Pred, ScanOp, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[5i32, -1, 3, -2, 4])?;
    /// let mut kept = stream.alloc_zeros::<i32>(5)?;
    /// let mut num_kept = stream.alloc_zeros::<u64>(1)?;
    /// ws.select_if_into(&input, &Pred::gt(0), &mut kept, &mut num_kept)?;
    /// // Scan only the kept items, sized by the count on the device: no host round trip.
    /// let mut sums = stream.clone_htod(&[-7i32; 5])?;
    /// ws.with_count(&num_kept, |ws| ws.inclusive_scan_into(&kept, &mut sums, ScanOp::Sum))?;
    /// assert_eq!(stream.clone_dtoh(&sums)?, [5, 8, 12, -7, -7]);
    /// # Ok(()) }
    /// ```
    pub fn with_count<C, R>(&mut self, count: &C, calls: impl FnOnce(&mut Workspace) -> Result<R>) -> Result<R>
    where
        C: DevicePtr<u64>,
    {
        if count.len() == 0 {
            return Err(Error::EmptyCount);
        }
        self.check_context(count.stream())?;
        // Ordered after the count's last write on the workspace's stream, and recorded as read when the
        // calls are enqueued (cudarc's event tracking).
        let stream = self.stream.clone();
        let (addr, _read) = count.device_ptr(&stream);
        /// Restores the enclosing count however `calls` ends.
        struct Restore<'a> {
            ws: &'a mut Workspace,
            outer: Option<u64>,
        }
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                self.ws.device_count = self.outer;
            }
        }
        let outer = self.device_count.replace(addr);
        let restore = Restore { ws: self, outer };
        calls(restore.ws)
    }

    /// Checks a call on `stream` before it touches any buffer: the stream's context, and, inside a stream
    /// capture, that cudarc's event tracking will not make the call wait on work outside the capture
    /// (which would invalidate it). Returns whether `stream` is capturing (and marks the workspace as
    /// captured).
    pub(crate) fn enter(&mut self, stream: &CudaStream) -> Result<bool> {
        self.check_context(stream)?;
        let capturing = is_capturing(stream)?;
        if capturing {
            if stream.context().is_managing_stream_synchronization() {
                return Err(Error::NotCapturable {
                    reason: "cudarc's event tracking is on, and its waits on buffers used before the capture would \
                             invalidate it: capture with lookback::graph::capture",
                });
            }
            self.captured = true;
        }
        Ok(capturing)
    }

    /// Replaces the state with room for `tiles` tiles (at least double the old capacity). The old buffer
    /// is kept alive if a graph may use it.
    fn grow(&mut self, stream: &Arc<CudaStream>, tiles: usize) -> Result<()> {
        let capacity = tiles.max(2 * self.capacity).clamp(64, MAX_TILES);
        let buf = stream.alloc_zeros::<u64>(HEADER + REGIONS * STATUS_WORDS * capacity)?;
        if let Some(old) = self.buf.replace(buf)
            && self.captured
        {
            self.retired.push(old);
        }
        self.capacity = capacity;
        Ok(())
    }

    /// Device bytes held.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{ScanOp, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// assert_eq!(ws.device_bytes(), 0);
    /// let mut buf = stream.clone_htod(&[1.5f32, 2.5])?;
    /// ws.exclusive_scan_in_place(&mut buf, 0.0, ScanOp::Sum)?;
    /// assert_eq!(stream.clone_dtoh(&buf)?, [0.0, 1.5]);
    /// assert!(ws.device_bytes() > 0);
    /// # Ok(()) }
    /// ```
    pub fn device_bytes(&self) -> usize {
        self.buf.iter().chain(&self.retired).map(|b| b.len() * 8).sum()
    }

    pub(crate) fn check_context(&self, stream: &CudaStream) -> Result<()> {
        same_context(stream, &self.stream)
    }

    /// Launches `kernel` over `tiles` tiles (one block each) with the parameters `make(lookback,
    /// scratch)`, `scratch` being the device address of one u64 of the workspace that the caller may use
    /// between its own launches. The caller holds the guards of its own buffers across this call.
    pub(crate) fn launch<P: DeviceRepr>(
        &mut self,
        stream: &Arc<CudaStream>,
        kernel: Kernel,
        tuning: Tuning,
        tiles: usize,
        make: impl FnOnce(LookbackParams, u64) -> P,
    ) -> Result<()> {
        self.launch_shaped(stream, kernel, Shape::Classic(tuning), tiles, make)
    }

    /// [`Workspace::launch`] for either shape. A persistent launch runs one block per SM (at most one per
    /// tile) with the shared-memory ring of its tuning; its blocks take `tiles + grid` ids from the tile
    /// counter (each block's last take finds no tile left).
    pub(crate) fn launch_shaped<P: DeviceRepr>(
        &mut self,
        stream: &Arc<CudaStream>,
        kernel: Kernel,
        shape: Shape,
        tiles: usize,
        make: impl FnOnce(LookbackParams, u64) -> P,
    ) -> Result<()> {
        debug_assert!(tiles > 0, "empty inputs launch nothing (invariant 6)");
        self.check_context(stream)?;
        let too_many = || Error::Unsupported { operation: "more than 2^31 tiles in one call", dtype: "any" };
        let func = kernels::function(stream.context(), kernel)?;
        let (cfg, default_backoff, prefetch) = match shape {
            Shape::Classic(tuning) => {
                let grid = u32::try_from(tiles).map_err(|_| too_many())?;
                let cfg = LaunchConfig {
                    grid_dim: (grid, 1, 1),
                    block_dim: (tuning.block_threads, 1, 1),
                    shared_mem_bytes: 0,
                };
                let sms = self.device_info(stream)?.sms as usize;
                (cfg, tuning.backoff_for(tiles), prefetch_guess(tiles, sms))
            }
            Shape::Persistent(pipe) => {
                let sms = self.device_info(stream)?.sms;
                let grid = u32::try_from(tiles).map_err(|_| too_many())?.min(sms);
                // `persistent_launch` opted the kernel in to this much dynamic shared memory.
                let ring = pipe.ring_bytes() as u32;
                let cfg = LaunchConfig {
                    grid_dim: (grid, 1, 1),
                    block_dim: (pipe.block_threads(), 1, 1),
                    shared_mem_bytes: ring,
                };
                // The persistent agent never sleeps: its look-ahead polls aggregates off the critical path.
                (cfg, (0, 0), false)
            }
        };
        let capturing = self.enter(stream)?;
        if tiles > MAX_TILES {
            return Err(too_many());
        }
        if tiles > self.capacity || self.buf.is_none() {
            if capturing {
                return Err(Error::NotCapturable {
                    reason: "the workspace must grow: call Workspace::reserve (or one eager call of this size) before the capture",
                });
            }
            self.grow(stream, tiles)?;
        }
        let backoff = self.backoff.unwrap_or(Backoff { first_poll_ns: default_backoff.0, poll_ns: default_backoff.1 });
        let status_tiles = self.capacity as u32;
        let items = self.device_count.unwrap_or(0);
        let buf = self.buf.as_mut().expect("allocated above");
        let (base, _guard) = buf.device_ptr_mut(stream);
        let lookback = LookbackParams {
            status: base + 8 * HEADER as u64,
            header: base,
            items,
            status_tiles,
            first_poll_ns: backoff.first_poll_ns,
            poll_ns: backoff.poll_ns,
            flags: if prefetch { LB_PREFETCH_GUESS } else { 0 },
        };
        let params = make(lookback, base + 8);
        // SAFETY: every kernel of the table takes exactly one by-value parameter block, and `P` is the
        // #[repr(C)] mirror of the one `kernel` takes (the caller pairs them). The workspace holds
        // `STATUS_WORDS·capacity` status words (16-byte aligned: HEADER is two words), capacity >= tiles,
        // after the counter; the caller's buffers are valid for the lengths it put in `P` and stay
        // borrowed (with their guards) until after this launch is enqueued. A persistent launch gets the dynamic shared memory its agent
        // expects (`PipeTuning::ring_bytes`, the same table as the kernel's).
        unsafe { stream.launch_builder(&func).arg(&params).launch(cfg) }?;
        Ok(())
    }
}

/// Whether `stream` is capturing work into a CUDA graph.
pub(crate) fn is_capturing(stream: &CudaStream) -> Result<bool> {
    use sys::CUstreamCaptureStatus as Status;
    Ok(stream.capture_status()? != Status::CU_STREAM_CAPTURE_STATUS_NONE)
}

/// `Ok` if both streams belong to the same CUDA context, else [`Error::ContextMismatch`].
pub(crate) fn same_context(a: &CudaStream, b: &CudaStream) -> Result<()> {
    if a.context().cu_ctx() == b.context().cu_ctx() { Ok(()) } else { Err(Error::ContextMismatch) }
}

/// Writes `words` zero u64 counts at `addr` on `stream`: what a call on an empty input leaves instead of
/// launching a kernel (invariant 6).
pub(crate) fn zero_counts(stream: &CudaStream, addr: u64, words: usize) -> Result<()> {
    // SAFETY: callers pass the address of at least `words` u64 of a buffer they checked and hold borrowed.
    unsafe { cudarc::driver::result::memset_d8_async(addr, 0, 8 * words, stream.cu_stream()) }?;
    Ok(())
}

/// A device buffer as an address range, for [`check_disjoint`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    pub what: &'static str,
    pub addr: u64,
    pub bytes: usize,
}

impl Span {
    pub fn new<T>(what: &'static str, addr: u64, len: usize) -> Self {
        Span { what, addr, bytes: len * size_of::<T>() }
    }
    fn overlaps(&self, other: &Span) -> bool {
        self.bytes > 0
            && other.bytes > 0
            && self.addr < other.addr + other.bytes as u64
            && other.addr < self.addr + self.bytes as u64
    }
}

/// `Ok` if no output overlaps an input or another output, else [`Error::Overlap`].
pub(crate) fn check_disjoint(inputs: &[Span], outputs: &[Span]) -> Result<()> {
    for (i, out) in outputs.iter().enumerate() {
        if let Some(other) = inputs.iter().chain(&outputs[i + 1..]).find(|other| out.overlaps(other)) {
            return Err(Error::Overlap { what: out.what, other: other.what });
        }
    }
    Ok(())
}

/// `Ok` if an output of `actual` items can hold `needed`, else [`Error::OutputTooSmall`].
pub(crate) fn check_room(what: &'static str, needed: usize, actual: usize) -> Result<()> {
    if actual < needed { Err(Error::OutputTooSmall { what, needed, actual }) } else { Ok(()) }
}
