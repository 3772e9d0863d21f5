//! User scans and reductions whose accumulator has more than 8 bytes (9 to 32): their tiles publish
//! through status entries of several 16-byte units (`MultiState` in `cuda/core/tile_state.cuh`). Exact
//! non-commutative operators of 6, 12, 16, 24 and 32 bytes against the host closures on both engines,
//! inclusive and exclusive (the seed is the whole accumulator), at sizes around tiles and windows of
//! tiles; a float one (the affine recurrence over f64) from run to run under the deterministic setting;
//! and one workspace that alternates entry formats across its status regions' switches.
mod common;

use common::{Rng, nvrtc, rtc_gpu, run_user_scan};
use lookback::cudarc::driver::{CudaStream, DeviceRepr};
use lookback::rtc::{Affine, DeviceType, UserScanOp, linear_recurrence};
use lookback::{Engine, ScanOp, Workspace, host};
use proptest::prelude::*;
use std::sync::Arc;

/// Declares a `#[repr(C)]` struct of `n` unsigned integers `v` as a DeviceType.
macro_rules! words {
    ($name:ident, $t:ty, $n:literal, $cuda:literal) => {
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        struct $name {
            v: [$t; $n],
        }
        // SAFETY: #[repr(C)], no padding, every bit pattern valid; the CUDA struct has the same layout.
        unsafe impl DeviceRepr for $name {}
        unsafe impl DeviceType for $name {
            const CUDA_NAME: &'static str = stringify!($name);
            const CUDA_DECL: &'static str = $cuda;
        }
    };
}

// Upper-triangular 2×2 matrices [[v0, v1], [0, v2]] (6, 12 and 24 bytes) and full 2×2 matrices
// [[v0, v1], [v2, v3]] (16 and 32 bytes), multiplied with wrapping arithmetic: exact, associative, not
// commutative.
words!(Tri16, u16, 3, "struct Tri16 { uint16_t v[3]; };");
words!(Tri32, u32, 3, "struct Tri32 { uint32_t v[3]; };");
words!(Mat32, u32, 4, "struct Mat32 { uint32_t v[4]; };");
words!(Tri64, u64, 3, "struct Tri64 { uint64_t v[3]; };");
words!(Mat64, u64, 4, "struct Mat64 { uint64_t v[4]; };");

/// The CUDA body of the upper-triangular product of `T` over `U` (an unsigned type).
fn tri_body(t: &str, u: &str) -> String {
    format!(
        "{t} r;\n\
         r.v[0] = ({u})(1u * a.v[0] * b.v[0]);\n\
         r.v[1] = ({u})(1u * a.v[0] * b.v[1] + 1u * a.v[1] * b.v[2]);\n\
         r.v[2] = ({u})(1u * a.v[2] * b.v[2]);\n\
         return r;"
    )
}

/// The CUDA body of the full 2×2 product of `T` over `U`.
fn mat_body(t: &str, u: &str) -> String {
    format!(
        "{t} r;\n\
         r.v[0] = ({u})(1u * a.v[0] * b.v[0] + 1u * a.v[1] * b.v[2]);\n\
         r.v[1] = ({u})(1u * a.v[0] * b.v[1] + 1u * a.v[1] * b.v[3]);\n\
         r.v[2] = ({u})(1u * a.v[2] * b.v[0] + 1u * a.v[3] * b.v[2]);\n\
         r.v[3] = ({u})(1u * a.v[2] * b.v[1] + 1u * a.v[3] * b.v[3]);\n\
         return r;"
    )
}

macro_rules! products {
    ($t:ty) => {
        impl $t {
            fn tri(a: Self, b: Self) -> Self {
                let (x, y) = (a.v, b.v);
                Self {
                    v: [
                        x[0].wrapping_mul(y[0]),
                        x[0].wrapping_mul(y[1]).wrapping_add(x[1].wrapping_mul(y[2])),
                        x[2].wrapping_mul(y[2]),
                    ],
                }
            }
        }
    };
}
products!(Tri16);
products!(Tri32);
products!(Tri64);

