//! More than 2^32 items (invariant 5): counts, offsets and run lengths are 64-bit end to end.
mod common;

use common::gpu;
use lookback::{Pred, host};

const N: usize = (1 << 32) + 17;

fn value(i: usize) -> u8 {
    let h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 56) as u8
}

#[test]
fn select_if_beyond_four_billion_items() {
    let Some(stream) = gpu() else { return };
    let input: Vec<u8> = (0..N).map(value).collect();
    let pred = Pred::lt(100u8) | Pred::eq(255);
    let want = host::select_if(&input, &pred);
    assert!(want.len() > u32::MAX as usize / 4, "the test should select a lot");
    let d_in = stream.clone_htod(&input).unwrap();

    let selected = lookback::select_if(&d_in, &pred).unwrap();
    assert_eq!(selected.len(), want.len(), "select_if count");
    assert!(selected.to_vec().unwrap() == want, "select_if items");
    drop(selected);

    let mut buf = d_in;
    let kept = lookback::select_if_in_place(&mut buf, &pred).unwrap();
    assert_eq!(kept, want.len(), "select_if_in_place count");
    assert!(stream.clone_dtoh(&buf.slice(..kept)).unwrap() == want, "select_if_in_place items");

    // The last items of a scan over all of them (wrapping u8 sum) match too.
    let sums = lookback::inclusive_scan(&stream.clone_htod(&input).unwrap(), lookback::ScanOp::Sum).unwrap();
    let total = input.iter().fold(0u8, |a, &b| a.wrapping_add(b));
    assert_eq!(stream.clone_dtoh(&sums.slice(N - 1..)).unwrap(), [total]);
}

#[test]
fn run_length_encode_beyond_four_billion_items() {
    let Some(stream) = gpu() else { return };
    // A few short runs at both ends around one run of 2^32 + 1 zeros, whose length needs a u64.
    let mut input = vec![0u8; N];
    input[..8].copy_from_slice(&[1, 1, 2, 3, 3, 3, 1, 2]);
    input[N - 8..].copy_from_slice(&[5, 5, 6, 7, 7, 7, 7, 5]);
    let want = host::run_length_encode(&input);
    assert!(want.1.iter().any(|&len| len > u32::MAX as u64), "a run must need a u64 length");
    let d_in = stream.clone_htod(&input).unwrap();
    let too_narrow = lookback::run_length_encode::<u8, u32, _>(&d_in);
    assert!(matches!(too_narrow, Err(lookback::Error::Unsupported { .. })), "{too_narrow:?}");
    let runs = lookback::run_length_encode::<u8, u64, _>(&d_in).unwrap();
    assert_eq!(runs.len(), want.0.len(), "run count");
    assert!(runs.to_vecs().unwrap() == want, "values and lengths");
}
