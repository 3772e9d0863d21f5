//! Bad input gets a typed error, never a panic, and leaves the caller's buffers untouched.
mod common;

use common::gpu;
use lookback::{Error, ScanOp, Workspace, host};

#[test]
fn output_too_small_is_an_error_and_writes_nothing() {
    let Some(stream) = gpu() else { return };
    let d_in = stream.clone_htod(&[1u32, 2, 3, 4]).unwrap();
    let mut d_out = stream.clone_htod(&[9u32, 9, 9]).unwrap();
    let err = lookback::inclusive_scan_into(&d_in, &mut d_out, ScanOp::Sum).unwrap_err();
    assert!(matches!(err, Error::OutputTooSmall { needed: 4, actual: 3, .. }), "{err:?}");
    assert_eq!(stream.clone_dtoh(&d_out).unwrap(), [9, 9, 9]);
}

#[test]
fn bitwise_scan_of_floats_is_unsupported() {
    assert!(matches!(host::inclusive_scan(&[1.0f32], ScanOp::BitXor), Err(Error::Unsupported { .. })));
    assert!(matches!(host::exclusive_scan::<f64>(&[], 0.0, ScanOp::BitAnd), Err(Error::Unsupported { .. })));
    let Some(stream) = gpu() else { return };
    let mut buf = stream.clone_htod(&[1.5f32, 2.5]).unwrap();
    let err = lookback::inclusive_scan_in_place(&mut buf, ScanOp::BitOr).unwrap_err();
    assert!(matches!(err, Error::Unsupported { operation: "bitor", dtype: "f32" }), "{err:?}");
    assert_eq!(stream.clone_dtoh(&buf).unwrap(), [1.5, 2.5]);
    let d_in = stream.clone_htod(&[lookback::half::f16::ONE]).unwrap();
    assert!(matches!(lookback::inclusive_scan(&d_in, ScanOp::BitAnd), Err(Error::Unsupported { .. })));
}

#[test]
fn empty_input_launches_nothing_and_succeeds() {
    let Some(stream) = gpu() else { return };
    let d_in = stream.alloc_zeros::<u8>(0).unwrap();
    let out = lookback::exclusive_scan(&d_in, 3, ScanOp::Sum).unwrap();
    assert_eq!(out.len(), 0);
    let mut ws = Workspace::new(&stream);
    let mut d_out = stream.clone_htod(&[5u8]).unwrap();
    ws.inclusive_scan_into(&d_in, &mut d_out, ScanOp::Sum).unwrap();
    assert_eq!(stream.clone_dtoh(&d_out).unwrap(), [5]);
    assert_eq!(ws.device_bytes(), 0, "an empty call must not even allocate the workspace");
}

#[test]
fn error_messages_name_the_problem() {
    let e = Error::OutputTooSmall { what: "output", needed: 10, actual: 3 };
    assert_eq!(e.to_string(), "output too small: output has room for 3 items, 10 needed");
    assert!(Error::KernelsNotBuilt.to_string().contains("nvcc"));
    assert!(Error::NoCudaDriver.to_string().contains("driver"));
}

#[test]
fn oversized_predicates_are_rejected_before_any_launch() {
    use lookback::Pred;
    // A bit test keeps a predicate as written (comparisons alone fold into one test).
    let mut deep = Pred::any_bits(1i32);
    for k in 0..9 {
        deep = Pred::eq(k).and(deep);
    }
    let mut long = Pred::any_bits(1i32);
    for k in 0..9 {
        long = long | Pred::eq(k);
    }
    let Some(stream) = gpu() else { return };
    let mut buf = stream.clone_htod(&[1i32, 2, 3]).unwrap();
    for pred in [deep, long] {
        let err = lookback::select_if_in_place(&mut buf, &pred).unwrap_err();
        assert!(matches!(err, Error::PredicateTooComplex { .. }), "{err:?}");
        assert!(err.to_string().contains("at most 16"), "{err}");
    }
    assert_eq!(stream.clone_dtoh(&buf).unwrap(), [1, 2, 3]);
}

