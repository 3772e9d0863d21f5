//! User key equalities compiled at run time (`rtc::UserEq`): unique (`Workspace::unique_by_into`, in place,
//! one-shot, on both engines), the run encodings, unique_by_key, and reduce_by_key and the scans by key with
//! a user operator, by a user equality. Typed errors, the host references, compiles without a GPU (NVRTC on the host), and on the
//! GPU every primitive against the host closures with a case-insensitive u8 equality, a struct key compared
//! on one field, a non-transitive float tolerance and 8-byte keys, at sizes around each agent's tiles, with
//! poisoned outputs and counts.
mod common;

use common::{GUARD, Rng, gpu, nvrtc};
use lookback::cudarc::driver::{CudaSlice, CudaStream, DeviceRepr};
use lookback::rtc::{CacheHit, DeviceType, UserEq, UserScanOp};
use lookback::{Engine, Error, RunLength, Workspace, host};
use std::fmt::Debug;
use std::sync::Arc;

/// A `#[repr(C)]` struct with its CUDA declaration.
macro_rules! device_struct {
    ($(#[$doc:meta])* $name:ident { $($field:ident: $ty:ty),* } => $decl:literal) => {
        $(#[$doc])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        struct $name {
            $($field: $ty),*
        }
        // SAFETY: #[repr(C)], no padding, every bit pattern valid; the declaration has the same fields in
        // the same order (Liar's differs on purpose: its compile must fail, so no kernel runs with it).
        unsafe impl DeviceRepr for $name {}
        unsafe impl DeviceType for $name {
            const CUDA_NAME: &'static str = stringify!($name);
            const CUDA_DECL: &'static str = $decl;
        }
    };
}

device_struct!(
    /// A point whose runs are by `x` alone.
    Pt { x: i16, y: i16 } => "struct Pt { int16_t x; int16_t y; };"
);
device_struct!(
    /// 16 bytes: more than a key may have.
    Wide { a: u64, b: u64 } => "struct Wide { uint64_t a; uint64_t b; };"
);
device_struct!(
    /// Three bytes: not a size keys travel as.
    Rgb { c: [u8; 3] } => "struct Rgb { uint8_t c[3]; };"
);
device_struct!(
    /// Four bytes in Rust, eight in its (wrong) CUDA declaration.
    Liar { v: u32 } => "struct Liar { uint64_t v; };"
);

fn caseless() -> UserEq<u8> {
    // SAFETY: a pure expression of a and b.
    unsafe {
        UserEq::new("((a >= 'A' && a <= 'Z') ? a + 32 : a) == ((b >= 'A' && b <= 'Z') ? b + 32 : b)", |a: u8, b: u8| {
            a.eq_ignore_ascii_case(&b)
        })
    }
    .unwrap()
}

fn same_x() -> UserEq<Pt> {
    // SAFETY: a pure expression of a and b.
    unsafe { UserEq::new("a.x == b.x", |a: Pt, b: Pt| a.x == b.x) }.unwrap()
}

/// Not transitive: a slow drift stays one run.
fn near() -> UserEq<f32> {
    // SAFETY: a pure expression of a and b.
    unsafe { UserEq::new("fabsf(a - b) < 0.5f", |a: f32, b: f32| (a - b).abs() < 0.5) }.unwrap()
}

/// 8-byte keys, as a function body.
fn same_minute() -> UserEq<u64> {
    // SAFETY: pure statements over a and b.
    unsafe { UserEq::from_body("const uint64_t m = 60;\nreturn a / m == b / m;", |a: u64, b: u64| a / 60 == b / 60) }
        .unwrap()
}

fn sum_u32() -> UserScanOp<u32, u32> {
    // SAFETY: a pure expression.
    unsafe { UserScanOp::new("a + b", "0u", |a: u32, b: u32| a.wrapping_add(b), 0) }.unwrap()
}

/// The affine map h ↦ m·h + c (mod 2^32) packed in a u64 (m high), composed in order: an 8-byte
/// accumulator (the status entry's full layout), not commutative.
fn compose_u64() -> UserScanOp<u64, u64> {
    // SAFETY: pure expressions.
    unsafe {
        UserScanOp::new(
            "((uint64_t)((uint32_t)(a >> 32) * (uint32_t)(b >> 32)) << 32) | \
             (uint32_t)((uint32_t)(b >> 32) * (uint32_t)a + (uint32_t)b)",
            "1ull << 32",
            |a: u64, b: u64| {
                let (am, ac, bm, bc) = ((a >> 32) as u32, a as u32, (b >> 32) as u32, b as u32);
                (u64::from(am.wrapping_mul(bm)) << 32) | u64::from(bm.wrapping_mul(ac).wrapping_add(bc))
            },
            1 << 32,
        )
    }
    .unwrap()
}

// ---- Data ----

/// Letters of `aAbB`, so that runs by case are long and runs by value short.
fn letters(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut cur = b'a';
    (0..n)
        .map(|_| {
            if rng.unit() < 0.1 {
                cur = if cur.eq_ignore_ascii_case(&b'a') { b'b' } else { b'a' };
            }
            if rng.unit() < 0.5 { cur.to_ascii_uppercase() } else { cur }
        })
        .collect()
}

fn points(n: usize, seed: u64) -> Vec<Pt> {
    let mut rng = Rng::new(seed);
    let mut x = 0i16;
    (0..n)
        .map(|_| {
            if rng.unit() < 0.15 {
                x = (rng.next_u64() % 7) as i16 - 3;
            }
            Pt { x, y: rng.next_u64() as i16 }
        })
        .collect()
}

/// A random walk in steps of k/8, |k| ≤ 6 (exact in f32), with a NaN now and then (its own run).
fn walk(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let mut v = 0.0f32;
    (0..n)
        .map(|_| {
            if rng.unit() < 0.01 {
                return f32::NAN;
            }
            v += ((rng.next_u64() % 13) as f32 - 6.0) / 8.0;
            v
        })
        .collect()
}

fn stamps(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = Rng::new(seed);
    let mut t = 1u64 << 40;
    (0..n)
        .map(|_| {
            t += rng.next_u64() % 25;
            t
        })
        .collect()
}

fn random<T>(n: usize, seed: u64, f: impl Fn(u64) -> T) -> Vec<T> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| f(rng.next_u64())).collect()
}

