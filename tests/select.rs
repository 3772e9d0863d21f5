//! Selection against the host reference: select_if (several predicate shapes), select_flagged (u8 and
//! bool flags), unique, count_if and mask_if — into buffers and in place — for every element type, every
//! selectivity pattern, at sizes around tile boundaries and at random sizes up to 2^22.
mod common;

use common::{GUARD, Pattern, TestElement, gpu, runs, same, upload_poisoned, values_for_mask};
use lookback::cudarc::driver::{CudaSlice, CudaStream};
use lookback::half::{bf16, f16};
use lookback::{Engine, Pred, Workspace, host};
use proptest::prelude::*;
use std::sync::Arc;

/// Several predicate programs that all select exactly the values below 50 of `values_for_mask`.
fn predicate<T: TestElement>(shape: usize) -> Pred<T> {
    let fifty = T::small(50);
    match shape % 4 {
        0 => Pred::lt(fifty),
        1 => Pred::ge(fifty).not(),
        2 => Pred::between(T::small(0), T::small(49)) | Pred::eq(T::small(99)) & Pred::lt(T::small(0)),
        _ => (Pred::ne(T::small(77)) | Pred::eq(T::small(77))) & Pred::le(T::small(49)) & Pred::always(),
    }
}

/// Reads the count and the first `count` items; checks the guard items past `n` are untouched.
fn read_result<T: TestElement>(
    stream: &Arc<CudaStream>,
    out: &CudaSlice<T>,
    count: &CudaSlice<u64>,
    n: usize,
) -> (Vec<T>, usize) {
    let all = stream.clone_dtoh(out).unwrap();
    let k = stream.clone_dtoh(count).unwrap()[0] as usize;
    assert!(
        all[n..].iter().all(|g| *g == T::poison()),
        "wrote past the output's {n} items (count {k}): {:?}",
        &all[n.saturating_sub(5)..]
    );
    assert!(k <= n, "count {k} > n {n}");
    (all[..k].to_vec(), k)
}

/// Runs an in-place form that leaves its count on the device (over a poisoned count) on a fresh copy of
/// `values`; returns the kept items.
fn in_place_into<T: TestElement>(
    stream: &Arc<CudaStream>,
    values: &[T],
    run: impl FnOnce(&mut CudaSlice<T>, &mut CudaSlice<u64>),
) -> Vec<T> {
    let mut buf = stream.clone_htod(values).unwrap();
    let mut kept = stream.clone_htod(&[u64::MAX]).unwrap();
    run(&mut buf, &mut kept);
    let k = stream.clone_dtoh(&kept).unwrap()[0] as usize;
    assert!(k <= values.len(), "count {k} > n {}", values.len());
    stream.clone_dtoh(&buf).unwrap()[..k].to_vec()
}