#[test]
fn flag_length_mismatch_is_an_error_and_writes_nothing() {
    use lookback::host;
    assert!(matches!(
        host::select_flagged(&[1u8, 2], &[true]),
        Err(Error::LengthMismatch { expected: 2, actual: 1, .. })
    ));
    let Some(stream) = gpu() else { return };
    let mut buf = stream.clone_htod(&[5u64, 6, 7]).unwrap();
    let flags = stream.clone_htod(&[1u8, 0]).unwrap();
    let err = lookback::select_flagged_in_place(&mut buf, &flags).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { what: "flags", expected: 3, actual: 2 }), "{err:?}");
    assert_eq!(stream.clone_dtoh(&buf).unwrap(), [5, 6, 7]);
}

#[test]
fn selection_outputs_must_hold_every_item() {
    use lookback::Pred;
    let Some(stream) = gpu() else { return };
    let input = stream.clone_htod(&[1u16, 2, 3, 4]).unwrap();
    let mut out = stream.clone_htod(&[9u16; 3]).unwrap();
    let mut count = stream.clone_htod(&[42u64]).unwrap();
    let err = lookback::select_if_into(&input, &Pred::gt(2), &mut out, &mut count).unwrap_err();
    assert!(matches!(err, Error::OutputTooSmall { what: "output", needed: 4, actual: 3 }), "{err:?}");
    let mut empty_count = stream.alloc_zeros::<u64>(0).unwrap();
    let mut out4 = stream.clone_htod(&[9u16; 4]).unwrap();
    let err = lookback::unique_into(&input, &mut out4, &mut empty_count).unwrap_err();
    assert!(matches!(err, Error::OutputTooSmall { what: "num_selected", .. }), "{err:?}");
    // The forms of in-place compaction and counting that leave the count on the device.
    let mut ws = lookback::Workspace::new(&stream);
    let err = ws.select_if_in_place_into(&mut out4, &Pred::gt(2), &mut empty_count).unwrap_err();
    assert!(matches!(err, Error::OutputTooSmall { what: "num_selected", .. }), "{err:?}");
    let err = ws.unique_in_place_into(&mut out4, &mut empty_count).unwrap_err();
    assert!(matches!(err, Error::OutputTooSmall { what: "num_selected", .. }), "{err:?}");
    let err = ws.count_if_into(&input, &Pred::gt(2), &mut empty_count).unwrap_err();
    assert!(matches!(err, Error::OutputTooSmall { what: "count", .. }), "{err:?}");
    let short_flags = stream.clone_htod(&[1u8; 3]).unwrap();
    let err = ws.select_flagged_in_place_into(&mut out4, &short_flags, &mut count).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { .. }), "{err:?}");
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [9; 3]);
    assert_eq!(stream.clone_dtoh(&out4).unwrap(), [9; 4]);
    assert_eq!(stream.clone_dtoh(&count).unwrap(), [42]);
}

#[test]
fn empty_selection_writes_a_zero_count() {
    use lookback::Pred;
    let Some(stream) = gpu() else { return };
    let input = stream.alloc_zeros::<f32>(0).unwrap();
    let mut out = stream.alloc_zeros::<f32>(0).unwrap();
    let mut count = stream.clone_htod(&[42u64]).unwrap();
    lookback::select_if_into(&input, &Pred::gt(0.0), &mut out, &mut count).unwrap();
    assert_eq!(stream.clone_dtoh(&count).unwrap(), [0]);
    assert_eq!(lookback::count_if(&input, &Pred::always()).unwrap(), 0);
    let mut c = stream.clone_htod(&[42u64]).unwrap();
    lookback::Workspace::new(&stream).count_if_into(&input, &Pred::always(), &mut c).unwrap();
    assert_eq!(stream.clone_dtoh(&c).unwrap(), [0]);
    assert!(lookback::unique(&input).unwrap().is_empty());
}

