//! Run-end encoding: lookback's unsigned run ends and lengths against Arrow's `RunArray`, whose run ends
//! are signed (`Int16`, `Int32` or `Int64`). Every conversion checks what the other side cannot hold: an
//! end too large for the signed type, and ends that are not positive and strictly increasing.
use super::primitive::{download, from_vec};
use super::types::ArrowElement;
use crate::error::{Error, Result, check_len};
use crate::runs::{RunLength, Runs};
use arrow_array::types::RunEndIndexType;
use arrow_array::{Array, ArrayRef, RunArray};
use arrow_buffer::ArrowNativeType;
use arrow_schema::DataType;
use cudarc::driver::DeviceSlice;

/// The name of a run-end type, for errors.
fn run_end_type<R: RunEndIndexType>() -> &'static str {
    match R::DATA_TYPE {
        DataType::Int16 => "Int16",
        DataType::Int32 => "Int32",
        DataType::Int64 => "Int64",
        _ => "a run-end type",
    }
}

/// `end` (the end of run `index`) as `R`'s native type, or [`Error::ArrowRunEndOverflow`].
fn to_signed<R: RunEndIndexType>(index: usize, end: u128) -> Result<R::Native> {
    usize::try_from(end).ok().and_then(R::Native::from_usize).ok_or(Error::ArrowRunEndOverflow {
        index,
        end,
        run_end_type: run_end_type::<R>(),
    })
}

/// Why an end that is not greater than the one before (0 before the first) is refused.
fn not_increasing(index: usize) -> &'static str {
    if index == 0 {
        "the first run end is 0 (an empty run)"
    } else {
        "not greater than the run end before (an empty or backward run)"
    }
}

/// Signed run ends from a sequence of unsigned ones, checking each against the one before.
fn signed_ends<R: RunEndIndexType>(ends: impl Iterator<Item = u128>) -> Result<Vec<R::Native>> {
    let mut previous = 0;
    ends.enumerate()
        .map(|(index, end)| {
            if end <= previous {
                return Err(Error::ArrowInvalidRunEnds { index, reason: not_increasing(index) });
            }
            previous = end;
            to_signed::<R>(index, end)
        })
        .collect()
}

/// `RunArray::try_new` with the ends checked first, so that its own checks cannot fail.
fn run_array<R: RunEndIndexType>(ends: Vec<R::Native>, values: &dyn Array) -> Result<RunArray<R>> {
    RunArray::try_new(&from_vec::<R>(ends), values).map_err(super::arrow_error)
}

/// A `RunArray` from lookback's run ends (each run's end: the index one past its last item, as
/// [`run_end_encode`](crate::run_end_encode) and [`host::run_end_encode`](crate::host::run_end_encode)
/// return them) and one value per run (any Arrow array). The ends are converted to `R`'s signed type into
/// a new buffer; `values` is shared, not copied.
///
/// # Errors
/// [`Error::LengthMismatch`] if `values` does not have one item per run;
/// [`Error::ArrowRunEndOverflow`] if an end does not fit `R` (an `Int16` run end holds at most 32767);
/// [`Error::ArrowInvalidRunEnds`] if the ends are not positive and strictly increasing.
///
/// # Example
/// ```
/// use arrow_array::types::{Int16Type, Int32Type};
/// use arrow_array::{Array, UInt8Array};
/// use lookback::arrow::run_array_from_ends;
/// let (values, ends) = lookback::host::run_end_encode(&[7u8, 7, 7, 2, 7]);
/// let runs = run_array_from_ends::<Int32Type, _>(&ends, &UInt8Array::from(values))?;
/// assert_eq!((runs.len(), runs.run_ends().values()), (5, &[3, 4, 5][..]));
/// // An end past i16::MAX cannot be an Int16 run end:
/// let err = run_array_from_ends::<Int16Type, _>(&[40_000u32], &UInt8Array::from(vec![1])).unwrap_err();
/// assert!(matches!(err, lookback::Error::ArrowRunEndOverflow { index: 0, end: 40_000, .. }));
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn run_array_from_ends<R, L>(ends: &[L], values: &dyn Array) -> Result<RunArray<R>>
where
    R: RunEndIndexType,
    L: Copy + Into<u64>,
{
    check_len("values", ends.len(), values.len())?;
    let ends = signed_ends::<R>(ends.iter().map(|&end| u128::from(end.into())))?;
    run_array(ends, values)
}