/// Runs every selection function on one input and compares all of them with the host.
fn check_all<T: TestElement>(stream: &Arc<CudaStream>, ws: &mut Workspace, n: usize, pattern: Pattern, seed: u64) {
    let mask = pattern.mask(n, seed);
    let values: Vec<T> = values_for_mask(&mask, seed);
    let what = format!("{} n={n} {pattern:?} seed={seed}", T::DTYPE.name());
    let d_in = stream.clone_htod(&values).unwrap();
    let mut count = stream.clone_htod(&[u64::MAX]).unwrap();

    // select_if into a buffer, with a predicate shape chosen by the seed.
    let pred = predicate::<T>(seed as usize);
    let want = host::select_if(&values, &pred);
    assert_eq!(want.len(), mask.iter().filter(|&&m| m).count(), "test data: predicate disagrees with the mask");
    let mut out = upload_poisoned::<T>(stream, n);
    ws.select_if_into(&d_in, &pred, &mut out, &mut count).unwrap();
    let (got, _) = read_result(stream, &out, &count, n);
    same(&got, &want, &format!("select_if {what}"));

    // select_if in place.
    let mut buf = stream.clone_htod(&values).unwrap();
    let k = ws.select_if_in_place(&mut buf, &pred).unwrap();
    let got = stream.clone_dtoh(&buf).unwrap();
    same(&got[..k], &want, &format!("select_if_in_place {what}"));
    // ... and its form that leaves the count on the device.
    let got = in_place_into(stream, &values, |b, c| ws.select_if_in_place_into(b, &pred, c).unwrap());
    same(&got, &want, &format!("select_if_in_place_into {what}"));

    // select_flagged with u8 flags (nonzero values other than 1 too) and with bool flags.
    let flags_u8: Vec<u8> =
        mask.iter().enumerate().map(|(i, &m)| if m { 1 + (i % 3) as u8 * 100 } else { 0 }).collect();
    let d_flags = stream.clone_htod(&flags_u8).unwrap();
    let mut out = upload_poisoned::<T>(stream, n);
    ws.select_flagged_into(&d_in, &d_flags, &mut out, &mut count).unwrap();
    let (got, _) = read_result(stream, &out, &count, n);
    same(&got, &want, &format!("select_flagged(u8) {what}"));
    let d_bools = stream.clone_htod(&mask).unwrap();
    let mut buf = stream.clone_htod(&values).unwrap();
    let k = ws.select_flagged_in_place(&mut buf, &d_bools).unwrap();
    same(&stream.clone_dtoh(&buf).unwrap()[..k], &want, &format!("select_flagged_in_place(bool) {what}"));
    let got = in_place_into(stream, &values, |b, c| ws.select_flagged_in_place_into(b, &d_flags, c).unwrap());
    same(&got, &want, &format!("select_flagged_in_place_into(u8) {what}"));

    // The three partition layouts.
    let (stable, k) = host::partition_if(&values, &pred);
    let mut out = upload_poisoned::<T>(stream, n);
    ws.partition_if_stable_into(&d_in, &pred, &mut out, &mut count).unwrap();
    let (got, _) = read_result(stream, &out, &count, n);
    assert_eq!(got.len(), k, "partition_if_stable {what}: count");
    same(&stream.clone_dtoh(&out).unwrap()[..n], &stable, &format!("partition_if_stable {what}"));
    let (reversed, _) = host::partition_if_reversed(&values, &pred);
    let mut out = upload_poisoned::<T>(stream, n);
    ws.partition_if_reversed_into(&d_in, &pred, &mut out, &mut count).unwrap();
    read_result(stream, &out, &count, n);
    same(&stream.clone_dtoh(&out).unwrap()[..n], &reversed, &format!("partition_if_reversed {what}"));
    let mut sel = upload_poisoned::<T>(stream, n);
    let mut rej = upload_poisoned::<T>(stream, n);
    ws.partition_if_split_into(&d_in, &pred, &mut sel, &mut rej, &mut count).unwrap();
    let (got, _) = read_result(stream, &sel, &count, n);
    same(&got, &stable[..k], &format!("partition_if_split selected {what}"));
    let got_rej = stream.clone_dtoh(&rej).unwrap();
    same(&got_rej[..n - k], &stable[k..], &format!("partition_if_split rejected {what}"));
    assert!(got_rej[n - k..].iter().all(|g| *g == T::poison()), "partition_if_split wrote past the rejected items");

    // count_if and mask_if.
    assert_eq!(ws.count_if(&d_in, &pred).unwrap(), want.len(), "count_if {what}");
    let mut c = stream.clone_htod(&[u64::MAX, 5]).unwrap();
    ws.count_if_into(&d_in, &pred, &mut c).unwrap();
    assert_eq!(stream.clone_dtoh(&c).unwrap(), [want.len() as u64, 5], "count_if_into {what}");
    let mut m = stream.clone_htod(&vec![7u8; n + GUARD]).unwrap();
    ws.mask_if_into(&d_in, &pred, &mut m).unwrap();
    let got_mask = stream.clone_dtoh(&m).unwrap();
    assert_eq!(&got_mask[..n], host::mask_if(&values, &pred), "mask_if {what}");
    assert_eq!(&got_mask[n..], &[7; GUARD], "mask_if wrote past the end");
}

/// unique, into a buffer and in place, on runs of mean length `mean_run`.
fn check_unique<T: TestElement>(stream: &Arc<CudaStream>, ws: &mut Workspace, n: usize, mean_run: f64, seed: u64) {
    let mut values: Vec<T> = runs(n, mean_run, seed);
    if T::ACC_EPS > 0.0 && n > 10 {
        // NaN never equals NaN: adjacent NaNs are all kept.
        let nan = T::random(&mut common::Rng::new(1), 1.0);
        values[n / 2] = nan;
        values[n / 2 + 1] = nan;
    }
    let want = host::unique(&values);
    let what = format!("unique {} n={n} run={mean_run} seed={seed}", T::DTYPE.name());
    let d_in = stream.clone_htod(&values).unwrap();
    let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
    let mut out = upload_poisoned::<T>(stream, n);
    ws.unique_into(&d_in, &mut out, &mut count).unwrap();
    let (got, _) = read_result(stream, &out, &count, n);
    same(&got, &want, &what);
    let mut buf = stream.clone_htod(&values).unwrap();
    let k = ws.unique_in_place(&mut buf).unwrap();
    same(&stream.clone_dtoh(&buf).unwrap()[..k], &want, &format!("{what} in place"));
    let got = in_place_into(stream, &values, |b, c| ws.unique_in_place_into(b, c).unwrap());
    same(&got, &want, &format!("{what} in place into"));
}

