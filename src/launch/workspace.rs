//! The reusable look-back workspace: its device state (the launch word and the tile-status regions), the
//! GPU it runs on, its settings, and the checks every call makes on entry.
use super::{Backoff, Engine, is_capturing, same_context};
use crate::error::{Error, Result};
use crate::kernels::{self, Kernel};
use crate::plan::MAX_SHARES;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, sys};
use std::collections::HashMap;
use std::sync::Arc;

/// What the launcher needs to know about the GPU of a workspace.
#[derive(Clone, Copy, Debug)]
pub(super) struct DeviceInfo {
    pub sms: u32,
    pub sm90: bool,
    /// Shared memory a block may opt in to (bytes): 227 KB on sm_90 and sm_100, 99 KB on sm_120, which
    /// therefore takes the classic agents.
    pub smem_optin: usize,
}

/// The reductions' count of finished blocks (`ReduceParams::finished` in `cuda/core/params.cuh`): zero
/// between launches.
pub(crate) const FINISHED_WORD: usize = 2;
/// The first of the reductions' share entries: two words for each of `MAX_SHARES` blocks.
pub(crate) const PARTIALS_WORD: usize = 4;
/// Words before the status words: the launch word (`cuda/core/tile_state.cuh`), one scratch word, the
/// reductions' finished count, a word of padding and their share entries (16-byte aligned: they are read
/// and written as 16-byte vectors).
pub(super) const HEADER: usize = PARTIALS_WORD + 2 * MAX_SHARES;
/// Status words per tile: one for the one-word formats, two for the 16-byte entries (`WideState`,
/// `WidePairState`, 8-byte `RunsPairState` in `cuda/core/tile_state.cuh`).
const STATUS_WORDS: usize = 2;
/// Status regions: launches alternate between two every 255 epochs, and the first launch of one clears
/// the other (`cuda/core/tile_state.cuh`), so no host step ever clears status words.
const REGIONS: usize = 2;
// The 16-byte entries must be 16-byte aligned: the status words start HEADER words into the buffer.
const _: () = assert!(
    HEADER.is_multiple_of(2) && PARTIALS_WORD.is_multiple_of(2),
    "status words and share entries start 16-byte aligned"
);
/// Status entries of one region for `capacity` tiles: one per tile, then, from the top down, one per
/// window of 32 tiles for the anchors of the deterministic look-back (`anchor_entry` in
/// `cuda/core/lookback.cuh`), which must stay above every tile's entry.
pub(super) fn region_entries(capacity: usize) -> usize {
    capacity + capacity / 32 + 2
}

/// Most tiles of one launch: the launch word counts the ids a launch takes (tiles, plus one per block
/// for the persistent engine) in 32 bits.
pub(super) const MAX_TILES: usize = 1 << 31;