#[test]
fn run_based_primitives_reject_bad_arguments_and_write_nothing() {
    assert!(matches!(host::reduce_by_key(&[1u8, 2], &[1i32], ScanOp::Sum), Err(Error::LengthMismatch { .. })));
    assert!(matches!(host::reduce_by_key(&[1u8], &[1i32], ScanOp::BitOr), Err(Error::Unsupported { .. })));
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    let keys = stream.clone_htod(&[1u32, 1, 2, 2]).unwrap();
    let values = stream.clone_htod(&[5i32, 6, 7, 8]).unwrap();
    let mut keys_out = stream.clone_htod(&[9u32; 4]).unwrap();
    let mut values_out = stream.clone_htod(&[9i32; 4]).unwrap();
    let mut count = stream.clone_htod(&[99u64]).unwrap();
    let unchanged = |k: &lookback::cudarc::driver::CudaSlice<u32>, v: &lookback::cudarc::driver::CudaSlice<i32>| {
        assert_eq!(stream.clone_dtoh(k).unwrap(), [9; 4]);
        assert_eq!(stream.clone_dtoh(v).unwrap(), [9; 4]);
    };

    let short = stream.clone_htod(&[5i32, 6, 7]).unwrap();
    let err = ws.reduce_by_key_into(&keys, &short, &mut keys_out, &mut values_out, &mut count, ScanOp::Sum);
    assert!(matches!(err, Err(Error::LengthMismatch { what: "values", expected: 4, actual: 3 })), "{err:?}");
    let err = ws.reduce_by_key_into(&keys, &values, &mut keys_out, &mut values_out, &mut count, ScanOp::BitXor);
    assert!(matches!(err, Err(Error::Unsupported { .. })), "{err:?}");
    let mut tiny = stream.clone_htod(&[9i32; 3]).unwrap();
    let err = ws.reduce_by_key_into(&keys, &values, &mut keys_out, &mut tiny, &mut count, ScanOp::Sum);
    assert!(matches!(err, Err(Error::OutputTooSmall { what: "values_out", needed: 4, actual: 3 })), "{err:?}");
    unchanged(&keys_out, &values_out);
    assert_eq!(stream.clone_dtoh(&count).unwrap(), [99]);

    // Outputs overlapping inputs: these primitives are not in-place safe. Safe Rust cannot alias a
    // buffer as input and output; unsafe code can, so make an alias of `values` the way such code would.
    use lookback::cudarc::driver::DevicePtr;
    let addr = values.device_ptr(&stream).0;
    // SAFETY: `alias` views `values`' memory (4 i32) and is leaked below, never freed.
    let mut alias = unsafe { stream.upgrade_device_ptr::<i32>(addr, 4) };
    let err = ws.reduce_by_key_into(&keys, &values, &mut keys_out, &mut alias, &mut count, ScanOp::Sum);
    assert!(matches!(err, Err(Error::Overlap { what: "values_out", other: "values" })), "{err:?}");
    let err = ws.inclusive_scan_by_key_into(&keys, &values, &mut alias, ScanOp::Sum);
    assert!(matches!(err, Err(Error::Overlap { what: "output", other: "values" })), "{err:?}");
    let _ = alias.leak();
    assert_eq!(stream.clone_dtoh(&values).unwrap(), [5, 6, 7, 8]);
    unchanged(&keys_out, &values_out);
    assert_eq!(stream.clone_dtoh(&count).unwrap(), [99]);
    // Disjoint buffers are fine.
    ws.reduce_by_key_into(&keys, &values, &mut keys_out, &mut values_out, &mut count, ScanOp::Sum).unwrap();
    assert_eq!(stream.clone_dtoh(&count).unwrap(), [2]);
    assert_eq!(stream.clone_dtoh(&values_out).unwrap()[..2], [11, 15]);
}
