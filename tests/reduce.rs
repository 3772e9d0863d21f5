//! Device-wide reductions against the host reference: `reduce` for every type × operator, `arg_min` and
//! `arg_max` for every type (ties across tiles, NaNs, signed zeros), and user operators (non-commutative
//! ones included, on both engines), at sizes around tile boundaries and where the reductions' shares wrap
//! around, sized on the device and empty, unaligned, with poisoned outputs whose guard items must
//! survive; float sums that repeat bit for bit; the typed errors.
mod common;

use common::{GUARD, Rng, TestElement, gpu, nvrtc, random_vec};
use lookback::cudarc::driver::{CudaStream, DeviceRepr};
use lookback::half::{bf16, f16};
use lookback::rtc::{DeviceType, UserScanOp};
use lookback::{ArgItem, Engine, Error, ScanOp, Workspace, host};
use proptest::prelude::*;
use std::sync::Arc;

fn ops_for<T: TestElement>() -> Vec<ScanOp> {
    ScanOp::ALL.into_iter().filter(|op| op.supports(T::DTYPE)).collect()
}

/// Sizes around the reductions' tile boundaries: empty, one item, tile ± 1, a partial last chunk, several
/// tiles, and more tiles than shares where the 4-byte and larger types stay small enough: the striding
/// wraps, and the last, partial tile falls to a share that already had full ones.
fn edge_sizes<T: TestElement>() -> Vec<usize> {
    let t = lookback::__private::reduce_tile_items(size_of::<T>());
    let odd = (16 / size_of::<T>()).max(2) - 1;
    let mut sizes = vec![0, 1, 2, 31, t - 1, t, t + 1, t + odd, 2 * t - 1, 3 * t + 5, 33 * t + 7, 97 * t + 3];
    if size_of::<T>() >= 4 {
        let shares = lookback::__private::plan::MAX_SHARES;
        sizes.extend([shares * t - 1, shares * t + odd, (2 * shares + 3) * t + 7]);
    }
    sizes
}

/// A float sum's total against the sequential one: the GPU groups by tiles, the bound is check_scan's at
/// the last item. Integers and min/max must be equal (NaN equals NaN).
fn same_total<T: TestElement>(input: &[T], got: T, want: T, op: ScanOp) -> bool {
    let (g, w) = (got.as_f64(), want.as_f64());
    if g.is_nan() || w.is_nan() {
        return g.is_nan() && w.is_nan();
    }
    if op != ScanOp::Sum || T::ACC_EPS == 0.0 {
        return got == want || g == w;
    }
    if g.is_infinite() || w.is_infinite() {
        return g == w || (g.signum() == w.signum() && g.abs().min(w.abs()) > 0.9 * T::MAX_FINITE);
    }
    let abs_sum: f64 = input.iter().map(|x| x.as_f64()).filter(|x| !x.is_nan()).map(f64::abs).sum();
    let k = 2.0 * (128.0 + input.len() as f64 / 256.0);
    (g - w).abs() <= k * T::ACC_EPS * abs_sum + 2.0 * T::OUT_EPS * w.abs()
}

/// One reduction on the GPU into a poisoned output of 1 + GUARD items, checked against the host.
fn check_reduce<T: TestElement>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    input: &[T],
    op: ScanOp,
) -> Result<(), String> {
    let want = host::reduce(input, op).map_err(|e| e.to_string())?;
    let d_in = stream.clone_htod(input).map_err(|e| e.to_string())?;
    let mut d_out = stream.clone_htod(&[T::poison(); 1 + GUARD]).map_err(|e| e.to_string())?;
    ws.reduce_into(&d_in, &mut d_out, op).map_err(|e| e.to_string())?;
    let got = stream.clone_dtoh(&d_out).map_err(|e| e.to_string())?;
    let what = format!("{} {op:?} n={}", T::DTYPE.name(), input.len());
    if got[1..].iter().any(|g| *g != T::poison()) {
        return Err(format!("{what}: wrote past its one item: {:?}", &got[1..]));
    }
    if !same_total(input, got[0], want, op) {
        return Err(format!("{what}: got {:?}, want {want:?}", got[0]));
    }
    Ok(())
}

