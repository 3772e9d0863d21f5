//! User predicates compiled at run time (`lookback::rtc`): typed errors, the host path, compiles for every
//! element type without a GPU, the caches, and on the GPU every selection primitive against the host
//! closure, on both engines, at sizes around tile boundaries and at random sizes.
mod common;

use common::{GUARD, Pattern, TestElement, gpu, nvrtc, same, upload_poisoned, values_for_mask};
use lookback::cudarc::driver::{CudaSlice, CudaStream};
use lookback::half::{bf16, f16};
use lookback::rtc::{CacheHit, UserPred};
use lookback::{Engine, Error, Pred, Predicate, Workspace, host};
use proptest::prelude::*;
use std::io::Write;
use std::sync::Arc;

/// Whether user code over `T` can compile here: f16/bf16 need the CUDA headers.
fn compiles_here<T: TestElement>() -> bool {
    let half = T::DTYPE == lookback::DType::F16 || T::DTYPE == lookback::DType::Bf16;
    if !half {
        return true;
    }
    // SAFETY: a pure expression (compiled only).
    let p = unsafe { UserPred::new("(float)x < 50.0f", |_: T| true) }.unwrap();
    !matches!(p.compile_for_arch("sm_90"), Err(Error::CudaHeadersNotFound))
}

/// `x < 50` as user code, for every type: the same items as `Pred::lt(50)` on `values_for_mask`.
fn below_fifty<T: TestElement>() -> UserPred<T> {
    // SAFETY: a pure expression of x.
    unsafe { UserPred::new("(float)x < 50.0f", |x: T| x.as_f64() < 50.0) }.unwrap()
}