// ---- Comparison ----

/// The bytes of `x` (a [`DeviceType`] has no padding): results compare bit for bit, NaN included.
fn bytes<K: DeviceType>(x: &[K]) -> &[u8] {
    // SAFETY: DeviceType promises no padding bytes, so every byte of the slice is initialized.
    unsafe { std::slice::from_raw_parts(x.as_ptr().cast::<u8>(), std::mem::size_of_val(x)) }
}

/// `got` holds `want`, then `poison` up to its end (the items past the count and the guard untouched).
fn check_col<K: DeviceType + Debug>(what: &str, got: &[K], want: &[K], poison: K) {
    assert!(got.len() >= want.len(), "{what}: {} results in a buffer of {}", want.len(), got.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(bytes(&[*g]), bytes(&[*w]), "{what}: item {i}: got {g:?}, want {w:?}");
    }
    for (i, g) in got.iter().enumerate().skip(want.len()) {
        assert_eq!(bytes(&[*g]), bytes(&[poison]), "{what}: item {i} past the results was written: {g:?}");
    }
}

fn poisoned<T: DeviceType>(stream: &Arc<CudaStream>, n: usize, poison: T) -> CudaSlice<T> {
    stream.clone_htod(&vec![poison; n + GUARD]).unwrap()
}

fn count_of(stream: &Arc<CudaStream>, count: &CudaSlice<u64>) -> usize {
    stream.clone_dtoh(count).unwrap()[0] as usize
}

/// Sizes around tiles of `t` items, and across a look-back window (32 tiles).
fn sizes(t: usize) -> Vec<usize> {
    vec![0, 1, 2, t - 1, t, t + 1, 3 * t + 7, 33 * t + 5]
}

// ---- Host ----

#[test]
fn host_references_cut_runs_by_the_closure() {
    assert_eq!(host::unique_by(b"aAbBBab", &caseless()), b"abab");
    // Not transitive: 0 → 0.375 → 0.75 → 1.125 is one run though its ends are far apart.
    assert_eq!(host::unique_by(&[0.0f32, 0.375, 0.75, 1.125, 3.0, f32::NAN, f32::NAN], &near()).len(), 4);
    let pts = [Pt { x: 1, y: 1 }, Pt { x: 1, y: 2 }, Pt { x: 2, y: 2 }, Pt { x: 1, y: 9 }];
    assert_eq!(host::unique_by(&pts, &same_x()), [pts[0], pts[2], pts[3]]);
    assert_eq!(host::run_length_encode_by(&pts, &same_x()), (vec![pts[0], pts[2], pts[3]], vec![2, 1, 1]));
    assert_eq!(host::run_end_encode_by(&pts, &same_x()), (vec![pts[0], pts[2], pts[3]], vec![2, 3, 4]));
    assert_eq!(host::non_trivial_runs_by(&pts, &same_x()), (vec![0], vec![2]));
    assert_eq!(
        host::unique_by_key_by(&pts, &[5u8, 6, 7, 8], &same_x()).unwrap(),
        (vec![pts[0], pts[2], pts[3]], vec![5, 7, 8])
    );
    let (k, v) = host::reduce_by_key_user_by(&pts, &[5u32, 6, 7, 8], &sum_u32(), &same_x()).unwrap();
    assert_eq!((k, v), (vec![pts[0], pts[2], pts[3]], vec![11, 7, 8]));
    // Empty inputs.
    assert!(host::unique_by::<u8>(&[], &caseless()).is_empty());
    assert_eq!(host::run_length_encode_by::<u8>(&[], &caseless()), (vec![], vec![]));
    // The equality is asked about (earlier, later) pairs only: an asymmetric one shows the order.
    // SAFETY: a pure expression.
    let rising = unsafe { UserEq::new("b >= a", |a: i32, b: i32| b >= a) }.unwrap();
    assert_eq!(host::run_length_encode_by(&[1, 2, 3, 1, 5, 0], &rising), (vec![1, 1, 0], vec![3, 2, 1]));
}

