//! The `arrow` feature: the element-type table, bit-packed masks against byte masks (offsets, odd lengths,
//! nulls), run-end encoding against `RunArray` (signed ends, overflow, invalid ends, slices) on the host;
//! and the uploads and downloads against the GPU, which skip without one.
#![cfg(feature = "arrow")]
mod common;

use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Int16Type, Int32Type, Int64Type, RunEndIndexType, TimestampMicrosecondType,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Float32Array, Int8Array, Int32Array, NullArray, PrimitiveArray,
    RunArray, StringArray, UInt8Array, UInt32Array,
};
use arrow_schema::DataType;
use common::gpu;
use lookback::arrow::{self as la, ArrowElement};
use lookback::half::{bf16, f16};
use lookback::{DType, Element, Error, Pred, host};
use proptest::prelude::*;
use std::sync::Arc;

// ---------------------------------------------------------------------------------------------------------
// The element-type table.

/// `T`'s Arrow type agrees with the table functions both ways, and has `T`'s size.
fn check_mapping<T: ArrowElement>(arrow: DataType) {
    assert_eq!(<T::Arrow as ArrowPrimitiveType>::DATA_TYPE, arrow, "{}", T::DTYPE.name());
    assert_eq!(la::data_type(T::DTYPE).as_ref(), Some(&arrow));
    assert_eq!(la::dtype(&arrow), Some(T::DTYPE));
    assert_eq!(arrow.primitive_width(), Some(size_of::<T>()));
}

#[test]
fn every_element_type_maps_to_its_arrow_type() {
    check_mapping::<i8>(DataType::Int8);
    check_mapping::<i16>(DataType::Int16);
    check_mapping::<i32>(DataType::Int32);
    check_mapping::<i64>(DataType::Int64);
    check_mapping::<u8>(DataType::UInt8);
    check_mapping::<u16>(DataType::UInt16);
    check_mapping::<u32>(DataType::UInt32);
    check_mapping::<u64>(DataType::UInt64);
    check_mapping::<f32>(DataType::Float32);
    check_mapping::<f64>(DataType::Float64);
    check_mapping::<f16>(DataType::Float16);
    // Arrow has no bfloat16: no mapping either way.
    assert_eq!(la::data_type(<bf16 as Element>::DTYPE), None);
    // Every other element type has one, and it round-trips.
    for d in DType::ALL {
        match la::data_type(d) {
            Some(arrow) => assert_eq!(la::dtype(&arrow), Some(d)),
            None => assert_eq!(d, DType::Bf16),
        }
    }
    // Logical types stored as integers are not element types by themselves.
    for other in [DataType::Date32, DataType::Utf8, DataType::Boolean, DataType::Decimal128(10, 2)] {
        assert_eq!(la::dtype(&other), None, "{other}");
    }
}

// ---------------------------------------------------------------------------------------------------------
// Masks.

/// What `unpack_mask` must give for a slot: 1 only where valid and true.
fn expected_mask(slots: &[Option<bool>]) -> Vec<u8> {
    slots.iter().map(|s| u8::from(*s == Some(true))).collect()
}