/// arg_min and arg_max on the GPU, each into a poisoned output, checked against the host exactly.
fn check_arg<T: TestElement>(stream: &Arc<CudaStream>, ws: &mut Workspace, input: &[T]) -> Result<(), String> {
    let poison = ArgItem { index: 0x5eed, value: T::poison() };
    let d_in = stream.clone_htod(input).map_err(|e| e.to_string())?;
    for max in [false, true] {
        let want = if max { host::arg_max(input) } else { host::arg_min(input) };
        let mut d_out = stream.clone_htod(&[poison; 1 + GUARD]).map_err(|e| e.to_string())?;
        if max { ws.arg_max_into(&d_in, &mut d_out) } else { ws.arg_min_into(&d_in, &mut d_out) }
            .map_err(|e| e.to_string())?;
        let got = stream.clone_dtoh(&d_out).map_err(|e| e.to_string())?;
        let what = format!("{} arg_{} n={}", T::DTYPE.name(), if max { "max" } else { "min" }, input.len());
        if got[1..].iter().any(|g| g.index != poison.index || g.value != poison.value) {
            return Err(format!("{what}: wrote past its one item"));
        }
        let same = match (got[0].get(), want) {
            (None, None) => true,
            // Bits, so that -0.0 and 0.0 (a tie the first of wins) are told apart, and NaN matches itself.
            (Some((gi, gv)), Some((wi, wv))) => gi == wi && gv.to_bits() == wv.to_bits(),
            _ => false,
        };
        if !same {
            return Err(format!("{what}: got {:?}, want {want:?}", got[0].get()));
        }
    }
    Ok(())
}

/// Data whose arg results are hard: few distinct values (ties everywhere, across tiles), for floats with
/// NaNs and both zeros, and the best value placed late.
fn tie_heavy<T: TestElement>(n: usize, seed: u64) -> Vec<T> {
    let mut rng = Rng::new(seed);
    let mut v: Vec<T> = (0..n)
        .map(|_| {
            let r = rng.next_u64();
            if T::ACC_EPS > 0.0 && r.is_multiple_of(13) {
                T::random(&mut rng, 1.0) // NaN
            } else if T::ACC_EPS > 0.0 && r.is_multiple_of(17) {
                T::from_bits(1 << (8 * size_of::<T>() - 1)) // -0.0
            } else {
                T::small((r >> 8) as u8 % 5)
            }
        })
        .collect();
    if n > 3 {
        let i = n - 1 - (rng.next_u64() as usize % (n / 3));
        v[i] = T::small(99);
    }
    v
}

fn edge_sizes_all<T: TestElement>() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    for (k, n) in edge_sizes::<T>().into_iter().enumerate() {
        let nan = if T::ACC_EPS > 0.0 { 0.02 } else { 0.0 };
        let input: Vec<T> = random_vec(n, 500 + k as u64, nan);
        for op in ops_for::<T>() {
            // Sums of NaN-free data, so that the tolerance means something.
            let data = if op == ScanOp::Sum { random_vec(n, 900 + k as u64, 0.0) } else { input.clone() };
            check_reduce(&stream, &mut ws, &data, op).unwrap();
        }
        check_arg(&stream, &mut ws, &input).unwrap_or_else(|e| panic!("random: {e}"));
        check_arg(&stream, &mut ws, &tie_heavy::<T>(n, k as u64)).unwrap_or_else(|e| panic!("ties: {e}"));
    }
}

