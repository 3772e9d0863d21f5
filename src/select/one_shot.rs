//! The free functions of compaction, counting and masks: each runs on a temporary workspace, and the
//! one-shot forms allocate their result and read its count back.
use super::Selected;
use crate::element::{Element, Flag};
use crate::error::Result;
use crate::launch::Workspace;
use crate::pred::Predicate;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr};
use std::sync::Arc;

/// Allocates an output of `n` items and a count, runs `f`, reads the count back.
pub(super) fn one_shot<T: DeviceRepr>(
    stream: &Arc<CudaStream>,
    n: usize,
    f: impl FnOnce(&mut Workspace, &mut CudaSlice<T>, &mut CudaSlice<u64>) -> Result<()>,
) -> Result<Selected<T>> {
    let mut ws = Workspace::new(stream);
    // SAFETY: only the first `count` items are ever exposed (Selected::view), and the kernel writes them.
    let mut out = unsafe { stream.alloc::<T>(n) }?;
    let len = ws.count_on_host(stream, |ws, count| f(ws, &mut out, count))?;
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
pub fn select_if<T: Element, I: DevicePtr<T>>(input: &I, pred: &impl Predicate<T>) -> Result<Selected<T>> {
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
pub fn select_if_into<T, I, O, N>(
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
pub fn select_if_in_place<T: Element, B: DevicePtrMut<T>>(buf: &mut B, pred: &impl Predicate<T>) -> Result<usize> {
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
pub fn count_if<T: Element, I: DevicePtr<T>>(input: &I, pred: &impl Predicate<T>) -> Result<usize> {
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
pub fn mask_if<T: Element, I: DevicePtr<T>>(input: &I, pred: &impl Predicate<T>) -> Result<CudaSlice<u8>> {
    let stream = input.stream().clone();
    // SAFETY: mask_if_into writes every one of the `len` bytes (or returns an error, dropping the buffer).
    let mut mask = unsafe { stream.alloc::<u8>(input.len()) }?;
    Workspace::new(&stream).mask_if_into(input, pred, &mut mask)?;
    Ok(mask)
}