fn slots_strategy() -> impl Strategy<Value = Vec<Option<bool>>> {
    prop::collection::vec(prop::option::weighted(0.8, any::<bool>()), 0..300)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any offset (mid-byte, mid-word) and any length, with and without nulls.
    #[test]
    fn unpack_mask_of_any_slice(slots in slots_strategy(), a in 0usize..300, b in 0usize..300) {
        let array = BooleanArray::from(slots.clone());
        let (start, end) = (a.min(b).min(slots.len()), a.max(b).min(slots.len()));
        let sliced = array.slice(start, end - start);
        prop_assert_eq!(la::unpack_mask(&sliced), expected_mask(&slots[start..end]));
        let valid: Vec<u8> = slots[start..end].iter().map(|s| u8::from(s.is_some())).collect();
        prop_assert_eq!(la::validity_mask(&sliced), valid);
    }

    /// Bytes → bits → bytes: nonzero is set.
    #[test]
    fn pack_then_unpack(bytes in prop::collection::vec(any::<u8>(), 0..300), start in 0usize..300) {
        let packed = la::pack_mask(&bytes);
        prop_assert_eq!(packed.len(), bytes.len());
        prop_assert_eq!(packed.null_count(), 0);
        let want: Vec<u8> = bytes.iter().map(|&b| u8::from(b != 0)).collect();
        prop_assert_eq!(la::unpack_mask(&packed), want.clone());
        let start = start.min(bytes.len());
        prop_assert_eq!(la::unpack_mask(&packed.slice(start, bytes.len() - start)), want[start..].to_vec());
        let flags: Vec<bool> = bytes.iter().map(|&b| b != 0).collect();
        prop_assert_eq!(la::pack_mask(&flags), packed);
    }

    /// The byte mask selects exactly what Arrow's filter keeps (nulls are false).
    #[test]
    fn mask_selects_the_rows_arrow_filter_keeps(slots in slots_strategy()) {
        let rows: Vec<u32> = (0..slots.len() as u32).collect();
        let kept = host::select_flagged(&rows, &la::unpack_mask(&BooleanArray::from(slots.clone()))).unwrap();
        let want: Vec<u32> = rows.iter().zip(&slots).filter(|(_, s)| **s == Some(true)).map(|(r, _)| *r).collect();
        prop_assert_eq!(kept, want);
    }
}

#[test]
fn masks_at_word_and_byte_edges() {
    for len in [0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 129, 1000] {
        let slots: Vec<Option<bool>> = (0..len).map(|i| if i % 5 == 3 { None } else { Some(i % 3 != 0) }).collect();
        let array = BooleanArray::from(slots.clone());
        assert_eq!(la::unpack_mask(&array), expected_mask(&slots), "len {len}");
        for offset in [1, 3, 8, 61, 64, 70] {
            if offset <= len {
                let sliced = array.slice(offset, len - offset);
                assert_eq!(la::unpack_mask(&sliced), expected_mask(&slots[offset..]), "len {len} offset {offset}");
            }
        }
    }
}

#[test]
fn validity_of_arrays_without_a_bitmap_or_without_values() {
    assert_eq!(la::validity_mask(&Int32Array::from(vec![1, 2, 3])), [1, 1, 1]);
    assert_eq!(la::validity_mask(&StringArray::from(vec![Some("a"), None])), [1, 0]);
    // A null array's slots are all (logically) null.
    assert_eq!(la::validity_mask(&NullArray::new(3)), [0, 0, 0]);
    assert!(la::validity_mask(&Int32Array::from(Vec::<i32>::new())).is_empty());
    // A bitmap that marks nothing null is the same as none.
    let all_valid = Int32Array::new(vec![1, 2].into(), Some(arrow_buffer::NullBuffer::new_valid(2)));
    assert_eq!(la::validity_mask(&all_valid), [1, 1]);
}

// ---------------------------------------------------------------------------------------------------------
// Run-end encoding.

/// The logical items of a run array, decoded through lookback's unsigned ends.
fn decode(runs: &RunArray<impl RunEndIndexType>) -> Vec<i32> {
    let (ends, values) = la::run_array_to_ends(runs).unwrap();
    let values = values.as_any().downcast_ref::<Int32Array>().unwrap();
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &end) in ends.iter().enumerate() {
        out.extend(std::iter::repeat_n(values.value(i), (end - start) as usize));
        start = end;
    }
    out
}

