//! Device-wide scans against the host reference: every type × operator, inclusive and exclusive, out of
//! place and in place, at sizes around tile boundaries and at random sizes up to 2^22.
mod common;

use common::{TestElement, check_scan, gpu, random_vec};
use lookback::cudarc::driver::CudaStream;
use lookback::half::{bf16, f16};
use lookback::{Engine, ScanOp, Workspace, host};
use proptest::prelude::*;
use std::sync::Arc;

/// Guard items after the output, which must stay poisoned.
const GUARD: usize = 3;

/// Runs one scan on the GPU and checks it against the host. `init` selects exclusive.
fn check_one<T: TestElement>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    n: usize,
    seed: u64,
    op: ScanOp,
    init: Option<T>,
    in_place: bool,
) -> Result<(), String> {
    let nan = if T::ACC_EPS > 0.0 && op != ScanOp::Sum { 0.02 } else { 0.0 };
    let input: Vec<T> = random_vec(n, seed, nan);
    let want = match init {
        Some(v) => host::exclusive_scan(&input, v, op),
        None => host::inclusive_scan(&input, op),
    }
    .map_err(|e| e.to_string())?;
    let err = |e: lookback::Error| e.to_string();
    let got = if in_place {
        let mut buf = stream.clone_htod(&input).map_err(|e| e.to_string())?;
        match init {
            Some(v) => ws.exclusive_scan_in_place(&mut buf, v, op).map_err(err)?,
            None => ws.inclusive_scan_in_place(&mut buf, op).map_err(err)?,
        }
        stream.clone_dtoh(&buf).map_err(|e| e.to_string())?
    } else {
        let d_in = stream.clone_htod(&input).map_err(|e| e.to_string())?;
        let mut d_out = stream.clone_htod(&vec![T::poison(); n + GUARD]).map_err(|e| e.to_string())?;
        match init {
            Some(v) => ws.exclusive_scan_into(&d_in, &mut d_out, v, op).map_err(err)?,
            None => ws.inclusive_scan_into(&d_in, &mut d_out, op).map_err(err)?,
        }
        let mut out = stream.clone_dtoh(&d_out).map_err(|e| e.to_string())?;
        if out[n..].iter().any(|g| *g != T::poison()) {
            return Err(format!("wrote past the end of its {n} items: {:?}", &out[n..]));
        }
        out.truncate(n);
        out
    };
    let what = format!(
        "{} {:?} {} n={n} seed={seed}{}",
        T::DTYPE.name(),
        op,
        if init.is_some() { "exclusive" } else { "inclusive" },
        if in_place { " in place" } else { "" }
    );
    check_scan(&input, &got, &want, op, init.is_some()).map_err(|e| format!("{what}: {e}"))
}

fn ops_for<T: TestElement>() -> Vec<ScanOp> {
    ScanOp::ALL.into_iter().filter(|op| op.supports(T::DTYPE)).collect()
}

/// Sizes around the tile boundaries of `engine`: empty, one item, tile ± 1, several tiles, and enough
/// tiles that the classic look-back slides over more than one 32-tile window, or that every block of the
/// persistent engine goes round its shared-memory ring several times (132 SMs × 6 stages on an H200).
fn edge_sizes<T: TestElement>(engine: Engine) -> Vec<usize> {
    if engine == Engine::Persistent {
        let t = lookback::__private::pipe_scan_tile_items(size_of::<T>());
        // 16 / size items: the last tile ends in a part the bulk copy cannot move (< 16 bytes).
        let odd = (16 / size_of::<T>()).max(2) - 1;
        return vec![0, 1, 2, 31, t - 1, t, t + 1, t + odd, 2 * t + odd, 131 * t + 1, 133 * t, 1700 * t + odd];
    }
    let t = lookback::__private::scan_tile_items(size_of::<T>());
    vec![0, 1, 2, 31, t - 1, t, t + 1, 2 * t - 1, 2 * t + 1, 3 * t + 5, 32 * t, 33 * t + 7, 97 * t + 3]
}

fn edge_sizes_all_ops<T: TestElement>() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    let init = T::random(&mut common::Rng::new(7), 0.0);
    for engine in [Engine::Classic, Engine::Persistent] {
        ws.set_engine(engine);
        for op in ops_for::<T>() {
            for (k, n) in edge_sizes::<T>(engine).into_iter().enumerate() {
                for (init, in_place) in [(None, false), (Some(init), false), (None, true), (Some(init), true)] {
                    if let Err(e) = check_one::<T>(&stream, &mut ws, n, 1000 + k as u64, op, init, in_place) {
                        panic!("{engine:?}: {e}");
                    }
                }
            }
        }
    }
}

/// Views that start off a 16-byte boundary cannot take the persistent engine's bulk copies: the call
/// falls back to the classic one and is still right, out of place and in place.
#[test]
fn unaligned_views_fall_back_and_stay_correct() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    ws.set_engine(Engine::Persistent);
    let n = 3 * lookback::__private::pipe_scan_tile_items(4) + 5;
    let input: Vec<i32> = random_vec(n + 1, 77, 0.0);
    let want = host::inclusive_scan(&input[1..], ScanOp::Sum).unwrap();
    let d_in = stream.clone_htod(&input).unwrap();
    let mut d_out = stream.clone_htod(&vec![i32::poison(); n + 1]).unwrap();
    ws.inclusive_scan_into(&d_in.slice(1..), &mut d_out.slice_mut(1..), ScanOp::Sum).unwrap();
    let got = stream.clone_dtoh(&d_out).unwrap();
    assert_eq!(got[0], i32::poison(), "wrote before the view");
    check_scan(&input[1..], &got[1..], &want, ScanOp::Sum, false).unwrap();
    let mut buf = stream.clone_htod(&input).unwrap();
    ws.inclusive_scan_in_place(&mut buf.slice_mut(1..), ScanOp::Sum).unwrap();
    let got = stream.clone_dtoh(&buf).unwrap();
    assert_eq!(got[0], input[0]);
    check_scan(&input[1..], &got[1..], &want, ScanOp::Sum, false).unwrap();
}