macro_rules! full_products {
    ($t:ty) => {
        impl $t {
            fn mat(a: Self, b: Self) -> Self {
                let ([p, q, r, s], [e, f, g, h]) = (a.v, b.v);
                let dot = |w: _, x: _, y: _, z: _| Self::mul(w, x).wrapping_add(Self::mul(y, z));
                Self { v: [dot(p, e, q, g), dot(p, f, q, h), dot(r, e, s, g), dot(r, f, s, h)] }
            }
        }
    };
}
impl Mat32 {
    fn mul(a: u32, b: u32) -> u32 {
        a.wrapping_mul(b)
    }
}
impl Mat64 {
    fn mul(a: u64, b: u64) -> u64 {
        a.wrapping_mul(b)
    }
}
full_products!(Mat32);
full_products!(Mat64);

/// 6-byte accumulator (one unit, not a power of two): u64 items loaded into Tri16, stored as u64.
fn tri16_op() -> UserScanOp<u64, Tri16, u64> {
    // SAFETY: pure code over its arguments.
    unsafe {
        UserScanOp::from_body(&tri_body("Tri16", "uint16_t"), "Tri16{{1, 0, 1}}", Tri16::tri, Tri16 { v: [1, 0, 1] })
            .unwrap()
            .with_load("Tri16{{(uint16_t)(x | 1), (uint16_t)(x >> 16), (uint16_t)((x >> 32) | 1)}}", |x: u64| Tri16 {
                v: [(x | 1) as u16, (x >> 16) as u16, ((x >> 32) | 1) as u16],
            })
            .unwrap()
            .with_store("(uint64_t)a.v[0] | (uint64_t)a.v[1] << 16 | (uint64_t)a.v[2] << 32", |a: Tri16| {
                u64::from(a.v[0]) | u64::from(a.v[1]) << 16 | u64::from(a.v[2]) << 32
            })
            .unwrap()
    }
}

/// 12-byte accumulator (two units): u64 items loaded into Tri32, stored as (v1 << 32 | v0 ^ v2).
fn tri32_op() -> UserScanOp<u64, Tri32, u64> {
    // SAFETY: pure code over its arguments.
    unsafe {
        UserScanOp::from_body(&tri_body("Tri32", "uint32_t"), "Tri32{{1u, 0u, 1u}}", Tri32::tri, Tri32 { v: [1, 0, 1] })
            .unwrap()
            .with_load("Tri32{{(uint32_t)x | 1u, (uint32_t)(x >> 32), (uint32_t)(x >> 16) | 1u}}", |x: u64| Tri32 {
                v: [x as u32 | 1, (x >> 32) as u32, (x >> 16) as u32 | 1],
            })
            .unwrap()
            .with_store("(uint64_t)a.v[1] << 32 | (uint32_t)(a.v[0] ^ a.v[2])", |a: Tri32| {
                u64::from(a.v[1]) << 32 | u64::from(a.v[0] ^ a.v[2])
            })
            .unwrap()
    }
}

/// 16-byte accumulator (two units): Mat32 items scanned as they are.
fn mat32_op() -> UserScanOp<Mat32, Mat32> {
    // SAFETY: pure code over a and b.
    unsafe {
        UserScanOp::from_body(
            &mat_body("Mat32", "uint32_t"),
            "Mat32{{1u, 0u, 0u, 1u}}",
            Mat32::mat,
            Mat32 { v: [1, 0, 0, 1] },
        )
    }
    .unwrap()
}

/// The u64 that a store of a 24- or 32-byte accumulator of `words` u64 writes: every word, rotated apart.
fn fold_cuda(words: usize) -> String {
    let rotl = |i: usize| format!("(a.v[{i}] << {} | a.v[{i}] >> {})", 13 * i, 64 - 13 * i);
    (1..words).fold("a.v[0]".to_string(), |e, i| format!("{e} ^ {}", rotl(i)))
}
fn fold(v: &[u64]) -> u64 {
    v.iter().enumerate().fold(0, |h, (i, &w)| h ^ w.rotate_left(13 * i as u32))
}

/// 24-byte accumulator (three units): u64 items loaded into Tri64, stored folded.
fn tri64_op() -> UserScanOp<u64, Tri64, u64> {
    // SAFETY: pure code over its arguments.
    unsafe {
        UserScanOp::from_body(
            &tri_body("Tri64", "uint64_t"),
            "Tri64{{1ull, 0ull, 1ull}}",
            Tri64::tri,
            Tri64 { v: [1, 0, 1] },
        )
        .unwrap()
        .with_load("Tri64{{x | 1ull, x * 0x9E3779B97F4A7C15ull, (x >> 7) | 1ull}}", |x: u64| Tri64 {
            v: [x | 1, x.wrapping_mul(0x9E37_79B9_7F4A_7C15), (x >> 7) | 1],
        })
        .unwrap()
        .with_store(&fold_cuda(3), |a: Tri64| fold(&a.v))
        .unwrap()
    }
}

