//! Partitioning on the look-back engine: the items for which a predicate holds first, the others after
//! them — in CUB's one-pass layout (rejected items reversed), stable in one buffer, or into two buffers.
//!
//! Not in-place safe: rejected items are written towards the end of the output, over input that later
//! tiles have not read yet. The API cannot alias input and output (`&` and `&mut` borrows).
use crate::element::Element;
use crate::error::Result;
use crate::launch::{Workspace, check_room, same_context};
use crate::pred::Predicate;
use crate::select::{Mode, SelectJob, pred_source};
use cudarc::driver::{CudaSlice, CudaView, DevicePtr, DevicePtrMut};

/// A partitioned buffer: the first [`num_selected`](Self::num_selected) items satisfied the predicate.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::Pred;
/// let input = stream.clone_htod(&[4i16, 9, 1, 12, 7, 3])?;
/// let parts = lookback::partition_if(&input, &Pred::ge(5))?;
/// assert_eq!(parts.num_selected(), 3);
/// assert_eq!(stream.clone_dtoh(&parts.selected())?, [9, 12, 7]);
/// assert_eq!(stream.clone_dtoh(&parts.rejected())?, [4, 1, 3]);
/// let (buffer, k) = parts.into_parts();
/// assert_eq!(k, 3);
/// assert_eq!(stream.clone_dtoh(&buffer)?, [9, 12, 7, 4, 1, 3]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Partitioned<T> {
    buffer: CudaSlice<T>,
    num_selected: usize,
}

impl<T> Partitioned<T> {
    /// Number of items for which the predicate held.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Pred;
    /// let input = stream.clone_htod(&[1.0f32, f32::NAN, 2.0, -3.0])?;
    /// assert_eq!(lookback::partition_if(&input, &Pred::is_finite())?.num_selected(), 3);
    /// # Ok(()) }
    /// ```
    pub fn num_selected(&self) -> usize {
        self.num_selected
    }
    /// The selected items, in input order.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Pred;
    /// let input = stream.clone_htod(&[6u32, 1, 8, 3])?;
    /// let parts = lookback::partition_if(&input, &Pred::any_bits(0b1))?;
    /// assert_eq!(stream.clone_dtoh(&parts.selected())?, [1, 3]);
    /// # Ok(()) }
    /// ```
    pub fn selected(&self) -> CudaView<'_, T> {
        self.buffer.slice(..self.num_selected)
    }
    /// The rejected items, in input order.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Pred;
    /// let input = stream.clone_htod(&[6u32, 1, 8, 3])?;
    /// let parts = lookback::partition_if(&input, &Pred::any_bits(0b1))?;
    /// assert_eq!(stream.clone_dtoh(&parts.rejected())?, [6, 8]);
    /// # Ok(()) }
    /// ```
    pub fn rejected(&self) -> CudaView<'_, T> {
        self.buffer.slice(self.num_selected..)
    }
    /// The whole buffer and the number of selected items at its front.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Pred;
    /// let input = stream.clone_htod(&[-2i64, 5, -7, 9])?;
    /// let (buffer, k) = lookback::partition_if(&input, &Pred::lt(0))?.into_parts();
    /// assert_eq!(k, 2);
    /// assert_eq!(stream.clone_dtoh(&buffer)?, [-2, -7, 5, 9]);
    /// # Ok(()) }
    /// ```
    pub fn into_parts(self) -> (CudaSlice<T>, usize) {
        (self.buffer, self.num_selected)
    }
}

impl Workspace {
    fn partition_job<T, I, O, R, N>(
        &mut self,
        input: &I,
        pred: &impl Predicate<T>,
        output: &mut O,
        rejected: Option<&mut R>,
        num_selected: &mut N,
        mode: Mode,
    ) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<T>,
        R: DevicePtrMut<T>,
        N: DevicePtrMut<u64>,
    {
        let source = pred_source(pred, input.stream())?;
        let n = input.len();
        let stream = input.stream().clone();
        check_room("num_selected", 1, num_selected.len())?;
        same_context(&stream, output.stream())?;
        same_context(&stream, num_selected.stream())?;
        if let Some(r) = rejected.as_ref() {
            // Either side may receive every item.
            check_room("selected output", n, output.len())?;
            check_room("rejected output", n, r.len())?;
            same_context(&stream, r.stream())?;
        } else {
            check_room("output", n, output.len())?;
        }
        self.enter(&stream)?;
        let (src, _read) = input.device_ptr(&stream);
        let (dst, _write) = output.device_ptr_mut(&stream);
        let (count, _count) = num_selected.device_ptr_mut(&stream);
        let (rej, _rej) = match rejected {
            Some(r) => {
                let (p, g) = r.device_ptr_mut(&stream);
                (p, Some(g))
            }
            None => (0, None),
        };
        let job = SelectJob { input: src, output: dst, rejected: rej, num_selected: count, n, source, mode };
        self.select_raw::<T>(&stream, job)
    }

