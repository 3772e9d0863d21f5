//! reduce_by_key and the scans by key with user operators compiled at run time
//! (`Workspace::reduce_by_key_user_into`, `inclusive_scan_by_key_user_into`,
//! `exclusive_scan_by_key_user_into`): typed errors, the host references, compiles without a GPU, and on
//! the GPU every kind of operator against the host closures (sums equal to the built-in keyed sums,
//! non-commutative operators in both tile-status layouts, transforms on load and store), with runs that
//! cross tile boundaries, keys all equal and all distinct, float keys, device-sized calls, the
//! deterministic mode, and poisoned outputs.
mod common;

use common::{GUARD, Rng, TestElement, gpu, nvrtc, same};
use lookback::cudarc::driver::{CudaStream, DeviceRepr};
use lookback::rtc::{CacheHit, DeviceType, UserScanOp};
use lookback::{Error, ScanOp, Workspace, host};
use proptest::prelude::*;
use std::io::Write;
use std::sync::Arc;

/// A 2×2 matrix of u8, multiplied mod 2^8: a 4-byte accumulator (the status entry's 54-bit layout),
/// exact, associative, not commutative.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mat8 {
    m: [u8; 4],
}
// SAFETY: #[repr(C)], no padding, every bit pattern valid; the CUDA struct has the same layout.
unsafe impl DeviceRepr for Mat8 {}
unsafe impl DeviceType for Mat8 {
    const CUDA_NAME: &'static str = "Mat8";
    const CUDA_DECL: &'static str = "struct Mat8 { uint8_t m[4]; };";
}

fn mat_mul(x: Mat8, y: Mat8) -> Mat8 {
    let [a, b, c, d] = x.m;
    let [e, f, g, h] = y.m;
    let mul = |p: u8, q: u8, r: u8, s: u8| p.wrapping_mul(q).wrapping_add(r.wrapping_mul(s));
    Mat8 { m: [mul(a, e, b, g), mul(a, f, b, h), mul(c, e, d, g), mul(c, f, d, h)] }
}

fn mat_op() -> UserScanOp<Mat8, Mat8> {
    // SAFETY: pure code over a and b.
    unsafe {
        UserScanOp::from_body(
            "Mat8 r;\n\
             r.m[0] = (uint8_t)(a.m[0] * b.m[0] + a.m[1] * b.m[2]);\n\
             r.m[1] = (uint8_t)(a.m[0] * b.m[1] + a.m[1] * b.m[3]);\n\
             r.m[2] = (uint8_t)(a.m[2] * b.m[0] + a.m[3] * b.m[2]);\n\
             r.m[3] = (uint8_t)(a.m[2] * b.m[1] + a.m[3] * b.m[3]);\n\
             return r;",
            "Mat8{{1, 0, 0, 1}}",
            mat_mul,
            Mat8 { m: [1, 0, 0, 1] },
        )
    }
    .unwrap()
}

/// The affine map h ↦ m·h + c over u32 (mod 2^32): an 8-byte accumulator (the status entry's FULL
/// layout), composed in order, not commutative.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Aff {
    m: u32,
    c: u32,
}
// SAFETY: #[repr(C)], no padding, every bit pattern valid; the CUDA struct has the same layout.
unsafe impl DeviceRepr for Aff {}
unsafe impl DeviceType for Aff {
    const CUDA_NAME: &'static str = "Aff";
    const CUDA_DECL: &'static str = "struct Aff { uint32_t m; uint32_t c; };";
}

/// `x` then `y`.
fn compose(x: Aff, y: Aff) -> Aff {
    Aff { m: x.m.wrapping_mul(y.m), c: y.m.wrapping_mul(x.c).wrapping_add(y.c) }
}

fn affine_op() -> UserScanOp<Aff, Aff> {
    // SAFETY: pure code over a and b.
    unsafe {
        UserScanOp::from_body(
            "Aff r;\nr.m = a.m * b.m;\nr.c = b.m * a.c + b.c;\nreturn r;",
            "Aff{1u, 0u}",
            compose,
            Aff { m: 1, c: 0 },
        )
    }
    .unwrap()
}

fn sum_u32() -> UserScanOp<u32, u32> {
    // SAFETY: a pure expression.
    unsafe { UserScanOp::new("a + b", "0u", |a: u32, b: u32| a.wrapping_add(b), 0) }.unwrap()
}