/// 32-byte accumulator (four units, the most): Mat32 items widened into Mat64, stored folded.
fn mat64_op() -> UserScanOp<Mat32, Mat64, u64> {
    // SAFETY: pure code over its arguments.
    unsafe {
        UserScanOp::from_body(
            &mat_body("Mat64", "uint64_t"),
            "Mat64{{1ull, 0ull, 0ull, 1ull}}",
            Mat64::mat,
            Mat64 { v: [1, 0, 0, 1] },
        )
        .unwrap()
        .with_load("Mat64{{x.v[0] * 0x100000001ull, x.v[1], (uint64_t)x.v[2] << 17, x.v[3] | 1ull}}", |x: Mat32| {
            Mat64 {
                v: [
                    u64::from(x.v[0]).wrapping_mul(0x1_0000_0001),
                    u64::from(x.v[1]),
                    u64::from(x.v[2]) << 17,
                    u64::from(x.v[3]) | 1,
                ],
            }
        })
        .unwrap()
        .with_store(&fold_cuda(4), |a: Mat64| fold(&a.v))
        .unwrap()
    }
}

/// The crate's affine recurrence over f64 (a 16-byte accumulator), scanned into h[t] with h[-1] = 0.
fn affine64_op() -> UserScanOp<Affine<f64>, Affine<f64>, f64> {
    linear_recurrence().unwrap()
}

fn random_u64(n: usize, seed: u64) -> Vec<u64> {
    let mut r = Rng::new(seed);
    (0..n).map(|_| r.next_u64()).collect()
}

/// Random matrices of determinant 1, `[[1 + xy, x], [y, 1]]`: products of ones with random entries mod 2^32
/// reach the zero matrix within about a hundred items, after which the prefixes no longer show the order.
fn random_mat32(n: usize, seed: u64) -> Vec<Mat32> {
    let mut r = Rng::new(seed);
    (0..n)
        .map(|_| {
            let v = r.next_u64();
            let (x, y) = (v as u32, (v >> 32) as u32);
            Mat32 { v: [x.wrapping_mul(y).wrapping_add(1), x, y, 1] }
        })
        .collect()
}

// ---- no GPU ----

#[test]
fn wide_accumulators_compile_for_both_architectures() {
    if !nvrtc() {
        return;
    }
    for arch in ["sm_80", "sm_90"] {
        tri16_op().compile_for_arch(arch).unwrap();
        tri32_op().compile_for_arch(arch).unwrap();
        mat32_op().compile_for_arch(arch).unwrap();
        tri64_op().compile_for_arch(arch).unwrap();
        mat64_op().compile_for_arch(arch).unwrap();
        affine64_op().compile_for_arch(arch).unwrap();
    }
}

#[test]
fn the_host_path_takes_wide_accumulators() {
    let m = |v: [u64; 4]| Mat64 { v };
    let (x, y) = (m([1, 1, 0, 1]), m([1, 0, 1, 1]));
    assert_ne!(Mat64::mat(x, y), Mat64::mat(y, x));
    let items = random_mat32(5, 1);
    let scanned = host::inclusive_scan_user(&items, &mat64_op());
    let total = host::reduce_user(&items, &mat64_op());
    assert_eq!(scanned[4], total);
}

// ---- GPU ----

/// `op` inclusive and exclusive (from `init`) on both engines equals the closures, item for item.
fn check_exact<In, A, Out>(
    stream: &Arc<CudaStream>,
    what: &str,
    input: &[In],
    init: A,
    op: &UserScanOp<In, A, Out>,
    poison: Out,
) where
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType + PartialEq + std::fmt::Debug,
{
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = Workspace::new(stream);
        ws.set_engine(engine);
        for seed in [None, Some(init)] {
            let want = match seed {
                None => host::inclusive_scan_user(input, op),
                Some(i) => host::exclusive_scan_user(input, i, op),
            };
            let got = run_user_scan(&mut ws, stream, input, seed, op, poison);
            if let Some(i) = got.iter().zip(&want).position(|(g, w)| g != w) {
                panic!(
                    "{what} {engine:?} {} n={}: item {i}: got {:?}, want {:?}",
                    if seed.is_some() { "exclusive" } else { "inclusive" },
                    input.len(),
                    got[i],
                    want[i]
                );
            }
        }
    }
}

