//! Scans with user operators compiled at run time (`lookback::rtc::UserScanOp`): typed errors, the host
//! path, compiles without a GPU, and on the GPU every kind of operator against the host closures (sums
//! equal to the built-in ones bit for bit, non-commutative operators, struct types, transforms on load),
//! on both engines, at sizes around tile boundaries and at random sizes, with poisoned outputs.
mod common;

use common::{Rng, gpu, nvrtc, rtc_gpu, run_user_scan};
use lookback::cudarc::driver::{CudaStream, DeviceRepr};
use lookback::rtc::{Affine, CacheHit, DeviceType, UserScanOp, linear_recurrence};
use lookback::{Engine, Error, ScanOp, Workspace, host};
use proptest::prelude::*;
use std::io::Write;
use std::sync::Arc;

/// A 2×2 matrix of u16, multiplied mod 2^16: exact, associative, not commutative.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mat {
    m: [u16; 4],
}
// SAFETY: #[repr(C)], no padding, every bit pattern valid; the CUDA struct has the same layout.
unsafe impl DeviceRepr for Mat {}
unsafe impl DeviceType for Mat {
    const CUDA_NAME: &'static str = "Mat";
    const CUDA_DECL: &'static str = "struct Mat { uint16_t m[4]; };";
}

fn mat_mul(x: Mat, y: Mat) -> Mat {
    let [a, b, c, d] = x.m;
    let [e, f, g, h] = y.m;
    let mul = |p: u16, q: u16, r: u16, s: u16| p.wrapping_mul(q).wrapping_add(r.wrapping_mul(s));
    Mat { m: [mul(a, e, b, g), mul(a, f, b, h), mul(c, e, d, g), mul(c, f, d, h)] }
}

fn mat_op() -> UserScanOp<Mat, Mat> {
    // SAFETY: pure code over a and b.
    unsafe {
        UserScanOp::from_body(&mat_body("Mat", "uint16_t"), "Mat{{1, 0, 0, 1}}", mat_mul, Mat { m: [1, 0, 0, 1] })
    }
    .unwrap()
}

/// The CUDA body of a 2×2 matrix product `a · b` of struct `name` (field `m[4]`, row-major) whose entries
/// are `elem`, wrapping.
fn mat_body(name: &str, elem: &str) -> String {
    let entry = |r: usize| {
        let (i, j) = (r / 2 * 2, r % 2);
        format!("r.m[{r}] = ({elem})(a.m[{i}] * b.m[{j}] + a.m[{}] * b.m[{}]);\n", i + 1, j + 2)
    };
    format!("{name} r;\n{}return r;", (0..4).map(entry).collect::<String>())
}

/// The crate's affine recurrence over f32, scanned into h[t] with h[-1] = 0.
fn affine_op() -> UserScanOp<Affine<f32>, Affine<f32>, f32> {
    linear_recurrence().unwrap()
}

/// The documented tolerance of the f32 affine scan against the sequential f64 loop, for steps with
/// |a| < 1 and |b| <= 1: |h_gpu - h| <= 1e-3 · (1 + |h|).
fn affine_close(got: f32, want: f64) -> bool {
    (f64::from(got) - want).abs() <= 1e-3 * (1.0 + want.abs())
}

fn user_sum_u32() -> UserScanOp<u32, u32> {
    // SAFETY: a pure expression.
    unsafe { UserScanOp::new("a + b", "0u", |a: u32, b: u32| a.wrapping_add(b), 0) }.unwrap()
}

fn user_sum_i64() -> UserScanOp<i64, i64> {
    // SAFETY: a pure expression (unsigned add: wraps like the built-in sum, without signed overflow).
    unsafe { UserScanOp::new("(int64_t)((uint64_t)a + (uint64_t)b)", "0", |a: i64, b: i64| a.wrapping_add(b), 0) }
        .unwrap()
}

fn flags_to_offsets() -> UserScanOp<u8, u64> {
    // SAFETY: pure expressions.
    unsafe {
        UserScanOp::new("a + b", "0ull", |a: u64, b: u64| a.wrapping_add(b), 0)
            .unwrap()
            .with_load("(uint64_t)x", |x: u8| u64::from(x))
    }
    .unwrap()
}