#[test]
fn host_references_match_the_built_in_ones_for_plain_equality() {
    // SAFETY: a pure expression.
    let eq = unsafe { UserEq::new("a == b", |a: i32, b: i32| a == b) }.unwrap();
    let input: Vec<i32> = random(3000, 5, |r| (r % 3) as i32);
    assert_eq!(host::unique_by(&input, &eq), host::unique(&input));
    assert_eq!(host::run_length_encode_by(&input, &eq), host::run_length_encode(&input));
    assert_eq!(host::run_end_encode_by(&input, &eq), host::run_end_encode(&input));
    assert_eq!(host::non_trivial_runs_by(&input, &eq), host::non_trivial_runs(&input));
    let values: Vec<u64> = random(3000, 6, |r| r);
    assert_eq!(host::unique_by_key_by(&input, &values, &eq).unwrap(), host::unique_by_key(&input, &values).unwrap());
}

#[test]
fn typed_errors_before_any_compile() {
    // SAFETY: never runs.
    let wide = unsafe { UserEq::new("a.a == b.a", |a: Wide, b: Wide| a.a == b.a) };
    assert!(matches!(wide, Err(Error::UnsupportedSize { role: "key", bytes: 16, .. })), "{wide:?}");
    // SAFETY: never runs.
    let rgb = unsafe { UserEq::from_body("return a.c[0] == b.c[0];", |a: Rgb, b: Rgb| a.c[0] == b.c[0]) };
    assert!(matches!(rgb, Err(Error::UnsupportedSize { role: "key", bytes: 3, .. })), "{rgb:?}");
    // SAFETY: never runs.
    let empty = unsafe { UserEq::new("  ", |a: u8, b: u8| a == b) };
    assert!(matches!(empty, Err(Error::InvalidSource { .. })), "{empty:?}");
    // SAFETY: never runs.
    let nul = unsafe { UserEq::new("a == b\0", |a: u8, b: u8| a == b) };
    assert!(matches!(nul, Err(Error::InvalidSource { .. })), "{nul:?}");
    assert!(matches!(host::unique_by_key_by(&[1u8, 2], &[1u8], &caseless()), Err(Error::LengthMismatch { .. })));
    assert!(matches!(
        host::reduce_by_key_user_by(&[Pt { x: 0, y: 0 }], &[1u32, 2], &sum_u32(), &same_x()),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(caseless().compile_for_arch("ampere"), Err(Error::InvalidSource { .. })));
}

#[test]
fn debug_clone_and_the_generated_function() {
    let eq = same_x();
    let copy = eq.clone();
    assert!(
        copy.same_run(Pt { x: 3, y: 0 }, Pt { x: 3, y: 1 }) && !copy.same_run(Pt { x: 3, y: 0 }, Pt { x: 4, y: 0 })
    );
    let shown = format!("{eq:?}");
    assert!(shown.contains("UserEq") && shown.contains("Pt") && shown.contains("a.x == b.x"), "{shown}");
    let f = eq.cuda_function();
    assert!(f.contains("using K = Pt;") && f.contains("#line 1 \"user-code-eq\"\na.x == b.x"), "{f}");
}

// ---- Compiles on the host (NVRTC, no GPU) ----

#[test]
fn every_family_compiles_for_sm_90() {
    if !nvrtc() {
        return;
    }
    assert_eq!(caseless().compile_for_arch("sm_90").unwrap().arch, "sm_90");
    same_x().compile_for_arch("sm_90").unwrap();
    near().compile_for_arch("sm_80").unwrap();
    same_minute().compile_for_arch("sm_90").unwrap();
    for value_bytes in [0, 1, 2, 4, 8] {
        lookback::__private::eq_runs_for_arch(&same_x(), value_bytes, "sm_90").unwrap();
    }
    lookback::__private::eq_runs_for_arch(&same_minute(), 0, "sm_90").unwrap();
    lookback::__private::eq_runs_for_arch(&near(), 4, "sm_90").unwrap();
    sum_u32().compile_by_key_by_for_arch(&same_x(), "sm_90").unwrap();
    compose_u64().compile_by_key_by_for_arch(&caseless(), "sm_90").unwrap();
    // Half keys need the CUDA headers (a typed error without them).
    // SAFETY: never runs.
    let half = unsafe {
        UserEq::new(
            "fabsf(__half2float(a) - __half2float(b)) < 1.0f",
            |a: lookback::half::f16, b: lookback::half::f16| (a.to_f32() - b.to_f32()).abs() < 1.0,
        )
    }
    .unwrap();
    match half.compile_for_arch("sm_90") {
        Ok(_) | Err(Error::CudaHeadersNotFound) => {}
        Err(e) => panic!("{e:?}"),
    }
    // A second compile of the same program is served by a cache.
    let again = same_x().compile_for_arch("sm_90").unwrap();
    assert_ne!(again.hit, CacheHit::Compiled);
}

#[test]
fn compile_errors_name_the_users_line() {
    if !nvrtc() {
        return;
    }
    // SAFETY: never runs.
    let bad = unsafe { UserEq::from_body("const int d = a.x - b.x;\nreturn d == nope;", |_: Pt, _: Pt| true) }.unwrap();
    match bad.compile_for_arch("sm_90") {
        Err(Error::Compile { line, log }) => {
            assert_eq!(line, Some((2, "return d == nope;".to_string())), "{log}");
        }
        other => panic!("{other:?}"),
    }
    match lookback::__private::eq_runs_for_arch(&bad, 0, "sm_90") {
        Err(Error::Compile { line, .. }) => assert_eq!(line, Some((2, "return d == nope;".to_string()))),
        other => panic!("{other:?}"),
    }
    // Beside an operator, the error is still the equality's own line.
    match sum_u32().compile_by_key_by_for_arch(&bad, "sm_90") {
        Err(Error::Compile { line, .. }) => assert_eq!(line, Some((2, "return d == nope;".to_string()))),
        other => panic!("{other:?}"),
    }
    // A key type whose CUDA declaration disagrees with Rust's.
    // SAFETY: never runs.
    let liar = unsafe { UserEq::new("a.v == b.v", |a: Liar, b: Liar| a.v == b.v) }.unwrap();
    match liar.compile_for_arch("sm_90") {
        Err(Error::LayoutMismatch { type_name, rust_size: 4, cuda_size: Some(8), .. }) => assert_eq!(type_name, "Liar"),
        other => panic!("{other:?}"),
    }
    match sum_u32().compile_by_key_by_for_arch(&liar, "sm_90") {
        Err(Error::LayoutMismatch { type_name, .. }) => assert_eq!(type_name, "Liar"),
        other => panic!("{other:?}"),
    }
}

// ---- GPU ----

/// unique_by_into, unique_by_in_place and the one-shot on `input`, each against the host reference, outputs
/// poisoned with `poison`.
fn check_unique<K: DeviceType + Debug>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    what: &str,
    input: &[K],
    eq: &UserEq<K>,
    poison: K,
) {
    let n = input.len();
    let want = host::unique_by(input, eq);
    let d_in = stream.clone_htod(input).unwrap();
    let mut out = poisoned(stream, n, poison);
    let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
    ws.unique_by_into(&d_in, &mut out, &mut count, eq).unwrap();
    assert_eq!(count_of(stream, &count), want.len(), "{what} n={n}: count");
    check_col(&format!("{what} n={n}"), &stream.clone_dtoh(&out).unwrap(), &want, poison);

    let mut buf = stream.clone_htod(input).unwrap();
    let kept = ws.unique_by_in_place(&mut buf, eq).unwrap();
    assert_eq!(kept, want.len(), "{what} n={n} in place: count");
    let got = stream.clone_dtoh(&buf).unwrap();
    check_col(&format!("{what} n={n} in place"), &got[..kept], &want, poison);
    assert_eq!(bytes(&got[kept..]), bytes(&input[kept..]), "{what} n={n} in place: the tail changed");

    if n <= 70_000 {
        let one = lookback::unique_by(&d_in, eq).unwrap();
        assert_eq!(one.len(), want.len(), "{what} n={n} one-shot");
        check_col(&format!("{what} n={n} one-shot"), &one.to_vec().unwrap(), &want, poison);
    }
}