#[test]
fn bad_code_is_a_typed_error() {
    // SAFETY (all): never run on a GPU.
    assert!(matches!(unsafe { UserPred::new("  \n", |_: i32| true) }, Err(Error::InvalidSource { .. })));
    assert!(matches!(unsafe { UserPred::from_body("return x\0;", |_: i32| true) }, Err(Error::InvalidSource { .. })));
    let p = unsafe { UserPred::new("x > 0", |x: i32| x > 0) }.unwrap();
    for arch in ["90", "sm_", "sm_9", "sm_9a", "compute_90"] {
        assert!(matches!(p.compile_for_arch(arch), Err(Error::InvalidSource { .. })), "{arch}");
    }
    if !nvrtc() {
        return;
    }
    let bad = unsafe { UserPred::from_body("int y = x;\nreturn y > undefined_name;", |_: i32| true) }.unwrap();
    match bad.compile_for_arch("sm_90") {
        Err(e @ Error::Compile { .. }) => {
            let Error::Compile { log, line } = &e else { unreachable!() };
            assert!(log.contains("undefined_name"), "{log}");
            assert_eq!(line.as_ref(), Some(&(2, "return y > undefined_name;".to_string())));
            assert!(e.to_string().contains("line 2"), "{e}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

#[test]
fn the_host_path_runs_the_closure() {
    // SAFETY: pure expressions of x.
    let odd = unsafe { UserPred::new("(x & 1) != 0", |x: u16| x & 1 != 0) }.unwrap();
    let input = [1u16, 2, 3, 4, 5, 6, 7];
    assert_eq!(host::select_if(&input, &odd), [1, 3, 5, 7]);
    assert_eq!(host::count_if(&input, &odd), 4);
    assert_eq!(host::mask_if(&input, &odd), [1, 0, 1, 0, 1, 0, 1]);
    assert_eq!(host::partition_if(&input, &odd), (vec![1, 3, 5, 7, 2, 4, 6], 4));
    // A user predicate and a built-in one in the same three-way partition.
    let (a, b, c) = host::partition_three_way(&input, &odd, &Pred::gt(4));
    assert_eq!((a, b, c), (vec![1, 3, 5, 7], vec![6], vec![2, 4]));
    assert!(odd.holds(9) && !odd.holds(8));
    let copy = odd.clone();
    assert!(copy.holds(1));
    assert!(format!("{odd:?}").contains("(x & 1) != 0"));
}

/// Compiles the selection family of one type for sm_80 and sm_90 (no GPU needed) and prints the times.
fn compiles_for_both_architectures<T: TestElement>() {
    if !compiles_here::<T>() {
        let _ = writeln!(std::io::stderr(), "{}: no CUDA headers for the 16-bit floats here; skipped", T::DTYPE.name());
        return;
    }
    let p = below_fifty::<T>();
    for arch in ["sm_80", "sm_90"] {
        let r = p.compile_for_arch(arch).unwrap_or_else(|e| panic!("{} {arch}: {e}", T::DTYPE.name()));
        assert_eq!(r.arch, arch);
        assert!(r.cubin_bytes > 1000, "{} {arch}: a cubin of {} bytes", T::DTYPE.name(), r.cubin_bytes);
        let again = p.compile_for_arch(arch).unwrap();
        assert_eq!(again.hit, CacheHit::Memory);
        let _ = writeln!(
            std::io::stderr(),
            "compile select family {} {arch}: {:?} in {:.3} s, {} bytes",
            T::DTYPE.name(),
            r.hit,
            r.seconds,
            r.cubin_bytes
        );
    }
}

/// The three-way partition with user code first, second and in both parts compiles for sm_90 (no GPU).
fn three_way_compiles<T: TestElement>() {
    if !compiles_here::<T>() {
        return;
    }
    let p = below_fifty::<T>();
    for (first, second) in [(Some(&p), None), (None, Some(&p)), (Some(&p), Some(&p))] {
        let r = lookback::__private::partition3_for_arch(first, second, "sm_90").unwrap_or_else(|e| {
            panic!("three-way {} ({}, {}): {e}", T::DTYPE.name(), first.is_some(), second.is_some())
        });
        assert!(r.cubin_bytes > 1000);
    }
}

#[test]
fn the_three_way_partition_compiles_without_a_gpu() {
    if !nvrtc() {
        return;
    }
    three_way_compiles::<i32>();
    three_way_compiles::<f64>();
    three_way_compiles::<f16>();
}

#[test]
fn every_element_type_compiles_without_a_gpu() {
    if !nvrtc() {
        return;
    }
    compiles_for_both_architectures::<i8>();
    compiles_for_both_architectures::<i16>();
    compiles_for_both_architectures::<i32>();
    compiles_for_both_architectures::<i64>();
    compiles_for_both_architectures::<u8>();
    compiles_for_both_architectures::<u16>();
    compiles_for_both_architectures::<u32>();
    compiles_for_both_architectures::<u64>();
    compiles_for_both_architectures::<f32>();
    compiles_for_both_architectures::<f64>();
    compiles_for_both_architectures::<f16>();
    compiles_for_both_architectures::<bf16>();
}

/// The child process of `a_missing_nvrtc_is_a_typed_error` and `the_disk_cache_serves_a_new_process`.
const CHILD: &str = "LOOKBACK_RTC_TEST_CHILD";

#[test]
fn child_process() {
    let Ok(role) = std::env::var(CHILD) else { return };
    // SAFETY: a pure expression of x.
    let p = unsafe { UserPred::new("x % 7 == 3", |x: i64| x % 7 == 3) }.unwrap();
    let result = p.compile_for_arch("sm_90");
    match role.as_str() {
        "missing" => match result {
            Err(e @ Error::NvrtcNotFound { .. }) => {
                assert!(!lookback::rtc::nvrtc_available());
                assert!(e.to_string().contains("pip install nvidia-cuda-nvrtc"), "{e}");
            }
            other => panic!("expected NvrtcNotFound, got {other:?}"),
        },
        _ => {
            let r = result.unwrap();
            println!("CHILD-REPORT {:?} {:.6}", r.hit, r.seconds);
        }
    }
}

fn run_child(role: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child_process", "--nocapture", "--test-threads=1"]).env(CHILD, role);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child {role} failed:\n{text}");
    text
}

#[test]
fn a_missing_nvrtc_is_a_typed_error() {
    run_child("missing", &[("LOOKBACK_NVRTC", "/nonexistent/libnvrtc.so.13")]);
}

#[test]
fn the_disk_cache_serves_a_new_process() {
    if !nvrtc() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("lookback-rtc-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir_s = dir.to_string_lossy().into_owned();
    let report = |text: &str| {
        // libtest prints `test child_process ... ` on the same line, before the report.
        let (_, line) = text.split_once("CHILD-REPORT").expect("the child reports");
        let mut parts = line.split_whitespace();
        (parts.next().unwrap().to_string(), parts.next().unwrap().parse::<f64>().unwrap())
    };
    let (cold_hit, cold) = report(&run_child("cache", &[("LOOKBACK_CACHE_DIR", &dir_s)]));
    let (warm_hit, warm) = report(&run_child("cache", &[("LOOKBACK_CACHE_DIR", &dir_s)]));
    let (off_hit, _) = report(&run_child("cache", &[("LOOKBACK_CACHE_DIR", "off")]));
    let _ = writeln!(
        std::io::stderr(),
        "select family, i64, sm_90: first process {cold_hit} {:.1} ms, next process {warm_hit} {:.1} ms",
        cold * 1e3,
        warm * 1e3
    );
    assert_eq!((cold_hit.as_str(), warm_hit.as_str(), off_hit.as_str()), ("Compiled", "Disk", "Compiled"));
    assert!(warm < cold, "reading the cache ({warm} s) took longer than compiling ({cold} s)");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Reads the count and the first `count` items; checks the guard items past `n` are untouched.
fn read_result<T: TestElement>(
    stream: &Arc<CudaStream>,
    out: &CudaSlice<T>,
    count: &CudaSlice<u64>,
    n: usize,
) -> Vec<T> {
    let all = stream.clone_dtoh(out).unwrap();
    let k = stream.clone_dtoh(count).unwrap()[0] as usize;
    assert!(all[n..].iter().all(|g| *g == T::poison()), "wrote past the output's {n} items");
    assert!(k <= n, "count {k} > n {n}");
    all[..k].to_vec()
}

/// Every selection primitive with user predicate `pred` on `values`, against the host closure.
fn check_all<T: TestElement>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    values: &[T],
    pred: &UserPred<T>,
    what: &str,
) {
    let n = values.len();
    let d_in = stream.clone_htod(values).unwrap();
    let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
    let want = host::select_if(values, pred);

    let mut out = upload_poisoned::<T>(stream, n);
    ws.select_if_into(&d_in, pred, &mut out, &mut count).unwrap();
    same(&read_result(stream, &out, &count, n), &want, &format!("select_if {what}"));

    let mut buf = stream.clone_htod(values).unwrap();
    let k = ws.select_if_in_place(&mut buf, pred).unwrap();
    same(&stream.clone_dtoh(&buf).unwrap()[..k], &want, &format!("select_if_in_place {what}"));

    let (stable, k) = host::partition_if(values, pred);
    let mut out = upload_poisoned::<T>(stream, n);
    ws.partition_if_stable_into(&d_in, pred, &mut out, &mut count).unwrap();
    assert_eq!(read_result(stream, &out, &count, n).len(), k, "partition_if_stable {what}: count");
    same(&stream.clone_dtoh(&out).unwrap()[..n], &stable, &format!("partition_if_stable {what}"));
    let (reversed, _) = host::partition_if_reversed(values, pred);
    let mut out = upload_poisoned::<T>(stream, n);
    ws.partition_if_reversed_into(&d_in, pred, &mut out, &mut count).unwrap();
    read_result(stream, &out, &count, n);
    same(&stream.clone_dtoh(&out).unwrap()[..n], &reversed, &format!("partition_if_reversed {what}"));
    let mut sel = upload_poisoned::<T>(stream, n);
    let mut rej = upload_poisoned::<T>(stream, n);
    ws.partition_if_split_into(&d_in, pred, &mut sel, &mut rej, &mut count).unwrap();
    same(&read_result(stream, &sel, &count, n), &stable[..k], &format!("partition_if_split {what}"));
    same(&stream.clone_dtoh(&rej).unwrap()[..n - k], &stable[k..], &format!("partition_if_split rejected {what}"));

    assert_eq!(ws.count_if(&d_in, pred).unwrap(), want.len(), "count_if {what}");
    let mut m = stream.clone_htod(&vec![7u8; n + GUARD]).unwrap();
    ws.mask_if_into(&d_in, pred, &mut m).unwrap();
    let got_mask = stream.clone_dtoh(&m).unwrap();
    assert_eq!(&got_mask[..n], host::mask_if(values, pred), "mask_if {what}");
    assert_eq!(&got_mask[n..], &[7; GUARD], "mask_if wrote past the end");

    // The three-way partition: user code first and a built-in second, then the other way round.
    let ten = Pred::lt(T::small(10));
    check_three_way(stream, ws, &d_in, values, pred, &ten, what);
    check_three_way(stream, ws, &d_in, values, &ten, pred, what);
}

fn check_three_way<T: TestElement>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    d_in: &CudaSlice<T>,
    values: &[T],
    first: &impl Predicate<T>,
    second: &impl Predicate<T>,
    what: &str,
) {
    let n = values.len();
    let (a, b, c) = host::partition_three_way(values, first, second);
    let (mut oa, mut ob, mut oc) =
        (upload_poisoned::<T>(stream, n), upload_poisoned::<T>(stream, n), upload_poisoned::<T>(stream, n));
    let mut counts = stream.clone_htod(&[u64::MAX, u64::MAX]).unwrap();
    ws.partition_three_way_into(d_in, first, second, &mut oa, &mut ob, &mut oc, &mut counts).unwrap();
    let k = stream.clone_dtoh(&counts).unwrap();
    assert_eq!((k[0] as usize, k[1] as usize), (a.len(), b.len()), "partition_three_way {what}: counts");
    same(&stream.clone_dtoh(&oa).unwrap()[..a.len()], &a, &format!("three-way first {what}"));
    same(&stream.clone_dtoh(&ob).unwrap()[..b.len()], &b, &format!("three-way second {what}"));
    same(&stream.clone_dtoh(&oc).unwrap()[..c.len()], &c, &format!("three-way rest {what}"));
}

fn edge_sizes<T: TestElement>(engine: Engine) -> Vec<usize> {
    if engine == Engine::Persistent {
        let t = lookback::__private::pipe_select_tile_items(size_of::<T>());
        let p = lookback::__private::pipe_partition_tile_items(size_of::<T>());
        return vec![1, 33, t - 1, t + 1, 2 * t + 3, p + 1, 140 * t + 3];
    }
    let t = lookback::__private::select_tile_items(size_of::<T>());
    vec![0, 1, 33, t - 1, t, t + 1, 5 * t - 3, 33 * t + 7]
}

fn edge_cases<T: TestElement>() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() || !compiles_here::<T>() {
        return;
    }
    let pred = below_fifty::<T>();
    let mut ws = Workspace::new(&stream);
    for engine in [Engine::Classic, Engine::Persistent] {
        ws.set_engine(engine);
        for (k, n) in edge_sizes::<T>(engine).into_iter().enumerate() {
            for (p, pattern) in Pattern::ALL.into_iter().enumerate() {
                let seed = (k * 10 + p) as u64;
                let values: Vec<T> = values_for_mask(&pattern.mask(n, seed), seed);
                let what = format!("{} {engine:?} n={n} {pattern:?}", T::DTYPE.name());
                check_all(&stream, &mut ws, &values, &pred, &what);
            }
        }
    }
}

#[test]
fn edge_cases_i32() {
    edge_cases::<i32>();
}
#[test]
fn edge_cases_u8() {
    edge_cases::<u8>();
}
#[test]
fn edge_cases_i64() {
    edge_cases::<i64>();
}
#[test]
fn edge_cases_f32() {
    edge_cases::<f32>();
}
#[test]
fn edge_cases_f64() {
    edge_cases::<f64>();
}
#[test]
fn edge_cases_f16() {
    edge_cases::<f16>();
}
#[test]
fn edge_cases_bf16() {
    edge_cases::<bf16>();
}

/// Small cases for compute-sanitizer (`run.sh sanitize test-rtc-* sanitizer_cases`): the user kernels of
/// every family on both engines, a few tiles each.
#[test]
fn sanitizer_cases() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    let mut ws = Workspace::new(&stream);
    for engine in [Engine::Classic, Engine::Persistent] {
        ws.set_engine(engine);
        let t = match engine {
            Engine::Persistent => lookback::__private::pipe_select_tile_items(4),
            _ => lookback::__private::select_tile_items(4),
        };
        for n in [1, t + 1, 3 * t + 5] {
            let values: Vec<i32> = values_for_mask(&Pattern::Half.mask(n, 3), 3);
            check_all(&stream, &mut ws, &values, &below_fifty::<i32>(), &format!("sanitizer {engine:?} n={n}"));
        }
    }
}

/// A user predicate with no built-in equivalent, run against the built-in one it should equal
/// (`x % 3 == 0` on multiples of 3 only is `Pred::always`), and the same code as a function body.
#[test]
fn user_code_beyond_the_built_in_predicates() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    // SAFETY: pure code of x.
    let third = unsafe { UserPred::new("x % 3 == 0", |x: i32| x % 3 == 0) }.unwrap();
    let digits = unsafe {
        UserPred::from_body(
            "int d = 0;\nfor (unsigned v = x < 0 ? -(unsigned)x : (unsigned)x; v != 0; v /= 10) ++d;\nreturn d == 3;",
            |x: i32| x.unsigned_abs().to_string().len() == 3 && x != 0,
        )
    }
    .unwrap();
    let values: Vec<i32> = (0..200_000).map(|i| (i * 7919) % 4001 - 2000).collect();
    let mut ws = Workspace::new(&stream);
    for engine in [Engine::Classic, Engine::Persistent] {
        ws.set_engine(engine);
        check_all(&stream, &mut ws, &values, &third, &format!("x % 3 {engine:?}"));
        check_all(&stream, &mut ws, &values, &digits, &format!("three digits {engine:?}"));
    }
    // The one-shot forms.
    let d_in = stream.clone_htod(&values).unwrap();
    assert_eq!(lookback::select_if(&d_in, &third).unwrap().to_vec().unwrap(), host::select_if(&values, &third));
    assert_eq!(lookback::count_if(&d_in, &digits).unwrap(), host::count_if(&values, &digits));
}