fn sum_i64() -> UserScanOp<i64, i64> {
    // SAFETY: a pure expression (unsigned add: wraps like the built-in sum, without signed overflow).
    unsafe { UserScanOp::new("(int64_t)((uint64_t)a + (uint64_t)b)", "0", |a: i64, b: i64| a.wrapping_add(b), 0) }
        .unwrap()
}

/// |x| of i32 values summed in u64, stored folded into u32: every role of its own type, results of the
/// values' size.
fn folded_abs_sum() -> UserScanOp<i32, u64, u32> {
    // SAFETY: pure expressions.
    unsafe {
        UserScanOp::new("a + b", "0ull", |a: u64, b: u64| a.wrapping_add(b), 0)
            .unwrap()
            .with_load("(uint64_t)(x < 0 ? -(int64_t)x : (int64_t)x)", |x: i32| u64::from(x.unsigned_abs()))
            .unwrap()
            .with_store("(uint32_t)(a ^ (a >> 32))", |a: u64| (a ^ (a >> 32)) as u32)
    }
    .unwrap()
}

fn sum_f32() -> UserScanOp<f32, f32> {
    // SAFETY: a pure expression.
    unsafe { UserScanOp::new("a + b", "-0.0f", |a: f32, b: f32| a + b, -0.0) }.unwrap()
}

// ---- Host ----

#[test]
fn the_host_references_run_the_closures_per_run() {
    let keys = [3u8, 3, 3, 1, 1, 3];
    let values = [
        Aff { m: 2, c: 1 },
        Aff { m: 3, c: 5 },
        Aff { m: 1, c: 1 },
        Aff { m: 5, c: 0 },
        Aff { m: 1, c: 2 },
        Aff { m: 9, c: 9 },
    ];
    let op = affine_op();
    let (k, v) = host::reduce_by_key_user(&keys, &values, &op).unwrap();
    assert_eq!(k, [3, 1, 3]);
    // 3·(2h + 1) + 5 = 6h + 8, then + 1: 6h + 9.
    assert_eq!(v, [Aff { m: 6, c: 9 }, Aff { m: 5, c: 2 }, Aff { m: 9, c: 9 }]);
    let inc = host::inclusive_scan_by_key_user(&keys, &values, &op).unwrap();
    assert_eq!(inc[..3], [Aff { m: 2, c: 1 }, Aff { m: 6, c: 8 }, Aff { m: 6, c: 9 }]);
    let ex = host::exclusive_scan_by_key_user(&keys, &values, Aff { m: 1, c: 0 }, &op).unwrap();
    assert_eq!(ex[3..], [Aff { m: 1, c: 0 }, Aff { m: 5, c: 0 }, Aff { m: 1, c: 0 }]);
    // Transforms on load and store; float keys: -0.0 == 0.0, each NaN a run of its own.
    let fk = [0.0f32, -0.0, f32::NAN, f32::NAN, 1.0];
    let (k, v) = host::reduce_by_key_user(&fk, &[-1, 2, -3, 4, 5], &folded_abs_sum()).unwrap();
    assert_eq!((k.len(), v), (4, vec![3, 3, 4, 5]));
    // Equal to the built-in references for a sum.
    let ks = [1u32, 1, 2, 2, 2, 1];
    let vs = [10u32, 20, 1, 2, 3, 7];
    assert_eq!(
        host::reduce_by_key_user(&ks, &vs, &sum_u32()).unwrap(),
        host::reduce_by_key(&ks, &vs, ScanOp::Sum).unwrap()
    );
    assert_eq!(
        host::exclusive_scan_by_key_user(&ks, &vs, 4, &sum_u32()).unwrap(),
        host::exclusive_scan_by_key(&ks, &vs, 4, ScanOp::Sum).unwrap()
    );
    // Lengths must agree; empty inputs give empty results.
    assert!(matches!(
        host::reduce_by_key_user(&ks, &vs[..5], &sum_u32()),
        Err(Error::LengthMismatch { what: "values", expected: 6, actual: 5 })
    ));
    assert_eq!(host::inclusive_scan_by_key_user::<u32, u32, u32, u32>(&[], &[], &sum_u32()).unwrap(), []);
}

