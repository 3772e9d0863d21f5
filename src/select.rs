//! Stream compaction on the look-back engine: `select_if`, `select_flagged`, `unique` — into new
//! buffers, into caller buffers (count left on the device), and in place — plus `count_if` and `mask_if`.
use crate::element::{Element, Flag};
use crate::error::{Error, Result, check_len};
use crate::kernels::{self, Algo};
use crate::launch::{SelectParams, Shape, Workspace, check_room, same_context, zero_counts};
use crate::pred::{Pred, PredProgram};
use cudarc::driver::{CudaSlice, CudaStream, CudaView, DevicePtr, DevicePtrMut};
use std::sync::Arc;

mod on_device;

/// What decides that an item is selected (`SOURCE_*` in `cuda/params.cuh`). Lives on the stack for one
/// call, so the size difference between variants does not matter.
#[derive(Clone, Copy, Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Source {
    Pred(PredProgram),
    /// Device address of one flag byte per item.
    Flags(u64),
    Unique,
}

/// Where items go (`MODE_*` in `cuda/params.cuh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Mode {
    Compact = 0,
    PartitionReverse = 1,
    PartitionSplit = 2,
    PartitionStable = 3,
    Count = 4,
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

impl<T: Element> Selected<T> {
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
        if job.n == 0 {
            // Invariant 6: an empty input writes a count of 0 and launches no kernel.
            if job.mode != Mode::Mask {
                zero_counts(stream, job.num_selected, 1)?;
            }
            return Ok(());
        }
        let kernel = kernels::select_kernel(T::DTYPE);
        let tuning = kernels::tuning(Algo::Select, size_of::<T>());
        let tiles = job.n.div_ceil(tuning.tile_items(size_of::<T>()));
        // The persistent engine covers every layout by predicate or uniqueness and compaction by flags
        // of 4- and 8-byte items, in three kernel families with a tuning row each (cuda/tuning.cuh):
        // compaction and count_if (`select`, with writer warps), the partitions (`partition`, without:
        // they copy every item out, and writer warps made them slower), select_flagged (`flagged`: the
        // flags a side stream of its tiles). The mask-only mode, flagged 1- and 2-byte items (whose flags
        // would not leave room for the ring) and flags not 16-byte aligned stay on the classic agent.
        // The stable partition's count pass runs on the partition kernel too (same tiles, same grid).
        // Under `Engine::Auto` every mode switches at its row's `min_tiles` (32 MB; select_flagged
        // measured 7-10 % faster persistent there, 0-5 % slower below). Compaction stayed on the classic
        // agent up to 64 MB until session 15, whose persistent kernels are faster from 32 MB (H200, µs, classic /
        // persistent / CUB: i32 2^23 select_if 26.5 / 23.2 / 26.8, in place 29.2 / 28.0 / 27.7, unique
        // 24.8 / 21.0 / 26.1; i64 2^22 select_if 26.0 / 23.3 / 25.0, in place 27.7 / 27.3 / 26.1) and
        // still slower at 16 MB (i32 2^22 select_if 16.9 / 18.3, in place 17.6 / 19.8; benches/NOTES.md).
        let bytes = job.n * size_of::<T>();
        // (row, kernel, the flags' address or 0: its alignment decides too)
        let (pipe, pipe_kernel, flags_addr) = match (job.mode, job.source) {
            (Mode::Mask, _) => (None, None, 0),
            (Mode::Compact, Source::Flags(flags)) => {
                (kernels::pipe_flagged_tuning(size_of::<T>()), kernels::pipe_flagged_kernel(size_of::<T>()), flags)
            }
            (_, Source::Flags(_)) => (None, None, 0),
            (Mode::PartitionReverse | Mode::PartitionSplit | Mode::PartitionStable, _) => {
                (kernels::pipe_tuning(Algo::Partition), Some(kernels::pipe_partition_kernel(T::DTYPE)), 0)
            }
            (Mode::Compact | Mode::Count, _) => {
                (kernels::pipe_tuning(Algo::Select), Some(kernels::pipe_select_kernel(T::DTYPE)), 0)
            }
        };
        let persistent = self.persistent_launch(stream, pipe, pipe_kernel, bytes, bytes, &[job.input, flags_addr])?;
        let (source, flags, pred) = match job.source {
            Source::Pred(p) => (0, 0, p),
            Source::Flags(f) => (1, f, PredProgram::default()),
            Source::Unique => (2, 0, PredProgram::default()),
        };
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
        let classic = (kernel, Shape::Classic(tuning), tiles);
        let shaped = persistent.unwrap_or(classic);
        if job.mode == Mode::PartitionStable {
            // The rejected items start after all selected ones: count them first, into the scratch word,
            // then partition, both with the same kernel. (Counting on the compaction kernel, whose writer
            // warps count faster, measured i32 2^28 822.7 against 837.2 µs, but 50.6 / 79.0 against 47.3 /
            // 77.4 at 2^23 / 2^24: a different kernel for the second launch cost 2-3 µs there;
            // benches/NOTES.md session 19.)
            let (kernel, shape, tiles) = shaped;
            self.launch_shaped(stream, kernel, shape, tiles, |lb, scratch| params(lb, scratch, Mode::Count))?;
        }
        let (kernel, shape, tiles) = shaped;
        self.launch_shaped(stream, kernel, shape, tiles, |lb, scratch| params(lb, scratch, job.mode))
    }

    /// Compacts `input` into `output` (or in place when both are the same address).
    fn compact_raw<T: Element>(
        &mut self,
        stream: &Arc<CudaStream>,
        src: u64,
        dst: u64,
        num_selected: u64,
        n: usize,
        source: Source,
    ) -> Result<()> {
        let job = SelectJob { input: src, output: dst, rejected: 0, num_selected, n, source, mode: Mode::Compact };
        self.select_raw::<T>(stream, job)
    }

    fn compact_into<T, I, O, N>(
        &mut self,
        input: &I,
        output: &mut O,
        num_selected: &mut N,
        source: Source,
    ) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<T>,
        N: DevicePtrMut<u64>,
    {
        let n = input.len();
        check_room("output", n, output.len())?;
        check_room("num_selected", 1, num_selected.len())?;
        let stream = input.stream().clone();
        same_context(&stream, output.stream())?;
        same_context(&stream, num_selected.stream())?;
        let (src, _read) = input.device_ptr(&stream);
        let (dst, _write) = output.device_ptr_mut(&stream);
        self.enter(&stream)?;
        let (count, _count) = num_selected.device_ptr_mut(&stream);
        self.compact_raw::<T>(&stream, src, dst, count, n, source)
    }

    fn compact_in_place<T: Element, B: DevicePtrMut<T>>(&mut self, buf: &mut B, source: Source) -> Result<usize> {
        let stream = buf.stream().clone();
        let mut count = self.take_count_buffer(&stream)?;
        self.compact_in_place_into(buf, source, &mut count)?;
        self.read_count(&stream, count)
    }

    /// A one-item device buffer for counts that are read back (kept across calls).
    pub(crate) fn take_count_buffer(&mut self, stream: &Arc<CudaStream>) -> Result<CudaSlice<u64>> {
        if self.enter(stream)? {
            return Err(Error::NotCapturable {
                reason: "this call reads its count back to the host: use the form that leaves it on the device (`_into`)",
            });
        }
        match self.count_buffer.take() {
            Some(b) => Ok(b),
            None => Ok(stream.alloc_zeros::<u64>(1)?),
        }
    }

    /// Reads a count back (blocks until the stream has produced it) and keeps the buffer for reuse.
    pub(crate) fn read_count(&mut self, stream: &Arc<CudaStream>, count: CudaSlice<u64>) -> Result<usize> {
        let mut host = [0u64];
        let copied = stream.memcpy_dtoh(&count, &mut host);
        self.count_buffer = Some(count);
        copied?;
        usize::try_from(host[0]).map_err(|_| Error::Unsupported { operation: "counts above usize::MAX", dtype: "any" })
    }

    /// Copies the items of `input` for which `pred` holds to the front of `output`, in input order, and
    /// writes their number to `num_selected[0]` — on the device: nothing blocks the host. `output` must
    /// hold at least `input.len()` items (every item may be selected); items past the count are left
    /// alone.
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`] (for `output` or an empty `num_selected`), [`Error::PredicateTooComplex`],
    /// [`Error::ContextMismatch`], [`Error::KernelsNotBuilt`], [`Error::Driver`]. On error nothing is
    /// written.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{Pred, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[5i32, -1, 8, 0, 3, -7])?;
    /// let mut output = stream.alloc_zeros::<i32>(input.len())?;
    /// let mut num_selected = stream.alloc_zeros::<u64>(1)?;
    /// ws.select_if_into(&input, &Pred::gt(0), &mut output, &mut num_selected)?;
    /// // The count stays on the device until it is read back.
    /// let n = stream.clone_dtoh(&num_selected)?[0] as usize;
    /// assert_eq!(n, 3);
    /// assert_eq!(stream.clone_dtoh(&output.slice(..n))?, [5, 8, 3]);
    /// # Ok(()) }
    /// ```
    pub fn select_if_into<T, I, O, N>(
        &mut self,
        input: &I,
        pred: &Pred<T>,
        output: &mut O,
        num_selected: &mut N,
    ) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<T>,
        N: DevicePtrMut<u64>,
    {
        let program = pred.program()?;
        self.compact_into(input, output, num_selected, Source::Pred(program))
    }

    /// Keeps the items of `buf` for which `pred` holds at its front, in their original order, in one pass
    /// with no temporary copy; returns how many (blocks until the count is known). Items past the count
    /// are unspecified.
    ///
    /// Safe in place because of the look-back's ordering: a tile writes only after every earlier tile has
    /// finished reading its input (see `cuda/agent_select.cuh`).
    ///
    /// # Errors
    /// [`Error::PredicateTooComplex`], [`Error::KernelsNotBuilt`], [`Error::Driver`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{Pred, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let mut buf = stream.clone_htod(&[0.5f64, 1.5, 1.0, -2.0, f64::NAN, 0.0])?;
    /// // `between` includes both ends and is false for NaN.
    /// let kept = ws.select_if_in_place(&mut buf, &Pred::between(0.0, 1.0))?;
    /// assert_eq!(kept, 3);
    /// assert_eq!(stream.clone_dtoh(&buf.slice(..kept))?, [0.5, 1.0, 0.0]);
    /// # Ok(()) }
    /// ```
    pub fn select_if_in_place<T: Element, B: DevicePtrMut<T>>(&mut self, buf: &mut B, pred: &Pred<T>) -> Result<usize> {
        let program = pred.program()?;
        self.compact_in_place(buf, Source::Pred(program))
    }

    /// Copies the items whose flag is set (nonzero `u8`, or `true`) to the front of `output`, in order;
    /// the count goes to `num_selected[0]` on the device.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `flags` and `input` differ in length; otherwise as
    /// [`Workspace::select_if_into`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Workspace;
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[10i64, 20, 30, 40])?;
    /// let flags = stream.clone_htod(&[1u8, 0, 2, 0])?; // any nonzero byte selects
    /// let mut output = stream.alloc_zeros::<i64>(4)?;
    /// let mut num_selected = stream.alloc_zeros::<u64>(1)?;
    /// ws.select_flagged_into(&input, &flags, &mut output, &mut num_selected)?;
    /// let n = stream.clone_dtoh(&num_selected)?[0] as usize;
    /// assert_eq!(n, 2);
    /// assert_eq!(stream.clone_dtoh(&output.slice(..n))?, [10, 30]);
    /// # Ok(()) }
    /// ```
    pub fn select_flagged_into<T, F, I, M, O, N>(
        &mut self,
        input: &I,
        flags: &M,
        output: &mut O,
        num_selected: &mut N,
    ) -> Result<()>
    where
        T: Element,
        F: Flag,
        I: DevicePtr<T>,
        M: DevicePtr<F>,
        O: DevicePtrMut<T>,
        N: DevicePtrMut<u64>,
    {
        check_flags(input.len(), flags.len())?;
        same_context(input.stream(), flags.stream())?;
        let stream = input.stream().clone();
        self.enter(&stream)?;
        let (f, _flags) = flags.device_ptr(&stream);
        self.compact_into(input, output, num_selected, Source::Flags(f))
    }

    /// Keeps the items of `buf` whose flag is set at its front, in order, in place; returns how many.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::KernelsNotBuilt`], [`Error::Driver`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Workspace;
    /// let mut ws = Workspace::new(&stream);
    /// let mut buf = stream.clone_htod(&[1.5f32, 2.5, 3.5])?;
    /// let flags = stream.clone_htod(&[false, true, true])?;
    /// let kept = ws.select_flagged_in_place(&mut buf, &flags)?;
    /// assert_eq!(kept, 2);
    /// assert_eq!(stream.clone_dtoh(&buf.slice(..kept))?, [2.5, 3.5]);
    /// # Ok(()) }
    /// ```
    pub fn select_flagged_in_place<T, F, B, M>(&mut self, buf: &mut B, flags: &M) -> Result<usize>
    where
        T: Element,
        F: Flag,
        B: DevicePtrMut<T>,
        M: DevicePtr<F>,
    {
        let stream = buf.stream().clone();
        let mut count = self.take_count_buffer(&stream)?;
        self.select_flagged_in_place_into(buf, flags, &mut count)?;
        self.read_count(&stream, count)
    }

    /// Copies the first item of every run of equal adjacent items to the front of `output`, in order
    /// (drops adjacent duplicates); the count goes to `num_selected[0]` on the device. Floats compare with
    /// IEEE `==`: `-0.0` equals `0.0`, and NaN equals nothing, so every NaN is kept.
    ///
    /// # Errors
    /// As [`Workspace::select_if_into`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Workspace;
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[0.0f32, -0.0, 1.0, 1.0, f32::NAN, f32::NAN, 2.0])?;
    /// let mut output = stream.alloc_zeros::<f32>(input.len())?;
    /// let mut num_selected = stream.alloc_zeros::<u64>(1)?;
    /// ws.unique_into(&input, &mut output, &mut num_selected)?;
    /// let n = stream.clone_dtoh(&num_selected)?[0] as usize;
    /// let got = stream.clone_dtoh(&output.slice(..n))?;
    /// // -0.0 == 0.0 is a duplicate (the first of the run is kept); NaN equals nothing, so both stay.
    /// assert_eq!(n, 5);
    /// assert!(got[0] == 0.0 && got[0].is_sign_positive());
    /// assert_eq!(got[1], 1.0);
    /// assert!(got[2].is_nan() && got[3].is_nan());
    /// assert_eq!(got[4], 2.0);
    /// # Ok(()) }
    /// ```
    pub fn unique_into<T, I, O, N>(&mut self, input: &I, output: &mut O, num_selected: &mut N) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<T>,
        N: DevicePtrMut<u64>,
    {
        self.compact_into(input, output, num_selected, Source::Unique)
    }

    /// Drops adjacent duplicates of `buf` in place; returns how many items remain at its front.
    ///
    /// # Errors
    /// [`Error::KernelsNotBuilt`], [`Error::Driver`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Workspace;
    /// let mut ws = Workspace::new(&stream);
    /// let mut buf = stream.clone_htod(&[7u16, 7, 7, 3, 3, 7])?;
    /// let kept = ws.unique_in_place(&mut buf)?;
    /// assert_eq!(kept, 3);
    /// assert_eq!(stream.clone_dtoh(&buf.slice(..kept))?, [7, 3, 7]);
    /// # Ok(()) }
    /// ```
    pub fn unique_in_place<T: Element, B: DevicePtrMut<T>>(&mut self, buf: &mut B) -> Result<usize> {
        self.compact_in_place(buf, Source::Unique)
    }

    /// Counts the items for which `pred` holds (blocks until the count is known).
    ///
    /// # Errors
    /// [`Error::PredicateTooComplex`], [`Error::KernelsNotBuilt`], [`Error::Driver`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{Pred, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[3i32, -1, 0, -8, 5])?;
    /// let negative: usize = ws.count_if(&input, &Pred::lt(0))?;
    /// assert_eq!(negative, 2);
    /// assert_eq!(ws.count_if(&input, &Pred::eq(0))?, 1);
    /// assert_eq!(ws.count_if(&input, &Pred::gt(100))?, 0);
    /// # Ok(()) }
    /// ```
    pub fn count_if<T: Element, I: DevicePtr<T>>(&mut self, input: &I, pred: &Pred<T>) -> Result<usize> {
        let stream = input.stream().clone();
        let mut count = self.take_count_buffer(&stream)?;
        self.count_if_into(input, pred, &mut count)?;
        self.read_count(&stream, count)
    }

    /// Writes `mask[i] = pred(input[i]) as u8` (one byte per item). Evaluate a predicate once, then
    /// select the same rows of several columns with [`Workspace::select_flagged_into`] or
    /// [`Workspace::select_flagged_in_place`].
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`] if `mask` is shorter than `input`; [`Error::PredicateTooComplex`],
    /// [`Error::KernelsNotBuilt`], [`Error::Driver`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{Pred, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let temps = stream.clone_htod(&[21.0f32, -9999.0, 19.5, f32::NAN])?;
    /// let mut mask = stream.alloc_zeros::<u8>(4)?;
    /// // `ne` is true for NaN.
    /// ws.mask_if_into(&temps, &Pred::ne(-9999.0), &mut mask)?;
    /// assert_eq!(stream.clone_dtoh(&mask)?, [1, 0, 1, 1]);
    /// // Select the same rows of another column.
    /// let mut ids = stream.clone_htod(&[7u32, 8, 9, 10])?;
    /// let kept = ws.select_flagged_in_place(&mut ids, &mask)?;
    /// assert_eq!(stream.clone_dtoh(&ids.slice(..kept))?, [7, 9, 10]);
    /// # Ok(()) }
    /// ```
    pub fn mask_if_into<T, I, M>(&mut self, input: &I, pred: &Pred<T>, mask: &mut M) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        M: DevicePtrMut<u8>,
    {
        let program = pred.program()?;
        let n = input.len();
        check_room("mask", n, mask.len())?;
        let stream = input.stream().clone();
        same_context(&stream, mask.stream())?;
        self.enter(&stream)?;
        let (src, _read) = input.device_ptr(&stream);
        let (m, _write) = mask.device_ptr_mut(&stream);
        let job = SelectJob {
            input: src,
            output: 0,
            rejected: m,
            num_selected: 0,
            n,
            source: Source::Pred(program),
            mode: Mode::Mask,
        };
        self.select_raw::<T>(&stream, job)
    }
}