/// Sizes around the tile boundaries of `engine` (the persistent one: 40 KB tiles, a last tile ending in
/// a part the bulk copy cannot move, and more tiles than SMs; the partitions' tiles where their row's
/// differ; select_flagged's own tiles of 4- and 8-byte items, whose flags' last < 16 bytes the bulk copy
/// cannot move either).
fn edge_sizes<T: TestElement>(engine: Engine) -> Vec<usize> {
    if engine == Engine::Persistent {
        let t = lookback::__private::pipe_select_tile_items(size_of::<T>());
        let odd = (16 / size_of::<T>()).max(2) - 1;
        let mut sizes = vec![1, 2, 33, t - 1, t, t + 1, t + odd, 2 * t + odd, 140 * t + 3];
        let p = lookback::__private::pipe_partition_tile_items(size_of::<T>());
        if p != t {
            sizes.extend([p - 1, p, p + odd, 2 * p + odd, 140 * p + 3]);
        }
        if let Some(f) = lookback::__private::pipe_flagged_tile_items(size_of::<T>()) {
            sizes.extend([f - 1, f, f + 15, 2 * f + 1, 3 * f + 17]);
        }
        return sizes;
    }
    let t = lookback::__private::select_tile_items(size_of::<T>());
    vec![0, 1, 2, 33, t - 1, t, t + 1, 2 * t + 1, 5 * t - 3, 33 * t + 7]
}

fn edge_cases<T: TestElement>() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    for engine in [Engine::Classic, Engine::Persistent] {
        ws.set_engine(engine);
        for (k, n) in edge_sizes::<T>(engine).into_iter().enumerate() {
            for (p, pattern) in Pattern::ALL.into_iter().enumerate() {
                check_all::<T>(&stream, &mut ws, n, pattern, (k * 10 + p) as u64);
            }
            for mean_run in [1.0, 2.0, 4.0, 1000.0, 1e9] {
                check_unique::<T>(&stream, &mut ws, n, mean_run, k as u64);
            }
        }
    }
}

/// Views at item offsets: the input one item in (so no 16-byte loads), the output three items in, and an
/// in-place view one item in. Compaction copies out whole 16-byte chunks aligned to the output's
/// address, so each tile's first and last chunks are partial at every offset; nothing outside a view
/// may change.
fn unaligned_views<T: TestElement>() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    let t = lookback::__private::select_tile_items(size_of::<T>());
    let n = 5 * t + 3;
    let mask = Pattern::Half.mask(n + 1, 7);
    let values: Vec<T> = values_for_mask(&mask, 7);
    let pred = predicate::<T>(0);
    let want = host::select_if(&values[1..], &pred);
    let what = format!("unaligned views {} n={n}", T::DTYPE.name());
    let d_in = stream.clone_htod(&values).unwrap();
    let mut out = upload_poisoned::<T>(&stream, n + 4);
    let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
    ws.select_if_into(&d_in.slice(1..), &pred, &mut out.slice_mut(3..3 + n), &mut count).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let k = stream.clone_dtoh(&count).unwrap()[0] as usize;
    assert_eq!(k, want.len(), "{what}: count");
    same(&got[3..3 + k], &want, &what);
    assert!(
        got[..3].iter().chain(&got[3 + k..]).all(|g| *g == T::poison()),
        "{what}: wrote outside the selected items' places"
    );
    let want_unique = host::unique(&values[1..]);
    ws.unique_into(&d_in.slice(1..), &mut out.slice_mut(3..3 + n), &mut count).unwrap();
    let k = stream.clone_dtoh(&count).unwrap()[0] as usize;
    same(&stream.clone_dtoh(&out).unwrap()[3..3 + k], &want_unique, &format!("{what} unique"));
    let mut buf = stream.clone_htod(&values).unwrap();
    let k = ws.select_if_in_place(&mut buf.slice_mut(1..1 + n), &pred).unwrap();
    let got = stream.clone_dtoh(&buf).unwrap();
    same(&got[1..1 + k], &want, &format!("{what} in place"));
    same(&got[..1], &values[..1], &format!("{what} in place: the item before the view"));
}

#[test]
fn unaligned_views_select_correctly() {
    unaligned_views::<u8>();
    unaligned_views::<f16>();
    unaligned_views::<i32>();
    unaligned_views::<i64>();
}