/// The first compile of a family for this GPU, and a second call served from memory.
#[test]
fn compile_reports_where_the_kernels_came_from() {
    let Some(stream) = gpu() else { return };
    if !nvrtc() {
        return;
    }
    // SAFETY: a pure expression of x.
    let p = unsafe { UserPred::new("x > 0.25f && x < 0.75f", |x: f32| x > 0.25 && x < 0.75) }.unwrap();
    let first = p.compile(&stream).unwrap();
    let again = p.compile(&stream).unwrap();
    assert_eq!(again.hit, CacheHit::Memory);
    let _ = writeln!(
        std::io::stderr(),
        "select family f32 on this GPU ({}): {:?} in {:.1} ms, then {:?} in {:.3} ms",
        first.arch,
        first.hit,
        first.seconds * 1e3,
        again.hit,
        again.seconds * 1e3
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random sizes up to 2^20 and random thresholds: the GPU equals the closure.
    #[test]
    fn random_user_predicates_match_the_host(n in 0usize..(1 << 20), t in -100i32..100, m in 1i32..9, seed in any::<u64>()) {
        let Some(stream) = gpu() else { return Ok(()) };
        if !nvrtc() {
            return Ok(());
        }
        let values: Vec<i32> = common::random_vec::<i32>(n, seed, 0.0).into_iter().map(|v| v % 1000).collect();
        // SAFETY: pure expressions of x; the constants are formatted into the code.
        let pred = unsafe { UserPred::new(&format!("x % {m} == 0 || x < {t}"), move |x: i32| x % m == 0 || x < t) }.unwrap();
        let mut ws = Workspace::new(&stream);
        for engine in [Engine::Auto, Engine::Persistent] {
            ws.set_engine(engine);
            let d_in = stream.clone_htod(&values).unwrap();
            let got = lookback::select_if(&d_in, &pred).unwrap().to_vec().unwrap();
            prop_assert_eq!(&got, &host::select_if(&values, &pred));
            prop_assert_eq!(ws.count_if(&d_in, &pred).unwrap(), got.len());
        }
    }
}