    /// Partitions in one pass with CUB's layout: `output[..k]` holds the items for which `pred` holds, in
    /// input order; `output[k..n]` holds the others **in reverse input order**. `k` goes to
    /// `num_selected[0]` on the device. `output` must hold at least `input.len()` items.
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`](crate::Error::OutputTooSmall), [`Error::PredicateTooComplex`](crate::Error::PredicateTooComplex),
    /// [`Error::ContextMismatch`](crate::Error::ContextMismatch), [`Error::KernelsNotBuilt`](crate::Error::KernelsNotBuilt),
    /// [`Error::Driver`](crate::Error::Driver).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{Pred, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[4i16, 9, 1, 12, 7, 3])?;
    /// let mut output = stream.alloc_zeros::<i16>(6)?;
    /// let mut num_selected = stream.alloc_zeros::<u64>(1)?;
    /// ws.partition_if_reversed_into(&input, &Pred::ge(5), &mut output, &mut num_selected)?;
    /// assert_eq!(stream.clone_dtoh(&num_selected)?, [3]);
    /// // Selected in input order, then the rejected 4, 1, 3 in reverse order.
    /// assert_eq!(stream.clone_dtoh(&output)?, [9, 12, 7, 3, 1, 4]);
    /// # Ok(()) }
    /// ```
    pub fn partition_if_reversed_into<T, I, O, N>(
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
        self.partition_job::<T, I, O, O, N>(input, pred, output, None, num_selected, Mode::PartitionReverse)
    }

    /// Stable partition into one buffer: `output[..k]` holds the items for which `pred` holds and
    /// `output[k..n]` the others, both in input order; `k` goes to `num_selected[0]` on the device. Two
    /// launches (a count, then the single-pass partition), since the rejected items start at `k`.
    ///
    /// # Errors
    /// As [`Workspace::partition_if_reversed_into`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{Pred, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[4i16, 9, 1, 12, 7, 3])?;
    /// let mut output = stream.alloc_zeros::<i16>(6)?;
    /// let mut num_selected = stream.alloc_zeros::<u64>(1)?;
    /// ws.partition_if_stable_into(&input, &Pred::ge(5), &mut output, &mut num_selected)?;
    /// assert_eq!(stream.clone_dtoh(&num_selected)?, [3]);
    /// assert_eq!(stream.clone_dtoh(&output)?, [9, 12, 7, 4, 1, 3]);
    /// # Ok(()) }
    /// ```
    pub fn partition_if_stable_into<T, I, O, N>(
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
        self.partition_job::<T, I, O, O, N>(input, pred, output, None, num_selected, Mode::PartitionStable)
    }

    /// Stable partition into two buffers, in one pass: the items for which `pred` holds go to
    /// `selected[..k]`, the others to `rejected[..n-k]`, both in input order; `k` goes to
    /// `num_selected[0]` on the device. Both outputs must hold at least `input.len()` items.
    ///
    /// # Errors
    /// As [`Workspace::partition_if_reversed_into`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{Pred, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[4i16, 9, 1, 12, 7, 3])?;
    /// let mut selected = stream.alloc_zeros::<i16>(6)?;
    /// let mut rejected = stream.alloc_zeros::<i16>(6)?;
    /// let mut num_selected = stream.alloc_zeros::<u64>(1)?;
    /// ws.partition_if_split_into(&input, &Pred::ge(5), &mut selected, &mut rejected, &mut num_selected)?;
    /// let k = stream.clone_dtoh(&num_selected)?[0] as usize;
    /// assert_eq!(k, 3);
    /// assert_eq!(stream.clone_dtoh(&selected.slice(..k))?, [9, 12, 7]);
    /// assert_eq!(stream.clone_dtoh(&rejected.slice(..6 - k))?, [4, 1, 3]);
    /// # Ok(()) }
    /// ```
    pub fn partition_if_split_into<T, I, O, R, N>(
        &mut self,
        input: &I,
        pred: &impl Predicate<T>,
        selected: &mut O,
        rejected: &mut R,
        num_selected: &mut N,
    ) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<T>,
        R: DevicePtrMut<T>,
        N: DevicePtrMut<u64>,
    {
        self.partition_job(input, pred, selected, Some(rejected), num_selected, Mode::PartitionSplit)
    }
}

/// Stable partition into a new buffer (blocks until the count is known): the items for which `pred`
/// holds first, then the others, both in input order.
///
/// # Errors
/// As [`Workspace::partition_if_reversed_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::Pred;
/// let input = stream.clone_htod(&[4i16, 9, 1, 12, 7, 3])?;
/// let parts = lookback::partition_if(&input, &Pred::ge(5))?;
/// assert_eq!(parts.num_selected(), 3);
/// assert_eq!(stream.clone_dtoh(&parts.selected())?, [9, 12, 7]);
/// assert_eq!(stream.clone_dtoh(&parts.rejected())?, [4, 1, 3]);
/// # Ok(()) }
/// ```
pub fn partition_if<T: Element, I: DevicePtr<T>>(input: &I, pred: &impl Predicate<T>) -> Result<Partitioned<T>> {
    let stream = input.stream().clone();
    let mut ws = Workspace::new(&stream);
    // SAFETY: the partition writes all `len` items (each input item goes to exactly one place).
    let mut out = unsafe { stream.alloc::<T>(input.len()) }?;
    let num_selected =
        ws.count_on_host(&stream, |ws, count| ws.partition_if_stable_into(input, pred, &mut out, count))?;
    Ok(Partitioned { buffer: out, num_selected })
}