fn check_flags(items: usize, flags: usize) -> Result<()> {
    check_len("flags", items, flags)
}

/// Allocates an output of `n` items and a count, runs `f`, reads the count back.
fn one_shot<T: Element>(
    stream: &Arc<CudaStream>,
    n: usize,
    f: impl FnOnce(&mut Workspace, &mut CudaSlice<T>, &mut CudaSlice<u64>) -> Result<()>,
) -> Result<Selected<T>> {
    let mut ws = Workspace::new(stream);
    // SAFETY: only the first `count` items are ever exposed (Selected::view), and the kernel writes them.
    let mut out = unsafe { stream.alloc::<T>(n) }?;
    let mut count = ws.take_count_buffer(stream)?;
    f(&mut ws, &mut out, &mut count)?;
    let len = ws.read_count(stream, count)?;
    Ok(Selected::new(out, len))
}

/// The items of `input` for which `pred` holds, in input order, in a new buffer (blocks until the
/// count is known).
///
/// # Errors
/// As [`Workspace::select_if_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::Pred;
/// let input = stream.clone_htod(&[5i32, -1, 8, 0, 3, -7])?;
/// let positive = lookback::select_if(&input, &Pred::gt(0))?;
/// assert_eq!(positive.to_vec()?, [5, 8, 3]);
/// # Ok(()) }
/// ```
pub fn select_if<T: Element, I: DevicePtr<T>>(input: &I, pred: &Pred<T>) -> Result<Selected<T>> {
    one_shot(input.stream(), input.len(), |ws, out, count| ws.select_if_into(input, pred, out, count))
}