fn squares_f64() -> UserScanOp<f32, f64> {
    // SAFETY: pure expressions.
    unsafe {
        UserScanOp::new("a + b", "0.0", |a: f64, b: f64| a + b, 0.0)
            .unwrap()
            .with_load("(double)x * (double)x", |x: f32| f64::from(x) * f64::from(x))
    }
    .unwrap()
}

/// Four u32 counters per item (16 bytes), summed into one u64 running total.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Quad {
    c: [u32; 4],
}
// SAFETY: #[repr(C)], no padding, every bit pattern valid; the CUDA struct has the same layout.
unsafe impl DeviceRepr for Quad {}
unsafe impl DeviceType for Quad {
    const CUDA_NAME: &'static str = "Quad";
    const CUDA_DECL: &'static str = "struct Quad { uint32_t c[4]; };";
}

fn quad_total() -> UserScanOp<Quad, u64> {
    // SAFETY: pure expressions.
    unsafe {
        UserScanOp::new("a + b", "0ull", |a: u64, b: u64| a.wrapping_add(b), 0)
            .unwrap()
            .with_load("(uint64_t)x.c[0] + x.c[1] + x.c[2] + x.c[3]", |x: Quad| x.c.iter().map(|&v| u64::from(v)).sum())
    }
    .unwrap()
}

// ---- no GPU ----

#[test]
fn the_host_path_runs_the_closures() {
    assert_eq!(host::inclusive_scan_user(&[1u32, 2, 3], &user_sum_u32()), [1, 3, 6]);
    assert_eq!(host::exclusive_scan_user(&[1u8, 0, 1], 5, &flags_to_offsets()), [5, 6, 6]);
    assert_eq!(host::inclusive_scan_user(&[1.0f32, 2.0], &squares_f64()), [1.0, 5.0]);
    // Not commutative: the order of the product shows.
    let x = Mat { m: [1, 1, 0, 1] };
    let y = Mat { m: [1, 0, 1, 1] };
    assert_ne!(mat_mul(x, y), mat_mul(y, x));
    assert_eq!(host::inclusive_scan_user(&[x, y], &mat_op())[1], mat_mul(x, y));
    let h = host::inclusive_scan_user(&[Affine { a: 0.5, b: 1.0 }, Affine { a: 0.5, b: 2.0 }], &affine_op());
    assert_eq!(h, [1.0, 2.5]);
}