#[test]
fn unsupported_sizes_are_typed_errors_before_any_compile() {
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Quad([u32; 4]);
    // SAFETY: no padding, every bit pattern valid (never run).
    unsafe impl DeviceRepr for Quad {}
    unsafe impl DeviceType for Quad {
        const CUDA_NAME: &'static str = "Quad";
        const CUDA_DECL: &'static str = "struct Quad { uint32_t c[4]; };";
    }
    // 16-byte values: the run agent moves values of at most 8 bytes.
    // SAFETY (all): never run.
    let quad = unsafe {
        UserScanOp::new("a + b", "0ull", |a: u64, b: u64| a + b, 0)
            .unwrap()
            .with_load("(uint64_t)x.c[0]", |x: Quad| u64::from(x.0[0]))
    }
    .unwrap();
    match quad.compile_by_key_for_arch::<u32>("sm_90") {
        Err(Error::UnsupportedSize { role: "input", bytes: 16, .. }) => {}
        other => panic!("{other:?}"),
    }
    // u8 flags into u64 offsets: results are staged over the values, so they must have their size.
    let offsets = unsafe {
        UserScanOp::new("a + b", "0ull", |a: u64, b: u64| a + b, 0)
            .unwrap()
            .with_load("(uint64_t)x", |x: u8| u64::from(x))
    }
    .unwrap();
    match offsets.compile_by_key_for_arch::<u32>("sm_90") {
        Err(e @ Error::UnsupportedSize { role: "output", bytes: 8, .. }) => {
            assert!(e.to_string().contains("input type's size"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    // The same operator scans (without keys) as before.
    assert!(!matches!(offsets.compile_for_arch("sm_90"), Err(Error::UnsupportedSize { .. })));
    // A bad architecture name.
    assert!(matches!(sum_u32().compile_by_key_for_arch::<u32>("90"), Err(Error::InvalidSource { .. })));
}

#[test]
fn the_program_names_the_family_key_size_and_types() {
    let op = folded_abs_sum();
    let p4 = lookback::__private::by_key_user_program::<u32, _, _, _>(&op);
    assert!(p4.contains("#include \"rtc/by_key.cuh\"") && p4.contains("#define LOOKBACK_RTC_KEY_BYTES 4"), "{p4}");
    assert!(
        p4.contains("using In = int32_t;")
            && p4.contains("using A = uint64_t;")
            && p4.contains("using Out = uint32_t;"),
        "{p4}"
    );
    // Another key size, and the scans of the same operator, are other programs (other cache keys).
    let p8 = lookback::__private::by_key_user_program::<f64, _, _, _>(&op);
    assert!(p8.contains("#define LOOKBACK_RTC_KEY_BYTES 8"), "{p8}");
    assert_ne!(p4, p8);
    // Keys of one size share the module: they travel as their bits (float equality comes with the launch).
    assert_eq!(p4, lookback::__private::by_key_user_program::<f32, _, _, _>(&op));
    assert_ne!(p4, op.cuda_program());
    assert!(!op.cuda_program().contains("by_key"));
}

#[test]
fn a_compile_error_names_the_users_line() {
    if !nvrtc() {
        return;
    }
    // SAFETY: never run.
    let bad =
        unsafe { UserScanOp::from_body("uint32_t s = a + b;\nreturn s + missing_thing;", "0u", |a: u32, _| a, 0) }
            .unwrap();
    match bad.compile_by_key_for_arch::<u16>("sm_90") {
        Err(Error::Compile { log, line }) => {
            assert!(log.contains("missing_thing"), "{log}");
            assert_eq!(line, Some((2, "return s + missing_thing;".to_string())), "{log}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

/// Every operator of these tests compiles into the run agent for every key size, for sm_80 and sm_90,
/// without a GPU; a second compile is a memory hit, and the scans of the same operator are not served
/// the keyed kernel.
#[test]
fn keyed_kernels_compile_without_a_gpu() {
    if !nvrtc() {
        return;
    }
    fn check<K: lookback::Element, In: DeviceType, A: DeviceType, Out: DeviceType>(
        what: &str,
        op: &UserScanOp<In, A, Out>,
    ) {
        for arch in ["sm_80", "sm_90"] {
            let r = lookback::__private::by_key_user_for_arch::<K, _, _, _>(op, arch)
                .unwrap_or_else(|e| panic!("{what} {arch}: {e}"));
            assert!(r.cubin_bytes > 1000, "{what} {arch}: {} bytes", r.cubin_bytes);
            assert_eq!(op.compile_by_key_for_arch::<K>(arch).unwrap().hit, CacheHit::Memory);
            let _ = writeln!(std::io::stderr(), "compile by key {what} {arch}: {:?} in {:.3} s", r.hit, r.seconds);
        }
    }
    check::<u32, _, _, _>("sum u32, u32 keys", &sum_u32());
    check::<u8, _, _, _>("sum i64, u8 keys", &sum_i64());
    check::<i16, _, _, _>("matrix u8, i16 keys", &mat_op());
    check::<u64, _, _, _>("affine u32, u64 keys", &affine_op());
    check::<f32, _, _, _>("|i32| -> u64 -> u32, f32 keys", &folded_abs_sum());
    check::<lookback::half::f16, _, _, _>("sum f32, f16 keys", &sum_f32());
    // An operator used nowhere else: its scans compile anew rather than hitting the keyed kernel.
    // SAFETY: a pure expression.
    let unique = unsafe { UserScanOp::new("a ^ b ^ 0x5au", "0u", |a: u32, b: u32| a ^ b ^ 0x5a, 0) }.unwrap();
    assert!(unique.compile_by_key_for_arch::<u32>("sm_90").is_ok());
    assert_ne!(unique.compile_for_arch("sm_90").unwrap().hit, CacheHit::Memory);
}

// ---- GPU ----

/// Keys of `n` items whose runs have mean length `mean` (1: all distinct, `usize::MAX`: all equal), as
/// labels that alternate between 0 and 1 at each run's start, so adjacent runs differ in every key type.
fn run_labels(n: usize, mean: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng::new(seed);
    let mut label = 0u8;
    (0..n)
        .map(|i| {
            if i > 0 && mean != usize::MAX && (mean <= 1 || r.next_u64().is_multiple_of(mean as u64)) {
                label ^= 1;
            }
            label
        })
        .collect()
}

fn keys_of<K: TestElement>(labels: &[u8]) -> Vec<K> {
    labels.iter().map(|&l| K::small(l)).collect()
}

fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    let mut r = Rng::new(seed);
    (0..n).map(|_| r.next_u64() as u32).collect()
}

/// Random matrices of determinant 1, `[[1 + xy, x], [y, 1]]`: products of ones with random entries mod 2^8
/// reach the zero matrix within a few items, after which a run's prefixes no longer show the order.
fn random_mats(n: usize, seed: u64) -> Vec<Mat8> {
    random_u32(n, seed)
        .into_iter()
        .map(|v| {
            let (x, y) = (v as u8, (v >> 8) as u8);
            Mat8 { m: [x.wrapping_mul(y).wrapping_add(1), x, y, 1] }
        })
        .collect()
}

fn random_affs(n: usize, seed: u64) -> Vec<Aff> {
    let v = random_u32(2 * n, seed);
    v.chunks(2).map(|c| Aff { m: c[0] | 1, c: c[1] }).collect()
}

/// Tile of the run agent for keys of `K` and values of `In`.
fn tile<K, In>() -> usize {
    lookback::__private::runs_tile_items(size_of::<K>().max(size_of::<In>()))
}

/// Sizes around the run agent's tiles, and across a look-back window (32 tiles).
fn boundary_sizes(t: usize) -> Vec<usize> {
    vec![1, 2, 17, t - 1, t, t + 1, 2 * t + 3, 33 * t + 5]
}

/// Run shapes: all distinct, short, about a tile, several tiles, all equal.
fn means(t: usize) -> [usize; 5] {
    [1, 4, t, 3 * t + 1, usize::MAX]
}

/// The three keyed primitives with `op` on `ws`, against the host closures, into outputs of `n` +
/// GUARD items poisoned with `poison`: reduce_by_key's keys, results and count, the inclusive scan and the
/// exclusive scan from `init`; nothing past the results is written.
#[allow(clippy::too_many_arguments)]
fn check_keyed<K, In, A, Out>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    what: &str,
    keys: &[K],
    values: &[In],
    init: A,
    op: &UserScanOp<In, A, Out>,
    poison: Out,
) where
    K: TestElement,
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType + PartialEq + std::fmt::Debug,
{
    let n = keys.len();
    let (dk, dv) = (stream.clone_htod(keys).unwrap(), stream.clone_htod(values).unwrap());
    let (want_keys, want_values) = host::reduce_by_key_user(keys, values, op).unwrap();
    let mut ko = stream.clone_htod(&vec![K::poison(); n + GUARD]).unwrap();
    let mut vo = stream.clone_htod(&vec![poison; n + GUARD]).unwrap();
    let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
    ws.reduce_by_key_user_into(&dk, &dv, &mut ko, &mut vo, &mut count, op).unwrap();
    let runs = stream.clone_dtoh(&count).unwrap()[0] as usize;
    assert_eq!(runs, want_keys.len(), "{what} n={n}: runs");
    let (got_keys, got_values) = (stream.clone_dtoh(&ko).unwrap(), stream.clone_dtoh(&vo).unwrap());
    same(&got_keys[..runs], &want_keys, &format!("{what} n={n}: reduce_by_key keys"));
    assert!(got_keys[runs..].iter().all(|k| k.to_bits() == K::poison().to_bits()), "{what} n={n}: keys past the runs");
    if let Some(i) = got_values[..runs].iter().zip(&want_values).position(|(g, w)| g != w) {
        panic!("{what} n={n}: reduce_by_key run {i}: got {:?}, want {:?}", got_values[i], want_values[i]);
    }
    assert!(got_values[runs..].iter().all(|v| *v == poison), "{what} n={n}: values past the runs");
    for exclusive in [false, true] {
        let want = if exclusive {
            host::exclusive_scan_by_key_user(keys, values, init, op).unwrap()
        } else {
            host::inclusive_scan_by_key_user(keys, values, op).unwrap()
        };
        let mut out = stream.clone_htod(&vec![poison; n + GUARD]).unwrap();
        if exclusive {
            ws.exclusive_scan_by_key_user_into(&dk, &dv, &mut out, init, op).unwrap();
        } else {
            ws.inclusive_scan_by_key_user_into(&dk, &dv, &mut out, op).unwrap();
        }
        let got = stream.clone_dtoh(&out).unwrap();
        if let Some(i) = got[..n].iter().zip(&want).position(|(g, w)| g != w) {
            panic!("{what} n={n} exclusive={exclusive}: item {i}: got {:?}, want {:?}", got[i], want[i]);
        }
        assert!(got[n..].iter().all(|v| *v == poison), "{what} n={n} exclusive={exclusive}: wrote past the output");
    }
}

#[test]
fn a_user_sum_equals_the_built_in_keyed_sum() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let mut ws = Workspace::new(&stream);
    let op = sum_u32();
    let t = tile::<u32, u32>();
    for n in boundary_sizes(t) {
        for mean in means(t) {
            let keys: Vec<u32> = keys_of(&run_labels(n, mean, n as u64));
            let values = random_u32(n, 7 + n as u64);
            let (dk, dv) = (stream.clone_htod(&keys).unwrap(), stream.clone_htod(&values).unwrap());
            let builtin = lookback::reduce_by_key(&dk, &dv, ScanOp::Sum).unwrap().to_vecs().unwrap();
            let user = lookback::reduce_by_key_user(&dk, &dv, &op).unwrap().to_vecs().unwrap();
            assert_eq!(user, builtin, "reduce n={n} mean={mean}");
            let builtin = stream.clone_dtoh(&lookback::inclusive_scan_by_key(&dk, &dv, ScanOp::Sum).unwrap()).unwrap();
            let user = stream.clone_dtoh(&lookback::inclusive_scan_by_key_user(&dk, &dv, &op).unwrap()).unwrap();
            assert_eq!(user, builtin, "inclusive n={n} mean={mean}");
            let builtin =
                stream.clone_dtoh(&lookback::exclusive_scan_by_key(&dk, &dv, 9, ScanOp::Sum).unwrap()).unwrap();
            let user = stream.clone_dtoh(&lookback::exclusive_scan_by_key_user(&dk, &dv, 9, &op).unwrap()).unwrap();
            assert_eq!(user, builtin, "exclusive n={n} mean={mean}");
        }
    }
    // 8-byte accumulators (the FULL status layout), 1-byte keys.
    let op = sum_i64();
    let t = tile::<u8, i64>();
    for n in boundary_sizes(t) {
        let keys: Vec<u8> = keys_of(&run_labels(n, t / 2, n as u64));
        let values: Vec<i64> =
            random_affs(n, n as u64).iter().map(|a| (u64::from(a.m) << 32 | u64::from(a.c)) as i64).collect();
        let (dk, dv) = (stream.clone_htod(&keys).unwrap(), stream.clone_htod(&values).unwrap());
        let builtin = lookback::reduce_by_key(&dk, &dv, ScanOp::Sum).unwrap().to_vecs().unwrap();
        assert_eq!(lookback::reduce_by_key_user(&dk, &dv, &op).unwrap().to_vecs().unwrap(), builtin, "i64 n={n}");
        let builtin = stream.clone_dtoh(&lookback::inclusive_scan_by_key(&dk, &dv, ScanOp::Sum).unwrap()).unwrap();
        let user = stream.clone_dtoh(&lookback::inclusive_scan_by_key_user(&dk, &dv, &op).unwrap()).unwrap();
        assert_eq!(user, builtin, "i64 inclusive n={n}");
        check_keyed(&stream, &mut ws, "sum i64", &keys, &values, -5, &op, i64::MIN);
    }
}

#[test]
fn non_commutative_operators_combine_runs_in_order() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let mut ws = Workspace::new(&stream);
    let (mats, affs) = (mat_op(), affine_op());
    let t = tile::<u16, Mat8>();
    for n in boundary_sizes(t) {
        for mean in means(t) {
            let keys: Vec<u16> = keys_of(&run_labels(n, mean, 3 * n as u64 + mean as u64));
            let what = format!("matrix mean={mean}");
            check_keyed(
                &stream,
                &mut ws,
                &what,
                &keys,
                &random_mats(n, n as u64),
                Mat8 { m: [2, 1, 1, 1] },
                &mats,
                Mat8 { m: [0xAD; 4] },
            );
        }
    }
    let t = tile::<u64, Aff>();
    for n in boundary_sizes(t) {
        for mean in means(t) {
            let keys: Vec<u64> = keys_of(&run_labels(n, mean, 5 * n as u64 + mean as u64));
            let what = format!("affine mean={mean}");
            check_keyed(
                &stream,
                &mut ws,
                &what,
                &keys,
                &random_affs(n, n as u64),
                Aff { m: 3, c: 4 },
                &affs,
                Aff { m: 0xDEAD, c: 0xBEEF },
            );
        }
    }
}

#[test]
fn transforms_and_float_keys_match_the_host() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let mut ws = Workspace::new(&stream);
    // No persistent kernel is compiled for user operators: forcing that engine still runs the run agent.
    ws.set_engine(lookback::Engine::Persistent);
    let op = folded_abs_sum();
    let t = tile::<f32, i32>();
    for n in boundary_sizes(t) {
        let mut keys: Vec<f32> = keys_of(&run_labels(n, 6, n as u64));
        // NaN keys (each a run of its own) and -0.0 beside 0.0 (one run).
        for (i, k) in keys.iter_mut().enumerate() {
            if i % 97 == 5 {
                *k = f32::NAN;
            } else if i % 13 == 0 && *k == 0.0 {
                *k = -0.0;
            }
        }
        let values: Vec<i32> = random_u32(n, n as u64).into_iter().map(|v| v as i32).collect();
        check_keyed(&stream, &mut ws, "|i32| f32 keys", &keys, &values, 1 << 40, &op, 0xDEAD_BEEF);
    }
}

#[test]
fn empty_inputs_write_a_zero_count_and_nothing_else() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let mut ws = Workspace::new(&stream);
    let (keys, values) = (stream.alloc_zeros::<u32>(0).unwrap(), stream.alloc_zeros::<u32>(0).unwrap());
    let mut ko = stream.clone_htod(&[7u32; 2]).unwrap();
    let mut vo = stream.clone_htod(&[7u32; 2]).unwrap();
    let mut count = stream.clone_htod(&[99u64]).unwrap();
    ws.reduce_by_key_user_into(&keys, &values, &mut ko, &mut vo, &mut count, &sum_u32()).unwrap();
    assert_eq!(stream.clone_dtoh(&count).unwrap(), [0]);
    assert_eq!(stream.clone_dtoh(&vo).unwrap(), [7, 7]);
    ws.exclusive_scan_by_key_user_into(&keys, &values, &mut vo, 3, &sum_u32()).unwrap();
    assert_eq!(stream.clone_dtoh(&vo).unwrap(), [7, 7]);
    assert!(lookback::reduce_by_key_user(&keys, &values, &sum_u32()).unwrap().is_empty());
}

#[test]
fn bad_arguments_are_typed_errors_and_write_nothing() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let mut ws = Workspace::new(&stream);
    let keys = stream.clone_htod(&[1u32, 1, 2]).unwrap();
    let values = stream.clone_htod(&[1u32, 2, 3]).unwrap();
    let mut short = stream.clone_htod(&[9u32, 9]).unwrap();
    let r = ws.inclusive_scan_by_key_user_into(&keys, &values, &mut short, &sum_u32());
    assert!(matches!(r, Err(Error::OutputTooSmall { .. })), "{r:?}");
    assert_eq!(stream.clone_dtoh(&short).unwrap(), [9, 9]);
    let r = ws.inclusive_scan_by_key_user_into(&keys, &values.slice(..2), &mut short, &sum_u32());
    assert!(matches!(r, Err(Error::LengthMismatch { what: "values", .. })), "{r:?}");
    let mut ko = stream.alloc_zeros::<u32>(3).unwrap();
    let mut count = stream.alloc_zeros::<u64>(1).unwrap();
    let mut vo = stream.clone_htod(&[5u32; 3]).unwrap();
    let r = ws.reduce_by_key_user_into(&keys, &values, &mut ko, &mut vo, &mut count, &sum_u32());
    assert!(r.is_ok(), "{r:?}");
    // Code that does not compile: the typed error, at the call.
    // SAFETY: never run.
    let bad = unsafe { UserScanOp::new("a + * b", "0u", |a: u32, _| a, 0) }.unwrap();
    let mut out = stream.clone_htod(&[4u32; 3]).unwrap();
    let r = ws.inclusive_scan_by_key_user_into(&keys, &values, &mut out, &bad);
    assert!(matches!(r, Err(Error::Compile { .. })), "{r:?}");
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [4, 4, 4]);
}