/// [`Workspace::select_if_into`] with a temporary workspace.
///
/// # Errors
/// As [`Workspace::select_if_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::Pred;
/// let input = stream.clone_htod(&[12u32, 3, 40, 9, 10])?;
/// let mut output = stream.alloc_zeros::<u32>(5)?;
/// let mut num_selected = stream.alloc_zeros::<u64>(1)?;
/// lookback::select_if_into(&input, &Pred::ge(10), &mut output, &mut num_selected)?;
/// assert_eq!(stream.clone_dtoh(&num_selected)?, [3]);
/// assert_eq!(stream.clone_dtoh(&output.slice(..3))?, [12, 40, 10]);
/// # Ok(()) }
/// ```
pub fn select_if_into<T, I, O, N>(input: &I, pred: &Pred<T>, output: &mut O, num_selected: &mut N) -> Result<()>
where
    T: Element,
    I: DevicePtr<T>,
    O: DevicePtrMut<T>,
    N: DevicePtrMut<u64>,
{
    Workspace::new(input.stream()).select_if_into(input, pred, output, num_selected)
}

/// Keeps the items of `buf` for which `pred` holds at its front, in order, in place; returns how many.
/// See [`Workspace::select_if_in_place`].
///
/// # Errors
/// As [`Workspace::select_if_in_place`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::Pred;
/// let mut buf = stream.clone_htod(&[1.5f32, f32::NAN, -9999.0, 2.5])?;
/// let kept = lookback::select_if_in_place(&mut buf, &(Pred::ne(-9999.0) & !Pred::is_nan()))?;
/// assert_eq!(kept, 2);
/// assert_eq!(stream.clone_dtoh(&buf.slice(..kept))?, [1.5, 2.5]);
/// # Ok(()) }
/// ```
pub fn select_if_in_place<T: Element, B: DevicePtrMut<T>>(buf: &mut B, pred: &Pred<T>) -> Result<usize> {
    let stream = buf.stream().clone();
    Workspace::new(&stream).select_if_in_place(buf, pred)
}