#[test]
fn unsupported_sizes_are_typed_errors_before_any_compile() {
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Three([u8; 3]);
    // SAFETY: no padding, every bit pattern valid (never run).
    unsafe impl DeviceRepr for Three {}
    unsafe impl DeviceType for Three {
        const CUDA_NAME: &'static str = "Three";
        const CUDA_DECL: &'static str = "struct Three { uint8_t v[3]; };";
    }
    // SAFETY (all): never run.
    let three = unsafe { UserScanOp::new("a", "Three{}", |a: Three, _| a, Three([0; 3])) }.unwrap();
    match three.compile_for_arch("sm_90") {
        Err(Error::UnsupportedSize { role: "input", bytes: 3, .. }) => {}
        other => panic!("{other:?}"),
    }
    // A 40-byte accumulator: items may have 16 bytes, accumulators at most 32.
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Five([u64; 5]);
    // SAFETY: no padding, every bit pattern valid (never run).
    unsafe impl DeviceRepr for Five {}
    unsafe impl DeviceType for Five {
        const CUDA_NAME: &'static str = "Five";
        const CUDA_DECL: &'static str = "struct Five { uint64_t v[5]; };";
    }
    let wide = unsafe {
        UserScanOp::new("a", "Five{}", |a: Five, _| a, Five([0; 5]))
            .unwrap()
            .with_load("Five{}", |_: u64| Five([0; 5]))
            .unwrap()
            .with_store("a.v[0]", |a: Five| a.0[0])
    }
    .unwrap();
    match wide.compile_for_arch("sm_90") {
        Err(e @ Error::UnsupportedSize { role: "accumulator", bytes: 40, .. }) => {
            assert!(e.to_string().contains("1 to 32 bytes"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    // u8 items into 16-byte items: more than 8 times larger.
    let spread = unsafe {
        UserScanOp::new("a", "0ull", |a: u64, _| a, 0)
            .unwrap()
            .with_load("(uint64_t)x", |x: u8| u64::from(x))
            .unwrap()
            .with_store("Quad{}", |_: u64| Quad { c: [0; 4] })
    }
    .unwrap();
    match spread.compile_for_arch("sm_90") {
        Err(Error::UnsupportedSize { role: "input", bytes: 1, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_compile_error_names_the_users_line() {
    if !nvrtc() {
        return;
    }
    // SAFETY: never run.
    let bad =
        unsafe { UserScanOp::from_body("uint32_t s = a + b;\nreturn s + nope;", "0u", |a: u32, _| a, 0) }.unwrap();
    match bad.compile_for_arch("sm_90") {
        Err(e @ Error::Compile { .. }) => {
            let Error::Compile { log, line } = &e else { unreachable!() };
            assert!(log.contains("nope"), "{log}");
            assert_eq!(line.as_ref(), Some(&(2, "return s + nope;".to_string())), "{log}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

#[test]
fn a_layout_mismatch_is_a_typed_error() {
    if !nvrtc() {
        return;
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Pair {
        a: f32,
        b: f32,
    }
    // SAFETY: never run (the declaration is wrong on purpose: three floats).
    unsafe impl DeviceRepr for Pair {}
    unsafe impl DeviceType for Pair {
        const CUDA_NAME: &'static str = "Pair";
        const CUDA_DECL: &'static str = "struct Pair { float a; float b; float c; };";
    }
    // SAFETY: never run.
    let op = unsafe { UserScanOp::new("a", "Pair{}", |a: Pair, _| a, Pair { a: 0.0, b: 0.0 }) }.unwrap();
    match op.compile_for_arch("sm_90") {
        Err(Error::LayoutMismatch {
            type_name,
            rust_size: 8,
            rust_align: 4,
            cuda_size: Some(12),
            cuda_align: None,
        }) => {
            assert_eq!(type_name, "Pair")
        }
        other => panic!("{other:?}"),
    }
}

/// Every operator of these tests compiles for sm_80 and sm_90 (no GPU), and a second compile is a
/// memory hit.
#[test]
fn user_scans_compile_without_a_gpu() {
    if !nvrtc() {
        return;
    }
    fn check<In: DeviceType, A: DeviceType, Out: DeviceType>(what: &str, op: &UserScanOp<In, A, Out>) {
        for arch in ["sm_80", "sm_90"] {
            let r = op.compile_for_arch(arch).unwrap_or_else(|e| panic!("{what} {arch}: {e}"));
            assert!(r.cubin_bytes > 1000, "{what} {arch}: {} bytes", r.cubin_bytes);
            assert_eq!(op.compile_for_arch(arch).unwrap().hit, CacheHit::Memory);
            let _ = writeln!(std::io::stderr(), "compile scan {what} {arch}: {:?} in {:.3} s", r.hit, r.seconds);
        }
    }
    check("sum u32", &user_sum_u32());
    check("sum i64", &user_sum_i64());
    check("matrix u16", &mat_op());
    check("matrix u8", &mat4_op());
    check("affine f32", &affine_op());
    check("u8 flags -> u64", &flags_to_offsets());
    check("f32 squares -> f64", &squares_f64());
    check("16-byte items -> u64", &quad_total());
}

#[test]
fn the_matrix_body_is_the_product() {
    assert_eq!(
        mat_body("Mat", "uint16_t"),
        "Mat r;\nr.m[0] = (uint16_t)(a.m[0] * b.m[0] + a.m[1] * b.m[2]);\n\
         r.m[1] = (uint16_t)(a.m[0] * b.m[1] + a.m[1] * b.m[3]);\n\
         r.m[2] = (uint16_t)(a.m[2] * b.m[0] + a.m[3] * b.m[2]);\n\
         r.m[3] = (uint16_t)(a.m[2] * b.m[1] + a.m[3] * b.m[3]);\nreturn r;"
    );
}

#[test]
fn the_program_holds_the_users_code() {
    let p = affine_op().cuda_program();
    assert!(p.contains("struct lookback_affine_f32 { float a; float b; };"), "{p}");
    assert!(p.contains("using Out = float;") && p.contains("#line 1 \"user-code\""), "{p}");
    assert!(format!("{:?}", affine_op()).contains("lookback_affine_f32"));
}

#[test]
fn the_classic_tile_fits_both_item_sizes() {
    // Equal sizes: the built-in scans' tiles.
    for b in [1, 2, 4, 8] {
        assert_eq!(lookback::__private::user_scan_tile_items(b, b), lookback::__private::scan_tile_items(b));
    }
    // u8 → u64: a thread owns one chunk of input (16 items), eight of output.
    assert_eq!(lookback::__private::user_scan_tile_items(1, 8), 256 * 16);
    // 8-byte pairs → f32: the 8-byte row's items.
    assert_eq!(lookback::__private::user_scan_tile_items(8, 4), lookback::__private::scan_tile_items(8));
    assert_eq!(lookback::__private::user_scan_tile_items(16, 8), 256 * 4);
}

// ---- GPU ----

/// `run_user_scan` on each engine with a workspace of its own: the results per engine.
fn run_both<In, A, Out>(
    stream: &Arc<CudaStream>,
    input: &[In],
    init: Option<A>,
    op: &UserScanOp<In, A, Out>,
    poison: Out,
) -> Vec<Vec<Out>>
where
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType + PartialEq + std::fmt::Debug,
{
    let mut results = Vec::new();
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = Workspace::new(stream);
        ws.set_engine(engine);
        results.push(run_user_scan(&mut ws, stream, input, init, op, poison));
    }
    results
}

/// Sizes around the tiles of both engines for items of `input` into `output` bytes.
fn boundary_sizes(input: usize, output: usize) -> Vec<usize> {
    let c = lookback::__private::user_scan_tile_items(input, output);
    let p = lookback::__private::pipe_scan_tile_items(input);
    let mut v = vec![1, 2, 15, 17, c - 1, c, c + 1, 3 * c + 7, p - 1, p, p + 1, 4 * p + 3];
    v.sort_unstable();
    v.dedup();
    v
}

fn check_exact<In, A, Out>(
    stream: &Arc<CudaStream>,
    what: &str,
    input: &[In],
    init: Option<A>,
    op: &UserScanOp<In, A, Out>,
    poison: Out,
) where
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType + PartialEq + std::fmt::Debug,
{
    let want = match init {
        None => host::inclusive_scan_user(input, op),
        Some(i) => host::exclusive_scan_user(input, i, op),
    };
    for (engine, got) in run_both(stream, input, init, op, poison).into_iter().enumerate() {
        if let Some(i) = got.iter().zip(&want).position(|(g, w)| g != w) {
            panic!("{what} n={} engine {engine}: item {i}: got {:?}, want {:?}", input.len(), got[i], want[i]);
        }
    }
}

fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    let mut r = Rng::new(seed);
    (0..n).map(|_| r.next_u64() as u32).collect()
}

#[test]
fn a_user_sum_equals_the_built_in_bit_for_bit() {
    let Some(stream) = rtc_gpu() else { return };
    let op = user_sum_u32();
    for n in boundary_sizes(4, 4) {
        let input = random_u32(n, n as u64);
        let d_in = stream.clone_htod(&input).unwrap();
        let builtin = stream.clone_dtoh(&lookback::inclusive_scan(&d_in, ScanOp::Sum).unwrap()).unwrap();
        for got in run_both(&stream, &input, None, &op, 0xDEAD_BEEF) {
            assert_eq!(got, builtin, "n={n}");
        }
        let builtin = stream.clone_dtoh(&lookback::exclusive_scan(&d_in, 7, ScanOp::Sum).unwrap()).unwrap();
        for got in run_both(&stream, &input, Some(7), &op, 0xDEAD_BEEF) {
            assert_eq!(got, builtin, "exclusive n={n}");
        }
    }
    let op = user_sum_i64();
    for n in boundary_sizes(8, 8) {
        let input: Vec<i64> =
            random_u32(2 * n, n as u64).chunks(2).map(|c| (u64::from(c[0]) << 32 | u64::from(c[1])) as i64).collect();
        let d_in = stream.clone_htod(&input).unwrap();
        let builtin = stream.clone_dtoh(&lookback::inclusive_scan(&d_in, ScanOp::Sum).unwrap()).unwrap();
        for got in run_both(&stream, &input, None, &op, i64::MIN) {
            assert_eq!(got, builtin, "i64 n={n}");
        }
    }
}

/// Random matrices of determinant 1, `[[1 + xy, x], [y, 1]]`: their products never collapse. Products of
/// matrices with random entries mod 2^16 reach the zero matrix within a few dozen items, after which every
/// prefix is zero whatever order tiles were combined in, and a test of the order could not fail.
fn random_mats(n: usize, seed: u64) -> Vec<Mat> {
    let mut r = Rng::new(seed);
    (0..n)
        .map(|_| {
            let v = r.next_u64();
            let (x, y) = (v as u16, (v >> 16) as u16);
            Mat { m: [x.wrapping_mul(y).wrapping_add(1), x, y, 1] }
        })
        .collect()
}

/// A 2×2 matrix of u8, multiplied mod 2^8: a non-commutative operator with a 4-byte accumulator (status
/// words that hold the value beside the tag, `PackedState` in `cuda/core/tile_state.cuh`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mat4 {
    m: [u8; 4],
}
// SAFETY: #[repr(C)], no padding, every bit pattern valid; the CUDA struct has the same layout.
unsafe impl DeviceRepr for Mat4 {}
unsafe impl DeviceType for Mat4 {
    const CUDA_NAME: &'static str = "Mat4";
    const CUDA_DECL: &'static str = "struct Mat4 { uint8_t m[4]; };";
}

fn mat4_op() -> UserScanOp<Mat4, Mat4> {
    let mul = |x: Mat4, y: Mat4| {
        let [a, b, c, d] = x.m;
        let [e, f, g, h] = y.m;
        let dot = |p: u8, q: u8, r: u8, s: u8| p.wrapping_mul(q).wrapping_add(r.wrapping_mul(s));
        Mat4 { m: [dot(a, e, b, g), dot(a, f, b, h), dot(c, e, d, g), dot(c, f, d, h)] }
    };
    // SAFETY: pure code over a and b.
    unsafe { UserScanOp::from_body(&mat_body("Mat4", "uint8_t"), "Mat4{{1, 0, 0, 1}}", mul, Mat4 { m: [1, 0, 0, 1] }) }
        .unwrap()
}

/// Random u8 matrices of determinant 1 (see `random_mats`).
fn random_mat4s(n: usize, seed: u64) -> Vec<Mat4> {
    random_mats(n, seed).into_iter().map(|m| Mat4 { m: m.m.map(|v| v as u8) }).collect()
}

#[test]
fn a_non_commutative_integer_operator_is_exact() {
    let Some(stream) = rtc_gpu() else { return };
    let op = mat_op();
    let poison = Mat { m: [0xDEAD; 4] };
    for n in boundary_sizes(8, 8) {
        let input = random_mats(n, 3 + n as u64);
        check_exact(&stream, "matrix inclusive", &input, None, &op, poison);
        check_exact(&stream, "matrix exclusive", &input, Some(Mat { m: [2, 1, 1, 1] }), &op, poison);
    }
}

/// A non-commutative operator with a 4-byte accumulator, exact: tile order in the classic look-back and in
/// the persistent look-ahead's ordered fold (for 4-byte accumulators, rows of 32 tiles each reduced by an
/// ordered tree: `AHEAD_ROWS`), at the tile boundaries and over hundreds of tiles (a look-ahead step
/// covers up to 256), from a few items to 2^23.
#[test]
fn a_non_commutative_four_byte_operator_is_exact() {
    let Some(stream) = rtc_gpu() else { return };
    let op = mat4_op();
    let poison = Mat4 { m: [0xAD; 4] };
    let p = lookback::__private::pipe_scan_tile_items(4);
    let mut sizes = boundary_sizes(4, 4);
    sizes.extend([255 * p + 1, 257 * p - 3, 700 * p + 5, 1 << 23]);
    for n in sizes {
        let input = random_mat4s(n, 11 + n as u64);
        check_exact(&stream, "u8 matrix inclusive", &input, None, &op, poison);
        check_exact(&stream, "u8 matrix exclusive", &input, Some(Mat4 { m: [2, 1, 1, 1] }), &op, poison);
    }
}

#[test]
fn transforms_on_load_match_the_host() {
    let Some(stream) = rtc_gpu() else { return };
    for n in boundary_sizes(1, 8) {
        let flags: Vec<u8> = random_u32(n, n as u64).iter().map(|v| (v & 1) as u8).collect();
        check_exact(&stream, "flags -> offsets", &flags, Some(0), &flags_to_offsets(), u64::MAX);
    }
    for n in boundary_sizes(4, 8) {
        // Small integers: every partial sum is exact in f64, whatever the grouping.
        let xs: Vec<f32> = random_u32(n, n as u64).iter().map(|v| (v % 2001) as f32 - 1000.0).collect();
        check_exact(&stream, "squares -> f64", &xs, None, &squares_f64(), -1.0);
    }
    for n in boundary_sizes(16, 8) {
        let quads: Vec<Quad> =
            random_u32(4 * n, n as u64).chunks(4).map(|c| Quad { c: [c[0], c[1], c[2], c[3]] }).collect();
        check_exact(&stream, "16-byte items -> u64", &quads, None, &quad_total(), u64::MAX);
    }
}

fn random_steps(n: usize, seed: u64) -> Vec<Affine<f32>> {
    let mut r = Rng::new(seed);
    (0..n).map(|_| Affine { a: (r.unit() * 0.99) as f32, b: (r.unit() * 2.0 - 1.0) as f32 }).collect()
}

/// The recurrence in f64, sequentially.
fn affine_reference(steps: &[Affine<f32>]) -> Vec<f64> {
    let mut h = 0.0f64;
    steps
        .iter()
        .map(|s| {
            h = f64::from(s.a) * h + f64::from(s.b);
            h
        })
        .collect()
}

#[test]
fn the_affine_recurrence_matches_the_sequential_loop() {
    let Some(stream) = rtc_gpu() else { return };
    for n in boundary_sizes(8, 4) {
        let steps = random_steps(n, 11 + n as u64);
        let want = affine_reference(&steps);
        for (engine, got) in run_both(&stream, &steps, None, &affine_op(), f32::MAX).into_iter().enumerate() {
            if let Some(i) = got.iter().zip(&want).position(|(&g, &w)| !affine_close(g, w)) {
                panic!("affine n={n} engine {engine}: item {i}: got {}, want {}", got[i], want[i]);
            }
        }
    }
}

/// An exclusive scan seeded with the constant map to h0 writes h[t-1] from h[-1] = h0: the recurrence
/// started from a state other than 0 (the crate's `linear_recurrence` docs).
#[test]
fn a_seeded_exclusive_recurrence_starts_from_its_state() {
    let h0 = 3.0f32;
    let seed = Affine::new(0.0, h0);
    let steps = [Affine::new(0.5f32, 1.0), Affine::new(2.0, -1.0), Affine::new(1.0, 0.25)];
    // h[-1] = 3, h0 = 2.5, h1 = 4, h2 = 4.25.
    assert_eq!(host::exclusive_scan_user(&steps, seed, &affine_op()), [3.0, 2.5, 4.0]);
    assert_eq!(steps.iter().fold(h0, |h, s| s.apply(h)), 4.25);
    assert_eq!(steps[0].then(steps[1]).apply(h0), steps[1].apply(steps[0].apply(h0)));
    assert_eq!(Affine::<f64>::identity().apply(7.5), 7.5);
    let Some(stream) = rtc_gpu() else { return };
    for n in boundary_sizes(8, 4) {
        let steps = random_steps(n, 29 + n as u64);
        let mut h = f64::from(h0);
        let want: Vec<f64> = steps
            .iter()
            .map(|s| {
                let before = h;
                h = f64::from(s.a) * h + f64::from(s.b);
                before
            })
            .collect();
        for (engine, got) in run_both(&stream, &steps, Some(seed), &affine_op(), f32::MAX).into_iter().enumerate() {
            if let Some(i) = got.iter().zip(&want).position(|(&g, &w)| !affine_close(g, w)) {
                panic!("seeded affine n={n} engine {engine}: item {i}: got {}, want {}", got[i], want[i]);
            }
        }
    }
}

#[test]
fn a_bad_output_leaves_the_buffer_untouched() {
    let Some(stream) = rtc_gpu() else { return };
    let input = stream.clone_htod(&[1u32, 2, 3]).unwrap();
    let mut short = stream.clone_htod(&[9u32, 9]).unwrap();
    let r = Workspace::new(&stream).inclusive_scan_user_into(&input, &mut short, &user_sum_u32());
    assert!(matches!(r, Err(Error::OutputTooSmall { .. })), "{r:?}");
    assert_eq!(stream.clone_dtoh(&short).unwrap(), [9, 9]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Random sizes and data: the non-commutative matrix scans (8- and 4-byte accumulators) and the
    /// flags-to-offsets scan equal the host closures exactly, on both engines.
    #[test]
    fn random_user_scans_match_the_host(n in 0usize..(1 << 20), seed in any::<u64>()) {
        let Some(stream) = rtc_gpu() else { return Ok(()) };
        check_exact(&stream, "matrix", &random_mats(n, seed), None, &mat_op(), Mat { m: [7; 4] });
        check_exact(&stream, "u8 matrix", &random_mat4s(n, seed), None, &mat4_op(), Mat4 { m: [7; 4] });
        let flags: Vec<u8> = random_u32(n, seed).iter().map(|v| (v % 3 == 0) as u8).collect();
        check_exact(&stream, "offsets", &flags, Some(5), &flags_to_offsets(), 0);
        let steps = random_steps(n, seed);
        let want = affine_reference(&steps);
        for got in run_both(&stream, &steps, None, &affine_op(), f32::MAX) {
            prop_assert!(got.iter().zip(&want).all(|(&g, &w)| affine_close(g, w)));
        }
    }
}

/// `Workspace::set_deterministic` covers user operators: the classic engine's anchored look-back and the
/// persistent engine's window-grouped look-ahead. An exact operator that does not commute checks that
/// they combine in order, across windows of 32 tiles and (1100 tiles) of 32 anchors; a float one that its
/// bits repeat from run to run.
#[test]
fn the_deterministic_mode_covers_user_operators() {
    let Some(stream) = rtc_gpu() else { return };
    let (mats, affine) = (mat_op(), affine_op());
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = Workspace::new(&stream);
        ws.set_engine(engine);
        ws.set_deterministic(true);
        let c = match engine {
            Engine::Persistent => lookback::__private::pipe_scan_tile_items(8),
            _ => lookback::__private::user_scan_tile_items(8, 8),
        };
        for n in [31 * c + 1, 33 * c + 5, 1100 * c + 3] {
            let input = random_mats(n, n as u64);
            let want = host::inclusive_scan_user(&input, &mats);
            let d_in = stream.clone_htod(&input).unwrap();
            let mut out = stream.clone_htod(&vec![Mat { m: [0xDEAD; 4] }; n]).unwrap();
            ws.inclusive_scan_user_into(&d_in, &mut out, &mats).unwrap();
            let got = stream.clone_dtoh(&out).unwrap();
            if let Some(i) = got.iter().zip(&want).position(|(g, w)| g != w) {
                panic!("{engine:?} deterministic matrix scan n={n}: item {i}: {:?} vs {:?}", got[i], want[i]);
            }
        }
        let n = 1 << 22;
        let steps = random_steps(n, 41);
        let d_in = stream.clone_htod(&steps).unwrap();
        let mut out = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
        let mut first: Option<Vec<u32>> = None;
        for run in 0..20 {
            ws.inclusive_scan_user_into(&d_in, &mut out, &affine).unwrap();
            let bits: Vec<u32> = stream.clone_dtoh(&out).unwrap().into_iter().map(f32::to_bits).collect();
            match &first {
                None => first = Some(bits),
                Some(f) => {
                    assert!(bits == *f, "{engine:?} deterministic affine scan: run {run} differs from the first")
                }
            }
        }
    }
}

/// A user sum declared commutative takes the built-in operators' order (a tile's items as they arrive):
/// still bit for bit the built-in integer sum, inclusive, exclusive and reduced, on both engines; the
/// declaration reaches the program and is part of what the caches key on.
#[test]
fn a_commutative_user_sum_equals_the_built_in() {
    let op = user_sum_u32().commutative();
    assert!(op.is_commutative() && !user_sum_u32().is_commutative());
    assert!(op.cuda_program().contains("COMMUTATIVE = true"));
    assert!(user_sum_u32().cuda_program().contains("COMMUTATIVE = false"));
    if !nvrtc() {
        return;
    }
    for arch in ["sm_80", "sm_90"] {
        op.compile_for_arch(arch).unwrap();
    }
    let Some(stream) = gpu() else { return };
    for n in boundary_sizes(4, 4) {
        let input = random_u32(n, 5 + n as u64);
        let d_in = stream.clone_htod(&input).unwrap();
        let builtin = stream.clone_dtoh(&lookback::inclusive_scan(&d_in, ScanOp::Sum).unwrap()).unwrap();
        for got in run_both(&stream, &input, None, &op, 0xDEAD_BEEF) {
            assert_eq!(got, builtin, "n={n}");
        }
        let builtin = stream.clone_dtoh(&lookback::exclusive_scan(&d_in, 7, ScanOp::Sum).unwrap()).unwrap();
        for got in run_both(&stream, &input, Some(7), &op, 0xDEAD_BEEF) {
            assert_eq!(got, builtin, "exclusive n={n}");
        }
        for engine in [Engine::Classic, Engine::Persistent] {
            let mut ws = Workspace::new(&stream);
            ws.set_engine(engine);
            let mut total = stream.clone_htod(&[1u32, 2]).unwrap();
            ws.reduce_user_into(&d_in, &mut total, &op).unwrap();
            let want = input.iter().fold(0u32, |a, &x| a.wrapping_add(x));
            assert_eq!(stream.clone_dtoh(&total).unwrap(), [want, 2], "{engine:?} reduce n={n}");
        }
    }
}

/// Compute-sanitizer cases (`run.sh sanitize BIN sanitizer_cases`): the 4-byte user sum and the u8 matrix
/// scan (both not declared commutative: the look-ahead's ordered fold), inclusive and
/// exclusive, on both engines, from one item to a few hundred tiles.
#[test]
fn sanitizer_cases() {
    let Some(stream) = rtc_gpu() else { return };
    let (sum, mats) = (user_sum_u32(), mat4_op());
    let p = lookback::__private::pipe_scan_tile_items(4);
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = Workspace::new(&stream);
        ws.set_engine(engine);
        for n in [1, 1000, p + 1, 300 * p + 7] {
            let words = random_u32(n, n as u64);
            let got = run_user_scan(&mut ws, &stream, &words, None, &sum, 0xDEAD_BEEF);
            assert_eq!(got, host::inclusive_scan_user(&words, &sum), "{engine:?} sum n={n}");
            let input = random_mat4s(n, n as u64);
            let init = Mat4 { m: [2, 1, 1, 1] };
            let got = run_user_scan(&mut ws, &stream, &input, Some(init), &mats, Mat4 { m: [0xAD; 4] });
            assert_eq!(got, host::exclusive_scan_user(&input, init, &mats), "{engine:?} matrix n={n}");
        }
    }
}