fn unique_sizes(key_bytes: usize) -> Vec<usize> {
    let mut s = sizes(lookback::__private::select_tile_items(key_bytes));
    let pipe = lookback::__private::pipe_select_tile_items(key_bytes);
    s.extend([pipe - 1, pipe + 1, 5 * pipe + 3]);
    s
}

#[test]
fn unique_by_matches_the_host_on_both_engines() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    for engine in [Engine::Classic, Engine::Persistent, Engine::Auto] {
        let mut ws = Workspace::new(&stream);
        ws.set_engine(engine);
        for (i, n) in unique_sizes(1).into_iter().enumerate() {
            check_unique(&stream, &mut ws, &format!("{engine:?} caseless"), &letters(n, i as u64), &caseless(), 0xee);
        }
        for (i, n) in unique_sizes(4).into_iter().enumerate() {
            let seed = 100 + i as u64;
            check_unique(
                &stream,
                &mut ws,
                &format!("{engine:?} Pt"),
                &points(n, seed),
                &same_x(),
                Pt { x: -999, y: -999 },
            );
            check_unique(&stream, &mut ws, &format!("{engine:?} near"), &walk(n, seed), &near(), -12345.5);
        }
        for (i, n) in unique_sizes(8).into_iter().enumerate() {
            check_unique(
                &stream,
                &mut ws,
                &format!("{engine:?} minute"),
                &stamps(n, 200 + i as u64),
                &same_minute(),
                u64::MAX,
            );
        }
    }
}

