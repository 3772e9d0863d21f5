//! Reductions on the host (`lookback::host::{reduce, arg_min, arg_max, reduce_user}`): the identities of
//! empty inputs, wrapping and f16 accumulation, the arg rules (ties to the first index, NaNs ignored),
//! and properties against independent computations.
use lookback::half::f16;
use lookback::rtc::UserScanOp;
use lookback::{Error, ScanOp, host};
use proptest::prelude::*;

#[test]
fn reductions_fold_from_the_identity() {
    assert_eq!(host::reduce(&[250u8, 10], ScanOp::Sum).unwrap(), 4);
    assert_eq!(host::reduce::<i8>(&[], ScanOp::Max).unwrap(), i8::MIN);
    assert_eq!(host::reduce::<i64>(&[], ScanOp::Min).unwrap(), i64::MAX);
    assert_eq!(host::reduce::<u32>(&[], ScanOp::BitAnd).unwrap(), u32::MAX);
    assert_eq!(host::reduce::<u16>(&[], ScanOp::BitXor).unwrap(), 0);
    assert!(host::reduce::<f64>(&[], ScanOp::Max).unwrap().is_nan());
    assert_eq!(host::reduce::<f32>(&[], ScanOp::Sum).unwrap().to_bits(), (-0.0f32).to_bits());
    assert_eq!(host::reduce(&[f32::NAN, 2.0, f32::NAN], ScanOp::Min).unwrap(), 2.0);
    // f16 accumulates in f32: 3000 halves sum to 1500 (an f16 running sum would stall at 2048 + …).
    assert_eq!(host::reduce(&[f16::from_f32(0.5); 3000], ScanOp::Sum).unwrap(), f16::from_f32(1500.0));
    assert!(matches!(host::reduce(&[1.0f64], ScanOp::BitXor), Err(Error::Unsupported { .. })));
}

#[test]
fn arg_rules() {
    assert_eq!(host::arg_min(&[3, 1, 2, 1]), Some((1, 1)));
    assert_eq!(host::arg_max(&[3, 1, 3, 1]), Some((0, 3)));
    assert_eq!(host::arg_min::<u8>(&[]), None);
    assert_eq!(host::arg_min(&[0.0f32, -0.0]).map(|(i, v)| (i, v.to_bits())), Some((0, 0)));
    assert_eq!(host::arg_min(&[-0.0f32, 0.0]).map(|(i, v)| (i, v.to_bits())), Some((0, (-0.0f32).to_bits())));
    assert_eq!(host::arg_max(&[f64::NAN, 1.0, f64::NAN, 2.0]), Some((3, 2.0)));
    assert_eq!(host::arg_min(&[f32::NAN, f32::NAN]).map(|(i, _)| i), Some(0));
    assert_eq!(host::arg_min(&[f32::NEG_INFINITY, f32::NAN]), Some((0, f32::NEG_INFINITY)));
    assert_eq!(host::arg_max(&[f16::from_f32(1.0), f16::from_f32(3.0), f16::from_f32(3.0)]).map(|(i, _)| i), Some(1));
}

/// A user operator's total is its closures folded left to right; a non-commutative one keeps the order.
#[test]
fn user_reductions_fold_the_closures_in_order() {
    // SAFETY: pure expressions.
    let concat = unsafe {
        UserScanOp::new("a * 10u + b", "0u", |a: u32, b: u32| a.wrapping_mul(10).wrapping_add(b), 0)
            .unwrap()
            .with_load("(uint32_t)x", |x: u8| u32::from(x))
            .unwrap()
    };
    assert_eq!(host::reduce_user(&[1u8, 2, 3], &concat), 123);
    assert_eq!(host::reduce_user(&[], &concat), 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// arg_min / arg_max against a sort by (NaN last, value, index).
    #[test]
    fn arg_matches_a_sort(xs in proptest::collection::vec(prop_oneof![Just(f32::NAN), Just(-0.0f32), -3.0f32..3.0], 0..50)) {
        let key = |i: usize, max: bool| {
            let x = xs[i];
            (x.is_nan(), if x.is_nan() { 0.0 } else if max { -x } else { x }, i)
        };
        for max in [false, true] {
            let mut order: Vec<usize> = (0..xs.len()).collect();
            order.sort_by(|&a, &b| key(a, max).partial_cmp(&key(b, max)).unwrap());
            let got = if max { host::arg_max(&xs) } else { host::arg_min(&xs) };
            prop_assert_eq!(got.map(|(i, _)| i), order.first().copied());
        }
    }

    /// Integer reductions equal the iterator folds.
    #[test]
    fn integer_reductions_match_iterators(xs in proptest::collection::vec(any::<i32>(), 0..200)) {
        prop_assert_eq!(host::reduce(&xs, ScanOp::Sum).unwrap(), xs.iter().fold(0i32, |a, &b| a.wrapping_add(b)));
        prop_assert_eq!(host::reduce(&xs, ScanOp::Min).unwrap(), xs.iter().copied().min().unwrap_or(i32::MAX));
        prop_assert_eq!(host::reduce(&xs, ScanOp::Max).unwrap(), xs.iter().copied().max().unwrap_or(i32::MIN));
        prop_assert_eq!(host::reduce(&xs, ScanOp::BitXor).unwrap(), xs.iter().fold(0, |a, &b| a ^ b));
    }
}