macro_rules! reduce_tests {
    ($($t:ty => $edge:ident, $random:ident;)*) => {$(
        #[test]
        fn $edge() {
            edge_sizes_all::<$t>();
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]
            #[test]
            fn $random(log in 0.0f64..22.0, seed in any::<u64>(), op in 0usize..6, ties in any::<bool>()) {
                let Some(stream) = gpu() else { return Ok(()) };
                let n = 2f64.powf(log) as usize;
                let ops = ops_for::<$t>();
                let op = ops[op % ops.len()];
                let mut ws = Workspace::new(&stream);
                let input: Vec<$t> = if ties { tie_heavy(n, seed) } else { random_vec(n, seed, 0.0) };
                let r = check_reduce(&stream, &mut ws, &input, op).and_then(|()| check_arg(&stream, &mut ws, &input));
                prop_assert!(r.is_ok(), "{}", r.unwrap_err());
            }
        }
    )*};
}

reduce_tests! {
    i8 => edge_sizes_i8, random_i8;
    i16 => edge_sizes_i16, random_i16;
    i32 => edge_sizes_i32, random_i32;
    i64 => edge_sizes_i64, random_i64;
    u8 => edge_sizes_u8, random_u8;
    u16 => edge_sizes_u16, random_u16;
    u32 => edge_sizes_u32, random_u32;
    u64 => edge_sizes_u64, random_u64;
    f32 => edge_sizes_f32, random_f32;
    f64 => edge_sizes_f64, random_f64;
    f16 => edge_sizes_f16, random_f16;
    bf16 => edge_sizes_bf16, random_bf16;
}

/// arg_min and arg_max fold a whole 16-byte chunk at once (the chunk's best value, then where it is):
/// inputs whose every item equals the identity's value (the first item must still win), a single best
/// item at each position of a chunk in a late tile, and the best value twice in one chunk.
fn chunk_positions<T: TestElement>(lowest: T, highest: T) {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    let t = lookback::__private::reduce_tile_items(size_of::<T>());
    let per = 16 / size_of::<T>();
    let n = 3 * t + 2 * per + 1;
    for fill in [lowest, highest] {
        check_arg(&stream, &mut ws, &vec![fill; n]).unwrap_or_else(|e| panic!("all equal: {e}"));
    }
    let base = 2 * t + per;
    for at in 0..per {
        for (fill, best) in [(T::small(50), T::small(3)), (T::small(3), T::small(50))] {
            let mut v = vec![fill; n];
            v[base + at] = best;
            check_arg(&stream, &mut ws, &v).unwrap_or_else(|e| panic!("one best at {at}: {e}"));
            if at + 1 < per {
                v[base + per - 1] = best;
                check_arg(&stream, &mut ws, &v).unwrap_or_else(|e| panic!("two in a chunk from {at}: {e}"));
            }
        }
        // The extremes of the type inside a chunk of ordinary values.
        let mut v: Vec<T> = random_vec(n, at as u64, 0.0);
        v[base + at] = lowest;
        v[base + per - 1 - at] = highest;
        check_arg(&stream, &mut ws, &v).unwrap_or_else(|e| panic!("extremes at {at}: {e}"));
    }
}

#[test]
fn arg_chunks_at_every_position() {
    chunk_positions::<i8>(i8::MIN, i8::MAX);
    chunk_positions::<u8>(u8::MIN, u8::MAX);
    chunk_positions::<i16>(i16::MIN, i16::MAX);
    chunk_positions::<u16>(u16::MIN, u16::MAX);
    chunk_positions::<i32>(i32::MIN, i32::MAX);
    chunk_positions::<u32>(u32::MIN, u32::MAX);
    chunk_positions::<f32>(f32::NEG_INFINITY, f32::INFINITY);
    chunk_positions::<f32>(-0.0, f32::NAN);
    chunk_positions::<i64>(i64::MIN, i64::MAX);
    chunk_positions::<f64>(f64::NEG_INFINITY, f64::NAN);
}

