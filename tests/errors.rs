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
