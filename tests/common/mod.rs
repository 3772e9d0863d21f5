//! Shared test support: opening the GPU (or skipping visibly), random data, and GPU-vs-host comparison.
#![allow(dead_code)]
use lookback::cudarc::driver::CudaStream;
use lookback::half::{bf16, f16};
use lookback::{Element, ScanOp};
use std::sync::{Arc, Once};

/// The GPU stream, or `None` (after one visible skip line) when there is no usable GPU.
/// With `LOOKBACK_REQUIRE_GPU=1` (set by the GPU bundle runner) a missing GPU is a failure instead.
pub fn gpu() -> Option<Arc<CudaStream>> {
    let why = match lookback::default_stream(0) {
        Ok(_) if !lookback::kernels_built() => "the crate was built without nvcc (no kernels)".to_string(),
        Ok(s) => return Some(s),
        Err(e) => e.to_string(),
    };
    if std::env::var("LOOKBACK_REQUIRE_GPU").is_ok_and(|v| v == "1") {
        panic!("LOOKBACK_REQUIRE_GPU=1 but no usable GPU: {why}");
    }
    static NOTE: Once = Once::new();
    // Written to the raw stderr handle: libtest captures eprintln! of passing tests, and this line must
    // be seen.
    NOTE.call_once(|| {
        use std::io::Write;
        let _ =
            writeln!(std::io::stderr(), "SKIPPED GPU tests: {why} (set LOOKBACK_REQUIRE_GPU=1 to make this a failure)");
    });
    None
}

/// xorshift64*: fast, seedable, good enough for test data.
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// How test values of a type are drawn and compared.
pub trait TestElement: Element {
    /// A random value: integers over their whole range; floats in [-100, 100), NaN with probability `nan`.
    fn random(rng: &mut Rng, nan: f64) -> Self;
    /// A value that is never a plausible result, to poison outputs with.
    fn poison() -> Self;
    /// The value as f64 (for tolerances).
    fn as_f64(self) -> f64;
    /// A small non-negative value (exact in every type).
    fn small(v: u8) -> Self;
    /// Machine epsilon of the accumulator (0 for integers: exact).
    const ACC_EPS: f64;
    /// Rounding unit of the stored type (0 for integers).
    const OUT_EPS: f64;
    /// Largest finite value (f64::INFINITY for integers).
    const MAX_FINITE: f64;
}

macro_rules! int_test_element {
    ($($t:ty),*) => {$(
        impl TestElement for $t {
            fn random(rng: &mut Rng, _nan: f64) -> Self { rng.next_u64() as $t }
            fn poison() -> Self { <$t>::MAX / 3 + 7 }
            fn as_f64(self) -> f64 { self as f64 }
            fn small(v: u8) -> Self { (v % 100) as $t }
            const ACC_EPS: f64 = 0.0;
            const OUT_EPS: f64 = 0.0;
            const MAX_FINITE: f64 = f64::INFINITY;
        }
    )*};
}
int_test_element!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_test_element {
    ($($t:ty, $from:expr, $to:expr, $acc_eps:expr, $out_eps:expr, $max:expr);*) => {$(
        impl TestElement for $t {
            fn random(rng: &mut Rng, nan: f64) -> Self {
                // Mostly positive, so running sums grow and the rounding bound stays meaningful.
                if rng.unit() < nan { $from(f64::NAN) } else { $from(rng.unit() * 125.0 - 25.0) }
            }
            fn poison() -> Self { $from(-12345.678) }
            fn as_f64(self) -> f64 { $to(self) }
            fn small(v: u8) -> Self { $from((v % 100) as f64) }
            const ACC_EPS: f64 = $acc_eps;
            const OUT_EPS: f64 = $out_eps;
            const MAX_FINITE: f64 = $max;
        }
    )*};
}
float_test_element!(
    f32, |x: f64| x as f32, |x: f32| x as f64, f32::EPSILON as f64, f32::EPSILON as f64, f32::MAX as f64;
    f64, |x: f64| x, |x: f64| x, f64::EPSILON, f64::EPSILON, f64::MAX;
    f16, f16::from_f64, f16::to_f64, f32::EPSILON as f64, 0.000_977, 65504.0;
    bf16, bf16::from_f64, bf16::to_f64, f32::EPSILON as f64, 0.007_813, 3.38e38
);

