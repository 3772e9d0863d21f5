//! Grid sizing, the reusable look-back workspace, and the one place that launches kernels.
use crate::error::{Error, Result};
use crate::kernels::{self, Kernel, Tuning};
use crate::pred::PredProgram;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, DeviceRepr, LaunchConfig, PushKernelArg};
use std::sync::Arc;

/// Mirrors `LookbackParams` of `cuda/params.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LookbackParams {
    pub status: u64,
    pub values: u64,
    pub tile_counter: u64,
    pub tile_base: u64,
    pub epoch: u32,
    pub first_poll_ns: u32,
    pub poll_ns: u32,
    pub _pad: u32,
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

// The C side asserts the same sizes (cuda/params.cuh).
const _: () =
    assert!(size_of::<LookbackParams>() == 48 && size_of::<ScanParams>() == 88 && size_of::<SelectParams>() == 392);

// SAFETY: #[repr(C)] plain-old-data structs of integers, laid out exactly as their C counterparts.
unsafe impl DeviceRepr for LookbackParams {}
unsafe impl DeviceRepr for ScanParams {}
unsafe impl DeviceRepr for SelectParams {}

/// Back-off of the look-back's polling, in nanoseconds. The defaults come from `cuda/tuning.cuh`;
/// override them with [`Workspace::set_backoff`] (the benchmark sweeps them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Sleep before the first poll of a predecessor's status.
    pub first_poll_ns: u32,
    /// Sleep between polls of a status that is not ready yet.
    pub poll_ns: u32,
}

/// Epochs run 1..=EPOCHS; see `cuda/tile_state.cuh`.
const EPOCHS: u32 = 255;
/// Words before the status words: the tile counter and one scratch word.
const HEADER: usize = 2;

/// Reusable look-back state: tile-status words and the dynamic tile counter.
///
/// Every primitive needs a small device workspace (24 bytes per tile, a tile being a few thousand
/// items). The one-shot functions of this crate allocate one per call; keep a `Workspace` and call its
/// methods instead to make repeated calls allocate nothing. Status words are tagged with a per-launch
/// epoch, so a reused workspace needs no clearing launch: each call is one kernel launch.
///
/// A workspace belongs to one CUDA context. Calls through it are ordered on the stream of their input
/// buffer; using it from two streams is safe as long as cudarc's event tracking is on (the default),
/// which orders accesses to the workspace's buffer.
#[derive(Debug)]
pub struct Workspace {
    stream: Arc<CudaStream>,
    /// `[tile counter, scratch, status × capacity, values × 2·capacity]`, allocated on first use.
    buf: Option<CudaSlice<u64>>,
    capacity: usize,
    epoch: u32,
    tiles_taken: u64,
    backoff: Option<Backoff>,
    /// One u64 for counts that are read back to the host, kept across calls.
    pub(crate) count_buffer: Option<CudaSlice<u64>>,
}

impl Workspace {
    /// A workspace for buffers of `stream`'s context. Allocates nothing until the first call.
    pub fn new(stream: &Arc<CudaStream>) -> Self {
        Workspace {
            stream: stream.clone(),
            buf: None,
            capacity: 0,
            epoch: 0,
            tiles_taken: 0,
            backoff: None,
            count_buffer: None,
        }
    }

    /// Overrides the look-back back-off of every later call (`None`: the tuned defaults).
    pub fn set_backoff(&mut self, backoff: Option<Backoff>) {
        self.backoff = backoff;
    }

    /// Device bytes held.
    pub fn device_bytes(&self) -> usize {
        self.buf.as_ref().map_or(0, |b| b.len() * 8)
    }

    pub(crate) fn check_context(&self, stream: &CudaStream) -> Result<()> {
        if stream.context().cu_ctx() == self.stream.context().cu_ctx() { Ok(()) } else { Err(Error::ContextMismatch) }
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
        debug_assert!(tiles > 0, "empty inputs launch nothing (invariant 6)");
        self.check_context(stream)?;
        let grid = u32::try_from(tiles)
            .map_err(|_| Error::Unsupported { operation: "more than 2^32 - 1 tiles in one call", dtype: "any" })?;
        let func = kernels::function(stream.context(), kernel)?;
        if tiles > self.capacity || self.buf.is_none() {
            let capacity = tiles.max(2 * self.capacity).max(64);
            self.buf = Some(stream.alloc_zeros::<u64>(HEADER + 3 * capacity)?);
            self.capacity = capacity;
            self.epoch = 0;
            self.tiles_taken = 0;
        }
        let buf = self.buf.as_mut().expect("allocated above");
        if self.epoch == EPOCHS {
            // Words of the launch 255 calls ago carry the epoch we are about to reuse: clear them.
            stream.memset_zeros(&mut buf.slice_mut(HEADER..HEADER + self.capacity))?;
            self.epoch = 0;
        }
        self.epoch += 1;
        let backoff = self.backoff.unwrap_or_else(|| {
            let (first_poll_ns, poll_ns) = tuning.backoff_for(tiles);
            Backoff { first_poll_ns, poll_ns }
        });
        let (base, _guard) = buf.device_ptr_mut(stream);
        let lookback = LookbackParams {
            tile_counter: base,
            status: base + 8 * HEADER as u64,
            values: base + 8 * (HEADER + self.capacity) as u64,
            tile_base: self.tiles_taken,
            epoch: self.epoch,
            first_poll_ns: backoff.first_poll_ns,
            poll_ns: backoff.poll_ns,
            _pad: 0,
        };
        let params = make(lookback, base + 8);
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (tuning.block_threads, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: every kernel of the table takes exactly one by-value parameter block, and `P` is the
        // #[repr(C)] mirror of the one `kernel` takes (the caller pairs them). The workspace holds
        // `capacity >= tiles` status words and 2·capacity value slots after the counter; the caller's
        // buffers are valid for the lengths it put in `P` and stay borrowed (with their guards) until
        // after this launch is enqueued.
        unsafe { stream.launch_builder(&func).arg(&params).launch(cfg) }?;
        self.tiles_taken += tiles as u64;
        Ok(())
    }
}