/// The one-shot functions return the host's answers; an empty input gives the identity and `None`.
#[test]
fn one_shots_and_empty_inputs() {
    let Some(stream) = gpu() else { return };
    let input: Vec<i32> = random_vec(100_003, 3, 0.0);
    let d = stream.clone_htod(&input).unwrap();
    for op in ScanOp::ALL {
        assert_eq!(lookback::reduce(&d, op).unwrap(), host::reduce(&input, op).unwrap(), "{op:?}");
    }
    assert_eq!(lookback::arg_min(&d).unwrap(), host::arg_min(&input));
    assert_eq!(lookback::arg_max(&d).unwrap(), host::arg_max(&input));
    let empty = stream.alloc_zeros::<f32>(0).unwrap();
    assert_eq!(lookback::reduce(&empty, ScanOp::Sum).unwrap().to_bits(), (-0.0f32).to_bits());
    assert!(lookback::reduce(&empty, ScanOp::Min).unwrap().is_nan());
    assert_eq!(lookback::arg_min(&empty).unwrap(), None);
    assert_eq!(lookback::arg_max(&empty).unwrap(), None);
    let empty = stream.alloc_zeros::<u16>(0).unwrap();
    assert_eq!(lookback::reduce(&empty, ScanOp::BitAnd).unwrap(), u16::MAX);
}

/// Sized on the device: the count (0 included) bounds the items; the output past the result stays.
#[test]
fn reductions_sized_on_the_device() {
    let Some(stream) = gpu() else { return };
    let t = lookback::__private::reduce_tile_items(8);
    let capacity = 40 * t + 3;
    let input: Vec<f64> = random_vec(capacity, 21, 0.0);
    let d_in = stream.clone_htod(&input).unwrap();
    let mut count = stream.alloc_zeros::<u64>(1).unwrap();
    let mut ws = Workspace::new(&stream);
    for n in [0, 1, t - 1, t + 1, 33 * t, capacity, capacity + 5] {
        stream.memcpy_htod(&[n as u64], &mut count).unwrap();
        let mut total = stream.clone_htod(&[f64::poison(); 1 + GUARD]).unwrap();
        let mut arg = stream.clone_htod(&[ArgItem { index: 7, value: 0.5f64 }; 2]).unwrap();
        ws.with_count(&count, |ws| {
            ws.reduce_into(&d_in, &mut total, ScanOp::Max)?;
            ws.arg_min_into(&d_in, &mut arg)
        })
        .unwrap();
        // A count above the capacity is taken as the capacity.
        let n = n.min(capacity);
        let got = stream.clone_dtoh(&total).unwrap();
        let want = host::reduce(&input[..n], ScanOp::Max).unwrap();
        assert!(got[0] == want || (got[0].is_nan() && want.is_nan()), "n={n}: {} != {want}", got[0]);
        assert!(got[1..].iter().all(|g| *g == f64::poison()), "n={n}: wrote past the result");
        let got = stream.clone_dtoh(&arg).unwrap();
        assert_eq!(got[0].get(), host::arg_min(&input[..n]), "n={n}");
        assert_eq!(got[1], ArgItem { index: 7, value: 0.5 }, "n={n}: wrote past the result");
    }
}