fn round_trip<R: RunEndIndexType>(data: &[i32]) {
    let (values, ends) = host::run_end_encode(data);
    let values = Int32Array::from(values);
    let runs = la::run_array_from_ends::<R, _>(&ends, &values).unwrap();
    assert_eq!(runs.len(), data.len());
    assert_eq!(
        runs.data_type(),
        &DataType::RunEndEncoded(
            Arc::new(arrow_schema::Field::new("run_ends", R::DATA_TYPE, false)),
            Arc::new(arrow_schema::Field::new("values", DataType::Int32, true)),
        )
    );
    let (back, back_values) = la::run_array_to_ends(&runs).unwrap();
    assert_eq!(back, ends);
    assert_eq!(back_values.as_ref(), &values as &dyn Array);
    assert_eq!(decode(&runs), data);
    // u32 ends convert the same.
    let ends32: Vec<u32> = ends.iter().map(|&e| e as u32).collect();
    assert_eq!(la::run_array_from_ends::<R, _>(&ends32, &values).unwrap(), runs);
    // Lengths give the same array.
    let (values2, lengths) = host::run_length_encode(data);
    assert_eq!(Int32Array::from(values2), values);
    assert_eq!(la::run_array_from_lengths::<R, _>(&lengths, &values).unwrap(), runs);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn run_arrays_round_trip(data in prop::collection::vec(0i32..3, 0..200)) {
        round_trip::<Int16Type>(&data);
        round_trip::<Int32Type>(&data);
        round_trip::<Int64Type>(&data);
    }

    /// A sliced run array gives the runs of its slice, ends counted from the slice's start.
    #[test]
    fn sliced_run_arrays(data in prop::collection::vec(0i32..3, 1..200), a in 0usize..200, b in 0usize..200) {
        let (values, ends) = host::run_end_encode(&data);
        let runs = la::run_array_from_ends::<Int32Type, _>(&ends, &Int32Array::from(values)).unwrap();
        let (start, end) = (a.min(b).min(data.len()), a.max(b).min(data.len()));
        let sliced = runs.slice(start, end - start);
        prop_assert_eq!(decode(&sliced), data[start..end].to_vec());
        let (ends, values) = la::run_array_to_ends(&sliced).unwrap();
        prop_assert_eq!(ends.len(), values.len());
        prop_assert_eq!(ends.last().copied().unwrap_or(0), (end - start) as u64);
        prop_assert!(ends.windows(2).all(|w| w[0] < w[1]) && ends.first().is_none_or(|&e| e > 0));
    }
}

#[test]
fn empty_run_arrays() {
    let empty = Int32Array::from(Vec::<i32>::new());
    let runs = la::run_array_from_ends::<Int16Type, u64>(&[], &empty).unwrap();
    assert_eq!(runs.len(), 0);
    let (ends, values) = la::run_array_to_ends(&runs).unwrap();
    assert!(ends.is_empty() && values.is_empty());
    assert_eq!(la::run_array_from_lengths::<Int64Type, u32>(&[], &empty).unwrap().len(), 0);
    // A zero-length slice of a non-empty array.
    let runs = la::run_array_from_ends::<Int32Type, u64>(&[2, 5], &Int32Array::from(vec![1, 2])).unwrap();
    let (ends, values) = la::run_array_to_ends(&runs.slice(3, 0)).unwrap();
    assert!(ends.is_empty() && values.is_empty());
}

#[test]
fn run_values_may_be_any_array() {
    let values = StringArray::from(vec![Some("a"), None, Some("c")]);
    let runs = la::run_array_from_lengths::<Int32Type, u64>(&[2, 1, 3], &values).unwrap();
    assert_eq!((runs.len(), runs.run_ends().values()), (6, &[2, 3, 6][..]));
    let (ends, back) = la::run_array_to_ends(&runs.slice(1, 3)).unwrap();
    assert_eq!(ends, [1, 2, 3]);
    assert_eq!(back.as_any().downcast_ref::<StringArray>().unwrap(), &values);
    // The values' nulls come back with them; the upload's null check is the caller's next step.
    assert_eq!(back.null_count(), 1);
}

fn overflow(err: Error) -> (usize, u128, &'static str) {
    match err {
        Error::ArrowRunEndOverflow { index, end, run_end_type } => (index, end, run_end_type),
        other => panic!("expected ArrowRunEndOverflow, got {other:?}"),
    }
}