/// A `RunArray` from run lengths (as [`run_length_encode`](crate::run_length_encode) returns them) and one
/// value per run: the ends are the running sum of the lengths, computed in the same pass that converts
/// them to `R`'s signed type.
///
/// # Errors
/// [`Error::LengthMismatch`] if `values` does not have one item per run;
/// [`Error::ArrowRunEndOverflow`] if a running sum does not fit `R`; [`Error::ArrowInvalidRunEnds`] for
/// a run of length 0 (Arrow has no empty runs).
///
/// # Example
/// ```
/// use arrow_array::types::Int64Type;
/// use arrow_array::{Array, Float32Array};
/// use lookback::arrow::run_array_from_lengths;
/// let (values, lengths) = lookback::host::run_length_encode(&[1.5f32, 1.5, -0.0, 0.0, 2.0]);
/// let runs = run_array_from_lengths::<Int64Type, _>(&lengths, &Float32Array::from(values))?;
/// assert_eq!(runs.run_ends().values(), &[2, 4, 5]);
/// assert_eq!(runs.len(), 5);
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn run_array_from_lengths<R, L>(lengths: &[L], values: &dyn Array) -> Result<RunArray<R>>
where
    R: RunEndIndexType,
    L: Copy + Into<u64>,
{
    check_len("values", lengths.len(), values.len())?;
    // u128: a sum of u64 lengths cannot overflow it, so a too-large end is reported with its true value.
    let ends = lengths.iter().scan(0u128, |end, &length| {
        *end += u128::from(length.into());
        Some(*end)
    });
    let ends = signed_ends::<R>(ends)?;
    run_array(ends, values)
}

/// Arrow's signed run ends as lookback's unsigned ones, checked: every end positive and each greater
/// than the one before (what Arrow requires, and what a `RunArray` built without its checks, or ends read
/// from elsewhere, may lack).
///
/// # Errors
/// [`Error::ArrowInvalidRunEnds`] naming the first end that is negative, zero, or not greater than the
/// one before.
///
/// # Example
/// ```
/// use lookback::arrow::run_ends_from_arrow;
/// assert_eq!(run_ends_from_arrow::<arrow_array::types::Int32Type>(&[2, 5, 6])?, [2, 5, 6]);
/// let err = run_ends_from_arrow::<arrow_array::types::Int16Type>(&[2, -1]).unwrap_err();
/// assert!(matches!(err, lookback::Error::ArrowInvalidRunEnds { index: 1, .. }));
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn run_ends_from_arrow<R: RunEndIndexType>(ends: &[R::Native]) -> Result<Vec<u64>> {
    let mut previous = 0;
    ends.iter()
        .enumerate()
        .map(|(index, &end)| {
            let end = end.to_i64().unwrap_or(-1);
            let end = u64::try_from(end)
                .map_err(|_| Error::ArrowInvalidRunEnds { index, reason: "a run end is negative" })?;
            if end <= previous {
                return Err(Error::ArrowInvalidRunEnds { index, reason: not_increasing(index) });
            }
            previous = end;
            Ok(end)
        })
        .collect()
}