/// One workspace, the two engines alternating: the tile counter and the epochs must stay consistent
/// across launches of either shape.
#[test]
fn engines_alternate_on_one_workspace() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    let t = lookback::__private::pipe_scan_tile_items(4);
    for (i, n) in [5 * t + 3, 1, 700 * t, 2 * t, 3].into_iter().cycle().take(20).enumerate() {
        ws.set_engine(if i % 2 == 0 { Engine::Persistent } else { Engine::Classic });
        let init = if i % 3 == 0 { Some(i as i32) } else { None };
        check_one::<i32>(&stream, &mut ws, n, i as u64, ScanOp::Sum, init, i % 4 == 1)
            .unwrap_or_else(|e| panic!("call {i}: {e}"));
    }
}

/// Random sizes, log-uniform up to 2^22 (2^20 for floats, whose sum tolerance grows with n).
fn random_cases<T: TestElement>() -> impl Strategy<Value = (usize, u64, usize, bool, bool)> {
    let max_log = if T::ACC_EPS > 0.0 { 20.0 } else { 22.0 };
    let ops = ops_for::<T>().len();
    (0.0f64..max_log, any::<u64>(), 0..ops, any::<bool>(), any::<bool>())
        .prop_map(|(l, seed, op, excl, in_place)| (2f64.powf(l) as usize, seed, op, excl, in_place))
}

macro_rules! scan_tests {
    ($($t:ty => $edge:ident, $random:ident;)*) => {$(
        #[test]
        fn $edge() {
            edge_sizes_all_ops::<$t>();
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]
            #[test]
            fn $random(case in random_cases::<$t>()) {
                let Some(stream) = gpu() else { return Ok(()) };
                let (n, seed, op, exclusive, in_place) = case;
                let op = ops_for::<$t>()[op];
                let init = exclusive.then(|| <$t as TestElement>::random(&mut common::Rng::new(seed ^ 1), 0.0));
                let mut ws = Workspace::new(&stream);
                let result = check_one::<$t>(&stream, &mut ws, n, seed, op, init, in_place);
                prop_assert!(result.is_ok(), "{}", result.unwrap_err());
            }
        }
    )*};
}

scan_tests! {
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

/// Float min/max ignore NaN, so a prefix of NaNs is NaN and the first number ends it (the kernels'
/// identity for these operators must be NaN, not ±inf, for the all-NaN prefix to come out NaN).
#[test]
fn float_min_max_of_nan_prefixes_match_the_host() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    let nan = f32::NAN;
    for input in [vec![nan], vec![nan, nan, 2.0, nan, -1.0], vec![3.0, nan, nan]] {
        for op in [ScanOp::Min, ScanOp::Max] {
            let want = host::inclusive_scan(&input, op).unwrap();
            let mut buf = stream.clone_htod(&input).unwrap();
            ws.inclusive_scan_in_place(&mut buf, op).unwrap();
            let got = stream.clone_dtoh(&buf).unwrap();
            check_scan(&input, &got, &want, op, false).unwrap_or_else(|e| panic!("{op:?} {input:?}: {e}"));
            let halves: Vec<lookback::half::f16> = input.iter().map(|&x| lookback::half::f16::from_f32(x)).collect();
            let want = host::inclusive_scan(&halves, op).unwrap();
            let d = stream.clone_htod(&halves).unwrap();
            let got = stream.clone_dtoh(&lookback::inclusive_scan(&d, op).unwrap()).unwrap();
            check_scan(&halves, &got, &want, op, false).unwrap_or_else(|e| panic!("f16 {op:?} {input:?}: {e}"));
        }
    }
}

/// A few persistent-engine scans small enough for compute-sanitizer (`run.sh sanitize BIN
/// sanitizer_cases`): partial tiles with bulk-copy tails, in place, and one i32 call long enough for every
/// block to go round its shared-memory ring (more than 132 SMs × 6 stages of tiles).
#[test]
fn sanitizer_cases() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    ws.set_engine(Engine::Persistent);
    let t = lookback::__private::pipe_scan_tile_items(4);
    for (k, n) in [1, 5, t + 3, 7 * t + 1, 900 * t + 1].into_iter().enumerate() {
        for (init, in_place) in [(None, false), (Some(-3), true)] {
            check_one::<i32>(&stream, &mut ws, n, k as u64, ScanOp::Sum, init, in_place).unwrap();
        }
    }
    let t8 = lookback::__private::pipe_scan_tile_items(1);
    check_one::<u8>(&stream, &mut ws, 3 * t8 + 15, 9, ScanOp::Max, None, false).unwrap();
    check_one::<f16>(&stream, &mut ws, 2 * t + 7, 10, ScanOp::Sum, Some(f16::from_f32(0.5)), true).unwrap();
    check_one::<i64>(&stream, &mut ws, 5 * t + 1, 11, ScanOp::BitXor, None, false).unwrap();
    // 8-byte values: 16-byte status entries on sm_90+ (128-bit atomics), in both engines.
    let t64 = lookback::__private::pipe_scan_tile_items(8);
    check_one::<i64>(&stream, &mut ws, 300 * t64 + 5, 12, ScanOp::Sum, Some(-7), false).unwrap();
    ws.set_engine(Engine::Classic);
    let c64 = lookback::__private::scan_tile_items(8);
    check_one::<f64>(&stream, &mut ws, 200 * c64 + 9, 13, ScanOp::Max, None, true).unwrap();
}