#[test]
fn run_ends_that_do_not_fit_the_signed_type() {
    let one = Int8Array::from(vec![1]);
    let two = Int8Array::from(vec![1, 2]);
    // The largest end of each type fits; one more does not.
    assert!(la::run_array_from_ends::<Int16Type, u32>(&[32_767], &one).is_ok());
    let err = la::run_array_from_ends::<Int16Type, u32>(&[32_768], &one).unwrap_err();
    assert_eq!(overflow(err), (0, 32_768, "Int16"));
    assert!(la::run_array_from_ends::<Int32Type, u32>(&[i32::MAX as u32], &one).is_ok());
    let err = la::run_array_from_ends::<Int32Type, u32>(&[5, u32::MAX], &two).unwrap_err();
    assert_eq!(overflow(err), (1, u32::MAX as u128, "Int32"));
    assert!(la::run_array_from_ends::<Int64Type, u64>(&[i64::MAX as u64], &one).is_ok());
    let err = la::run_array_from_ends::<Int64Type, u64>(&[i64::MAX as u64 + 1], &one).unwrap_err();
    assert_eq!(overflow(err), (0, 1 << 63, "Int64"));
    // Running sums of lengths: the first end past the type is reported, with its true value even past u64.
    let err = la::run_array_from_lengths::<Int16Type, u32>(&[20_000, 20_000], &two).unwrap_err();
    assert_eq!(overflow(err), (1, 40_000, "Int16"));
    let err = la::run_array_from_lengths::<Int64Type, u64>(&[1, u64::MAX], &two).unwrap_err();
    assert_eq!(overflow(err), (1, 1 << 64, "Int64"));
    assert!(err_text(la::run_array_from_lengths::<Int16Type, u32>(&[40_000], &one)).contains("Int16"));
}

fn err_text<T: std::fmt::Debug>(r: lookback::Result<T>) -> String {
    r.unwrap_err().to_string()
}

fn invalid_at<T: std::fmt::Debug>(r: lookback::Result<T>) -> usize {
    match r {
        Err(Error::ArrowInvalidRunEnds { index, .. }) => index,
        other => panic!("expected ArrowInvalidRunEnds, got {other:?}"),
    }
}

#[test]
fn invalid_run_ends_are_typed_errors() {
    let three = Int8Array::from(vec![1, 2, 3]);
    // Into Arrow: ends must be positive and strictly increasing; lengths must be positive.
    assert_eq!(invalid_at(la::run_array_from_ends::<Int32Type, u64>(&[0, 1, 2], &three)), 0);
    assert_eq!(invalid_at(la::run_array_from_ends::<Int32Type, u64>(&[1, 1, 2], &three)), 1);
    assert_eq!(invalid_at(la::run_array_from_ends::<Int32Type, u64>(&[1, 3, 2], &three)), 2);
    assert_eq!(invalid_at(la::run_array_from_lengths::<Int32Type, u64>(&[2, 0, 1], &three)), 1);
    assert_eq!(invalid_at(la::run_array_from_lengths::<Int32Type, u64>(&[0, 1, 1], &three)), 0);
    // Out of Arrow: negative, zero, repeated and decreasing ends.
    assert_eq!(invalid_at(la::run_ends_from_arrow::<Int16Type>(&[-1])), 0);
    assert_eq!(invalid_at(la::run_ends_from_arrow::<Int64Type>(&[3, i64::MIN])), 1);
    assert_eq!(invalid_at(la::run_ends_from_arrow::<Int32Type>(&[0, 4])), 0);
    assert_eq!(invalid_at(la::run_ends_from_arrow::<Int32Type>(&[2, 2])), 1);
    assert_eq!(invalid_at(la::run_ends_from_arrow::<Int32Type>(&[2, 5, 3])), 2);
    assert!(err_text(la::run_ends_from_arrow::<Int16Type>(&[-7])).contains("negative"));
    assert_eq!(la::run_ends_from_arrow::<Int16Type>(&[1, 2, i16::MAX]).unwrap(), [1, 2, 32_767]);
    assert!(la::run_ends_from_arrow::<Int16Type>(&[]).unwrap().is_empty());
    // One value per run.
    let err = la::run_array_from_ends::<Int32Type, u64>(&[1, 2], &three).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { what: "values", expected: 2, actual: 3 }));
    let err = la::run_array_from_lengths::<Int32Type, u64>(&[1, 2, 3, 4], &three).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { what: "values", expected: 4, actual: 3 }));
}

#[test]
fn new_error_messages_name_the_problem() {
    let e = Error::ArrowNulls { null_count: 2 };
    assert!(e.to_string().contains("2 null slots") && e.to_string().contains("upload_nullable"), "{e}");
    let e = Error::ArrowType { expected: "Int32".into(), actual: "Utf8".into() };
    assert_eq!(e.to_string(), "Arrow data type mismatch: expected Int32, found Utf8");
    let e = Error::ArrowRunEndOverflow { index: 3, end: 40_000, run_end_type: "Int16" };
    assert_eq!(e.to_string(), "run end 40000 of run 3 does not fit Arrow run ends of type Int16");
    let e = Error::ArrowInvalidRunEnds { index: 1, reason: "why" };
    assert_eq!(e.to_string(), "invalid run ends at run 1: why");
}