/// The items whose flag is set, in input order, in a new buffer.
///
/// # Errors
/// As [`Workspace::select_flagged_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// let input = stream.clone_htod(&[10u16, 20, 30, 40])?;
/// let flags = stream.clone_htod(&[true, false, false, true])?;
/// assert_eq!(lookback::select_flagged(&input, &flags)?.to_vec()?, [10, 40]);
/// # Ok(()) }
/// ```
pub fn select_flagged<T, F, I, M>(input: &I, flags: &M) -> Result<Selected<T>>
where
    T: Element,
    F: Flag,
    I: DevicePtr<T>,
    M: DevicePtr<F>,
{
    one_shot(input.stream(), input.len(), |ws, out, count| ws.select_flagged_into(input, flags, out, count))
}

/// [`Workspace::select_flagged_into`] with a temporary workspace.
///
/// # Errors
/// As [`Workspace::select_flagged_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// let input = stream.clone_htod(&[1i8, 2, 3, 4])?;
/// let flags = stream.clone_htod(&[true, true, false, true])?;
/// let mut output = stream.alloc_zeros::<i8>(4)?;
/// let mut num_selected = stream.alloc_zeros::<u64>(1)?;
/// lookback::select_flagged_into(&input, &flags, &mut output, &mut num_selected)?;
/// assert_eq!(stream.clone_dtoh(&num_selected)?, [3]);
/// assert_eq!(stream.clone_dtoh(&output.slice(..3))?, [1, 2, 4]);
/// # Ok(()) }
/// ```
pub fn select_flagged_into<T, F, I, M, O, N>(input: &I, flags: &M, output: &mut O, num_selected: &mut N) -> Result<()>
where
    T: Element,
    F: Flag,
    I: DevicePtr<T>,
    M: DevicePtr<F>,
    O: DevicePtrMut<T>,
    N: DevicePtrMut<u64>,
{
    Workspace::new(input.stream()).select_flagged_into(input, flags, output, num_selected)
}

