//! The one place that launches kernels: a call's plan (`crate::plan`) checked against what only the
//! driver knows — whether a persistent kernel fits the GPU's shared memory — and launched with the
//! workspace's look-back state.
use super::params::{LB_DETERMINISTIC, LB_ENTRY_UNITS_SHIFT, LB_MAX_ENTRY_UNITS, LB_PREFETCH_GUESS, LookbackParams};
use super::workspace::{HEADER, MAX_TILES, region_entries};
use super::{Backoff, Workspace};
use crate::error::{Error, Result};
use crate::kernels::{self, Kernel};
use crate::plan::{self, Buffers, Call, Launch, Plan, Primitive, Shape};
use cudarc::driver::{CudaStream, DevicePtrMut, DeviceRepr, LaunchConfig, PushKernelArg, sys};
use std::sync::Arc;

impl Workspace {
    /// The launch of `primitive` over `n` items (at least one) whose buffers are `buffers`: the plan
    /// ([`plan::plan`]) for this workspace's engine setting and GPU, and its persistent launch if the
    /// kernel's ring and static shared memory fit a block of this GPU (else its classic launch).
    pub(crate) fn plan_launch(
        &mut self,
        stream: &CudaStream,
        primitive: Primitive,
        n: usize,
        buffers: Buffers,
    ) -> Result<Launch> {
        self.plan_launch_with(stream, primitive, n, buffers, |launch| launch.kernel)
    }

    /// [`Workspace::plan_launch`] with each planned launch's kernel replaced by `kernel(launch)`: a kernel
    /// compiled at run time (`crate::rtc`) from the same agent as the planned one, so of the same shape and
    /// parameters. Whether a persistent launch fits is asked of the replacement.
    pub(crate) fn plan_launch_with(
        &mut self,
        stream: &CudaStream,
        primitive: Primitive,
        n: usize,
        buffers: Buffers,
        kernel: impl Fn(&Launch) -> Kernel,
    ) -> Result<Launch> {
        let sm90 = self.device_info(stream)?.sm90;
        let call = Call { primitive, n, engine: self.engine, sm90, buffers, small_grids: self.small_grids };
        let Plan { classic, persistent } = plan::plan(&call)?;
        let swap = |launch: Launch| Launch { kernel: kernel(&launch), ..launch };
        let (classic, persistent) = (swap(classic), persistent.map(swap));
        match persistent {
            Some(launch) if self.persistent_fits(stream, &launch)? => Ok(launch),
            _ => Ok(classic),
        }
    }

