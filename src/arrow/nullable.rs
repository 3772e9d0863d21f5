//! Arrays with nulls: their values and their validity travel apart, the validity as a byte mask, so
//! that dropping the nulls on the device is one `select_flagged` call and a null slot's unspecified
//! value is never taken for data by accident.
use super::mask::{pack_validity, validity_mask};
use crate::element::Element;
use crate::error::{Result, check_len};
use crate::select::{Selected, select_flagged};
use arrow_array::{Array, ArrowPrimitiveType, PrimitiveArray};
use arrow_buffer::ScalarBuffer;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use std::sync::Arc;

/// A primitive array's values and validity on the device, made by [`upload_nullable`].
///
/// The values buffer holds every slot, null ones included, with whatever value the array's buffer had
/// there (Arrow leaves it unspecified): read it together with the validity, or
/// [`drop_nulls`](Self::drop_nulls) first.
#[derive(Debug)]
pub struct Nullable<T> {
    values: CudaSlice<T>,
    validity: Option<CudaSlice<u8>>,
    null_count: usize,
}

impl<T> Nullable<T> {
    /// Every slot's value, null slots included (their values are unspecified).
    pub fn values(&self) -> &CudaSlice<T> {
        &self.values
    }
    /// One byte per slot, 1 where valid and 0 where null; `None` when the array had no null (no mask is
    /// uploaded then).
    pub fn validity(&self) -> Option<&CudaSlice<u8>> {
        self.validity.as_ref()
    }
    /// The number of null slots.
    pub fn null_count(&self) -> usize {
        self.null_count
    }
    /// The number of slots.
    pub fn len(&self) -> usize {
        self.values.len()
    }
    /// Whether there is no slot.
    pub fn is_empty(&self) -> bool {
        self.values.len() == 0
    }
    /// The values, the validity mask and the null count.
    pub fn into_parts(self) -> (CudaSlice<T>, Option<CudaSlice<u8>>, usize) {
        (self.values, self.validity, self.null_count)
    }
}

impl<T: Element> Nullable<T> {
    /// The valid values only, in order: one [`select_flagged`] with the validity mask (one launch;
    /// blocks to read the count back, like every one-shot selection). Without nulls, a device-to-device
    /// copy of the values.
    ///
    /// # Errors
    /// As [`select_flagged`]; [`Error::Driver`](crate::Error::Driver) if the copy fails.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use arrow_array::Float32Array;
    /// let readings = Float32Array::from(vec![Some(21.5), None, Some(19.0), None]);
    /// let column = lookback::arrow::upload_nullable(&stream, &readings)?;
    /// let valid = column.drop_nulls()?;
    /// assert_eq!(lookback::arrow::download_selected(&valid)?, Float32Array::from(vec![21.5, 19.0]));
    /// # Ok(()) }
    /// ```
    pub fn drop_nulls(&self) -> Result<Selected<T>> {
        match &self.validity {
            Some(mask) => select_flagged(&self.values, mask),
            None => {
                let copy = self.values.stream().clone_dtod(&self.values)?;
                Ok(Selected::new(copy, self.values.len()))
            }
        }
    }
}

/// Uploads a primitive array that may have nulls: its values (every slot, as [`upload`](super::upload)
/// does: one copy straight from the value buffer) and, if it has null slots, its validity as a byte mask
/// ([`validity_mask`]: unpacked on the host, one byte per slot, then one copy).
///
/// # Errors
/// [`Error::Driver`](crate::Error::Driver) if an allocation or a copy fails.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use arrow_array::UInt32Array;
/// let ids = UInt32Array::from(vec![Some(4), None, Some(6)]);
/// let column = lookback::arrow::upload_nullable(&stream, &ids)?;
/// assert_eq!((column.len(), column.null_count()), (3, 1));
/// assert_eq!(stream.clone_dtoh(column.validity().unwrap())?, [1, 0, 1]);
/// // Back to Arrow with the same nulls:
/// let back = lookback::arrow::download_nullable(column.values(), column.validity().unwrap())?;
/// assert_eq!(back, ids);
/// # Ok(()) }
/// ```
pub fn upload_nullable<A>(stream: &Arc<CudaStream>, array: &PrimitiveArray<A>) -> Result<Nullable<A::Native>>
where
    A: ArrowPrimitiveType,
    A::Native: Element,
{
    let values: &[A::Native] = array.values();
    let values = stream.clone_htod(values)?;
    let null_count = array.null_count();
    let validity = if null_count == 0 { None } else { Some(stream.clone_htod(&validity_mask(array))?) };
    Ok(Nullable { values, validity, null_count })
}

/// Downloads values and a validity byte mask (nonzero: valid) as one primitive array with nulls: two
/// copies from the device; the values' `Vec` becomes the array's buffer, the mask is packed into its
/// validity bitmap (none if every slot is valid). Blocks until the copies are done.
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) if `validity` is not as long as `values`;
/// [`Error::Driver`](crate::Error::Driver) if a copy fails.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use arrow_array::{Array, Int64Array};
/// use lookback::Pred;
/// let values = stream.clone_htod(&[10i64, -1, 30])?;
/// let valid = lookback::mask_if(&values, &Pred::ge(0))?; // -1 marks a missing reading
/// let column = lookback::arrow::download_nullable(&values, &valid)?;
/// assert_eq!(column, Int64Array::from(vec![Some(10), None, Some(30)]));
/// assert_eq!(column.null_count(), 1);
/// # Ok(()) }
/// ```
pub fn download_nullable<T, V, M>(values: &V, validity: &M) -> Result<PrimitiveArray<T::Arrow>>
where
    T: super::ArrowElement,
    V: DevicePtr<T>,
    M: DevicePtr<u8>,
{
    check_len("validity", values.len(), validity.len())?;
    let host = values.stream().clone_dtoh(values)?;
    let mask = validity.stream().clone_dtoh(validity)?;
    Ok(PrimitiveArray::new(ScalarBuffer::from(host), pack_validity(&mask)))
}