/// Float sums come out bit for bit the same on every run while other streams load the GPU, whatever the
/// workspace's engine and deterministic settings, and for an unaligned view of the same items (read item
/// by item in the same order); they agree with the sequential sum within rounding.
#[test]
fn float_sums_repeat_bit_for_bit() {
    let Some(stream) = gpu() else { return };
    let ctx = stream.context().clone();
    let n = (1 << 22) + 12_345;
    let input: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.618).sin() * 1000.0).collect();
    let d = stream.clone_htod(&input).unwrap();
    let wide: Vec<f64> = random_vec(n / 2 + 7, 8, 0.0);
    let d_wide = stream.clone_htod(&wide).unwrap();
    // The same items one f32 further into a buffer: an input that is not 16-byte aligned.
    let mut shifted = vec![7.0f32];
    shifted.extend_from_slice(&input);
    let d_shifted = stream.clone_htod(&shifted).unwrap();
    // Load: scans on two other streams, running while the reductions run.
    let others: Vec<_> = (0..2).map(|_| ctx.new_stream().unwrap()).collect();
    let load: Vec<_> = others.iter().map(|s| s.clone_htod(&input).unwrap()).collect();
    let (mut first, mut first_wide) = (None, None);
    for run in 0..60 {
        let mut ws = Workspace::new(&stream);
        ws.set_engine([Engine::Auto, Engine::Classic, Engine::Persistent][run % 3]);
        ws.set_deterministic(run % 2 == 1);
        for (s, buf) in others.iter().zip(&load) {
            let mut scratch = s.alloc_zeros::<f32>(n).unwrap();
            Workspace::new(s).inclusive_scan_into(buf, &mut scratch, ScanOp::Sum).unwrap();
        }
        let mut out = stream.alloc_zeros::<f32>(1).unwrap();
        if run % 4 == 3 {
            ws.reduce_into(&d_shifted.slice(1..), &mut out, ScanOp::Sum).unwrap();
        } else {
            ws.reduce_into(&d, &mut out, ScanOp::Sum).unwrap();
        }
        let bits = stream.clone_dtoh(&out).unwrap()[0].to_bits();
        assert_eq!(*first.get_or_insert(bits), bits, "run {run}: f32 sum changed");
        let mut out = stream.alloc_zeros::<f64>(1).unwrap();
        ws.reduce_into(&d_wide, &mut out, ScanOp::Sum).unwrap();
        let bits = stream.clone_dtoh(&out).unwrap()[0].to_bits();
        assert_eq!(*first_wide.get_or_insert(bits), bits, "run {run}: f64 sum changed");
    }
    let got = f32::from_bits(first.unwrap());
    assert!(same_total(&input, got, host::reduce(&input, ScanOp::Sum).unwrap(), ScanOp::Sum), "{got}");
}

/// Inputs that are not 16-byte aligned (views that start 1 to 3 items into a buffer) are read item by
/// item: every operator and the arg reductions are still exact.
#[test]
fn unaligned_inputs() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    let t = lookback::__private::reduce_tile_items(2);
    let data: Vec<u16> = random_vec(5 * t + 11, 31, 0.0);
    let ties = tie_heavy::<f16>(5 * t + 11, 32);
    let (d, d_ties) = (stream.clone_htod(&data).unwrap(), stream.clone_htod(&ties).unwrap());
    for skip in 1..4 {
        for op in ops_for::<u16>() {
            let mut out = stream.clone_htod(&[u16::poison()]).unwrap();
            ws.reduce_into(&d.slice(skip..), &mut out, op).unwrap();
            assert_eq!(stream.clone_dtoh(&out).unwrap()[0], host::reduce(&data[skip..], op).unwrap(), "{op:?} +{skip}");
        }
        let mut out = stream.clone_htod(&[ArgItem { index: 3, value: f16::ONE }]).unwrap();
        ws.arg_max_into(&d_ties.slice(skip..), &mut out).unwrap();
        let got = stream.clone_dtoh(&out).unwrap()[0].get();
        let want = host::arg_max(&ties[skip..]);
        assert_eq!(got.map(|(i, v)| (i, v.to_bits())), want.map(|(i, v)| (i, v.to_bits())), "arg_max +{skip}");
    }
}

/// A 2×2 matrix of u32, multiplied mod 2^32: exact, associative, not commutative.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mat32 {
    m: [u32; 4],
}
// SAFETY: #[repr(C)], no padding, every bit pattern valid; the CUDA struct has the same layout.
unsafe impl DeviceRepr for Mat32 {}
// SAFETY: CUDA_DECL declares the same fields in the same order.
unsafe impl DeviceType for Mat32 {
    const CUDA_NAME: &'static str = "Mat32";
    const CUDA_DECL: &'static str = "struct Mat32 { uint32_t m[4]; };";
}

