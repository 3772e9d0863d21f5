//! Stream compaction on the look-back engine: `select_if`, `select_flagged`, `unique` — into new
//! buffers, into caller buffers (count left on the device), and in place — plus `count_if` and `mask_if`.
//! The partitions (`partition.rs`) launch through the same kernels.
//!
//! * `mod.rs`: the launch descriptions, [`Selected`], and the one launcher of the selection kernels;
//! * `compact.rs`: the `Workspace` methods;
//! * `on_device.rs`: the in-place and counting forms that leave the count on the device;
//! * `one_shot.rs`: the free functions, with a temporary workspace.
use crate::element::Element;
#[cfg(doc)]
use crate::error::Error;
use crate::error::{Result, check_len};
use crate::kernels::{Algo, Kernel};
use crate::launch::{SelectParams, Workspace, zero_counts};
use crate::plan::{Buffers, Elem, Launch, Primitive};
use crate::pred::PredProgram;
use crate::pred::predicate::{DevicePred, Predicate};
use crate::rtc::{self, SelectKernels};
use cudarc::driver::{CudaSlice, CudaStream, CudaView, DeviceRepr};
use std::sync::Arc;

mod compact;
mod on_device;
mod one_shot;
mod unique_by;

pub use one_shot::{
    count_if, mask_if, select_flagged, select_flagged_in_place, select_flagged_into, select_if, select_if_in_place,
    select_if_into, unique, unique_in_place, unique_into,
};
pub use unique_by::unique_by;

/// What decides that an item is selected (`SOURCE_*` in `cuda/core/params.cuh`). Lives on the stack for one
/// call, so the size difference between variants does not matter.
#[derive(Clone, Copy, Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Source {
    Pred(PredProgram),
    /// A user predicate's kernels (`crate::rtc`), which replace the built-in ones in the plan.
    User(SelectKernels),
    /// Device address of one flag byte per item.
    Flags(u64),
    Unique,
    /// unique by a user equality: its kernels (`crate::rtc::UserEq`), which replace the built-in ones of
    /// the unsigned type of the key's size in the plan.
    UserUnique(SelectKernels),
}

/// Where items go (`MODE_*` in `cuda/core/params.cuh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Mode {
    /// The selected items to the front of the output, in order.
    Compact = 0,
    /// The selected items first, then the rejected ones reversed, in one buffer (CUB's layout).
    PartitionReverse = 1,
    /// The selected items into one buffer, the rejected ones into another, each in order.
    PartitionSplit = 2,
    /// The selected items first, then the rejected ones in order, in one buffer (two launches).
    PartitionStable = 3,
    /// Only the count.
    Count = 4,
    /// Only a byte per item, 1 where the predicate holds (no count).
    Mask = 5,
}

/// One selection launch, with raw device addresses the caller keeps borrowed until it returns.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SelectJob {
    pub input: u64,
    pub output: u64,
    pub rejected: u64,
    pub num_selected: u64,
    pub n: usize,
    pub source: Source,
    pub mode: Mode,
}

/// The result of a one-shot selection: a buffer of the input's length whose first [`len`](Self::len)
/// items are the selected ones, in input order. (Sizing the buffer exactly would cost a second copy.)
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::Pred;
/// let input = stream.clone_htod(&[4u32, 15, 8, 23, 42])?;
/// let big = lookback::select_if(&input, &Pred::ge(10))?;
/// assert_eq!((big.len(), big.is_empty()), (3, false));
/// assert_eq!(stream.clone_dtoh(&big.view())?, [15, 23, 42]);
/// assert_eq!(big.to_vec()?, [15, 23, 42]);
/// let (buffer, len) = big.into_parts();
/// assert_eq!((buffer.len(), len), (5, 3)); // the buffer keeps the input's length
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Selected<T> {
    buffer: CudaSlice<T>,
    len: usize,
}

impl<T> Selected<T> {
    pub(crate) fn new(buffer: CudaSlice<T>, len: usize) -> Self {
        Selected { buffer, len }
    }
    /// Number of selected items.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Pred;
    /// let input = stream.clone_htod(&[1i16, -2, 3, -4])?;
    /// assert_eq!(lookback::select_if(&input, &Pred::lt(0))?.len(), 2);
    /// # Ok(()) }
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether nothing was selected.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Pred;
    /// let input = stream.clone_htod(&[1i16, 2, 3])?;
    /// let none = lookback::select_if(&input, &Pred::gt(100))?;
    /// assert!(none.is_empty());
    /// assert_eq!(none.len(), 0);
    /// # Ok(()) }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The selected items.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// let input = stream.clone_htod(&[7u8, 7, 8, 8, 7])?;
    /// let runs = lookback::unique(&input)?;
    /// let view = runs.view();
    /// assert_eq!(view.len(), 3);
    /// assert_eq!(stream.clone_dtoh(&view)?, [7, 8, 7]);
    /// # Ok(()) }
    /// ```
    pub fn view(&self) -> CudaView<'_, T> {
        self.buffer.slice(..self.len)
    }
    /// The whole buffer and the number of selected items at its front.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Pred;
    /// let input = stream.clone_htod(&[0.5f32, 2.0, 0.25, 3.0])?;
    /// let (buffer, len) = lookback::select_if(&input, &Pred::lt(1.0))?.into_parts();
    /// assert_eq!((buffer.len(), len), (4, 2));
    /// assert_eq!(stream.clone_dtoh(&buffer.slice(..len))?, [0.5, 0.25]);
    /// # Ok(()) }
    /// ```
    pub fn into_parts(self) -> (CudaSlice<T>, usize) {
        (self.buffer, self.len)
    }
}

