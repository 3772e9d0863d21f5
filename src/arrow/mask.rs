//! Boolean masks: Arrow's bit-packed `BooleanArray` (and validity bitmaps) against the byte per item that
//! the kernels read and write (`mask_if`'s output, `select_flagged`'s flags).
//!
//! The kernels take bytes because a byte is the smallest item a thread stores without touching its
//! neighbours'; so a mask crossing between Arrow and the device is unpacked or packed once, on the host,
//! 64 items at a time.
use crate::element::Flag;
use crate::error::Result;
use arrow_array::{Array, BooleanArray};
use arrow_buffer::{BooleanBuffer, NullBuffer};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use std::sync::Arc;

/// One byte per bit of `bits` (1 set, 0 clear), AND the bits of `also` where given. Both have the same
/// length; either may start at any bit offset (`bit_chunks` realigns them).
fn unpack(bits: &BooleanBuffer, also: Option<&BooleanBuffer>) -> Vec<u8> {
    let len = bits.len();
    let mut out = Vec::with_capacity(len);
    let chunks = bits.bit_chunks();
    let words = chunks.iter_padded();
    let push_word = |word: u64, out: &mut Vec<u8>| {
        let take = (len - out.len()).min(64);
        out.extend((0..take).map(|bit| ((word >> bit) & 1) as u8));
    };
    match also {
        None => words.for_each(|w| push_word(w, &mut out)),
        Some(also) => {
            let also_chunks = also.bit_chunks();
            words.zip(also_chunks.iter_padded()).for_each(|(w, a)| push_word(w & a, &mut out));
        }
    }
    out
}

/// One bit per item of `flags`, set where the flag is set.
pub(super) fn pack<F: Flag>(flags: &[F]) -> BooleanBuffer {
    BooleanBuffer::collect_bool(flags.len(), |i| flags[i].is_set())
}

/// The validity of `flags` as a [`NullBuffer`], or `None` when every item is valid (Arrow's cheaper form
/// of "no nulls").
pub(super) fn pack_validity<F: Flag>(flags: &[F]) -> Option<NullBuffer> {
    Some(NullBuffer::new(pack(flags))).filter(|nulls| nulls.null_count() > 0)
}

/// A `BooleanArray` as a byte mask, one byte per slot: 1 where the slot is `true`, 0 where it is `false`
/// **or null**, the rule of Arrow's own `filter` kernel, so `select_flagged` with this mask keeps exactly
/// the rows `filter` keeps. Any offset (a sliced array) and any length work.
///
/// # Example
/// ```
/// use arrow_array::{Array, BooleanArray};
/// use lookback::arrow::unpack_mask;
/// let mask = BooleanArray::from(vec![Some(true), None, Some(false), Some(true), Some(true)]);
/// assert_eq!(unpack_mask(&mask), [1, 0, 0, 1, 1]);
/// // A slice starts mid-byte of the bitmap: the bytes still start at its first slot.
/// assert_eq!(unpack_mask(&mask.slice(3, 2)), [1, 1]);
/// // The rows Arrow's filter keeps, on the host:
/// assert_eq!(lookback::host::select_flagged(&[10u32, 20, 30, 40, 50], &unpack_mask(&mask))?, [10, 40, 50]);
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn unpack_mask(mask: &BooleanArray) -> Vec<u8> {
    unpack(mask.values(), mask.nulls().map(NullBuffer::inner))
}

/// The validity of any Arrow array as a byte mask: 1 where the slot is valid, 0 where it is null (the
/// array's *logical* nulls, so a dictionary or run-end encoded array reports the nulls of its values).
/// With [`select_flagged`](crate::select_flagged) this mask drops the nulls of the array's values (see
/// [`upload_nullable`](super::upload_nullable)).
///
/// # Example
/// ```
/// use arrow_array::{Array, Int32Array, StringArray};
/// use lookback::arrow::validity_mask;
/// let ints = Int32Array::from(vec![Some(1), None, Some(3)]);
/// assert_eq!(validity_mask(&ints), [1, 0, 1]);
/// assert_eq!(validity_mask(&StringArray::from(vec!["a", "b"])), [1, 1]);
/// assert_eq!(validity_mask(&ints.slice(1, 2)), [0, 1]);
/// ```
pub fn validity_mask(array: &dyn Array) -> Vec<u8> {
    match array.logical_nulls() {
        Some(nulls) => unpack(nulls.inner(), None),
        None => vec![1; array.len()],
    }
}

/// A byte mask (such as `mask_if`'s output, or `select_flagged`'s flags) as a `BooleanArray` without
/// nulls: `true` where the flag is set (`u8`: nonzero).
///
/// # Example
/// ```
/// use arrow_array::{Array, BooleanArray};
/// use lookback::arrow::pack_mask;
/// let mask = pack_mask(&[1u8, 0, 255, 0]);
/// assert_eq!(mask, BooleanArray::from(vec![true, false, true, false]));
/// assert_eq!(mask.null_count(), 0);
/// assert_eq!(pack_mask(&[true, false]), BooleanArray::from(vec![true, false]));
/// ```
pub fn pack_mask<F: Flag>(flags: &[F]) -> BooleanArray {
    BooleanArray::new(pack(flags), None)
}

/// Uploads a `BooleanArray` as a device byte mask for [`select_flagged`](crate::select_flagged) and its
/// relatives: [`unpack_mask`] (nulls are 0) on the host, then one copy to `stream`'s device.
///
/// # Errors
/// [`Error::Driver`](crate::Error::Driver) if the allocation or the copy fails.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use arrow_array::BooleanArray;
/// let keep = BooleanArray::from(vec![Some(true), Some(false), None, Some(true)]);
/// let flags = lookback::arrow::upload_mask(&stream, &keep)?;
/// let ids = stream.clone_htod(&[7u64, 8, 9, 10])?;
/// assert_eq!(lookback::select_flagged(&ids, &flags)?.to_vec()?, [7, 10]);
/// # Ok(()) }
/// ```
pub fn upload_mask(stream: &Arc<CudaStream>, mask: &BooleanArray) -> Result<CudaSlice<u8>> {
    Ok(stream.clone_htod(&unpack_mask(mask))?)
}

/// Downloads a device byte mask (such as [`mask_if`](crate::mask_if)'s output) as a `BooleanArray`
/// without nulls: one copy from the device, then [`pack_mask`] on the host. Blocks until the copy is done.
///
/// # Errors
/// [`Error::Driver`](crate::Error::Driver) if the copy fails.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use arrow_array::BooleanArray;
/// use lookback::Pred;
/// let temps = stream.clone_htod(&[21.5f32, -9999.0, 19.0])?;
/// let mask = lookback::mask_if(&temps, &Pred::between(-50.0, 60.0))?;
/// assert_eq!(lookback::arrow::download_mask(&mask)?, BooleanArray::from(vec![true, false, true]));
/// # Ok(()) }
/// ```
pub fn download_mask<M: DevicePtr<u8>>(flags: &M) -> Result<BooleanArray> {
    let bytes = flags.stream().clone_dtoh(flags)?;
    Ok(pack_mask(&bytes))
}