fn mat32_mul(x: Mat32, y: Mat32) -> Mat32 {
    let [a, b, c, d] = x.m;
    let [e, f, g, h] = y.m;
    let mul = |p: u32, q: u32, r: u32, s: u32| p.wrapping_mul(q).wrapping_add(r.wrapping_mul(s));
    Mat32 { m: [mul(a, e, b, g), mul(a, f, b, h), mul(c, e, d, g), mul(c, f, d, h)] }
}

/// The u32 affine map h ↦ a·h + b as (a, b): an 8-byte accumulator whose composition does not commute.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Step {
    a: u32,
    b: u32,
}
// SAFETY: #[repr(C)], no padding, every bit pattern valid; the CUDA struct has the same layout.
unsafe impl DeviceRepr for Step {}
// SAFETY: CUDA_DECL declares the same fields in the same order.
unsafe impl DeviceType for Step {
    const CUDA_NAME: &'static str = "Step";
    const CUDA_DECL: &'static str = "struct Step { uint32_t a; uint32_t b; };";
}

/// Applying `x` then `y`: h ↦ y.a·(x.a·h + x.b) + y.b.
fn compose(x: Step, y: Step) -> Step {
    Step { a: y.a.wrapping_mul(x.a), b: y.a.wrapping_mul(x.b).wrapping_add(y.b) }
}

fn step_op() -> UserScanOp<u16, Step, u32> {
    // SAFETY: pure expressions.
    unsafe {
        UserScanOp::new("Step{b.a * a.a, b.a * a.b + b.b}", "Step{1u, 0u}", compose, Step { a: 1, b: 0 })
            .unwrap()
            .with_load("Step{(uint32_t)(x | 1), (uint32_t)x * 7u}", |x: u16| Step {
                a: u32::from(x | 1),
                b: u32::from(x) * 7,
            })
            .unwrap()
            .with_store("a.b", |s: Step| s.b)
            .unwrap()
    }
}