pub fn random_vec<T: TestElement>(n: usize, seed: u64, nan: f64) -> Vec<T> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| T::random(&mut rng, nan)).collect()
}

/// Compares a GPU scan result with the host reference. Integers and float min/max must match exactly
/// (NaN matches NaN; -0 matches +0). Float sums may differ by rounding, because the GPU adds in a
/// different (and run-dependent) order: at item i the bound is `2·(128 + i/256)·ε_acc·Σ|x| + 2·ε_out·|ref|`,
/// Σ|x| being the running sum of magnitudes. The GPU's order adds at most ~128 items per thread plus a
/// few tree levels, then one combination per tile (≥ 1024 items) along the look-back chain; the host's
/// sequential error is far below its i·ε·Σ|x| worst case on this data. Sums that overflow the output
/// type agree when both are beyond 90 % of its largest finite value.
pub fn check_scan<T: TestElement>(
    input: &[T],
    got: &[T],
    want: &[T],
    op: ScanOp,
    exclusive: bool,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    let tolerant = op == ScanOp::Sum && T::ACC_EPS > 0.0;
    let mut abs_sum = 0.0f64;
    for i in 0..got.len() {
        // NaN items add nothing to the bound: a sum that contains one is compared as NaN above, and a
        // segmented scan (scan_by_key) restarts after it.
        let magnitude = if input[i].as_f64().is_nan() { 0.0 } else { input[i].as_f64().abs() };
        if !exclusive {
            abs_sum += magnitude;
        }
        let (g, w) = (got[i].as_f64(), want[i].as_f64());
        let ok = if g.is_nan() || w.is_nan() {
            g.is_nan() && w.is_nan()
        } else if tolerant && (g.is_infinite() || w.is_infinite()) {
            g == w || (g.signum() == w.signum() && g.abs().min(w.abs()) > 0.9 * T::MAX_FINITE)
        } else if tolerant {
            let k = 2.0 * (128.0 + i as f64 / 256.0);
            (g - w).abs() <= k * T::ACC_EPS * abs_sum + 2.0 * T::OUT_EPS * w.abs()
        } else {
            got[i] == want[i] || g == w
        };
        if !ok {
            return Err(format!(
                "item {i} of {}: got {:?}, want {:?} (input {:?})",
                got.len(),
                got[i],
                want[i],
                &input[i.saturating_sub(2)..(i + 3).min(input.len())]
            ));
        }
        if exclusive {
            abs_sum += magnitude;
        }
    }
    Ok(())
}

/// Which items a selection test selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Nothing,
    OnePercent,
    Half,
    NinetyNine,
    Everything,
    Alternating,
    /// Long runs of selected and rejected items (mean run ~3000 items), crossing tile boundaries.
    Clustered,
}

impl Pattern {
    pub const ALL: [Pattern; 7] = [
        Pattern::Nothing,
        Pattern::OnePercent,
        Pattern::Half,
        Pattern::NinetyNine,
        Pattern::Everything,
        Pattern::Alternating,
        Pattern::Clustered,
    ];

    pub fn mask(self, n: usize, seed: u64) -> Vec<bool> {
        let mut rng = Rng::new(seed);
        let mut on = rng.unit() < 0.5;
        (0..n)
            .map(|i| match self {
                Pattern::Nothing => false,
                Pattern::OnePercent => rng.unit() < 0.01,
                Pattern::Half => rng.unit() < 0.5,
                Pattern::NinetyNine => rng.unit() < 0.99,
                Pattern::Everything => true,
                Pattern::Alternating => i % 2 == 0,
                Pattern::Clustered => {
                    if rng.unit() < 1.0 / 3000.0 {
                        on = !on;
                    }
                    on
                }
            })
            .collect()
    }
}

