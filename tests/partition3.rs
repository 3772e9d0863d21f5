//! The three-way partition against the host reference: every element type, predicate pairs that split
//! the input in several proportions (including empty parts and overlapping predicates), sizes around tile
//! boundaries and random sizes; outputs poisoned with guard items that must stay untouched.
mod common;

use common::{Rng, TestElement, gpu, upload_poisoned};
use lookback::cudarc::driver::CudaStream;
use lookback::half::{bf16, f16};
use lookback::{Error, Pred, Workspace, host};
use proptest::prelude::*;
use std::sync::Arc;

/// Predicate pairs over values in [0, 100): (first, second). Some overlap (an item where both hold goes
/// to the first part), some leave a part empty.
fn predicates<T: TestElement>(k: usize) -> (Pred<T>, Pred<T>) {
    let s = |v: u8| T::small(v);
    match k % 5 {
        0 => (Pred::lt(s(30)), Pred::lt(s(60))),
        1 => (Pred::ge(s(50)), Pred::between(s(10), s(70))),
        2 => (Pred::always(), Pred::lt(s(50))),
        3 => (Pred::lt(s(0)), Pred::ge(s(0)).not()),
        _ => (Pred::eq(s(7)) | Pred::gt(s(90)), Pred::le(s(3)) & Pred::ne(s(2))),
    }
}

fn check<T: TestElement>(stream: &Arc<CudaStream>, ws: &mut Workspace, n: usize, k: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let values: Vec<T> = (0..n).map(|_| T::small((rng.next_u64() % 100) as u8)).collect();
    let (p1, p2) = predicates::<T>(k);
    let want = host::partition_three_way(&values, &p1, &p2);
    let what = format!("partition_three_way {} n={n} preds={} seed={seed}", T::DTYPE.name(), k % 5);
    let d_in = stream.clone_htod(&values).unwrap();
    let poisoned = || upload_poisoned::<T>(stream, n);
    let (mut a, mut b, mut c) = (poisoned(), poisoned(), poisoned());
    let mut counts = stream.clone_htod(&[u64::MAX, u64::MAX]).unwrap();
    ws.partition_three_way_into(&d_in, &p1, &p2, &mut a, &mut b, &mut c, &mut counts).unwrap();
    let got = stream.clone_dtoh(&counts).unwrap();
    assert_eq!(got, [want.0.len() as u64, want.1.len() as u64], "{what}: counts");
    for (name, buf, part) in [("first", &a, &want.0), ("second", &b, &want.1), ("rest", &c, &want.2)] {
        let all: Vec<T> = stream.clone_dtoh(buf).unwrap();
        assert!(all[part.len()..].iter().all(|x| *x == T::poison()), "{what}: {name} wrote past its part");
        assert!(all[..part.len()] == part[..], "{what}: {name} part differs");
    }
}

fn edge_cases<T: TestElement>() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    let t = lookback::__private::select_tile_items(size_of::<T>());
    for (i, n) in [0, 1, 2, 31, t - 1, t, t + 1, 2 * t + 3, 7 * t - 1, 40 * t + 9].into_iter().enumerate() {
        for k in 0..5 {
            check::<T>(&stream, &mut ws, n, k, (i * 8 + k) as u64);
        }
    }
}

macro_rules! partition3_tests {
    ($($t:ty => $edge:ident, $random:ident;)*) => {$(
        #[test]
        fn $edge() {
            edge_cases::<$t>();
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 8, failure_persistence: None, ..ProptestConfig::default() })]
            #[test]
            fn $random(l in 0.0f64..22.0, k in 0usize..5, seed in any::<u64>()) {
                let Some(stream) = gpu() else { return Ok(()) };
                let mut ws = Workspace::new(&stream);
                check::<$t>(&stream, &mut ws, 2f64.powf(l) as usize, k, seed);
            }
        }
    )*};
}

partition3_tests! {
    i8 => edge_i8, random_i8;
    i16 => edge_i16, random_i16;
    i32 => edge_i32, random_i32;
    i64 => edge_i64, random_i64;
    u8 => edge_u8, random_u8;
    u16 => edge_u16, random_u16;
    u32 => edge_u32, random_u32;
    u64 => edge_u64, random_u64;
    f32 => edge_f32, random_f32;
    f64 => edge_f64, random_f64;
    f16 => edge_f16, random_f16;
    bf16 => edge_bf16, random_bf16;
}

#[test]
fn one_shot_and_errors() {
    let Some(stream) = gpu() else { return };
    let input = stream.clone_htod(&[5i32, -2, 40, 7, -9]).unwrap();
    let parts = lookback::partition_three_way(&input, &Pred::lt(0), &Pred::lt(10)).unwrap();
    assert_eq!(parts.counts(), [2, 2, 1]);
    assert_eq!(stream.clone_dtoh(&parts.first()).unwrap(), [-2, -9]);
    assert_eq!(stream.clone_dtoh(&parts.second()).unwrap(), [5, 7]);
    assert_eq!(stream.clone_dtoh(&parts.rest()).unwrap(), [40]);
    let mut ws = Workspace::new(&stream);
    let (mut a, mut b, mut c) = (
        stream.clone_htod(&[1i32; 5]).unwrap(),
        stream.clone_htod(&[1i32; 5]).unwrap(),
        stream.clone_htod(&[1i32; 4]).unwrap(),
    );
    let mut counts = stream.clone_htod(&[9u64, 9]).unwrap();
    let err = ws.partition_three_way_into(&input, &Pred::lt(0), &Pred::lt(10), &mut a, &mut b, &mut c, &mut counts);
    assert!(matches!(err, Err(Error::OutputTooSmall { what: "out_rest", needed: 5, actual: 4 })), "{err:?}");
    let mut one = stream.clone_htod(&[9u64]).unwrap();
    let mut c = stream.clone_htod(&[1i32; 5]).unwrap();
    let err = ws.partition_three_way_into(&input, &Pred::lt(0), &Pred::lt(10), &mut a, &mut b, &mut c, &mut one);
    assert!(matches!(err, Err(Error::OutputTooSmall { what: "num_selected", .. })), "{err:?}");
    assert_eq!(stream.clone_dtoh(&a).unwrap(), [1; 5], "nothing written on error");
    assert_eq!(stream.clone_dtoh(&counts).unwrap(), [9, 9]);
}