impl<T: DeviceRepr> Selected<T> {
    /// Copies the selected items to the host (blocks until they are ready).
    ///
    /// # Errors
    /// [`Error::Driver`] if the copy fails.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// let input = stream.clone_htod(&[10i64, 20, 30])?;
    /// let flags = stream.clone_htod(&[0u8, 1, 1])?;
    /// assert_eq!(lookback::select_flagged(&input, &flags)?.to_vec()?, [20, 30]);
    /// # Ok(()) }
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>> {
        Ok(self.buffer.stream().clone_dtoh(&self.view())?)
    }
}

impl Workspace {
    /// Launches one selection (two for the stable partition: a count, then the partition).
    pub(crate) fn select_raw<T: Element>(&mut self, stream: &Arc<CudaStream>, job: SelectJob) -> Result<()> {
        self.select_raw_as(stream, job, Elem::of::<T>())
    }

    /// [`select_raw`](Self::select_raw) of items planned as `ty` (a user key type plans as the unsigned type
    /// of its size, whose agents its kernels are).
    pub(crate) fn select_raw_as(&mut self, stream: &Arc<CudaStream>, job: SelectJob, ty: Elem) -> Result<()> {
        if job.n == 0 {
            // Invariant 6: an empty input writes a count of 0 and launches no kernel.
            if job.mode != Mode::Mask {
                zero_counts(stream, job.num_selected, 1)?;
            }
            return Ok(());
        }
        let (source, flags, pred) = match job.source {
            Source::Pred(p) => (0, 0, p),
            Source::User(_) => (0, 0, PredProgram::default()),
            Source::Flags(f) => (1, f, PredProgram::default()),
            Source::Unique | Source::UserUnique(_) => (2, 0, PredProgram::default()),
        };
        let primitive = Primitive::Select { ty, mode: job.mode, flagged: matches!(job.source, Source::Flags(_)) };
        let buffers = Buffers { input: job.input, flags, ..Buffers::default() };
        // The stable partition's count pass runs on the same launch (the same kernel, tiles and grid).
        let user = match job.source {
            Source::User(kernels) | Source::UserUnique(kernels) => Some(kernels),
            _ => None,
        };
        let launch = self.plan_launch_with(stream, primitive, job.n, buffers, |planned| match user {
            Some(k) => user_kernel(k, planned),
            None => planned.kernel,
        })?;
        let params = |lb, scratch, mode: Mode| SelectParams {
            input: job.input,
            output: job.output,
            output_rejected: job.rejected,
            flags,
            num_selected: if mode == Mode::Count && job.mode == Mode::PartitionStable {
                scratch
            } else {
                job.num_selected
            },
            known_total: scratch,
            n: job.n as u64,
            source,
            mode: mode as u32,
            pred,
            lb,
        };
        if job.mode == Mode::PartitionStable {
            // The rejected items start after all selected ones: count them first, into the scratch word,
            // then partition, both with the same kernel. (Counting on the compaction kernel, whose writer
            // warps count faster, measured i32 2^28 822.7 against 837.2 µs, but 50.6 / 79.0 against 47.3 /
            // 77.4 at 2^23 / 2^24: a different kernel for the second launch cost 2-3 µs there; 2026-12-02,
            // bench log `benches/log/2026-11-30-to-2026-12-02-notes.md`.)
            self.launch(stream, launch, |lb, scratch| params(lb, scratch, Mode::Count))?;
        }
        self.launch(stream, launch, |lb, scratch| params(lb, scratch, job.mode))
    }
}

/// What selects by `pred`: its program for the built-in kernels, or the kernels compiled for its user code
/// on the GPU of `stream` (compiled now, or found in the caches).
pub(crate) fn pred_source<T: Element>(pred: &impl Predicate<T>, stream: &Arc<CudaStream>) -> Result<Source> {
    Ok(match pred.device()? {
        DevicePred::Program(program) => Source::Pred(program),
        DevicePred::Code(code) => Source::User(rtc::select_kernels(stream.context(), code)?.0),
    })
}

/// The user kernel that takes the place of a planned launch's built-in one: the same agent, so the same
/// tuning row, shape and parameters.
fn user_kernel(kernels: SelectKernels, planned: &Launch) -> Kernel {
    match (planned.is_persistent(), planned.row) {
        (false, _) => kernels.classic,
        (true, Algo::Partition) => kernels.pipe_partition,
        (true, _) => kernels.pipe_select,
    }
}

fn check_flags(items: usize, flags: usize) -> Result<()> {
    check_len("flags", items, flags)
}