/// The three encodings by `eq` with lengths of type `L`, against the host.
fn check_encodings<K: DeviceType + Debug, L: RunLength + DeviceType + Debug>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    what: &str,
    input: &[K],
    eq: &UserEq<K>,
    poison: K,
    length_poison: L,
) {
    let n = input.len();
    let d_in = stream.clone_htod(input).unwrap();
    let lengths_of = |got: &[L]| -> Vec<u64> { got.iter().map(|&l| l.into()).collect() };
    let (want_values, want_lengths) = host::run_length_encode_by(input, eq);
    let (_, want_ends) = host::run_end_encode_by(input, eq);
    let (want_offsets, want_nt_lengths) = host::non_trivial_runs_by(input, eq);
    let runs = want_values.len();
    for mode in ["rle", "ree", "non-trivial"] {
        let label = format!("{what} {mode} n={n}");
        let mut first = poisoned(stream, n, poison);
        let mut offsets = poisoned(stream, n, length_poison);
        let mut second = poisoned(stream, n, length_poison);
        let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
        match mode {
            "rle" => ws.run_length_encode_by_into(&d_in, &mut first, &mut second, &mut count, eq).unwrap(),
            "ree" => ws.run_end_encode_by_into(&d_in, &mut first, &mut second, &mut count, eq).unwrap(),
            _ => ws.non_trivial_runs_by_into(&d_in, &mut offsets, &mut second, &mut count, eq).unwrap(),
        }
        let got_count = count_of(stream, &count);
        let got_second = stream.clone_dtoh(&second).unwrap();
        let (want_second, m) = match mode {
            "rle" => (&want_lengths, runs),
            "ree" => (&want_ends, runs),
            _ => (&want_nt_lengths, want_offsets.len()),
        };
        assert_eq!(got_count, m, "{label}: count");
        assert_eq!(lengths_of(&got_second[..m]), *want_second, "{label}: lengths or ends");
        check_col(&format!("{label} tail"), &got_second[m..], &[], length_poison);
        if mode == "non-trivial" {
            let got_offsets = stream.clone_dtoh(&offsets).unwrap();
            assert_eq!(lengths_of(&got_offsets[..m]), want_offsets, "{label}: offsets");
            check_col(&format!("{label} offsets tail"), &got_offsets[m..], &[], length_poison);
        } else {
            check_col(&format!("{label} values"), &stream.clone_dtoh(&first).unwrap(), &want_values, poison);
        }
    }
    if n <= 70_000 {
        let one = lookback::run_length_encode_by::<K, L, _>(&d_in, eq).unwrap();
        let (values, lengths) = one.to_vecs().unwrap();
        check_col(&format!("{what} one-shot rle n={n} values"), &values, &want_values, poison);
        assert_eq!(lengths_of(&lengths), want_lengths, "{what} one-shot rle n={n}");
        let (_, ends) = lookback::run_end_encode_by::<K, L, _>(&d_in, eq).unwrap().to_vecs().unwrap();
        assert_eq!(lengths_of(&ends), want_ends, "{what} one-shot ree n={n}");
        let (offsets, lengths) = lookback::non_trivial_runs_by::<K, L, _>(&d_in, eq).unwrap().to_vecs().unwrap();
        assert_eq!((lengths_of(&offsets), lengths_of(&lengths)), (want_offsets, want_nt_lengths), "{what} one-shot nt");
    }
}

#[test]
fn encodings_by_match_the_host() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let mut ws = Workspace::new(&stream);
    for (i, n) in sizes(lookback::__private::encode_tile_items(1)).into_iter().enumerate() {
        check_encodings(&stream, &mut ws, "caseless", &letters(n, i as u64), &caseless(), 0xee, u32::MAX);
    }
    for (i, n) in sizes(lookback::__private::encode_tile_items(4)).into_iter().enumerate() {
        let seed = 300 + i as u64;
        check_encodings(&stream, &mut ws, "Pt", &points(n, seed), &same_x(), Pt { x: -999, y: -999 }, u64::MAX);
        check_encodings(&stream, &mut ws, "near", &walk(n, seed), &near(), -12345.5, u32::MAX);
    }
    // The engine setting does not change the launch: the persistent engine has no such kernel.
    ws.set_engine(Engine::Persistent);
    for (i, n) in sizes(lookback::__private::encode_tile_items(8)).into_iter().enumerate() {
        check_encodings(&stream, &mut ws, "minute", &stamps(n, 400 + i as u64), &same_minute(), u64::MAX, u64::MAX);
    }
}

/// unique_by_key_by_into and the one-shot against the host.
#[allow(clippy::too_many_arguments)]
fn check_unique_by_key<K: DeviceType + Debug, V: DeviceType + Debug>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    what: &str,
    keys: &[K],
    values: &[V],
    eq: &UserEq<K>,
    key_poison: K,
    value_poison: V,
) {
    let n = keys.len();
    let (want_keys, want_values) = host::unique_by_key_by(keys, values, eq).unwrap();
    let (dk, dv) = (stream.clone_htod(keys).unwrap(), stream.clone_htod(values).unwrap());
    let mut ko = poisoned(stream, n, key_poison);
    let mut vo = poisoned(stream, n, value_poison);
    let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
    ws.unique_by_key_by_into(&dk, &dv, &mut ko, &mut vo, &mut count, eq).unwrap();
    assert_eq!(count_of(stream, &count), want_keys.len(), "{what} n={n}: count");
    check_col(&format!("{what} n={n} keys"), &stream.clone_dtoh(&ko).unwrap(), &want_keys, key_poison);
    check_col(&format!("{what} n={n} values"), &stream.clone_dtoh(&vo).unwrap(), &want_values, value_poison);
    if n <= 70_000 {
        let (k, v) = lookback::unique_by_key_by(&dk, &dv, eq).unwrap().to_vecs().unwrap();
        check_col(&format!("{what} one-shot n={n} keys"), &k, &want_keys, key_poison);
        check_col(&format!("{what} one-shot n={n} values"), &v, &want_values, value_poison);
    }
}

