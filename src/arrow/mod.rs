//! Conversions to and from arrow-rs arrays (feature `arrow`).
//!
//! The cargo feature `arrow` (off by default) brings this module and three crates of
//! [arrow-rs](https://docs.rs/arrow): `arrow-array`, `arrow-buffer` and `arrow-schema` (re-exported here).
//!
//! | Arrow | lookback | functions |
//! |---|---|---|
//! | `PrimitiveArray<A>` without nulls | `CudaSlice<T>` | [`upload`], [`upload_dyn`]; [`download`], [`download_as`], [`download_selected`] |
//! | `PrimitiveArray<A>` with nulls | values + validity byte mask ([`Nullable`]) | [`upload_nullable`], [`Nullable::drop_nulls`]; [`download_nullable`] |
//! | `BooleanArray` (bit-packed) | byte mask (`mask_if`, `select_flagged`) | [`unpack_mask`], [`pack_mask`], [`validity_mask`]; [`upload_mask`], [`download_mask`] |
//! | `RunArray<R>` (signed run ends) | unsigned run ends or lengths ([`Runs`](crate::Runs)) | [`run_array_from_ends`], [`run_array_from_lengths`], [`run_array_to_ends`], [`run_ends_from_arrow`]; [`download_run_ends`], [`download_run_lengths`] |
//! | `DataType` | [`DType`](crate::DType) | [`ArrowElement`] (the table), [`data_type`], [`dtype`] |
//! | `RecordBatch` of primitive columns | the table filter ([`crate::table`]) | [`filter_record_batch`] (arrow's `filter_record_batch` on the GPU) |
//!
//! Element types: the eleven of [`ArrowElement`]. [`half::bf16`] has no Arrow type, so it has no
//! conversion here (convert it to `f32` or reinterpret its bits as `u16` first, whichever the data means).
//!
//! # Copies
//! Host and device memory are apart, so every upload and download is one copy over the bus; what this
//! module guarantees is that there is no other copy of the values where the layouts agree:
//! * **Uploads** copy straight from the array's value buffer (the slice a sliced array covers) to the new
//!   device buffer: no host-side `Vec`. The memory is pageable, so the driver stages it through its own
//!   pinned buffers, as for any `clone_htod` of a slice.
//! * **Downloads** copy into a `Vec` whose allocation becomes the array's buffer (`ScalarBuffer::from(Vec)`),
//!   with no second copy.
//! * **Masks** are unpacked (bits → bytes) or packed (bytes → bits) once on the host: the kernels read and
//!   write a byte per item, Arrow a bit. Validity bitmaps likewise.
//! * **Run ends** are converted into a new buffer in one pass: lookback's are unsigned (`u32`/`u64`),
//!   Arrow's signed (`i16`/`i32`/`i64`), and each end is range-checked on the way. A `RunArray`'s values are
//!   shared, never copied, by the host conversions.
//!
//! # Nulls
//! A null slot's value is unspecified in Arrow, and a kernel would take it for data. So [`upload`] refuses
//! an array with null slots ([`Error::ArrowNulls`](crate::Error::ArrowNulls)); [`upload_nullable`] gives
//! the values and the validity (a byte per slot, 1 = valid) apart, and dropping the nulls on the device is
//! one [`select_flagged`](crate::select_flagged) ([`Nullable::drop_nulls`]). A `BooleanArray` used as a mask
//! takes its null slots as `false`, as Arrow's own `filter` does.
//!
//! # Errors
//! Bad input is an [`Error`](crate::Error), never a panic: [`ArrowNulls`](crate::Error::ArrowNulls),
//! [`ArrowType`](crate::Error::ArrowType), [`ArrowRunEndOverflow`](crate::Error::ArrowRunEndOverflow),
//! [`ArrowInvalidRunEnds`](crate::Error::ArrowInvalidRunEnds), [`LengthMismatch`](crate::Error::LengthMismatch).
//! Every function only reads its arguments and returns new arrays or buffers, so a failing call has
//! changed nothing of the caller's.
//!
//! # Example
//! ```
//! # fn main() -> lookback::Result<()> {
//! # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
//! # if !lookback::kernels_built() { return Ok(()) }
//! use arrow_array::{BooleanArray, Float32Array, UInt32Array};
//! use lookback::Pred;
//! use lookback::arrow::{download_mask, download_selected, upload, upload_mask};
//! let temps = upload(&stream, &Float32Array::from(vec![21.5, -9999.0, 19.0]))?;
//! let ids = upload(&stream, &UInt32Array::from(vec![1, 2, 3]))?;
//! // Evaluate a predicate once, as a byte mask; select the same rows of another column.
//! let plausible = lookback::mask_if(&temps, &Pred::between(-50.0, 60.0))?;
//! assert_eq!(download_mask(&plausible)?, BooleanArray::from(vec![true, false, true]));
//! assert_eq!(download_selected(&lookback::select_flagged(&ids, &plausible)?)?, UInt32Array::from(vec![1, 3]));
//! // An Arrow mask works the same way.
//! let flags = upload_mask(&stream, &BooleanArray::from(vec![false, true, true]))?;
//! assert_eq!(download_selected(&lookback::select_flagged(&ids, &flags)?)?, UInt32Array::from(vec![2, 3]));
//! # Ok(()) }
//! ```
//!
//! Without a GPU, the host conversions work the same (and [`host`](crate::host) computes the results):
//! ```
//! use arrow_array::types::Int32Type;
//! use arrow_array::{Array, Int32Array};
//! use lookback::arrow::{run_array_from_ends, run_array_to_ends};
//! let column = Int32Array::from(vec![4, 4, 4, 9, 9, 4]);
//! let (values, ends) = lookback::host::run_end_encode(column.values());
//! let runs = run_array_from_ends::<Int32Type, _>(&ends, &Int32Array::from(values))?;
//! assert_eq!(runs.run_ends().values(), &[3, 5, 6]);
//! assert_eq!(run_array_to_ends(&runs)?.0, ends);
//! # Ok::<(), lookback::Error>(())
//! ```
mod mask;
mod nullable;
mod primitive;
mod runs;
mod table;
mod types;

pub use mask::{download_mask, pack_mask, unpack_mask, upload_mask, validity_mask};
pub use nullable::{Nullable, download_nullable, upload_nullable};
pub use primitive::{download, download_as, download_selected, upload, upload_dyn};
pub use runs::{
    download_run_ends, download_run_lengths, run_array_from_ends, run_array_from_lengths, run_array_to_ends,
    run_ends_from_arrow,
};
pub use table::filter_record_batch;
pub use types::{ArrowElement, data_type, dtype};

/// Re-export of the arrow-rs crates this module is built against, so callers name the same types.
pub use arrow_array;
/// Re-export of `arrow-buffer`.
pub use arrow_buffer;
/// Re-export of `arrow-schema`.
pub use arrow_schema;

/// An error of arrow-rs itself (after this module's own checks, only a rule of a newer arrow-rs).
fn arrow_error(error: arrow_schema::ArrowError) -> crate::Error {
    crate::Error::Arrow { message: error.to_string() }
}