/// Values in [0, 50) where `mask` is set and in [50, 100) elsewhere, so `Pred::lt(50)` selects `mask`.
pub fn values_for_mask<T: TestElement>(mask: &[bool], seed: u64) -> Vec<T> {
    let mut rng = Rng::new(seed ^ 0xabcdef);
    mask.iter().map(|&m| T::small((rng.next_u64() % 50) as u8 + if m { 0 } else { 50 })).collect()
}

/// Values in runs: each run has a fresh small value, with a geometric length of mean `mean_run`.
pub fn runs<T: TestElement>(n: usize, mean_run: f64, seed: u64) -> Vec<T> {
    let mut rng = Rng::new(seed);
    let mut v = T::small((rng.next_u64() % 100) as u8);
    (0..n)
        .map(|_| {
            if rng.unit() < 1.0 / mean_run {
                v = T::small((rng.next_u64() % 100) as u8);
            }
            v
        })
        .collect()
}

/// Items past the end of every poisoned output, which a call must leave untouched.
pub const GUARD: usize = 3;

/// An output of `n` items plus `GUARD`, all poisoned.
pub fn upload_poisoned<T: TestElement>(stream: &Arc<CudaStream>, n: usize) -> lookback::cudarc::driver::CudaSlice<T> {
    stream.clone_htod(&vec![T::poison(); n + GUARD]).unwrap()
}

/// Asserts `got == want` item by item (NaN matches NaN), naming the first difference.
pub fn same<T: TestElement>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: count");
    if let Some(i) = got.iter().zip(want).position(|(g, w)| !(g == w || g.as_f64().is_nan() && w.as_f64().is_nan())) {
        panic!("{what}: item {i}: got {:?}, want {:?}", got[i], want[i]);
    }
}

/// Whether NVRTC is here; else one visible skip line (a failure under `LOOKBACK_REQUIRE_GPU=1`, where
/// the GPU machine must have it).
pub fn nvrtc() -> bool {
    if lookback::rtc::nvrtc_available() {
        return true;
    }
    if std::env::var("LOOKBACK_REQUIRE_GPU").is_ok_and(|v| v == "1") {
        panic!("LOOKBACK_REQUIRE_GPU=1 but NVRTC could not be loaded");
    }
    static NOTE: Once = Once::new();
    NOTE.call_once(|| {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "SKIPPED run-time compile tests: NVRTC could not be loaded");
    });
    false
}

/// The GPU stream when both a GPU and NVRTC are here (user-code tests on the device), else `None` after
/// the skip lines of [`gpu`] and [`nvrtc`].
pub fn rtc_gpu() -> Option<Arc<CudaStream>> {
    let stream = gpu()?;
    nvrtc().then_some(stream)
}

/// Runs the user scan `op` with `ws` (inclusive when `init` is None, else exclusive from it) into an
/// output of `input.len()` + [`GUARD`] items filled with `poison`; checks that the guard is untouched and
/// returns the items.
pub fn run_user_scan<In, A, Out>(
    ws: &mut lookback::Workspace,
    stream: &Arc<CudaStream>,
    input: &[In],
    init: Option<A>,
    op: &lookback::rtc::UserScanOp<In, A, Out>,
    poison: Out,
) -> Vec<Out>
where
    In: lookback::rtc::DeviceType,
    A: lookback::rtc::DeviceType,
    Out: lookback::rtc::DeviceType + PartialEq + std::fmt::Debug,
{
    let d_in = stream.clone_htod(input).unwrap();
    let mut out = stream.clone_htod(&vec![poison; input.len() + GUARD]).unwrap();
    match init {
        None => ws.inclusive_scan_user_into(&d_in, &mut out, op).unwrap(),
        Some(i) => ws.exclusive_scan_user_into(&d_in, &mut out, i, op).unwrap(),
    }
    let mut all = stream.clone_dtoh(&out).unwrap();
    assert!(all[input.len()..].iter().all(|g| *g == poison), "wrote past the output's {} items", input.len());
    all.truncate(input.len());
    all
}