/// Keeps the items of `buf` whose flag is set at its front, in order, in place; returns how many.
///
/// # Errors
/// As [`Workspace::select_flagged_in_place`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// let mut buf = stream.clone_htod(&[5u64, 6, 7, 8])?;
/// let flags = stream.clone_htod(&[0u8, 1, 0, 255])?;
/// let kept = lookback::select_flagged_in_place(&mut buf, &flags)?;
/// assert_eq!(kept, 2);
/// assert_eq!(stream.clone_dtoh(&buf.slice(..kept))?, [6, 8]);
/// # Ok(()) }
/// ```
pub fn select_flagged_in_place<T, F, B, M>(buf: &mut B, flags: &M) -> Result<usize>
where
    T: Element,
    F: Flag,
    B: DevicePtrMut<T>,
    M: DevicePtr<F>,
{
    let stream = buf.stream().clone();
    Workspace::new(&stream).select_flagged_in_place(buf, flags)
}

/// The first item of every run of equal adjacent items, in a new buffer. See [`Workspace::unique_into`].
///
/// # Errors
/// As [`Workspace::unique_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// let input = stream.clone_htod(&[1u8, 1, 2, 2, 2, 1, 3, 3])?;
/// assert_eq!(lookback::unique(&input)?.to_vec()?, [1, 2, 1, 3]);
/// # Ok(()) }
/// ```
pub fn unique<T: Element, I: DevicePtr<T>>(input: &I) -> Result<Selected<T>> {
    one_shot(input.stream(), input.len(), |ws, out, count| ws.unique_into(input, out, count))
}

