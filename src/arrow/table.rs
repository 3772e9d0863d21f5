//! [`filter_record_batch`]: arrow's `filter_record_batch` on the GPU, through the table filter.
use super::types::{ArrowElement, ElementVisitor, visit};
use super::{arrow_error, download, upload_dyn, upload_mask};
use crate::error::{Error, Result, check_len};
use crate::rtc::DeviceType;
use crate::table::{ColumnRef, FilterBy, Filtered, count_filtered, filter_columns};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};
use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

/// The rows of `batch` where `mask` is true, as a new batch of the same schema: what arrow's
/// `filter_record_batch` computes, on the GPU of `stream`. The columns are uploaded, filtered by one
/// [table filter](crate::table) per eight columns (the mask read once for each, every column once) and
/// downloaded. A null slot of `mask` counts as false, as in arrow's `filter`.
///
/// Columns must be primitive arrays of [`ArrowElement`] types without nulls (upload nullable columns
/// apart, [`upload_nullable`](super::upload_nullable)). Like every table filter it needs NVRTC.
///
/// # Errors
/// [`Error::LengthMismatch`] (`what: "mask"`) when `mask` has another length than the batch;
/// [`Error::ArrowType`] for a column of another type; [`Error::ArrowNulls`] for a column with nulls;
/// [`Error::NvrtcNotFound`]; [`Error::Driver`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
/// use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int16Array, RecordBatch, UInt32Array};
/// use std::sync::Arc;
/// let batch = RecordBatch::try_from_iter([
///     ("id", Arc::new(UInt32Array::from(vec![1, 2, 3])) as ArrayRef),
///     ("price", Arc::new(Float64Array::from(vec![9.5, 12.0, 30.0])) as ArrayRef),
///     ("qty", Arc::new(Int16Array::from(vec![5, -1, 7])) as ArrayRef),
/// ])
/// .unwrap();
/// let keep = BooleanArray::from(vec![Some(true), None, Some(true)]);
/// let kept = lookback::arrow::filter_record_batch(&stream, &batch, &keep)?;
/// assert_eq!(kept.num_rows(), 2);
/// assert_eq!(kept.column(0).as_ref(), &UInt32Array::from(vec![1, 3]) as &dyn arrow_array::Array);
/// assert_eq!(kept.column(1).as_ref(), &Float64Array::from(vec![9.5, 30.0]) as &dyn arrow_array::Array);
/// # Ok(()) }
/// ```
pub fn filter_record_batch(stream: &Arc<CudaStream>, batch: &RecordBatch, mask: &BooleanArray) -> Result<RecordBatch> {
    check_len("mask", batch.num_rows(), mask.len())?;
    // Every column is checked (and uploaded) before anything is filtered.
    let columns: Vec<Box<dyn DeviceColumn>> = batch
        .columns()
        .iter()
        .map(|c| {
            visit(c.data_type(), Upload { stream, array: c.as_ref() }).unwrap_or_else(|| {
                Err(Error::ArrowType {
                    expected: "a primitive numeric type (Int8 … UInt64, Float16 … Float64)".into(),
                    actual: c.data_type().to_string(),
                })
            })
        })
        .collect::<Result<_>>()?;
    let flags = upload_mask(stream, mask)?;
    let by = FilterBy::mask(&flags);
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(columns.len());
    for group in columns.chunks(crate::launch::TABLE_MAX_COLUMNS) {
        let refs: Vec<ColumnRef<'_>> = group.iter().map(|c| c.column()).collect();
        let filtered = filter_columns(&refs, &by)?;
        for (i, c) in group.iter().enumerate() {
            arrays.push(c.download(&filtered, i)?);
        }
    }
    let rows = match arrays.first() {
        Some(a) => a.len(),
        None => count_filtered(&by)?,
    };
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(batch.schema(), arrays, &options).map_err(arrow_error)
}

/// An uploaded column of an element type known at run time.
trait DeviceColumn {
    fn column(&self) -> ColumnRef<'_>;
    /// Column `index` of `filtered` (this column's kept rows) as an Arrow array of its type.
    fn download(&self, filtered: &Filtered, index: usize) -> Result<ArrayRef>;
}

struct Typed<T>(CudaSlice<T>);

impl<T: ArrowElement + DeviceType> DeviceColumn for Typed<T> {
    fn column(&self) -> ColumnRef<'_> {
        ColumnRef::new(&self.0)
    }
    fn download(&self, filtered: &Filtered, index: usize) -> Result<ArrayRef> {
        Ok(Arc::new(download(&filtered.view::<T>(index)?)?))
    }
}

/// Uploads `array` as a column of its element type.
struct Upload<'x> {
    stream: &'x Arc<CudaStream>,
    array: &'x dyn Array,
}

impl ElementVisitor for Upload<'_> {
    type Out = Result<Box<dyn DeviceColumn>>;
    fn visit<T: ArrowElement + DeviceType>(self) -> Self::Out {
        Ok(Box::new(Typed(upload_dyn::<T>(self.stream, self.array)?)))
    }
}