// ---------------------------------------------------------------------------------------------------------
// On the GPU.

/// Upload, then download, a sliced array of `T`'s Arrow type; the values must survive bit for bit.
fn primitive_round_trip<T: ArrowElement + common::TestElement>(stream: &Arc<lookback::cudarc::driver::CudaStream>) {
    let values: Vec<T> = common::random_vec(1000, 7, 0.01);
    let array = PrimitiveArray::<T::Arrow>::from_iter_values(values.iter().copied());
    for (offset, len) in [(0, 1000), (3, 990), (999, 1), (500, 0)] {
        let sliced = array.slice(offset, len);
        let device = la::upload(stream, &sliced).unwrap();
        assert_eq!(device.len(), len);
        let back = la::download(&device).unwrap();
        assert!(
            back.values().iter().zip(sliced.values().iter()).all(|(a, b)| a.to_bits() == b.to_bits()),
            "{} offset {offset} len {len}",
            T::DTYPE.name()
        );
        assert_eq!((back.len(), back.null_count()), (len, 0));
        let dynamic: ArrayRef = Arc::new(sliced.clone());
        assert_eq!(la::download(&la::upload_dyn::<T>(stream, dynamic.as_ref()).unwrap()).unwrap().len(), len);
    }
}

#[test]
fn gpu_primitive_arrays_round_trip_for_every_type() {
    let Some(stream) = gpu() else { return };
    primitive_round_trip::<i8>(&stream);
    primitive_round_trip::<i16>(&stream);
    primitive_round_trip::<i32>(&stream);
    primitive_round_trip::<i64>(&stream);
    primitive_round_trip::<u8>(&stream);
    primitive_round_trip::<u16>(&stream);
    primitive_round_trip::<u32>(&stream);
    primitive_round_trip::<u64>(&stream);
    primitive_round_trip::<f32>(&stream);
    primitive_round_trip::<f64>(&stream);
    primitive_round_trip::<f16>(&stream);
    // Logical types stored as element types.
    let dates = Date32Array::from(vec![19_000, 19_001, 19_002]);
    let device = la::upload(&stream, &dates).unwrap();
    assert_eq!(la::download_as::<Date32Type, _>(&device).unwrap(), dates);
    let times = PrimitiveArray::<TimestampMicrosecondType>::from(vec![1i64, 2]);
    let device = la::upload(&stream, &times).unwrap();
    assert_eq!(la::download_as::<TimestampMicrosecondType, _>(&device).unwrap(), times);
}

#[test]
fn gpu_nulls_are_refused_or_kept_apart() {
    let Some(stream) = gpu() else { return };
    let slots = vec![Some(1.5f32), None, Some(-2.0), None, None, Some(7.0)];
    let array = Float32Array::from(slots.clone());
    let err = la::upload(&stream, &array).unwrap_err();
    assert!(matches!(err, Error::ArrowNulls { null_count: 3 }), "{err:?}");
    // A slice without nulls uploads.
    assert_eq!(la::download(&la::upload(&stream, &array.slice(2, 1)).unwrap()).unwrap().values(), &[-2.0]);
    // Values and validity apart; drop_nulls is select_flagged with the validity.
    let column = la::upload_nullable(&stream, &array).unwrap();
    assert_eq!((column.len(), column.null_count(), column.is_empty()), (6, 3, false));
    assert_eq!(stream.clone_dtoh(column.validity().unwrap()).unwrap(), [1, 0, 1, 0, 0, 1]);
    let valid = column.drop_nulls().unwrap();
    assert_eq!(la::download_selected(&valid).unwrap(), Float32Array::from(vec![1.5, -2.0, 7.0]));
    // Back to Arrow with the same nulls.
    let back = la::download_nullable(column.values(), column.validity().unwrap()).unwrap();
    assert_eq!(back, array);
    // Without nulls: no mask, and drop_nulls copies.
    let plain = la::upload_nullable(&stream, &UInt32Array::from(vec![4, 5])).unwrap();
    assert!(plain.validity().is_none());
    assert_eq!(plain.drop_nulls().unwrap().to_vec().unwrap(), [4, 5]);
    let all_ones = stream.clone_htod(&[1u8, 1]).unwrap();
    assert_eq!(la::download_nullable(plain.values(), &all_ones).unwrap().nulls(), None);
    // A mask of the wrong length.
    let short = stream.clone_htod(&[1u8]).unwrap();
    let err = la::download_nullable(plain.values(), &short).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { what: "validity", expected: 2, actual: 1 }));
    // The wrong type behind a dyn Array.
    let err = la::upload_dyn::<i32>(&stream, &array).unwrap_err();
    assert!(matches!(&err, Error::ArrowType { expected, actual } if expected == "Int32" && actual == "Float32"));
}