#[test]
fn unique_by_key_by_matches_the_host() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let mut ws = Workspace::new(&stream);
    let runs_tile = |k: usize, v: usize| lookback::__private::runs_tile_items(k.max(v));
    for (i, n) in sizes(runs_tile(1, 8)).into_iter().enumerate() {
        let values: Vec<u64> = random(n, i as u64, |r| r);
        check_unique_by_key(&stream, &mut ws, "caseless u64", &letters(n, i as u64), &values, &caseless(), 0xee, 7);
    }
    for (i, n) in sizes(runs_tile(4, 4)).into_iter().enumerate() {
        let seed = 500 + i as u64;
        let values: Vec<Pt> = points(n, seed + 1);
        let poison = Pt { x: 7, y: 7 };
        check_unique_by_key(
            &stream,
            &mut ws,
            "Pt Pt",
            &points(n, seed),
            &values,
            &same_x(),
            Pt { x: -9, y: -9 },
            poison,
        );
        let bytes_values: Vec<u8> = random(n, seed, |r| r as u8);
        check_unique_by_key(&stream, &mut ws, "near u8", &walk(n, seed), &bytes_values, &near(), -12345.5, 0xee);
    }
    for (i, n) in sizes(runs_tile(8, 2)).into_iter().enumerate() {
        let values: Vec<i16> = random(n, i as u64, |r| r as i16);
        check_unique_by_key(
            &stream,
            &mut ws,
            "minute i16",
            &stamps(n, 600 + i as u64),
            &values,
            &same_minute(),
            u64::MAX,
            -7,
        );
    }
}

/// reduce_by_key_user_by_into and the one-shot against the host.
#[allow(clippy::too_many_arguments)]
fn check_reduce<K: DeviceType + Debug, V: DeviceType + Debug>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    what: &str,
    keys: &[K],
    values: &[V],
    op: &UserScanOp<V, V>,
    eq: &UserEq<K>,
    key_poison: K,
    value_poison: V,
) {
    let n = keys.len();
    let (want_keys, want_values) = host::reduce_by_key_user_by(keys, values, op, eq).unwrap();
    let (dk, dv) = (stream.clone_htod(keys).unwrap(), stream.clone_htod(values).unwrap());
    let mut ko = poisoned(stream, n, key_poison);
    let mut vo = poisoned(stream, n, value_poison);
    let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
    ws.reduce_by_key_user_by_into(&dk, &dv, &mut ko, &mut vo, &mut count, op, eq).unwrap();
    assert_eq!(count_of(stream, &count), want_keys.len(), "{what} n={n}: count");
    check_col(&format!("{what} n={n} keys"), &stream.clone_dtoh(&ko).unwrap(), &want_keys, key_poison);
    check_col(&format!("{what} n={n} values"), &stream.clone_dtoh(&vo).unwrap(), &want_values, value_poison);
    if n <= 70_000 {
        let (k, v) = lookback::reduce_by_key_user_by(&dk, &dv, op, eq).unwrap().to_vecs().unwrap();
        check_col(&format!("{what} one-shot n={n} keys"), &k, &want_keys, key_poison);
        check_col(&format!("{what} one-shot n={n} values"), &v, &want_values, value_poison);
    }
}

#[test]
fn reduce_by_key_user_by_matches_the_host() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let mut ws = Workspace::new(&stream);
    let runs_tile = |k: usize, v: usize| lookback::__private::runs_tile_items(k.max(v));
    for (i, n) in sizes(runs_tile(4, 4)).into_iter().enumerate() {
        let seed = 700 + i as u64;
        let values: Vec<u32> = random(n, seed, |r| r as u32);
        check_reduce(
            &stream,
            &mut ws,
            "Pt sum",
            &points(n, seed),
            &values,
            &sum_u32(),
            &same_x(),
            Pt { x: -9, y: -9 },
            7,
        );
        check_reduce(&stream, &mut ws, "near sum", &walk(n, seed), &values, &sum_u32(), &near(), -12345.5, 7);
    }
    for (i, n) in sizes(runs_tile(1, 8)).into_iter().enumerate() {
        let maps: Vec<u64> = random(n, 800 + i as u64, |r| r | 1 << 32);
        check_reduce(
            &stream,
            &mut ws,
            "caseless affine",
            &letters(n, i as u64),
            &maps,
            &compose_u64(),
            &caseless(),
            0xee,
            7,
        );
    }
    ws.set_deterministic(true);
    let n = 5 * runs_tile(8, 8) + 3;
    let maps: Vec<u64> = random(n, 9, |r| r | 1 << 32);
    check_reduce(
        &stream,
        &mut ws,
        "deterministic minute affine",
        &stamps(n, 9),
        &maps,
        &compose_u64(),
        &same_minute(),
        1,
        7,
    );
}