/// select_flagged on the persistent engine with views: an input view 16 bytes in and flags 16 bytes in
/// (still bulk-copied), or flags one byte in (not 16-byte aligned: the classic agent), into a buffer and
/// in place; nothing outside the views may change.
fn flagged_views<T: TestElement>() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    ws.set_engine(Engine::Persistent);
    let f = lookback::__private::pipe_flagged_tile_items(size_of::<T>()).unwrap_or(4096);
    let skip = 16 / size_of::<T>();
    let n = 3 * f + 7;
    let mask = Pattern::Half.mask(n + 16, 11);
    let values: Vec<T> = values_for_mask(&mask, 11);
    let flags: Vec<u8> = mask.iter().map(|&m| if m { 3 } else { 0 }).collect();
    let d_in = stream.clone_htod(&values).unwrap();
    let d_flags = stream.clone_htod(&flags).unwrap();
    let what = format!("flagged views {} n={n}", T::DTYPE.name());
    for flag_offset in [16, 1] {
        let want: Vec<T> = (0..n).filter(|&i| flags[flag_offset + i] != 0).map(|i| values[skip + i]).collect();
        let flag_view = d_flags.slice(flag_offset..flag_offset + n);
        let mut out = upload_poisoned::<T>(&stream, n + 2);
        let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
        ws.select_flagged_into(&d_in.slice(skip..skip + n), &flag_view, &mut out.slice_mut(1..1 + n), &mut count)
            .unwrap();
        let got = stream.clone_dtoh(&out).unwrap();
        let k = stream.clone_dtoh(&count).unwrap()[0] as usize;
        assert_eq!(k, want.len(), "{what} flags at {flag_offset}: count");
        same(&got[1..1 + k], &want, &format!("{what} flags at {flag_offset}"));
        assert!(
            got[..1].iter().chain(&got[1 + k..]).all(|g| *g == T::poison()),
            "{what} flags at {flag_offset}: wrote outside the selected items' places"
        );
        let mut buf = stream.clone_htod(&values).unwrap();
        let k = ws.select_flagged_in_place(&mut buf.slice_mut(skip..skip + n), &flag_view).unwrap();
        let got = stream.clone_dtoh(&buf).unwrap();
        same(&got[skip..skip + k], &want, &format!("{what} flags at {flag_offset} in place"));
        same(&got[..skip], &values[..skip], &format!("{what} in place: the items before the view"));
        same(&got[skip + n..], &values[skip + n..], &format!("{what} in place: the items after the view"));
    }
}

#[test]
fn flagged_views_select_correctly() {
    flagged_views::<i32>();
    flagged_views::<f64>();
    flagged_views::<u8>();
}

/// The persistent engine over more tiles than its rings hold (132 SMs × 5 stages on an H200), i32:
/// every block goes round its ring several times.
#[test]
fn persistent_ring_wraps() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    ws.set_engine(Engine::Persistent);
    let t = lookback::__private::pipe_select_tile_items(4);
    for (p, pattern) in Pattern::ALL.into_iter().enumerate() {
        check_all::<i32>(&stream, &mut ws, 1700 * t + 3, pattern, 500 + p as u64);
    }
    check_unique::<i32>(&stream, &mut ws, 1700 * t + 1, 4.0, 9);
}

/// A few persistent-engine selections small enough for compute-sanitizer (`run.sh sanitize BIN
/// sanitizer_cases`).
#[test]
fn sanitizer_cases() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    ws.set_engine(Engine::Persistent);
    let t = lookback::__private::pipe_select_tile_items(4);
    check_all::<i32>(&stream, &mut ws, 3 * t + 5, Pattern::Half, 1);
    check_unique::<i32>(&stream, &mut ws, 2 * t + 3, 2.0, 2);
    // select_flagged's kernel of 8-byte items (check_all's i32 call covers the 4-byte one).
    let t64 = lookback::__private::pipe_select_tile_items(8);
    check_all::<i64>(&stream, &mut ws, 2 * t64 + 3, Pattern::Half, 5);
    let t8 = lookback::__private::pipe_select_tile_items(1);
    check_all::<u8>(&stream, &mut ws, 2 * t8 + 13, Pattern::Alternating, 3);
    check_unique::<u8>(&stream, &mut ws, t8 + 15, 3.0, 4);
}

fn random_cases() -> impl Strategy<Value = (usize, usize, u64, f64)> {
    (0.0f64..22.0, 0..Pattern::ALL.len(), any::<u64>(), 0.0f64..12.0)
        .prop_map(|(l, p, seed, run)| (2f64.powf(l) as usize, p, seed, 2f64.powf(run)))
}

macro_rules! select_tests {
    ($($t:ty => $edge:ident, $random:ident;)*) => {$(
        #[test]
        fn $edge() {
            edge_cases::<$t>();
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]
            #[test]
            fn $random(case in random_cases()) {
                let Some(stream) = gpu() else { return Ok(()) };
                let (n, p, seed, run) = case;
                let mut ws = Workspace::new(&stream);
                check_all::<$t>(&stream, &mut ws, n, Pattern::ALL[p], seed);
                check_unique::<$t>(&stream, &mut ws, n, run, seed);
            }
        }
    )*};
}

select_tests! {
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