/// User reductions: a sum equal bit for bit to the built-in one, and an exact non-commutative operator
/// loaded from and stored to other types, on both engines at sizes around tiles, against the closures.
#[test]
fn user_reductions_match_the_closures() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    // SAFETY: a pure expression.
    let sum = unsafe { UserScanOp::new("a + b", "0.0f", |a: f32, b: f32| a + b, 0.0) }.unwrap();
    let steps = step_op();
    // Sizes around the user scans' tiles (the agents a user reduction runs on): empty, one item, tile ± 1,
    // enough tiles that the classic look-back slides over more than one 32-tile window, or that every
    // persistent block goes round its ring several times.
    let sizes = |engine| {
        if engine == Engine::Persistent {
            let t = lookback::__private::pipe_scan_tile_items(4);
            vec![0, 1, 2, 31, t - 1, t, t + 1, 2 * t + 3, 131 * t + 1, 133 * t, 1700 * t + 3]
        } else {
            let t = lookback::__private::user_scan_tile_items(4, 4);
            vec![0, 1, 2, 31, t - 1, t, t + 1, 2 * t - 1, 3 * t + 5, 32 * t, 33 * t + 7, 97 * t + 3]
        }
    };
    let mut ws = Workspace::new(&stream);
    for engine in [Engine::Classic, Engine::Persistent] {
        ws.set_engine(engine);
        for (k, n) in sizes(engine).into_iter().enumerate() {
            let xs: Vec<f32> = random_vec(n, 40 + k as u64, 0.0);
            let d = stream.clone_htod(&xs).unwrap();
            let mut user = stream.clone_htod(&[f32::poison(); 2]).unwrap();
            let mut builtin = stream.clone_htod(&[f32::poison(); 2]).unwrap();
            ws.reduce_user_into(&d, &mut user, &sum).unwrap();
            ws.reduce_into(&d, &mut builtin, ScanOp::Sum).unwrap();
            let (user, builtin) = (stream.clone_dtoh(&user).unwrap(), stream.clone_dtoh(&builtin).unwrap());
            assert_eq!(user[1], f32::poison(), "{engine:?} n={n}: wrote past the result");
            assert!(same_total(&xs, user[0], host::reduce_user(&xs, &sum), ScanOp::Sum), "{engine:?} n={n}");
            // The built-in reduction groups by shares, the user one by the scan's tiles: equal within
            // rounding. An empty input gives each operator's identity: the user's +0.0, the built-in -0.0.
            if n == 0 {
                assert_eq!((user[0].to_bits(), builtin[0].to_bits()), (0, (-0.0f32).to_bits()), "{engine:?}");
            } else {
                assert!(
                    same_total(&xs, user[0], builtin[0], ScanOp::Sum),
                    "{engine:?} n={n}: {} != {}",
                    user[0],
                    builtin[0]
                );
            }

            let items: Vec<u16> = random_vec(n, 70 + k as u64, 0.0);
            let d = stream.clone_htod(&items).unwrap();
            let mut out = stream.clone_htod(&[0xdead_beefu32; 2]).unwrap();
            ws.reduce_user_into(&d, &mut out, &steps).unwrap();
            let got = stream.clone_dtoh(&out).unwrap();
            assert_eq!(got[0], host::reduce_user(&items, &steps), "{engine:?} n={n}: composition");
            assert_eq!(got[1], 0xdead_beef, "{engine:?} n={n}: wrote past the result");
        }
    }
    // A 16-byte accumulator (status entries of two units, MultiState): a non-commutative product of
    // 2×2 matrices mod 2^32, on both engines, across tiles and windows of tiles.
    // SAFETY: pure code over a and b.
    let mat = unsafe {
        UserScanOp::from_body(
            "Mat32 r;\n\
             r.m[0] = a.m[0] * b.m[0] + a.m[1] * b.m[2];\n\
             r.m[1] = a.m[0] * b.m[1] + a.m[1] * b.m[3];\n\
             r.m[2] = a.m[2] * b.m[0] + a.m[3] * b.m[2];\n\
             r.m[3] = a.m[2] * b.m[1] + a.m[3] * b.m[3];\n\
             return r;",
            "Mat32{{1u, 0u, 0u, 1u}}",
            mat32_mul,
            Mat32 { m: [1, 0, 0, 1] },
        )
    }
    .unwrap();
    let t = lookback::__private::user_scan_tile_items(16, 16);
    for engine in [Engine::Classic, Engine::Persistent] {
        ws.set_engine(engine);
        for n in [0, 1, t - 1, t + 1, 33 * t + 7, 1100 * t + 3] {
            let mut r = Rng::new(n as u64);
            // Determinant 1, [[1 + xy, x], [y, 1]]: a product of matrices with random entries mod 2^32
            // is the zero matrix after about a hundred of them, whatever order they were combined in.
            let items: Vec<Mat32> = (0..n)
                .map(|_| {
                    let v = r.next_u64();
                    let (x, y) = (v as u32, (v >> 32) as u32);
                    Mat32 { m: [x.wrapping_mul(y).wrapping_add(1), x, y, 1] }
                })
                .collect();
            let d = stream.clone_htod(&items).unwrap();
            let poison = Mat32 { m: [0xdead_beef; 4] };
            let mut out = stream.clone_htod(&[poison; 2]).unwrap();
            ws.reduce_user_into(&d, &mut out, &mat).unwrap();
            let got = stream.clone_dtoh(&out).unwrap();
            assert_eq!(got[0], host::reduce_user(&items, &mat), "{engine:?} n={n}: 16-byte product");
            assert_eq!(got[1], poison, "{engine:?} n={n}: wrote past the result");
        }
    }
}