    /// Whether a persistent launch's kernel fits a block of this GPU: its ring (the tuning row's) and its
    /// static shared memory (the driver's answer) within the opt-in limit. A kernel that fits is opted in
    /// to its ring. The driver is asked once per kernel, not per call.
    fn persistent_fits(&mut self, stream: &CudaStream, launch: &Launch) -> Result<bool> {
        let Shape::Persistent(pipe) = launch.shape else { return Ok(false) };
        let kernel = launch.kernel;
        if let Some(&fits) = self.persistent_fits.get(&kernel) {
            return Ok(fits);
        }
        let optin = self.device_info(stream)?.smem_optin;
        let func = kernels::function(stream.context(), kernel)?;
        // Should the driver not say, the classic agent is the safe choice.
        let fits = func
            .get_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
            .is_ok_and(|static_smem| pipe.ring_bytes() + static_smem.max(0) as usize <= optin);
        if fits {
            // Above 48 KB of dynamic shared memory a kernel must opt in; once per function.
            func.set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                pipe.ring_bytes() as i32,
            )?;
        }
        self.persistent_fits.insert(kernel, fits);
        Ok(fits)
    }

    /// Launches `launch` (from [`Workspace::plan_launch`]) with the parameters `make(lookback, scratch)`,
    /// `scratch` being the device address of one u64 of the workspace that the caller may use between its
    /// own launches. The caller holds the guards of its own buffers across this call. A persistent launch
    /// runs one block per SM (at most one per tile) with the shared-memory ring of its tuning; its blocks
    /// take `tiles + grid` ids from the tile counter (each block's last take finds no tile left).
    pub(crate) fn launch<P: DeviceRepr>(
        &mut self,
        stream: &Arc<CudaStream>,
        launch: Launch,
        make: impl FnOnce(LookbackParams, u64) -> P,
    ) -> Result<()> {
        // Tiles that need look-back state: the reductions' shares need none beyond the header.
        let tiles = if matches!(launch.shape, Shape::Shares(_)) { 0 } else { launch.tiles };
        debug_assert!(launch.tiles > 0, "empty inputs launch nothing (invariant 6)");
        self.check_context(stream)?;
        let too_many = || Error::Unsupported { operation: "more than 2^31 tiles in one call", dtype: "any" };
        let func = kernels::function(stream.context(), launch.kernel)?;
        let sms = self.device_info(stream)?.sms;
        let grid = plan::grid(&launch, sms).ok_or_else(too_many)?;
        // A persistent launch's kernel was opted in to this much dynamic shared memory (`plan_launch`).
        let cfg = LaunchConfig {
            grid_dim: (grid.blocks, 1, 1),
            block_dim: (grid.threads, 1, 1),
            shared_mem_bytes: grid.shared_bytes,
        };
        let capturing = self.enter(stream)?;
        if tiles > MAX_TILES {
            return Err(too_many());
        }
        // The capacity counts 16-byte units of a region. Entries of several units (user accumulators of
        // more than 8 bytes) need that many for every tile and anchor entry (`anchor_entry` in
        // `cuda/core/lookback.cuh` counts `status_tiles / units` entries).
        let units = launch.status_units;
        debug_assert!((1..=LB_MAX_ENTRY_UNITS).contains(&units), "accumulators of at most 32 bytes (check_sizes)");
        let needed = if units == 1 { tiles } else { units * region_entries(tiles) };
        if needed > MAX_TILES {
            return Err(too_many());
        }
        if needed > self.capacity || self.buf.is_none() {
            if capturing {
                return Err(Error::NotCapturable {
                    reason: "the workspace must grow: call Workspace::reserve (or one eager call of this size) before the capture",
                });
            }
            self.grow(stream, needed)?;
        }
        let backoff: Backoff = self.backoff.unwrap_or(grid.backoff);
        let status_tiles = u32::try_from(region_entries(self.capacity)).map_err(|_| too_many())?;
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
            flags: if grid.prefetch { LB_PREFETCH_GUESS } else { 0 }
                | if self.deterministic { LB_DETERMINISTIC } else { 0 }
                | (units as u32 - 1) << LB_ENTRY_UNITS_SHIFT,
        };
        let params = make(lookback, base + 8);
        // SAFETY: every kernel of the table takes exactly one by-value parameter block, and `P` is the
        // #[repr(C)] mirror of the one `launch.kernel` takes (the caller pairs them). The workspace holds
        // two regions of `STATUS_WORDS·status_tiles` status words (16-byte aligned: HEADER is even),
        // status_tiles = region_entries(capacity) and capacity >= tiles (room for the anchor entries too),
        // or capacity >= units·region_entries(tiles) for entries of `units` 16-byte units (the flags say
        // how many, and the kernel's status format has that many: `status_units` agrees with
        // `entry_units_for` of `cuda/core/tile_state.cuh`),
        // after the counter; the caller's buffers are valid for the lengths it put in `P` and stay
        // borrowed (with their guards) until after this launch is enqueued. A persistent launch gets the
        // dynamic shared memory its agent expects (`PipeTuning::ring_bytes`, the same table as the
        // kernel's), to which `plan_launch` opted its kernel in.
        unsafe { stream.launch_builder(&func).arg(&params).launch(cfg) }?;
        Ok(())
    }
}
