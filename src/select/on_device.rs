//! The forms of in-place compaction and counting that leave the count on the device
//! (`select_if_in_place_into`, `select_flagged_in_place_into`, `unique_in_place_into`, `count_if_into`):
//! nothing blocks the host, as with the other `_into` forms, so calls can be queued back to back and a
//! pipeline reads the count only when it needs it. The in-place forms in `compact.rs` return the count
//! instead, which waits for the GPU.
use super::{Mode, SelectJob, Source, check_flags, pred_source};
use crate::element::{Element, Flag};
use crate::error::Result;
use crate::launch::{Workspace, check_room, same_context};
use crate::pred::Predicate;
use cudarc::driver::{DevicePtr, DevicePtrMut};

impl Workspace {
    /// [`Workspace::select_if_in_place`] that writes the count to `num_selected[0]` on the device instead
    /// of returning it: nothing blocks the host.
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`](crate::Error::OutputTooSmall) for an empty `num_selected`;
    /// [`Error::PredicateTooComplex`](crate::Error::PredicateTooComplex),
    /// [`Error::ContextMismatch`](crate::Error::ContextMismatch),
    /// [`Error::KernelsNotBuilt`](crate::Error::KernelsNotBuilt), [`Error::Driver`](crate::Error::Driver).
    /// On error nothing is written.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{Pred, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let mut buf = stream.clone_htod(&[4i64, -2, 9, -7, 0])?;
    /// let mut kept = stream.alloc_zeros::<u64>(1)?;
    /// ws.select_if_in_place_into(&mut buf, &Pred::ge(0), &mut kept)?;
    /// let n = stream.clone_dtoh(&kept)?[0] as usize;
    /// assert_eq!(stream.clone_dtoh(&buf.slice(..n))?, [4, 9, 0]);
    /// # Ok(()) }
    /// ```
    pub fn select_if_in_place_into<T, B, N>(
        &mut self,
        buf: &mut B,
        pred: &impl Predicate<T>,
        num_selected: &mut N,
    ) -> Result<()>
    where
        T: Element,
        B: DevicePtrMut<T>,
        N: DevicePtrMut<u64>,
    {
        let source = pred_source(pred, buf.stream())?;
        self.compact_in_place_into(buf, source, num_selected)
    }

    /// [`Workspace::select_flagged_in_place`] that writes the count to `num_selected[0]` on the device.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) if `flags` and `buf` differ in length;
    /// otherwise as [`Workspace::select_if_in_place_into`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Workspace;
    /// let mut ws = Workspace::new(&stream);
    /// let mut buf = stream.clone_htod(&[10u32, 20, 30, 40])?;
    /// let flags = stream.clone_htod(&[1u8, 0, 0, 1])?;
    /// let mut kept = stream.alloc_zeros::<u64>(1)?;
    /// ws.select_flagged_in_place_into(&mut buf, &flags, &mut kept)?;
    /// let n = stream.clone_dtoh(&kept)?[0] as usize;
    /// assert_eq!(stream.clone_dtoh(&buf.slice(..n))?, [10, 40]);
    /// # Ok(()) }
    /// ```
    pub fn select_flagged_in_place_into<T, F, B, M, N>(
        &mut self,
        buf: &mut B,
        flags: &M,
        num_selected: &mut N,
    ) -> Result<()>
    where
        T: Element,
        F: Flag,
        B: DevicePtrMut<T>,
        M: DevicePtr<F>,
        N: DevicePtrMut<u64>,
    {
        check_flags(buf.len(), flags.len())?;
        same_context(buf.stream(), flags.stream())?;
        let stream = buf.stream().clone();
        self.enter(&stream)?;
        let (f, _flags) = flags.device_ptr(&stream);
        self.compact_in_place_into(buf, Source::Flags(f), num_selected)
    }

    /// [`Workspace::unique_in_place`] that writes the count to `num_selected[0]` on the device.
    ///
    /// # Errors
    /// As [`Workspace::select_if_in_place_into`] (no predicate errors).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Workspace;
    /// let mut ws = Workspace::new(&stream);
    /// let mut buf = stream.clone_htod(&[5i16, 5, -1, -1, -1, 5])?;
    /// let mut kept = stream.alloc_zeros::<u64>(1)?;
    /// ws.unique_in_place_into(&mut buf, &mut kept)?;
    /// let n = stream.clone_dtoh(&kept)?[0] as usize;
    /// assert_eq!(stream.clone_dtoh(&buf.slice(..n))?, [5, -1, 5]);
    /// # Ok(()) }
    /// ```
    pub fn unique_in_place_into<T, B, N>(&mut self, buf: &mut B, num_selected: &mut N) -> Result<()>
    where
        T: Element,
        B: DevicePtrMut<T>,
        N: DevicePtrMut<u64>,
    {
        self.compact_in_place_into(buf, Source::Unique, num_selected)
    }

    /// [`Workspace::count_if`] that writes the count to `count[0]` on the device: nothing blocks the host.
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`](crate::Error::OutputTooSmall) for an empty `count`;
    /// [`Error::PredicateTooComplex`](crate::Error::PredicateTooComplex),
    /// [`Error::ContextMismatch`](crate::Error::ContextMismatch),
    /// [`Error::KernelsNotBuilt`](crate::Error::KernelsNotBuilt), [`Error::Driver`](crate::Error::Driver).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{Pred, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[3u8, 200, 17, 255, 0])?;
    /// let mut count = stream.alloc_zeros::<u64>(1)?;
    /// ws.count_if_into(&input, &Pred::gt(16), &mut count)?;
    /// assert_eq!(stream.clone_dtoh(&count)?, [3]);
    /// # Ok(()) }
    /// ```
    pub fn count_if_into<T, I, N>(&mut self, input: &I, pred: &impl Predicate<T>, count: &mut N) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        N: DevicePtrMut<u64>,
    {
        let source = pred_source(pred, input.stream())?;
        check_room("count", 1, count.len())?;
        let stream = input.stream().clone();
        same_context(&stream, count.stream())?;
        self.enter(&stream)?;
        let (src, _read) = input.device_ptr(&stream);
        let (c, _c) = count.device_ptr_mut(&stream);
        let job = SelectJob {
            input: src,
            output: 0,
            rejected: 0,
            num_selected: c,
            n: input.len(),
            source,
            mode: Mode::Count,
        };
        self.select_raw::<T>(&stream, job)
    }

    /// Compacts `buf` in place and writes the count to `num_selected[0]` on the device.
    pub(super) fn compact_in_place_into<T, B, N>(
        &mut self,
        buf: &mut B,
        source: Source,
        num_selected: &mut N,
    ) -> Result<()>
    where
        T: Element,
        B: DevicePtrMut<T>,
        N: DevicePtrMut<u64>,
    {
        check_room("num_selected", 1, num_selected.len())?;
        let n = buf.len();
        let stream = buf.stream().clone();
        same_context(&stream, num_selected.stream())?;
        self.enter(&stream)?;
        let (ptr, _write) = buf.device_ptr_mut(&stream);
        let (c, _c) = num_selected.device_ptr_mut(&stream);
        self.compact_raw::<T>(&stream, ptr, ptr, c, n, source)
    }
}