#[test]
fn device_sized_calls_take_the_count_on_the_device() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let mut ws = Workspace::new(&stream);
    let op = mat_op();
    let t = tile::<u32, Mat8>();
    let cap = 5 * t + 11;
    let keys: Vec<u32> = keys_of(&run_labels(cap, 40, 1));
    let values = random_mats(cap, 2);
    let (dk, dv) = (stream.clone_htod(&keys).unwrap(), stream.clone_htod(&values).unwrap());
    let poison = Mat8 { m: [0xEE; 4] };
    for c in [0, 1, t - 1, t + 1, 3 * t, cap, cap + 100] {
        let used = c.min(cap);
        let count = stream.clone_htod(&[c as u64]).unwrap();
        let (want_keys, want_values) = host::reduce_by_key_user(&keys[..used], &values[..used], &op).unwrap();
        let mut ko = stream.alloc_zeros::<u32>(cap).unwrap();
        let mut vo = stream.clone_htod(&vec![poison; cap]).unwrap();
        let mut runs = stream.clone_htod(&[u64::MAX]).unwrap();
        ws.with_count(&count, |ws| ws.reduce_by_key_user_into(&dk, &dv, &mut ko, &mut vo, &mut runs, &op)).unwrap();
        let r = stream.clone_dtoh(&runs).unwrap()[0] as usize;
        assert_eq!(r, want_keys.len(), "count {c}");
        assert_eq!(stream.clone_dtoh(&ko).unwrap()[..r], want_keys[..], "count {c}");
        assert_eq!(stream.clone_dtoh(&vo).unwrap()[..r], want_values[..], "count {c}");
        let want = host::inclusive_scan_by_key_user(&keys[..used], &values[..used], &op).unwrap();
        let mut out = stream.clone_htod(&vec![poison; cap]).unwrap();
        ws.with_count(&count, |ws| ws.inclusive_scan_by_key_user_into(&dk, &dv, &mut out, &op)).unwrap();
        let got = stream.clone_dtoh(&out).unwrap();
        assert_eq!(got[..used], want[..], "count {c}");
        assert!(got[used..].iter().all(|m| *m == poison), "count {c}: wrote past the device count");
    }
}