/// Compute-sanitizer cases (`run.sh sanitize BIN sanitizer_cases`): partial and many tiles, the shares
/// wrapping around, 1-, 2-, 4- and 8-byte items, unaligned inputs, arg pairs, empty inputs, and a user
/// reduction on both engines.
#[test]
fn sanitizer_cases() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    let t = lookback::__private::reduce_tile_items(4);
    let shares = lookback::__private::plan::MAX_SHARES;
    for (k, n) in [0, 1, 5, t + 3, 7 * t + 1, 300 * t + 1, shares * t + 5].into_iter().enumerate() {
        let input: Vec<i32> = random_vec(n, k as u64, 0.0);
        check_reduce(&stream, &mut ws, &input, ScanOp::Sum).unwrap();
        check_arg(&stream, &mut ws, &tie_heavy::<i32>(n, k as u64)).unwrap();
    }
    let t8 = lookback::__private::reduce_tile_items(8);
    check_arg(&stream, &mut ws, &tie_heavy::<f64>(40 * t8 + 3, 9)).unwrap();
    check_reduce(&stream, &mut ws, &random_vec::<u8>(3 * t + 15, 10, 0.0), ScanOp::BitXor).unwrap();
    check_arg(&stream, &mut ws, &tie_heavy::<f16>(2 * t + 1, 11)).unwrap();
    check_reduce(&stream, &mut ws, &random_vec::<f32>(90 * t + 7, 12, 0.0), ScanOp::Sum).unwrap();
    let data: Vec<f64> = random_vec(9 * t8 + 5, 13, 0.0);
    let d = stream.clone_htod(&data).unwrap();
    let mut out = stream.alloc_zeros::<f64>(1).unwrap();
    ws.reduce_into(&d.slice(1..), &mut out, ScanOp::Min).unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap()[0], host::reduce(&data[1..], ScanOp::Min).unwrap());
    if nvrtc() {
        // SAFETY: a pure expression of its two operands.
        let op = unsafe { UserScanOp::new("a + b", "0", |a: u64, b: u64| a.wrapping_add(b), 0) }.unwrap();
        for engine in [Engine::Persistent, Engine::Classic] {
            ws.set_engine(engine);
            let input: Vec<u64> = random_vec(200 * t8 + 3, 14, 0.0);
            let d = stream.clone_htod(&input).unwrap();
            let mut out = stream.alloc_zeros::<u64>(1).unwrap();
            ws.reduce_user_into(&d, &mut out, &op).unwrap();
            let want = input.iter().fold(0u64, |a, &b| a.wrapping_add(b));
            assert_eq!(stream.clone_dtoh(&out).unwrap()[0], want, "{engine:?}");
        }
    }
}

/// Errors: an empty output, a bitwise operator on floats; the caller's buffers stay as they were.
#[test]
fn bad_calls_are_typed_errors() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    let d = stream.clone_htod(&[1.0f32, 2.0]).unwrap();
    let mut none = stream.alloc_zeros::<f32>(0).unwrap();
    let err = ws.reduce_into(&d, &mut none, ScanOp::Sum).unwrap_err();
    assert!(matches!(err, Error::OutputTooSmall { needed: 1, actual: 0, .. }), "{err}");
    let mut none = stream.alloc_zeros::<ArgItem<f32>>(0).unwrap();
    let err = ws.arg_max_into(&d, &mut none).unwrap_err();
    assert!(matches!(err, Error::OutputTooSmall { needed: 1, actual: 0, .. }), "{err}");
    let mut out = stream.clone_htod(&[9.0f32]).unwrap();
    let err = ws.reduce_into(&d, &mut out, ScanOp::BitOr).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [9.0]);
    let ints = stream.clone_htod(&[bf16::ONE]).unwrap();
    assert!(matches!(lookback::reduce(&ints, ScanOp::BitAnd), Err(Error::Unsupported { .. })));
}