/// Sizes around the classic tile of `input` → `output` bytes and the persistent tile of `input` bytes,
/// and past a window of 32 tiles and one of 32 windows.
fn sizes(input: usize, output: usize) -> Vec<usize> {
    let c = lookback::__private::user_scan_tile_items(input, output);
    let p = lookback::__private::pipe_scan_tile_items(input);
    let mut v = vec![1, 2, 17, c - 1, c, c + 1, 33 * c + 5, p - 1, p + 1, 40 * p + 3, 1100 * c + 7];
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn wide_non_commutative_operators_are_exact() {
    let Some(stream) = rtc_gpu() else { return };
    for n in sizes(8, 8) {
        let items = random_u64(n, n as u64);
        check_exact(&stream, "6-byte", &items, Tri16 { v: [3, 5, 7] }, &tri16_op(), u64::MAX);
        check_exact(&stream, "12-byte", &items, Tri32 { v: [3, 0x8000_0001, 7] }, &tri32_op(), u64::MAX);
        check_exact(&stream, "24-byte", &items, Tri64 { v: [3, u64::MAX - 2, 7] }, &tri64_op(), u64::MAX);
    }
    for n in sizes(16, 16) {
        let items = random_mat32(n, 7 + n as u64);
        let poison = Mat32 { v: [0xdead_beef; 4] };
        check_exact(&stream, "16-byte", &items, Mat32 { v: [2, 1, 1, 1] }, &mat32_op(), poison);
    }
    for n in sizes(16, 8) {
        let items = random_mat32(n, 9 + n as u64);
        check_exact(&stream, "32-byte", &items, Mat64 { v: [2, 1, u64::MAX, 1] }, &mat64_op(), u64::MAX);
    }
}

/// The user reduction of a 32-byte accumulator on both engines, and an empty input's identity.
#[test]
fn wide_reductions_match_the_closures() {
    let Some(stream) = rtc_gpu() else { return };
    let op = mat64_op();
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = Workspace::new(&stream);
        ws.set_engine(engine);
        for n in [0, 1, 5000, 1 << 20, (1 << 22) + 3] {
            let items = random_mat32(n, 11 + n as u64);
            let d = stream.clone_htod(&items).unwrap();
            let mut out = stream.clone_htod(&[u64::MAX; 2]).unwrap();
            ws.reduce_user_into(&d, &mut out, &op).unwrap();
            let got = stream.clone_dtoh(&out).unwrap();
            assert_eq!(got, [host::reduce_user(&items, &op), u64::MAX], "{engine:?} n={n}");
        }
    }
}

/// The f64 affine recurrence: within rounding of the sequential loop, and the same bits on every run
/// under the deterministic setting, on both engines (the anchors' entries are two units wide too).
#[test]
fn the_f64_affine_recurrence_is_deterministic_when_asked() {
    let Some(stream) = rtc_gpu() else { return };
    let op = affine64_op();
    let n = (1 << 22) + 9;
    let mut r = Rng::new(5);
    let steps: Vec<Affine<f64>> = (0..n).map(|_| Affine { a: 0.5 + 0.49 * r.unit(), b: r.unit() - 0.5 }).collect();
    let mut h = 0.0f64;
    let want: Vec<f64> = steps
        .iter()
        .map(|s| {
            h = s.a * h + s.b;
            h
        })
        .collect();
    let d_in = stream.clone_htod(&steps).unwrap();
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = Workspace::new(&stream);
        ws.set_engine(engine);
        ws.set_deterministic(true);
        let mut out = stream.clone_htod(&vec![f64::NAN; n]).unwrap();
        let mut first: Option<Vec<u64>> = None;
        for run in 0..10 {
            ws.inclusive_scan_user_into(&d_in, &mut out, &op).unwrap();
            let got = stream.clone_dtoh(&out).unwrap();
            if run == 0 {
                // Contractions of |a| < 1 forget old errors: each item is within a few ulps of |h| + 1.
                let bad = got.iter().zip(&want).position(|(g, w)| (g - w).abs() > 1e-12 * (1.0 + w.abs()));
                assert!(bad.is_none(), "{engine:?}: item {bad:?}");
            }
            let bits: Vec<u64> = got.into_iter().map(f64::to_bits).collect();
            match &first {
                None => first = Some(bits),
                Some(f) => assert!(bits == *f, "{engine:?}: run {run} differs from the first"),
            }
        }
    }
}