/// inclusive_scan_by_key_user_by_into and exclusive_scan_by_key_user_by_into, and their one-shots, against
/// the host.
#[allow(clippy::too_many_arguments)]
fn check_scans<K: DeviceType + Debug, V: DeviceType + Debug>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    what: &str,
    keys: &[K],
    values: &[V],
    init: V,
    op: &UserScanOp<V, V>,
    eq: &UserEq<K>,
    poison: V,
) {
    let n = keys.len();
    let (dk, dv) = (stream.clone_htod(keys).unwrap(), stream.clone_htod(values).unwrap());
    let want = host::inclusive_scan_by_key_user_by(keys, values, op, eq).unwrap();
    let mut out = poisoned(stream, n, poison);
    ws.inclusive_scan_by_key_user_by_into(&dk, &dv, &mut out, op, eq).unwrap();
    check_col(&format!("{what} inclusive n={n}"), &stream.clone_dtoh(&out).unwrap(), &want, poison);
    let want_ex = host::exclusive_scan_by_key_user_by(keys, values, init, op, eq).unwrap();
    let mut out = poisoned(stream, n, poison);
    ws.exclusive_scan_by_key_user_by_into(&dk, &dv, &mut out, init, op, eq).unwrap();
    check_col(&format!("{what} exclusive n={n}"), &stream.clone_dtoh(&out).unwrap(), &want_ex, poison);
    if n <= 70_000 {
        let one = lookback::inclusive_scan_by_key_user_by(&dk, &dv, op, eq).unwrap();
        check_col(&format!("{what} one-shot inclusive n={n}"), &stream.clone_dtoh(&one).unwrap(), &want, poison);
        let one = lookback::exclusive_scan_by_key_user_by(&dk, &dv, init, op, eq).unwrap();
        check_col(&format!("{what} one-shot exclusive n={n}"), &stream.clone_dtoh(&one).unwrap(), &want_ex, poison);
    }
}

#[test]
fn scans_by_key_user_by_match_the_host() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let mut ws = Workspace::new(&stream);
    let runs_tile = |k: usize, v: usize| lookback::__private::runs_tile_items(k.max(v));
    for (i, n) in sizes(runs_tile(4, 4)).into_iter().enumerate() {
        let seed = 900 + i as u64;
        let values: Vec<u32> = random(n, seed, |r| r as u32);
        check_scans(&stream, &mut ws, "Pt sum", &points(n, seed), &values, 5, &sum_u32(), &same_x(), 7);
        check_scans(&stream, &mut ws, "near sum", &walk(n, seed), &values, 0, &sum_u32(), &near(), 7);
    }
    for (i, n) in sizes(runs_tile(1, 8)).into_iter().enumerate() {
        let maps: Vec<u64> = random(n, 950 + i as u64, |r| r | 1 << 32);
        check_scans(
            &stream,
            &mut ws,
            "caseless affine",
            &letters(n, i as u64),
            &maps,
            3 << 32 | 1,
            &compose_u64(),
            &caseless(),
            7,
        );
    }
    ws.set_deterministic(true);
    let n = 5 * runs_tile(8, 8) + 3;
    let maps: Vec<u64> = random(n, 9, |r| r | 1 << 32);
    check_scans(
        &stream,
        &mut ws,
        "deterministic minute affine",
        &stamps(n, 9),
        &maps,
        1 << 32,
        &compose_u64(),
        &same_minute(),
        7,
    );
}