/// A `RunArray`'s runs as lookback's unsigned run ends and the values of those runs, for the array as it
/// is seen: a sliced array gives the runs its slice covers, ends counted from the slice's start (the last
/// is the slice's length), and the matching slice of the values (shared, not copied). The ends are
/// checked as [`run_ends_from_arrow`] does, and converted into a new `Vec`.
///
/// The values may have nulls (Arrow allows null runs); check them before uploading (see
/// [`upload`](super::upload)).
///
/// # Errors
/// [`Error::ArrowInvalidRunEnds`] for ends that are negative, zero or not strictly increasing, or that
/// end before the array does; [`Error::LengthMismatch`] if there are fewer values than run ends.
///
/// # Example
/// ```
/// use arrow_array::types::Int32Type;
/// use arrow_array::{Array, Int32Array, RunArray, StringArray};
/// use lookback::arrow::run_array_to_ends;
/// let runs = RunArray::<Int32Type>::try_new(&Int32Array::from(vec![3, 4, 7]), &StringArray::from(vec!["a", "b", "c"]))
///     .unwrap();
/// let (ends, values) = run_array_to_ends(&runs)?;
/// assert_eq!((ends, values.len()), (vec![3, 4, 7], 3));
/// // Items 2..6 are the last "a", the "b" and two "c"s:
/// let (ends, values) = run_array_to_ends(&runs.slice(2, 4))?;
/// assert_eq!(ends, [1, 2, 4]);
/// assert_eq!(values.as_any().downcast_ref::<StringArray>().unwrap(), &StringArray::from(vec!["a", "b", "c"]));
/// # Ok::<(), lookback::Error>(())
/// ```
pub fn run_array_to_ends<R: RunEndIndexType>(array: &RunArray<R>) -> Result<(Vec<u64>, ArrayRef)> {
    let physical = array.run_ends().values();
    let ends = run_ends_from_arrow::<R>(physical)?;
    let values = array.values();
    if values.len() < ends.len() {
        return Err(Error::LengthMismatch { what: "values", expected: ends.len(), actual: values.len() });
    }
    // Arrow keeps a slice as an offset and a length over the unsliced ends; found here by binary search
    // on the ends checked above, not by arrow-rs's own search, which assumes they are valid.
    let (offset, len) = (array.run_ends().offset() as u64, array.run_ends().len() as u64);
    if len == 0 {
        return Ok((Vec::new(), values.slice(0, 0)));
    }
    let last = ends.last().copied().unwrap_or(0);
    if last < offset + len {
        let reason = "the last run end is before the end of the array";
        return Err(Error::ArrowInvalidRunEnds { index: ends.len().saturating_sub(1), reason });
    }
    let first_run = ends.partition_point(|&end| end <= offset);
    let last_run = ends.partition_point(|&end| end < offset + len);
    let sliced = ends[first_run..=last_run].iter().map(|&end| (end - offset).min(len)).collect();
    Ok((sliced, values.slice(first_run, last_run - first_run + 1)))
}

/// Downloads the result of [`run_end_encode`](crate::run_end_encode) as a `RunArray`: the values as
/// [`download`](super::download) does (one copy, no second one), the ends copied down and converted to
/// `R`'s signed type in one pass into a new buffer (`u32`/`u64` and `i16`/`i32`/`i64` differ in width or
/// range, so they cannot share it). Blocks until the copies are done.
///
/// # Errors
/// [`Error::ArrowRunEndOverflow`] if an end does not fit `R`, such as an input of more than 32767 items
/// with `Int16` ends; [`Error::Driver`] if a copy fails.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use arrow_array::types::Int32Type;
/// use arrow_array::{Array, Int16Array};
/// let input = stream.clone_htod(&[3i16, 3, 3, 8, 3])?;
/// let runs = lookback::run_end_encode::<i16, u32, _>(&input)?;
/// let array = lookback::arrow::download_run_ends::<Int32Type, _, _>(&runs)?;
/// assert_eq!(array.run_ends().values(), &[3, 4, 5]);
/// assert_eq!(array.values().as_any().downcast_ref::<Int16Array>().unwrap(), &Int16Array::from(vec![3, 8, 3]));
/// # Ok(()) }
/// ```
pub fn download_run_ends<R, T, L>(runs: &Runs<T, L>) -> Result<RunArray<R>>
where
    R: RunEndIndexType,
    T: ArrowElement,
    L: RunLength,
{
    let ends = runs.second();
    let ends = ends.stream().clone_dtoh(&ends)?;
    run_array_from_ends(&ends, &download(&runs.first())?)
}

/// Downloads the result of [`run_length_encode`](crate::run_length_encode) as a `RunArray`: as
/// [`download_run_ends`], the ends being the running sum of the lengths (one host pass).
///
/// # Errors
/// [`Error::ArrowRunEndOverflow`] if an end does not fit `R`; [`Error::Driver`] if a copy fails.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use arrow_array::types::Int16Type;
/// use arrow_array::Array;
/// let input = stream.clone_htod(&[7u8, 7, 7, 2, 7])?;
/// let runs = lookback::run_length_encode::<u8, u64, _>(&input)?;
/// let array = lookback::arrow::download_run_lengths::<Int16Type, _, _>(&runs)?;
/// assert_eq!((array.len(), array.run_ends().values()), (5, &[3i16, 4, 5][..]));
/// # Ok(()) }
/// ```
pub fn download_run_lengths<R, T, L>(runs: &Runs<T, L>) -> Result<RunArray<R>>
where
    R: RunEndIndexType,
    T: ArrowElement,
    L: RunLength,
{
    let lengths = runs.second();
    let lengths = lengths.stream().clone_dtoh(&lengths)?;
    run_array_from_lengths(&lengths, &download(&runs.first())?)
}
