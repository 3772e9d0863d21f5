//! Primitive arrays against device buffers: uploads straight from the array's value buffer, downloads
//! into a `Vec` that becomes the array's buffer.
use super::types::ArrowElement;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::select::Selected;
use arrow_array::{Array, ArrowPrimitiveType, PrimitiveArray};
use arrow_buffer::ScalarBuffer;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use std::sync::Arc;

/// `Ok` if `array` has no null slots, else [`Error::ArrowNulls`]: a null slot's value is unspecified and
/// must not reach a kernel as data.
fn check_no_nulls(array: &dyn Array) -> Result<()> {
    match array.null_count() {
        0 => Ok(()),
        null_count => Err(Error::ArrowNulls { null_count }),
    }
}

/// Copies the values of a primitive array without nulls to a new buffer on `stream`'s device: one copy,
/// straight from the array's value buffer (its slice, if the array is sliced), with no host-side copy.
///
/// `A` is any primitive type whose native type is an [`Element`]: the numeric types of
/// [`ArrowElement`], and logical types stored as them (`Date32Type`, `TimestampMicrosecondType`, …).
///
/// # Errors
/// [`Error::ArrowNulls`] if the array has null slots (a validity bitmap with no null is fine): their
/// values are unspecified, so they are never uploaded as data. Use [`upload_nullable`](super::upload_nullable)
/// to get the values and the validity apart. [`Error::Driver`] if the allocation or the copy fails.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use arrow_array::{Array, Int32Array};
/// use lookback::ScanOp;
/// let column = Int32Array::from(vec![3, 1, 4, 1, 5]);
/// let input = lookback::arrow::upload(&stream, &column.slice(1, 4))?;
/// let sums = lookback::inclusive_scan(&input, ScanOp::Sum)?;
/// assert_eq!(lookback::arrow::download(&sums)?, Int32Array::from(vec![1, 5, 6, 11]));
/// // Nulls are refused unless asked for apart:
/// let with_null = Int32Array::from(vec![Some(1), None]);
/// assert!(matches!(lookback::arrow::upload(&stream, &with_null), Err(lookback::Error::ArrowNulls { null_count: 1 })));
/// # Ok(()) }
/// ```
pub fn upload<A>(stream: &Arc<CudaStream>, array: &PrimitiveArray<A>) -> Result<CudaSlice<A::Native>>
where
    A: ArrowPrimitiveType,
    A::Native: Element,
{
    check_no_nulls(array)?;
    let values: &[A::Native] = array.values();
    Ok(stream.clone_htod(values)?)
}

/// [`upload`] for an array known only as `&dyn Array` (a `RecordBatch` column): it must be the
/// primitive array of `T` (`Int32Array` for `i32`, …).
///
/// # Errors
/// [`Error::ArrowType`] if the array is of another type; otherwise as [`upload`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use arrow_array::{ArrayRef, Float64Array};
/// use std::sync::Arc;
/// let column: ArrayRef = Arc::new(Float64Array::from(vec![0.5, 1.5]));
/// let values = lookback::arrow::upload_dyn::<f64>(&stream, column.as_ref())?;
/// assert_eq!(stream.clone_dtoh(&values)?, [0.5, 1.5]);
/// assert!(matches!(
///     lookback::arrow::upload_dyn::<f32>(&stream, column.as_ref()),
///     Err(lookback::Error::ArrowType { .. })
/// ));
/// # Ok(()) }
/// ```
pub fn upload_dyn<T: ArrowElement>(stream: &Arc<CudaStream>, array: &dyn Array) -> Result<CudaSlice<T>> {
    upload(stream, as_primitive::<T>(array)?)
}

/// `array` as the primitive array of `T`, or [`Error::ArrowType`].
fn as_primitive<T: ArrowElement>(array: &dyn Array) -> Result<&PrimitiveArray<T::Arrow>> {
    array.as_any().downcast_ref::<PrimitiveArray<T::Arrow>>().ok_or_else(|| Error::ArrowType {
        expected: <T::Arrow as ArrowPrimitiveType>::DATA_TYPE.to_string(),
        actual: array.data_type().to_string(),
    })
}

/// A `Vec` as a primitive array without nulls: the `Vec`'s allocation becomes the array's buffer (no copy).
pub(super) fn from_vec<A: ArrowPrimitiveType>(values: Vec<A::Native>) -> PrimitiveArray<A> {
    PrimitiveArray::new(ScalarBuffer::from(values), None)
}

/// Copies a device buffer (or view) to a new primitive array of its element type's Arrow type: one copy
/// from the device into a `Vec`, whose allocation then becomes the array's buffer without another copy.
/// Blocks until the copy is done. Not for [`half::bf16`], which Arrow lacks.
///
/// # Errors
/// [`Error::Driver`] if the copy fails.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use arrow_array::UInt64Array;
/// let sums = lookback::exclusive_scan(&stream.clone_htod(&[2u64, 2, 2])?, 0, lookback::ScanOp::Sum)?;
/// assert_eq!(lookback::arrow::download(&sums)?, UInt64Array::from(vec![0, 2, 4]));
/// assert_eq!(lookback::arrow::download(&sums.slice(1..))?, UInt64Array::from(vec![2, 4]));
/// # Ok(()) }
/// ```
pub fn download<T: ArrowElement, S: DevicePtr<T>>(values: &S) -> Result<PrimitiveArray<T::Arrow>> {
    download_as::<T::Arrow, S>(values)
}

/// [`download`] into a primitive array of any type `A` whose native type is the buffer's element type:
/// a logical type stored as it (`Date32Type` for `i32`, `TimestampMicrosecondType` for `i64`, …). The array
/// gets `A`'s default data type (a timestamp without a time zone; set one with `with_timezone`).
///
/// # Errors
/// [`Error::Driver`] if the copy fails.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use arrow_array::types::Date32Type;
/// use arrow_array::{Array, Date32Array};
/// let days = stream.clone_htod(&[19_000i32, 19_001])?;
/// let dates = lookback::arrow::download_as::<Date32Type, _>(&days)?;
/// assert_eq!(dates, Date32Array::from(vec![19_000, 19_001]));
/// # Ok(()) }
/// ```
pub fn download_as<A, S>(values: &S) -> Result<PrimitiveArray<A>>
where
    A: ArrowPrimitiveType,
    A::Native: Element,
    S: DevicePtr<A::Native>,
{
    let host = values.stream().clone_dtoh(values)?;
    Ok(from_vec(host))
}

/// The items of a one-shot selection as a primitive array: only the [`Selected::len`] selected items are
/// copied (one copy, as [`download`]), not the whole buffer behind them.
///
/// # Errors
/// [`Error::Driver`] if the copy fails.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use arrow_array::Int16Array;
/// use lookback::Pred;
/// let input = lookback::arrow::upload(&stream, &Int16Array::from(vec![5, -3, 8, -1]))?;
/// let positive = lookback::select_if(&input, &Pred::gt(0))?;
/// assert_eq!(lookback::arrow::download_selected(&positive)?, Int16Array::from(vec![5, 8]));
/// # Ok(()) }
/// ```
pub fn download_selected<T: ArrowElement>(selected: &Selected<T>) -> Result<PrimitiveArray<T::Arrow>> {
    download(&selected.view())
}