/// Reusable look-back state: tile-status words and the dynamic tile counter.
///
/// Every primitive needs a small device workspace (32 KB for the reductions' shares, plus about 33 bytes
/// per tile, a tile being a few thousand items). The one-shot functions of this crate allocate one per
/// call; keep a `Workspace` and call its methods instead to make repeated calls allocate nothing. Status
/// words are tagged with a per-launch
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
    /// `[launch word, scratch, finished count, padding, share entries × 2·MAX_SHARES, status ×
    /// REGIONS·STATUS_WORDS·region_entries(capacity)]`, allocated on first use.
    pub(super) buf: Option<CudaSlice<u64>>,
    pub(super) capacity: usize,
    /// Earlier buffers of a workspace that was used in a stream capture: a graph may still launch with
    /// them, so they live as long as the workspace.
    retired: Vec<CudaSlice<u64>>,
    /// Whether a call was captured (its buffer may be in a graph).
    captured: bool,
    /// The device address of the count that sizes calls inside [`Workspace::with_count`], else `None`.
    pub(crate) device_count: Option<u64>,
    pub(super) backoff: Option<Backoff>,
    pub(super) engine: Engine,
    /// Whether float sums combine tiles in tile order ([`Workspace::set_deterministic`]).
    pub(super) deterministic: bool,
    device: Option<DeviceInfo>,
    /// Persistent kernels already checked against the GPU's shared memory (and opted in to their ring
    /// when it fits), with the answer: the driver is asked once per kernel, not per call.
    pub(super) persistent_fits: HashMap<Kernel, bool>,
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
            deterministic: false,
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

    /// The kernel structure later calls take where they have a choice ([`set_engine`](Workspace::set_engine)).
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Makes the float sums of later calls the same bits from run to run (default `false`).
    ///
    /// By default the look-back combines the sums of tiles in an order that depends on timing (which
    /// earlier tile already knew its prefix), so a float sum can differ in its last bits between two runs
    /// on the same input. Deterministic, the tiles' sums `tᵢ` (each added in a fixed order inside its tile)
    /// are instead combined in a grouping fixed by their positions: the tiles of each aligned window of 32
    /// by one fixed tree (`w₀`, `w₁`, …), the windows folded left in order, `((w₀ + w₁) + w₂) + …`, and
    /// a tile's prefix is its window's prefix plus the same tree over the tiles before it in its window. This
    /// covers every float sum: [`inclusive_scan_into`](Workspace::inclusive_scan_into) and the other scans,
    /// the scans by key, [`reduce_by_key_into`](Workspace::reduce_by_key_into) and
    /// [`reduce_user_into`](Workspace::reduce_user_into), for `f32`, `f64`, `f16` and `bf16`
    /// (accumulated in `f32`), and user operators ([`crate::rtc::UserScanOp`], whose grouping is fixed
    /// the same way), in place or not, on both engines, sized on the host or on the device, and in CUDA graphs (the setting
    /// is read when a call is made or captured).
    ///
    /// What is guaranteed: the same input, element type, call and engine give the same bits on every run,
    /// whatever else runs on the GPU. The bits depend only on how the input is cut into tiles, which
    /// the engine and the element type fix; the number of SMs and the launch's timing play no part, so
    /// GPUs of one architecture agree with each other too. The two engines cut differently, so to
    /// compare results across GPUs where [`Engine::Auto`] could choose differently (an sm_80 GPU against
    /// an sm_90 one, different alignments or sizes around the persistent threshold), pin the engine with
    /// [`set_engine`](Workspace::set_engine). The result is not the sequential sum (`host` computes that);
    /// it differs from it by rounding as before.
    ///
    /// Integer results and float min/max are exact and already deterministic: their kernels do not change.
    /// [`reduce_into`](Workspace::reduce_into) needs no setting: its grouping is always fixed by the item
    /// count alone (on every GPU and for every alignment of the input).
    /// The cost is one more status read per tile (its window's anchor), overlapped with the usual one;
    /// measured in `benches/STATUS.md` (the `_det` rows). Keyed sums mostly avoid even that: a run head cuts
    /// off everything before it, so a tile with a head before it in its window of 32 tiles (or right
    /// before it) takes its value from that window's fixed tree, and only its run count, an exact integer,
    /// from the look-back as in the default mode. The grouping above matters only for runs that span whole
    /// tiles without a head, and the results are the bits it gives, whichever way a tile found its prefix.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{ScanOp, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// ws.set_deterministic(true);
    /// assert!(ws.deterministic());
    /// let values: Vec<f32> = (0..100_000).map(|i| (i as f32).sin()).collect();
    /// let input = stream.clone_htod(&values)?;
    /// let mut first = stream.alloc_zeros::<f32>(values.len())?;
    /// let mut again = stream.alloc_zeros::<f32>(values.len())?;
    /// ws.inclusive_scan_into(&input, &mut first, ScanOp::Sum)?;
    /// ws.inclusive_scan_into(&input, &mut again, ScanOp::Sum)?;
    /// let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
    /// assert_eq!(bits(stream.clone_dtoh(&first)?), bits(stream.clone_dtoh(&again)?));
    /// # Ok(()) }
    /// ```
    pub fn set_deterministic(&mut self, deterministic: bool) {
        self.deterministic = deterministic;
    }

    /// Whether float sums are deterministic ([`set_deterministic`](Workspace::set_deterministic)).
    pub fn deterministic(&self) -> bool {
        self.deterministic
    }

    pub(super) fn device_info(&mut self, stream: &CudaStream) -> Result<DeviceInfo> {
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
    pub(super) fn grow(&mut self, stream: &Arc<CudaStream>, tiles: usize) -> Result<()> {
        let capacity = tiles.max(2 * self.capacity).clamp(64, MAX_TILES);
        let buf = stream.alloc_zeros::<u64>(HEADER + REGIONS * STATUS_WORDS * region_entries(capacity))?;
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

    /// Runs `call` with a one-item device buffer for a count, then reads the count back (blocks until the
    /// stream has produced it): the one-shot and in-place forms that return a count. The buffer is kept
    /// for the next call.
    pub(crate) fn count_on_host(
        &mut self,
        stream: &Arc<CudaStream>,
        call: impl FnOnce(&mut Self, &mut CudaSlice<u64>) -> Result<()>,
    ) -> Result<usize> {
        if self.enter(stream)? {
            return Err(Error::NotCapturable {
                reason: "this call reads its count back to the host: use the form that leaves it on the device (`_into`)",
            });
        }
        let mut count = match self.count_buffer.take() {
            Some(b) => b,
            None => stream.alloc_zeros::<u64>(1)?,
        };
        call(self, &mut count)?;
        let mut host = [0u64];
        let copied = stream.memcpy_dtoh(&count, &mut host);
        self.count_buffer = Some(count);
        copied?;
        usize::try_from(host[0]).map_err(|_| Error::Unsupported { operation: "counts above usize::MAX", dtype: "any" })
    }
}