/// [`Workspace::unique_into`] with a temporary workspace.
///
/// # Errors
/// As [`Workspace::unique_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// let input = stream.clone_htod(&[-1i8, -1, 4, 4, 4, -1])?;
/// let mut output = stream.alloc_zeros::<i8>(6)?;
/// let mut num_selected = stream.alloc_zeros::<u64>(1)?;
/// lookback::unique_into(&input, &mut output, &mut num_selected)?;
/// assert_eq!(stream.clone_dtoh(&num_selected)?, [3]);
/// assert_eq!(stream.clone_dtoh(&output.slice(..3))?, [-1, 4, -1]);
/// # Ok(()) }
/// ```
pub fn unique_into<T, I, O, N>(input: &I, output: &mut O, num_selected: &mut N) -> Result<()>
where
    T: Element,
    I: DevicePtr<T>,
    O: DevicePtrMut<T>,
    N: DevicePtrMut<u64>,
{
    Workspace::new(input.stream()).unique_into(input, output, num_selected)
}

/// Drops adjacent duplicates of `buf` in place; returns how many items remain at its front.
///
/// # Errors
/// As [`Workspace::unique_in_place`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// // IEEE ==: -0.0 repeats 0.0.
/// let mut buf = stream.clone_htod(&[0.0f64, -0.0, 0.0, 1.0, 1.0])?;
/// let kept = lookback::unique_in_place(&mut buf)?;
/// assert_eq!(kept, 2);
/// assert_eq!(stream.clone_dtoh(&buf.slice(..kept))?, [0.0, 1.0]);
/// # Ok(()) }
/// ```
pub fn unique_in_place<T: Element, B: DevicePtrMut<T>>(buf: &mut B) -> Result<usize> {
    let stream = buf.stream().clone();
    Workspace::new(&stream).unique_in_place(buf)
}