/// Launches with entries of one, two and four units share one workspace: its two status regions must
/// stay where every format expects them, across the switches every 255 launches (each launch's first
/// region launch clears the other one, by the same geometry).
#[test]
fn one_workspace_alternates_entry_formats_across_region_switches() {
    let Some(stream) = rtc_gpu() else { return };
    let (tri, mat) = (tri32_op(), mat64_op());
    let n = 5 * lookback::__private::user_scan_tile_items(16, 8) + 3;
    let ints: Vec<i32> = random_u64(n, 1).into_iter().map(|x| x as i32 >> 8).collect();
    let words = random_u64(n, 2);
    let mats = random_mat32(n, 3);
    let (want_sum, want_tri, want_mat) = (
        host::inclusive_scan(&ints, ScanOp::Sum).unwrap(),
        host::inclusive_scan_user(&words, &tri),
        host::inclusive_scan_user(&mats, &mat),
    );
    let (d_ints, d_words, d_mats) =
        (stream.clone_htod(&ints).unwrap(), stream.clone_htod(&words).unwrap(), stream.clone_htod(&mats).unwrap());
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = Workspace::new(&stream);
        ws.set_engine(engine);
        let mut sums = stream.alloc_zeros::<i32>(n).unwrap();
        let mut out = stream.alloc_zeros::<u64>(n).unwrap();
        for call in 0..600 {
            match call % 3 {
                0 => {
                    ws.inclusive_scan_into(&d_ints, &mut sums, ScanOp::Sum).unwrap();
                    assert_eq!(stream.clone_dtoh(&sums).unwrap(), want_sum, "{engine:?} call {call}: i32 sum");
                }
                1 => {
                    ws.inclusive_scan_user_into(&d_words, &mut out, &tri).unwrap();
                    assert_eq!(stream.clone_dtoh(&out).unwrap(), want_tri, "{engine:?} call {call}: 12-byte");
                }
                _ => {
                    ws.inclusive_scan_user_into(&d_mats, &mut out, &mat).unwrap();
                    assert_eq!(stream.clone_dtoh(&out).unwrap(), want_mat, "{engine:?} call {call}: 32-byte");
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Random sizes and data: the 12- and 32-byte products equal the closures on both engines.
    #[test]
    fn random_wide_scans_match_the_host(n in 0usize..(1 << 20), seed in any::<u64>()) {
        let Some(stream) = rtc_gpu() else { return Ok(()) };
        check_exact(&stream, "12-byte", &random_u64(n, seed), Tri32 { v: [1, 2, 3] }, &tri32_op(), u64::MAX);
        check_exact(&stream, "32-byte", &random_mat32(n, seed), Mat64 { v: [1, 2, 3, 4] }, &mat64_op(), 7);
    }
}

/// Compute-sanitizer cases (`run.sh sanitize BIN sanitizer_cases`): 12- and 32-byte scans and a
/// reduction on both engines, deterministic or not, partial and many tiles.
#[test]
fn sanitizer_cases() {
    let Some(stream) = rtc_gpu() else { return };
    let (tri, mat) = (tri32_op(), mat64_op());
    for engine in [Engine::Classic, Engine::Persistent] {
        for deterministic in [false, true] {
            let mut ws = Workspace::new(&stream);
            ws.set_engine(engine);
            ws.set_deterministic(deterministic);
            for n in [1, 1000, 70_000, 300_001] {
                let words = random_u64(n, n as u64);
                assert_eq!(
                    run_user_scan(&mut ws, &stream, &words, None, &tri, 0),
                    host::inclusive_scan_user(&words, &tri)
                );
                let mats = random_mat32(n, n as u64);
                let init = Mat64 { v: [3, 1, 4, 1] };
                let got = run_user_scan(&mut ws, &stream, &mats, Some(init), &mat, 0);
                assert_eq!(got, host::exclusive_scan_user(&mats, init, &mat), "{engine:?} {deterministic} {n}");
                let d = stream.clone_htod(&mats).unwrap();
                let mut total = stream.clone_htod(&[0u64]).unwrap();
                ws.reduce_user_into(&d, &mut total, &mat).unwrap();
                assert_eq!(stream.clone_dtoh(&total).unwrap()[0], host::reduce_user(&mats, &mat));
            }
        }
    }
}