#[test]
fn gpu_errors_write_nothing() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let mut ws = Workspace::new(&stream);
    let input = stream.clone_htod(&letters(100, 1)).unwrap();
    let mut short = stream.clone_htod(&[0xeeu8; 98]).unwrap(); // two items short, no guard
    let mut count = stream.clone_htod(&[77u64]).unwrap();
    let r = ws.unique_by_into(&input, &mut short, &mut count, &caseless());
    assert!(matches!(r, Err(Error::OutputTooSmall { .. })), "{r:?}");
    let mut lengths = poisoned(&stream, 100, 5u32);
    let r = ws.run_length_encode_by_into(&input, &mut short, &mut lengths, &mut count, &caseless());
    assert!(matches!(r, Err(Error::OutputTooSmall { .. })), "{r:?}");
    let mut values = poisoned(&stream, 100, 0xeeu8);
    let mut no_count = stream.alloc_zeros::<u64>(0).unwrap();
    let r = ws.run_end_encode_by_into(&input, &mut values, &mut lengths, &mut no_count, &caseless());
    assert!(matches!(r, Err(Error::OutputTooSmall { .. })), "{r:?}");
    assert_eq!(stream.clone_dtoh(&count).unwrap(), [77]);
    assert!(stream.clone_dtoh(&short).unwrap().iter().all(|&x| x == 0xee));
    assert!(stream.clone_dtoh(&lengths).unwrap().iter().all(|&x| x == 5));
    // Lengths and value sizes.
    let keys = stream.clone_htod(&points(10, 1)).unwrap();
    let nine = stream.clone_htod(&[1u32; 9]).unwrap();
    let mut ko = poisoned(&stream, 10, Pt { x: 1, y: 1 });
    let mut vo = poisoned(&stream, 10, 3u32);
    let r = ws.unique_by_key_by_into(&keys, &nine, &mut ko, &mut vo, &mut count, &same_x());
    assert!(matches!(r, Err(Error::LengthMismatch { .. })), "{r:?}");
    let r = ws.reduce_by_key_user_by_into(&keys, &nine, &mut ko, &mut vo, &mut count, &sum_u32(), &same_x());
    assert!(matches!(r, Err(Error::LengthMismatch { .. })), "{r:?}");
    let wide = stream.clone_htod(&[Wide { a: 1, b: 2 }; 10]).unwrap();
    let mut wide_out = stream.clone_htod(&[Wide { a: 0, b: 0 }; 10]).unwrap();
    let r = ws.unique_by_key_by_into(&keys, &wide, &mut ko, &mut wide_out, &mut count, &same_x());
    assert!(matches!(r, Err(Error::UnsupportedSize { role: "value", bytes: 16, .. })), "{r:?}");
    assert!(matches!(lookback::unique_by_key_by(&keys, &wide, &same_x()), Err(Error::UnsupportedSize { .. })));
    assert_eq!(stream.clone_dtoh(&count).unwrap(), [77]);
    assert!(stream.clone_dtoh(&vo).unwrap().iter().all(|&x| x == 3));
    // A compile error at the first call, nothing written.
    // SAFETY: never runs (it does not compile).
    let bad = unsafe { UserEq::new("a == nope", |a: u8, b: u8| a == b) }.unwrap();
    let r = ws.unique_by_into(&input, &mut values, &mut count, &bad);
    assert!(matches!(r, Err(Error::Compile { line: Some((1, _)), .. })), "{r:?}");
    assert_eq!(stream.clone_dtoh(&count).unwrap(), [77]);
    // An empty input writes a count of 0 and compiles nothing (this one would not compile).
    let empty = stream.alloc_zeros::<u8>(0).unwrap();
    let mut out = stream.alloc_zeros::<u8>(0).unwrap();
    ws.unique_by_into(&empty, &mut out, &mut count, &bad).unwrap();
    assert_eq!(stream.clone_dtoh(&count).unwrap(), [0]);
}

#[test]
fn compile_ahead_then_cached() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let eq = same_x();
    eq.compile(&stream).unwrap();
    assert_eq!(eq.compile(&stream).unwrap().hit, CacheHit::Memory);
    eq.compile_encodings(&stream).unwrap();
    assert_eq!(eq.compile_encodings(&stream).unwrap().hit, CacheHit::Memory);
    eq.compile_unique_by_key::<u16>(&stream).unwrap();
    assert!(matches!(eq.compile_unique_by_key::<Wide>(&stream), Err(Error::UnsupportedSize { .. })));
    sum_u32().compile_by_key_by(&eq, &stream).unwrap();
    assert_eq!(sum_u32().compile_by_key_by(&eq, &stream).unwrap().hit, CacheHit::Memory);
}

/// What compute-sanitizer runs (`sanitizer_cases` filter): each primitive once at a few small sizes.
#[test]
fn sanitizer_cases() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = Workspace::new(&stream);
        ws.set_engine(engine);
        let t = lookback::__private::select_tile_items(4);
        for (i, n) in [1, 5, t + 3, 3 * t + 1].into_iter().enumerate() {
            check_unique(&stream, &mut ws, "sanitize Pt", &points(n, i as u64), &same_x(), Pt { x: -9, y: -9 });
        }
    }
    let mut ws = Workspace::new(&stream);
    let t = lookback::__private::runs_tile_items(4);
    for (i, n) in [1, 5, t + 3, 3 * t + 1].into_iter().enumerate() {
        let seed = i as u64;
        check_encodings(&stream, &mut ws, "sanitize near", &walk(n, seed), &near(), -12345.5, u32::MAX);
        let values: Vec<u32> = random(n, seed, |r| r as u32);
        check_unique_by_key(
            &stream,
            &mut ws,
            "sanitize Pt",
            &points(n, seed),
            &values,
            &same_x(),
            Pt { x: -9, y: -9 },
            7,
        );
        check_reduce(
            &stream,
            &mut ws,
            "sanitize Pt",
            &points(n, seed),
            &values,
            &sum_u32(),
            &same_x(),
            Pt { x: -9, y: -9 },
            7,
        );
        check_scans(&stream, &mut ws, "sanitize Pt", &points(n, seed), &values, 5, &sum_u32(), &same_x(), 7);
    }
    stream.synchronize().unwrap();
}