/// Counts the items for which `pred` holds (blocks until the count is known).
///
/// # Errors
/// As [`Workspace::count_if`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::Pred;
/// let input = stream.clone_htod(&[0b0110u32, 0b0001, 0b0100, 0b1000])?;
/// assert_eq!(lookback::count_if(&input, &Pred::any_bits(0b0100))?, 2);
/// # Ok(()) }
/// ```
pub fn count_if<T: Element, I: DevicePtr<T>>(input: &I, pred: &Pred<T>) -> Result<usize> {
    Workspace::new(input.stream()).count_if(input, pred)
}

/// One byte per item, 1 where `pred` holds. See [`Workspace::mask_if_into`].
///
/// # Errors
/// As [`Workspace::mask_if_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::Pred;
/// let temps = stream.clone_htod(&[21.0f64, -9999.0, 19.5])?;
/// let ids = stream.clone_htod(&[7u32, 8, 9])?;
/// let mask = lookback::mask_if(&temps, &Pred::ne(-9999.0))?;
/// assert_eq!(lookback::select_flagged(&ids, &mask)?.to_vec()?, [7, 9]);
/// # Ok(()) }
/// ```
pub fn mask_if<T: Element, I: DevicePtr<T>>(input: &I, pred: &Pred<T>) -> Result<CudaSlice<u8>> {
    let stream = input.stream().clone();
    // SAFETY: mask_if_into writes every one of the `len` bytes (or returns an error, dropping the buffer).
    let mut mask = unsafe { stream.alloc::<u8>(input.len()) }?;
    Workspace::new(&stream).mask_if_into(input, pred, &mut mask)?;
    Ok(mask)
}