#[test]
fn gpu_masks_match_the_host() {
    let Some(stream) = gpu() else { return };
    for n in [0usize, 1, 63, 64, 65, 1000, 100_003] {
        let slots: Vec<Option<bool>> = (0..n).map(|i| if i % 7 == 0 { None } else { Some(i % 3 == 1) }).collect();
        let array = BooleanArray::from(slots.clone());
        let rows: Vec<u32> = (0..n as u32).collect();
        let d_rows = stream.clone_htod(&rows).unwrap();
        for offset in [0, 5.min(n)] {
            let mask = array.slice(offset, n - offset);
            let flags = la::upload_mask(&stream, &mask).unwrap();
            let want = host::select_flagged(&rows[offset..], &la::unpack_mask(&mask)).unwrap();
            let got = lookback::select_flagged(&d_rows.slice(offset..), &flags).unwrap();
            assert_eq!(la::download_selected(&got).unwrap().values(), want.as_slice(), "n {n} offset {offset}");
        }
        let d_mask = lookback::mask_if(&d_rows, &Pred::lt(n as u32 / 2)).unwrap();
        let want: Vec<bool> = rows.iter().map(|&r| r < n as u32 / 2).collect();
        assert_eq!(la::download_mask(&d_mask).unwrap(), BooleanArray::from(want));
    }
}

#[test]
fn gpu_run_encodings_become_run_arrays() {
    let Some(stream) = gpu() else { return };
    let data: Vec<i32> = (0..10_000).map(|i| i / 7 % 3).collect();
    let input = stream.clone_htod(&data).unwrap();
    let (values, ends) = host::run_end_encode(&data);
    let want = la::run_array_from_ends::<Int16Type, _>(&ends, &Int32Array::from(values)).unwrap();
    let by_ends = lookback::run_end_encode::<i32, u32, _>(&input).unwrap();
    assert_eq!(la::download_run_ends::<Int16Type, _, _>(&by_ends).unwrap(), want);
    let by_lengths = lookback::run_length_encode::<i32, u64, _>(&input).unwrap();
    assert_eq!(la::download_run_lengths::<Int16Type, _, _>(&by_lengths).unwrap(), want);
    assert_eq!(decode(&la::download_run_ends::<Int64Type, _, _>(&by_ends).unwrap()), data);
    // More than i16::MAX items of distinct values: the run ends pass Int16's range at run 32767.
    let distinct: Vec<u8> = (0..40_000u32).map(|i| (i % 2) as u8).collect();
    let runs = lookback::run_end_encode::<u8, u64, _>(&stream.clone_htod(&distinct).unwrap()).unwrap();
    let err = la::download_run_ends::<Int16Type, _, _>(&runs).unwrap_err();
    assert!(matches!(err, Error::ArrowRunEndOverflow { index: 32_767, end: 32_768, run_end_type: "Int16" }));
    let array = la::download_run_ends::<Int32Type, _, _>(&runs).unwrap();
    assert_eq!(array.len(), 40_000);
    let values = array.values().as_any().downcast_ref::<UInt8Array>().unwrap();
    assert_eq!(values.len(), 40_000);
    // Empty input: an empty run array.
    let empty = stream.alloc_zeros::<i32>(0).unwrap();
    let runs = lookback::run_end_encode::<i32, u32, _>(&empty).unwrap();
    assert_eq!(la::download_run_ends::<Int32Type, _, _>(&runs).unwrap().len(), 0);
}
