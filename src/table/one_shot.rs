//! The one-shot table filter: new columns, and the count read back.
use super::by::FilterBy;
use super::column::{ColumnMut, ColumnRef, Shape};
use crate::error::{Error, Result};
use crate::launch::Workspace;
use crate::rtc::DeviceType;
use crate::select::Selected;
use cudarc::driver::{CudaSlice, CudaView};

/// The result of [`filter_columns`]: one new buffer per input column, of the input's length, whose first
/// [`len`](Filtered::len) items are the kept rows, in order.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
/// use lookback::table::{ColumnRef, FilterBy, filter_columns};
/// let day = stream.clone_htod(&[1u16, 2, 3, 4])?;
/// let rain = stream.clone_htod(&[0.0f32, 3.5, 0.25, 0.0])?;
/// let wet = stream.clone_htod(&[0u8, 1, 1, 0])?;
/// let kept = filter_columns(&[ColumnRef::new(&day), ColumnRef::new(&rain)], &FilterBy::mask(&wet))?;
/// assert_eq!((kept.len(), kept.columns()), (2, 2));
/// assert_eq!(kept.to_vec::<u16>(0)?, [2, 3]);
/// assert_eq!(kept.to_vec::<f32>(1)?, [3.5, 0.25]);
/// // Asking for a column as a type of another size is an error, not a reinterpretation.
/// assert!(kept.to_vec::<u64>(1).is_err());
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Filtered {
    buffers: Vec<CudaSlice<u8>>,
    shapes: Vec<Shape>,
    len: usize,
}

impl Filtered {
    /// Rows kept.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no row was kept.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Columns.
    pub fn columns(&self) -> usize {
        self.buffers.len()
    }

    /// The kept rows of column `index`, as items of `T` (a type of the input column's size).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] (`what: "column index"`) for an index past the columns;
    /// [`Error::UnsupportedSize`] when `T` has another size than the column's items.
    pub fn view<T: DeviceType>(&self, index: usize) -> Result<CudaView<'_, T>> {
        let shape = *self.shapes.get(index).ok_or(Error::LengthMismatch {
            what: "column index",
            expected: self.shapes.len(),
            actual: index,
        })?;
        if shape.bytes != size_of::<T>() {
            return Err(Error::UnsupportedSize {
                role: "column type",
                type_name: T::CUDA_NAME,
                bytes: size_of::<T>(),
                allowed: "the size of the column's items",
            });
        }
        // SAFETY: the buffer holds `shape.len · size_of::<T>()` bytes, the first `len` items written by the
        // filter; cudarc's allocations are aligned for any element type; every bit pattern is a valid `T`
        // (DeviceType's contract).
        let view = unsafe { self.buffers[index].transmute::<T>(self.len) };
        Ok(view.expect("the buffer holds at least the kept rows"))
    }

    /// Copies the kept rows of column `index` to the host (blocks until they are ready).
    ///
    /// # Errors
    /// As [`Filtered::view`]; [`Error::Driver`].
    pub fn to_vec<T: DeviceType>(&self, index: usize) -> Result<Vec<T>> {
        let view = self.view::<T>(index)?;
        Ok(self.buffers[index].stream().clone_dtoh(&view)?)
    }
}

/// The rows of `inputs` that `by` keeps, in new buffers (blocks until the count is known). See
/// [`Workspace::filter_columns_into`], which writes into buffers of yours and leaves the count on the
/// device.
///
/// # Errors
/// As [`Workspace::filter_columns_into`].
pub fn filter_columns(inputs: &[ColumnRef<'_>], by: &FilterBy<'_>) -> Result<Filtered> {
    let stream = by.columns()[0].stream().clone();
    let shapes: Vec<Shape> = inputs.iter().map(ColumnRef::shape).collect();
    // The checks come first, so that no buffer is allocated for a call that fails them.
    let n = by.check_inputs(&shapes)?;
    // SAFETY: only the first `len` rows are ever exposed (Filtered::view), and the kernel writes them.
    let mut buffers =
        shapes.iter().map(|s| unsafe { stream.alloc::<u8>(n * s.bytes) }).collect::<Result<Vec<_>, _>>()?;
    let mut ws = Workspace::new(&stream);
    let len = ws.count_on_host(&stream, |ws, count| {
        let mut outputs: Vec<ColumnMut<'_>> =
            buffers.iter_mut().zip(&shapes).map(|(b, s)| ColumnMut::bytes(b, *s)).collect();
        ws.filter_columns_into(inputs, &mut outputs, by, count)
    })?;
    Ok(Filtered { buffers, shapes, len })
}

/// The indices of the rows `by` keeps, in a new buffer (blocks until the count is known). See
/// [`Workspace::filter_indices_into`].
///
/// # Errors
/// As [`Workspace::filter_indices_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
/// use lookback::Pred;
/// use lookback::table::{FilterBy, filter_indices};
/// let x = stream.clone_htod(&[0.5f64, -1.0, 2.0, f64::NAN])?;
/// let negative = Pred::lt(0.0);
/// assert_eq!(filter_indices(&FilterBy::pred(&x, &negative)?)?.to_vec()?, [1]);
/// # Ok(()) }
/// ```
pub fn filter_indices(by: &FilterBy<'_>) -> Result<Selected<u64>> {
    let stream = by.columns()[0].stream().clone();
    // SAFETY: only the first `len` items are ever exposed (Selected::view), and the kernel writes them.
    let mut out = unsafe { stream.alloc::<u64>(by.rows()) }?;
    let mut ws = Workspace::new(&stream);
    let len = ws.count_on_host(&stream, |ws, count| ws.filter_indices_into(by, &mut out, count))?;
    Ok(Selected::new(out, len))
}

/// Counts the rows `by` keeps (blocks until the count is known). See [`Workspace::count_filtered_into`].
///
/// # Errors
/// As [`Workspace::count_filtered_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
/// use lookback::rtc::UserPred2;
/// use lookback::table::{FilterBy, count_filtered};
/// let a = stream.clone_htod(&[3u8, 9, 4])?;
/// let b = stream.clone_htod(&[3u8, 1, 7])?;
/// // SAFETY: a pure expression of a and b.
/// let same = unsafe { UserPred2::new("a == b", |a: u8, b: u8| a == b)? };
/// assert_eq!(count_filtered(&FilterBy::pred2(&a, &b, &same))?, 1);
/// # Ok(()) }
/// ```
pub fn count_filtered(by: &FilterBy<'_>) -> Result<usize> {
    let stream = by.columns()[0].stream().clone();
    Workspace::new(&stream).count_filtered(by)
}
