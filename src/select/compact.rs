//! The `Workspace` methods of compaction, counting and masks: into caller buffers with the count left on
//! the device, in place with the count returned, and the shared steps that check buffers and fill a
//! [`SelectJob`].
use super::{Mode, SelectJob, Source, check_flags, pred_source};
use crate::element::{Element, Flag};
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::launch::{Workspace, check_room, same_context};
use crate::pred::Predicate;
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

impl Workspace {
    /// Compacts `input` into `output` (or in place when both are the same address).
    pub(super) fn compact_raw<T: Element>(
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
        self.compact_call(input, output, num_selected, |ws, stream, src, dst, count, n| {
            ws.compact_raw::<T>(stream, src, dst, count, n, source)
        })
    }

    /// The checks and device addresses of a compaction into `output`, then `launch(ws, stream, input,
    /// output, count, n)` while the buffers stay borrowed: shared with unique by a user equality
    /// (`unique_by.rs`).
    pub(super) fn compact_call<T, I, O, N>(
        &mut self,
        input: &I,
        output: &mut O,
        num_selected: &mut N,
        launch: impl FnOnce(&mut Self, &Arc<CudaStream>, u64, u64, u64, usize) -> Result<()>,
    ) -> Result<()>
    where
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
        launch(self, &stream, src, dst, count, n)
    }

    fn compact_in_place<T: Element, B: DevicePtrMut<T>>(&mut self, buf: &mut B, source: Source) -> Result<usize> {
        let stream = buf.stream().clone();
        self.count_on_host(&stream, |ws, count| ws.compact_in_place_into(buf, source, count))
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
        pred: &impl Predicate<T>,
        output: &mut O,
        num_selected: &mut N,
    ) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<T>,
        N: DevicePtrMut<u64>,
    {
        let source = pred_source(pred, input.stream())?;
        self.compact_into(input, output, num_selected, source)
    }

    /// Keeps the items of `buf` for which `pred` holds at its front, in their original order, in one pass
    /// with no temporary copy; returns how many (blocks until the count is known). Items past the count
    /// are unspecified.
    ///
    /// Safe in place because of the look-back's ordering: a tile writes only after every earlier tile has
    /// finished reading its input (see `cuda/classic/select.cuh`).
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
    pub fn select_if_in_place<T: Element, B: DevicePtrMut<T>>(
        &mut self,
        buf: &mut B,
        pred: &impl Predicate<T>,
    ) -> Result<usize> {
        let source = pred_source(pred, buf.stream())?;
        self.compact_in_place(buf, source)
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
        self.count_on_host(&stream, |ws, count| ws.select_flagged_in_place_into(buf, flags, count))
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
    pub fn count_if<T: Element, I: DevicePtr<T>>(&mut self, input: &I, pred: &impl Predicate<T>) -> Result<usize> {
        let stream = input.stream().clone();
        self.count_on_host(&stream, |ws, count| ws.count_if_into(input, pred, count))
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
    pub fn mask_if_into<T, I, M>(&mut self, input: &I, pred: &impl Predicate<T>, mask: &mut M) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        M: DevicePtrMut<u8>,
    {
        let source = pred_source(pred, input.stream())?;
        let n = input.len();
        check_room("mask", n, mask.len())?;
        let stream = input.stream().clone();
        same_context(&stream, mask.stream())?;
        self.enter(&stream)?;
        let (src, _read) = input.device_ptr(&stream);
        let (m, _write) = mask.device_ptr_mut(&stream);
        let job = SelectJob { input: src, output: 0, rejected: m, num_selected: 0, n, source, mode: Mode::Mask };
        self.select_raw::<T>(&stream, job)
    }
}