/// `Workspace::set_deterministic` covers user operators in the run agent: the anchored look-back combines
/// in tile order (a non-commutative operator stays exact across windows of 32 tiles and 32 anchors), and
/// a float sum gives the same bits on every run.
#[test]
fn the_deterministic_mode_covers_keyed_user_operators() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let mut ws = Workspace::new(&stream);
    ws.set_deterministic(true);
    let t = tile::<u32, Aff>();
    for n in [31 * t + 1, 33 * t + 5, 1100 * t + 3] {
        let keys: Vec<u32> = keys_of(&run_labels(n, 50 * t, n as u64));
        check_keyed(
            &stream,
            &mut ws,
            "deterministic affine",
            &keys,
            &random_affs(n, n as u64),
            Aff { m: 1, c: 0 },
            &affine_op(),
            Aff { m: 7, c: 7 },
        );
    }
    let n = 1 << 22;
    let keys: Vec<u32> = keys_of(&run_labels(n, 1 << 20, 3));
    let mut r = Rng::new(4);
    let values: Vec<f32> = (0..n).map(|_| (r.unit() * 2.0 - 1.0) as f32).collect();
    let (dk, dv) = (stream.clone_htod(&keys).unwrap(), stream.clone_htod(&values).unwrap());
    let op = sum_f32();
    let mut out = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
    let mut first: Option<Vec<u32>> = None;
    for run in 0..10 {
        ws.inclusive_scan_by_key_user_into(&dk, &dv, &mut out, &op).unwrap();
        let bits: Vec<u32> = stream.clone_dtoh(&out).unwrap().into_iter().map(f32::to_bits).collect();
        match &first {
            None => first = Some(bits),
            Some(f) => assert!(bits == *f, "deterministic keyed f32 sum: run {run} differs from the first"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Random sizes, run lengths and data: the keyed primitives with a non-commutative operator and with
    /// transforms equal the host closures exactly.
    #[test]
    fn random_keyed_user_calls_match_the_host(n in 0usize..(1 << 19), mean in 1usize..5000, seed in any::<u64>()) {
        let Some(stream) = gpu() else { return Ok(()) };
        if !nvrtc() {
            return Ok(());
        }
        let mut ws = Workspace::new(&stream);
        let labels = run_labels(n, mean, seed);
        check_keyed(&stream, &mut ws, "random affine", &keys_of::<i32>(&labels), &random_affs(n, seed), Aff { m: 5, c: 1 }, &affine_op(), Aff { m: 0, c: 0 });
        let values: Vec<i32> = random_u32(n, seed ^ 1).into_iter().map(|v| v as i32).collect();
        check_keyed(&stream, &mut ws, "random |i32|", &keys_of::<u8>(&labels), &values, 3, &folded_abs_sum(), 0xFFFF_FFFF);
    }
}

/// What compute-sanitizer runs (`sanitizer_cases` filter): one call of each primitive at a few sizes,
/// in both status layouts, a device-sized call and the deterministic mode.
#[test]
fn sanitizer_cases() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let mut ws = Workspace::new(&stream);
    let t = tile::<u32, Mat8>();
    for (k, n) in [0, 1, 5, t + 3, 7 * t + 1].into_iter().enumerate() {
        let keys: Vec<u32> = keys_of(&run_labels(n, 1 + 3 * k, k as u64));
        check_keyed(
            &stream,
            &mut ws,
            "sanitize matrix",
            &keys,
            &random_mats(n, k as u64),
            Mat8 { m: [1, 2, 3, 4] },
            &mat_op(),
            Mat8 { m: [9; 4] },
        );
        check_keyed(
            &stream,
            &mut ws,
            "sanitize affine",
            &keys,
            &random_affs(n, k as u64),
            Aff { m: 1, c: 0 },
            &affine_op(),
            Aff { m: 9, c: 9 },
        );
    }
    let n = 3 * t + 7;
    let keys: Vec<u32> = keys_of(&run_labels(n, 10, 9));
    let (dk, dv) = (stream.clone_htod(&keys).unwrap(), stream.clone_htod(&random_u32(n, 9)).unwrap());
    let count = stream.clone_htod(&[(2 * t) as u64]).unwrap();
    let mut out = stream.alloc_zeros::<u32>(n).unwrap();
    ws.with_count(&count, |ws| ws.inclusive_scan_by_key_user_into(&dk, &dv, &mut out, &sum_u32())).unwrap();
    ws.set_deterministic(true);
    ws.exclusive_scan_by_key_user_into(&dk, &dv, &mut out, 1, &sum_u32()).unwrap();
    stream.synchronize().unwrap();
}
