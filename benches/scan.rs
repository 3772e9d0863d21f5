//! Device-wide scan benchmark: times `lookback` scans with CUDA events and compares their bandwidth
//! with a device-to-device memcpy of the same byte count, measured in the same process.
//!
//! Run `cargo bench --bench scan -- --help` for the flags; `benches/README.md` explains the output.
//! Without a GPU (or without kernels) it prints one line and exits 0, so `cargo bench` passes anywhere.

mod common;

use common::{
    BenchElement, BoxResult, ElemType, Measured, MemcpyBaseline, Report, Row, Step, Timer, XorShift, alloc_copies,
    check, copies_for, gbps, poison, upload_copies,
};
use lookback::cudarc::driver::{CudaSlice, CudaStream, DriverError};
use lookback::half::f16;
use lookback::rtc::{Affine, CompileReport, DeviceType, RecurrenceFloat, UserScanOp, linear_recurrence};
use lookback::{Backoff, ScanOp, Workspace, host};
use std::sync::Arc;

const CSV_NAME: &str = "bench-scan.csv";

const USAGE: &str = "\
usage: cargo bench --bench scan -- [OPTIONS]
  --reps N                  timed runs per row, median reported (default 30, at least 20)
  --sizes A,B,...           log2 of the item count (default 16,18,20,22,24,26,28,30)
  --types T,...             element types among i32,u8,i64,f16,f32,f64 (default i32)
  --algos A,...             among inclusive_sum,inclusive_sum_in_place,exclusive_sum,inclusive_max
                            (default: these four), and inclusive_sum_devsize (inclusive_sum sized by
                            a count on the device: Workspace::with_count; runs right after
                            inclusive_sum, which it brings in), inclusive_sum_det and
                            exclusive_sum_det (Workspace::set_deterministic; each runs right after
                            the default row it is compared with), inclusive_sum_user (a sum written
                            as a run-time compiled user operator, lookback::rtc::UserScanOp; i32, i64,
                            f32, f64; after inclusive_sum, which it brings in),
                            inclusive_sum_user_comm (the same declared commutative:
                            UserScanOp::commutative) and affine_user (the
                            affine recurrence h[t] = a[t]*h[t-1] + b[t]: {a, b} pairs in, h out;
                            f32: 12 bytes per item, f64: 24, its accumulator in 2-unit status
                            entries; with f32 and f64 only), reduce_sum and arg_min (the
                            reductions: the input read once, one value written; GB/s counts the
                            bytes read)
  --backoff FIRST:POLL,...  also time inclusive_sum of each type with each look-back back-off (ns),
                            labelled inclusive_sum@FIRST:POLL
  --engine E                auto (default), classic or persistent (sm_90+): the scan kernel structure;
                            rows are labelled name[classic] / name[persistent] unless auto
  --csv PATH                CSV output (default bench-scan.csv; also $OUT/bench-scan.csv if OUT is set)
  --help                    this text";

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Algo {
    InclusiveSum,
    ExclusiveSum,
    InclusiveSumInPlace,
    InclusiveMax,
    InclusiveSumDevSize,
    InclusiveSumDet,
    ExclusiveSumDet,
    InclusiveSumUser,
    InclusiveSumUserComm,
    AffineUser,
    ReduceSum,
    ArgMin,
}

impl Algo {
    /// The default rows, in an order where rows checked against the same host result are adjacent.
    const DEFAULT: [Algo; 4] = [Algo::InclusiveSum, Algo::InclusiveSumInPlace, Algo::ExclusiveSum, Algo::InclusiveMax];
    /// Every row `--algos` takes: the default ones, the opt-in `_devsize`, `_det` and `_user` rows, and
    /// the reductions.
    const ALL: [Algo; 12] = [
        Algo::InclusiveSum,
        Algo::InclusiveSumInPlace,
        Algo::ExclusiveSum,
        Algo::InclusiveMax,
        Algo::InclusiveSumDevSize,
        Algo::InclusiveSumDet,
        Algo::ExclusiveSumDet,
        Algo::InclusiveSumUser,
        Algo::InclusiveSumUserComm,
        Algo::AffineUser,
        Algo::ReduceSum,
        Algo::ArgMin,
    ];

    fn name(self) -> &'static str {
        match self {
            Algo::InclusiveSum => "inclusive_sum",
            Algo::ExclusiveSum => "exclusive_sum",
            Algo::InclusiveSumInPlace => "inclusive_sum_in_place",
            Algo::InclusiveMax => "inclusive_max",
            Algo::InclusiveSumDevSize => "inclusive_sum_devsize",
            Algo::InclusiveSumDet => "inclusive_sum_det",
            Algo::ExclusiveSumDet => "exclusive_sum_det",
            Algo::InclusiveSumUser => "inclusive_sum_user",
            Algo::InclusiveSumUserComm => "inclusive_sum_user_comm",
            Algo::AffineUser => "affine_user",
            Algo::ReduceSum => "reduce_sum",
            Algo::ArgMin => "arg_min",
        }
    }

    /// The row a paired row is compared with: a `_devsize` row's host-size call, a `_det` row's default
    /// (not deterministic) call, the user sum's built-in one.
    fn base(self) -> Option<Algo> {
        match self {
            Algo::InclusiveSumDevSize | Algo::InclusiveSumDet | Algo::InclusiveSumUser | Algo::InclusiveSumUserComm => {
                Some(Algo::InclusiveSum)
            }
            Algo::ExclusiveSumDet => Some(Algo::ExclusiveSum),
            _ => None,
        }
    }

    fn parse(s: &str) -> Result<Algo, String> {
        Algo::ALL.into_iter().find(|a| a.name() == s).ok_or_else(|| format!("unknown algorithm `{s}`"))
    }

    fn in_place(self) -> bool {
        self == Algo::InclusiveSumInPlace
    }

    /// The host computation the output is checked against.
    fn reference(self) -> Reference {
        match self {
            Algo::InclusiveSum
            | Algo::InclusiveSumInPlace
            | Algo::InclusiveSumDevSize
            | Algo::InclusiveSumDet
            | Algo::InclusiveSumUser
            | Algo::InclusiveSumUserComm
            | Algo::AffineUser
            | Algo::ReduceSum
            | Algo::ArgMin => Reference::InclusiveSum,
            Algo::ExclusiveSum | Algo::ExclusiveSumDet => Reference::ExclusiveSum,
            Algo::InclusiveMax => Reference::InclusiveMax,
        }
    }
}

type Args = common::Args<Algo>;

/// The common flags (`--backoff` takes a list: a sweep of the inclusive sum of each type).
fn parse_args(argv: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    common::parse_args(argv, CSV_NAME, &ElemType::ALL, &Algo::DEFAULT, Algo::parse)
}

// ---------------------------------------------------------------------------------------------
// Element types: how inputs are made and outputs compared
// ---------------------------------------------------------------------------------------------

/// What the scan benchmark needs of an element type beyond [`BenchElement`].
trait Sample: BenchElement + DeviceType {
    /// The exclusive-sum seed.
    const ZERO: Self;
    /// An input value from 64 random bits.
    fn sample(bits: u64) -> Self;
    /// The sum as a run-time compiled user operator, for the `inclusive_sum_user` row (`None`: no row for
    /// this type).
    fn user_sum() -> Option<lookback::Result<UserScanOp<Self, Self>>>;
}

/// The user-operator sum of `T`, for the types whose built-in sum accumulates in `T` itself (u8 and f16
/// accumulate in a wider type: no row). Integer sums add as unsigned, so that they wrap like the built-in
/// one rather than overflow signed (undefined in C++).
fn user_sum_of<T: Sample>() -> Option<lookback::Result<UserScanOp<T, T>>> {
    let (expr, zero) = match T::DTYPE {
        lookback::DType::I32 => ("(int32_t)((uint32_t)a + (uint32_t)b)", "0"),
        lookback::DType::I64 => ("(int64_t)((uint64_t)a + (uint64_t)b)", "0"),
        lookback::DType::F32 | lookback::DType::F64 => ("a + b", "0"),
        _ => return None,
    };
    // The host closure is never called: the row is checked against the built-in sum's host result.
    // SAFETY: a pure expression of a and b.
    Some(unsafe { UserScanOp::new(expr, zero, |a: T, _: T| a, T::ZERO) })
}

macro_rules! int_sample {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            const ZERO: Self = 0;
            fn user_sum() -> Option<lookback::Result<UserScanOp<Self, Self>>> {
                user_sum_of::<Self>()
            }
            fn sample(bits: u64) -> Self {
                // 0..1000 (u8 wraps to 0..255): sums of i32 wrap the same way on both sides.
                (bits % 1000) as $t
            }
        }
    )*};
}
int_sample!(i32, u8, i64);

macro_rules! float_sample {
    ($($t:ty: $from:expr);*) => {$(
        impl Sample for $t {
            const ZERO: Self = <$t>::from_bits(0);
            fn user_sum() -> Option<lookback::Result<UserScanOp<Self, Self>>> {
                user_sum_of::<Self>()
            }
            fn sample(bits: u64) -> Self {
                // Multiples of 1/8 in [-0.5, 0.5] with mean 0: every partial sum stays a small dyadic
                // rational, so sums are exact in any order (and a 2^30 random walk stays inside f16).
                $from(((bits % 9) as f64 - 4.0) / 8.0)
            }
        }
    )*};
}
float_sample! {
    f16: f16::from_f64;
    f32: |x: f64| x as f32;
    f64: |x: f64| x
}

fn random_input<T: Sample>(n: usize, seed: u64) -> Vec<T> {
    let mut rng = XorShift(seed | 1);
    (0..n).map(|_| T::sample(rng.next())).collect()
}

// ---------------------------------------------------------------------------------------------
// Buffers of one (type, size)
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reference {
    InclusiveSum,
    ExclusiveSum,
    InclusiveMax,
}

/// The input on the host and `copies` identical device inputs, each with its own output buffer.
struct Buffers<T> {
    host: Vec<T>,
    inputs: Vec<CudaSlice<T>>,
    outputs: Vec<CudaSlice<T>>,
    reference: ReferenceCache<T>,
}

/// The last host reference computed: rows of one kind are usually adjacent, and at 2^30 items one
/// takes seconds and gigabytes.
struct ReferenceCache<T>(Option<(Reference, Vec<T>)>);

impl<T: Sample> ReferenceCache<T> {
    /// The host result of `kind` on `input`, computed with `lookback::host`.
    fn get(&mut self, input: &[T], kind: Reference) -> lookback::Result<&[T]> {
        if self.0.as_ref().is_none_or(|(k, _)| *k != kind) {
            self.0 = None; // free the old one before making the next
            let want = match kind {
                Reference::InclusiveSum => host::inclusive_scan(input, ScanOp::Sum)?,
                Reference::ExclusiveSum => host::exclusive_scan(input, T::ZERO, ScanOp::Sum)?,
                Reference::InclusiveMax => host::inclusive_scan(input, ScanOp::Max)?,
            };
            self.0 = Some((kind, want));
        }
        Ok(&self.0.as_ref().expect("set above").1)
    }
}

impl<T: Sample> Buffers<T> {
    /// Uploads one random input once, then copies it on the device.
    fn new(stream: &Arc<CudaStream>, n: usize, seed: u64) -> BoxResult<Buffers<T>> {
        let host = random_input::<T>(n, seed);
        let bytes = n * size_of::<T>();
        let copies = copies_for(bytes, 2 * bytes);
        let inputs = upload_copies(stream, &host, copies)?;
        let outputs = alloc_copies(stream, n, copies)?;
        Ok(Buffers { host, inputs, outputs, reference: ReferenceCache(None) })
    }

    fn copies(&self) -> usize {
        self.inputs.len()
    }

    fn bytes(&self) -> usize {
        self.host.len() * size_of::<T>()
    }

    /// Before a row: in-place scans start from copies of the input, the others from poison, so a
    /// kernel that writes nothing cannot pass the check.
    fn prepare(&mut self, stream: &Arc<CudaStream>, algo: Algo) -> Result<(), DriverError> {
        for (input, output) in self.inputs.iter().zip(&mut self.outputs) {
            if algo.in_place() {
                stream.memcpy_dtod(input, output)?;
            } else {
                poison(stream, output)?;
            }
        }
        Ok(())
    }
}

/// One timed call of `algo` from `input` into `output` (in-place scans use `output` only). `device_n`
/// holds the item count on the device, for the `_devsize` row; `user` the user sum, for the `_user` row.
fn call<T: Sample>(
    ws: &mut Workspace,
    algo: Algo,
    input: &CudaSlice<T>,
    output: &mut CudaSlice<T>,
    device_n: &CudaSlice<u64>,
    user: Option<&UserScanOp<T, T>>,
) -> lookback::Result<()> {
    match algo {
        Algo::InclusiveSum => ws.inclusive_scan_into(input, output, ScanOp::Sum),
        Algo::ExclusiveSum => ws.exclusive_scan_into(input, output, T::ZERO, ScanOp::Sum),
        Algo::InclusiveSumInPlace => ws.inclusive_scan_in_place(output, ScanOp::Sum),
        Algo::InclusiveMax => ws.inclusive_scan_into(input, output, ScanOp::Max),
        Algo::InclusiveSumDevSize => ws.with_count(device_n, |ws| ws.inclusive_scan_into(input, output, ScanOp::Sum)),
        Algo::InclusiveSumDet => common::deterministic(ws, |ws| ws.inclusive_scan_into(input, output, ScanOp::Sum)),
        Algo::ExclusiveSumDet => {
            common::deterministic(ws, |ws| ws.exclusive_scan_into(input, output, T::ZERO, ScanOp::Sum))
        }
        Algo::InclusiveSumUser | Algo::InclusiveSumUserComm => match user {
            Some(op) => ws.inclusive_scan_user_into(input, output, op),
            None => Err(lookback::Error::InvalidSource { reason: "the user sum row needs its operator" }),
        },
        Algo::AffineUser | Algo::ReduceSum | Algo::ArgMin => {
            Err(lookback::Error::InvalidSource { reason: "the affine and reduction rows have their own outputs" })
        }
    }
}

/// Times `call` on the row's buffers, each run on the next input/output pair: outputs prepared first,
/// and an in-place row's buffer restored, untimed, after each call.
fn time_row<T: Sample>(
    timer: &mut Timer,
    algo: Algo,
    bufs: &mut Buffers<T>,
    mut call: impl FnMut(&CudaSlice<T>, &mut CudaSlice<T>) -> BoxResult<()>,
) -> BoxResult<f64> {
    let stream = timer.stream.clone();
    let k = bufs.copies();
    bufs.prepare(&stream, algo)?;
    let (inputs, outputs) = (&bufs.inputs, &mut bufs.outputs);
    timer.median_us(|step| {
        match step {
            Step::Run(i) => call(&inputs[i % k], &mut outputs[i % k])?,
            // The in-place scan consumed its input: restore it, untimed, for the call that
            // next uses this buffer (k runs later, so the copy is out of the L2 by then).
            Step::Reset(i) if algo.in_place() => stream.memcpy_dtod(&inputs[i % k], &mut outputs[i % k])?,
            Step::Reset(_) => {}
        }
        Ok(())
    })
}

/// Checks the output of the last timed call against the host, and makes the row.
fn checked_row<T: Sample>(
    timer: &Timer,
    label: String,
    algo: Algo,
    log2n: u32,
    bufs: &mut Buffers<T>,
    us: f64,
    memcpy_gbps: f64,
) -> BoxResult<Row> {
    let k = bufs.copies();
    let last = timer.last_buffer(k);
    let want = bufs.reference.get(&bufs.host, algo.reference())?;
    let out = &bufs.outputs[last];
    check(&timer.stream, &label, out.len(), &out.as_view(), want, false)?;
    Ok(Row { label, ty: T::NAME, log2n, copies: k, median_us: us, gbps: gbps(2 * bufs.bytes(), us), memcpy_gbps })
}

// ---------------------------------------------------------------------------------------------
// Rows and output
// ---------------------------------------------------------------------------------------------

/// One algorithm to time, with an optional back-off override.
#[derive(Clone, Copy, Debug)]
struct RowSpec {
    algo: Algo,
    backoff: Option<Backoff>,
}

impl RowSpec {
    fn label(&self, engine: lookback::Engine) -> String {
        let name = common::engine_label(self.algo.name(), engine);
        match self.backoff {
            None => name,
            Some(b) => format!("{name}@{}:{}", b.first_poll_ns, b.poll_ns),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The benchmark
// ---------------------------------------------------------------------------------------------

struct Bench {
    timer: Timer,
    ws: Workspace,
    memcpy: MemcpyBaseline,
    engine: lookback::Engine,
}

impl Bench {
    fn stream(&self) -> Arc<CudaStream> {
        self.timer.stream.clone()
    }

    /// Every row of one element type at one size, sharing one set of buffers.
    fn run_size<T: Sample>(&mut self, log2n: u32, specs: &[RowSpec], report: &mut Report) -> BoxResult<()> {
        let seed = 0x9E37_79B9_7F4A_7C15 ^ u64::from(log2n);
        let mut bufs = Buffers::<T>::new(&self.stream(), 1 << log2n, seed)?;
        let memcpy_gbps = self.memcpy.gbps(&mut self.timer, log2n, &bufs.inputs, &mut bufs.outputs, report)?;
        let mut measured = Measured::default();
        for &spec in specs {
            // affine_user has buffers of its own (run_type); the user sum exists for some types only.
            let user_row = matches!(spec.algo, Algo::InclusiveSumUser | Algo::InclusiveSumUserComm);
            if spec.algo == Algo::AffineUser || (user_row && T::user_sum().is_none()) {
                continue;
            }
            if matches!(spec.algo, Algo::ReduceSum | Algo::ArgMin) {
                self.run_reduce(spec.algo, log2n, &bufs, memcpy_gbps, report)?;
                continue;
            }
            let row = self.run_row(spec, log2n, &mut bufs, memcpy_gbps)?;
            if spec.backoff.is_none() {
                let versus = measured.versus(spec.algo.base());
                measured.record(spec.algo, &row);
                if versus.is_some() {
                    // CUB's counterpart of a paired row, where it has one: the deterministic sums.
                    #[cfg(feature = "cub-baseline")]
                    {
                        let cub = self.run_cub_row(spec, log2n, &mut bufs, memcpy_gbps);
                        report.push_versus_with_cub(row, versus, cub)?;
                    }
                    #[cfg(not(feature = "cub-baseline"))]
                    report.push_versus(row, versus)?;
                    continue;
                }
            }
            #[cfg(feature = "cub-baseline")]
            {
                let cub = self.run_cub_row(spec, log2n, &mut bufs, memcpy_gbps);
                report.push_with_cub(row, cub)?;
            }
            #[cfg(not(feature = "cub-baseline"))]
            report.push(row)?;
        }
        Ok(())
    }

    /// Times one row, then checks the output of its last run against the host.
    fn run_row<T: Sample>(
        &mut self,
        spec: RowSpec,
        log2n: u32,
        bufs: &mut Buffers<T>,
        memcpy_gbps: f64,
    ) -> BoxResult<Row> {
        let algo = spec.algo;
        let device_n = self.stream().clone_htod(&[bufs.host.len() as u64])?;
        let user = match algo {
            Algo::InclusiveSumUser | Algo::InclusiveSumUserComm => {
                let op = T::user_sum().ok_or("no user sum for this type")??;
                let op = if algo == Algo::InclusiveSumUserComm { op.commutative() } else { op };
                // The compile (or the cache lookup) of the operator's kernels, before anything is timed.
                print_compile(algo.name(), T::NAME, log2n, &op.compile(&self.stream())?);
                Some(op)
            }
            _ => None,
        };
        self.ws.set_backoff(spec.backoff);
        let ws = &mut self.ws;
        let timed = time_row(&mut self.timer, algo, bufs, |input, output| {
            Ok(call(ws, algo, input, output, &device_n, user.as_ref())?)
        });
        self.ws.set_backoff(None);
        let us = timed?;
        checked_row(&self.timer, spec.label(self.engine), algo, log2n, bufs, us, memcpy_gbps)
    }

    /// CUB's counterpart of a row (`None`: CUB has none; back-off rows only vary lookback), on the same
    /// buffers, timed and checked the same way.
    #[cfg(feature = "cub-baseline")]
    fn run_cub_row<T: Sample>(
        &mut self,
        spec: RowSpec,
        log2n: u32,
        bufs: &mut Buffers<T>,
        memcpy_gbps: f64,
    ) -> Option<BoxResult<Row>> {
        if spec.backoff.is_some() {
            return None;
        }
        let fns = T::SCAN?;
        let algo = spec.algo;
        let f = match algo {
            Algo::InclusiveSum | Algo::InclusiveSumInPlace => fns.inclusive_sum,
            Algo::ExclusiveSum => fns.exclusive_sum,
            Algo::InclusiveMax => fns.inclusive_max,
            // CUB's run-to-run deterministic float sums (CUB 3.5.0 on; none in 3.0.1).
            Algo::InclusiveSumDet => fns.deterministic(false)?,
            Algo::ExclusiveSumDet => fns.deterministic(true)?,
            // The user rows are compared with the built-in row, which has its CUB line; the reductions
            // time CUB in run_reduce.
            Algo::InclusiveSumDevSize
            | Algo::InclusiveSumUser
            | Algo::InclusiveSumUserComm
            | Algo::AffineUser
            | Algo::ReduceSum
            | Algo::ArgMin => {
                return None;
            }
        };
        let runner = common::cub::Runner::new(f, &self.stream(), bufs.host.len());
        Some(runner.and_then(|mut runner| {
            let mut run = |input: &CudaSlice<T>, output: &mut CudaSlice<T>| {
                if algo.in_place() { runner.scan_in_place(output) } else { runner.scan(input, output) }
            };
            // One untimed call first: the runtime loads each CUB kernel at its first launch, and
            // open_gpu preloaded lookback's.
            run(&bufs.inputs[0], &mut bufs.outputs[0])?;
            self.stream().synchronize()?;
            let us = time_row(&mut self.timer, algo, bufs, run)?;
            checked_row(&self.timer, format!("cub:{}", algo.name()), algo, log2n, bufs, us, memcpy_gbps)
        }))
    }

    fn run_type(&mut self, ty: ElemType, log2n: u32, specs: &[RowSpec], report: &mut Report) -> BoxResult<()> {
        match ty {
            ElemType::I32 => self.run_size::<i32>(log2n, specs, report),
            ElemType::U8 => self.run_size::<u8>(log2n, specs, report),
            ElemType::I64 => self.run_size::<i64>(log2n, specs, report),
            ElemType::F16 => self.run_size::<f16>(log2n, specs, report),
            ElemType::F32 => {
                self.run_size::<f32>(log2n, specs, report)?;
                if specs.iter().any(|s| s.algo == Algo::AffineUser) {
                    self.run_affine::<f32>(log2n, report)?;
                }
                Ok(())
            }
            ElemType::F64 => {
                self.run_size::<f64>(log2n, specs, report)?;
                if specs.iter().any(|s| s.algo == Algo::AffineUser) {
                    self.run_affine::<f64>(log2n, report)?;
                }
                Ok(())
            }
        }
    }
}

impl Bench {
    /// The `affine_user` row: h[t] = a[t]·h[t-1] + b[t] (h[-1] = 0) as a scan of {a, b} pairs under
    /// affine composition, storing h, in f32 or f64. Checked against a sequential f64 loop: every a is in
    /// [0.5, 1) and every b in [-1, 1), so |h| < 2 and the scan stays within `F::TOLERANCE` of it (the
    /// errors of earlier steps shrink by the product of the a's).
    fn run_affine<F>(&mut self, log2n: u32, report: &mut Report) -> BoxResult<()>
    where
        F: AffineFloat,
        Affine<F>: DeviceType,
    {
        let stream = self.stream();
        let n = 1usize << log2n;
        let mut rng = XorShift(0xAFF1_4E00 ^ u64::from(log2n) | 1);
        let unit = |bits: u64| (bits >> 40) as f64 / (1u64 << 24) as f64;
        let host: Vec<Affine<F>> = (0..n)
            .map(|_| Affine {
                a: F::from_f64(0.5 + 0.5 * unit(rng.next())),
                b: F::from_f64(2.0 * unit(rng.next()) - 1.0),
            })
            .collect();
        let bytes = n * size_of::<Affine<F>>();
        let copies = copies_for(bytes, bytes + n * size_of::<F>());
        let inputs = (0..copies).map(|_| stream.clone_htod(&host)).collect::<Result<Vec<_>, _>>()?;
        let mut outputs = alloc_copies::<F>(&stream, n, copies)?;
        // memcpy of the input's bytes (two floats per item), rotated over as many copies as the row's.
        let memcpy_gbps = {
            let (from, mut to) =
                (alloc_copies::<F>(&stream, 2 * n, copies)?, alloc_copies::<F>(&stream, 2 * n, copies)?);
            self.memcpy.gbps(&mut self.timer, log2n, &from, &mut to, report)?
        };
        let op = linear_recurrence::<F>()?;
        print_compile("affine_user", <F as BenchElement>::NAME, log2n, &op.compile(&stream)?);
        for out in &mut outputs {
            poison(&stream, out)?;
        }
        let ws = &mut self.ws;
        let us = self.timer.median_us(|step| {
            if let Step::Run(i) = step {
                ws.inclusive_scan_user_into(&inputs[i % copies], &mut outputs[i % copies], &op)?;
            }
            Ok(())
        })?;
        let got = stream.clone_dtoh(&outputs[self.timer.last_buffer(copies)])?;
        let mut h = 0.0f64;
        for (i, (step, &g)) in host.iter().zip(&got).enumerate() {
            h = step.a.to_f64() * h + step.b.to_f64();
            if (g.to_f64() - h).abs() > F::TOLERANCE || g.to_f64().is_nan() {
                return Err(format!(
                    "CHECK FAILED affine_user {} n={n}: item {i} is {g}, the loop says {h}",
                    <F as BenchElement>::NAME
                )
                .into());
            }
        }
        let label = common::engine_label(Algo::AffineUser.name(), self.engine);
        let item_bytes = 3 * size_of::<F>();
        let row = Row {
            label,
            ty: <F as BenchElement>::NAME,
            log2n,
            copies,
            median_us: us,
            gbps: gbps(item_bytes * n, us),
            memcpy_gbps,
        };
        #[cfg(feature = "cub-baseline")]
        report.push_with_cub(row, None)?;
        #[cfg(not(feature = "cub-baseline"))]
        report.push(row)?;
        Ok(())
    }
}

impl Bench {
    /// A reduction row (`reduce_sum`, `arg_min`): every run reads the next input copy and writes one
    /// result; the last result is checked against the host exactly (the samples sum exactly in any
    /// order; arg_min's many ties must go to the first index). GB/s counts the bytes read. CUB's
    /// counterpart follows on the same inputs.
    fn run_reduce<T: Sample>(
        &mut self,
        algo: Algo,
        log2n: u32,
        bufs: &Buffers<T>,
        memcpy_gbps: f64,
        report: &mut Report,
    ) -> BoxResult<()> {
        let label = common::engine_label(algo.name(), self.engine);
        let us = self.time_reduction(algo, &label, bufs, |ws, input, sum, arg| match algo {
            Algo::ArgMin => ws.arg_min_into(input, arg),
            _ => ws.reduce_into(input, sum, ScanOp::Sum),
        })?;
        let k = bufs.copies();
        let row =
            Row { label, ty: T::NAME, log2n, copies: k, median_us: us, gbps: gbps(bufs.bytes(), us), memcpy_gbps };
        #[cfg(feature = "cub-baseline")]
        {
            let cub = T::SCAN.map(|fns| {
                let f = if algo == Algo::ArgMin { fns.arg_min } else { fns.reduce_sum };
                let mut runner = common::cub::Runner::new(f, &self.stream(), bufs.host.len())?;
                let label = format!("cub:{}", algo.name());
                let us = self.time_reduction(algo, &label, bufs, |_, input, sum, arg| {
                    if algo == Algo::ArgMin { runner.reduce(input, arg) } else { runner.reduce(input, sum) }
                })?;
                Ok(Row {
                    label,
                    ty: T::NAME,
                    log2n,
                    copies: k,
                    median_us: us,
                    gbps: gbps(bufs.bytes(), us),
                    memcpy_gbps,
                })
            });
            report.push_with_cub(row, cub)?;
        }
        #[cfg(not(feature = "cub-baseline"))]
        report.push(row)?;
        Ok(())
    }

    /// Times `call(ws, input, sum_out, arg_out)` over the input copies, each into its own poisoned
    /// one-item outputs (one untimed call first), and checks the last run's result.
    fn time_reduction<T: Sample, E: Into<Box<dyn std::error::Error>>>(
        &mut self,
        algo: Algo,
        label: &str,
        bufs: &Buffers<T>,
        mut call: impl FnMut(
            &mut Workspace,
            &CudaSlice<T>,
            &mut CudaSlice<T>,
            &mut CudaSlice<lookback::ArgItem<T>>,
        ) -> Result<(), E>,
    ) -> BoxResult<f64> {
        let stream = self.stream();
        let k = bufs.copies();
        let mut sums = alloc_copies::<T>(&stream, 1, k)?;
        for out in &mut sums {
            poison(&stream, out)?;
        }
        let poisoned = lookback::ArgItem { index: u64::MAX - 1, value: T::ZERO };
        let mut args = (0..k).map(|_| stream.clone_htod(&[poisoned])).collect::<Result<Vec<_>, _>>()?;
        let ws = &mut self.ws;
        call(ws, &bufs.inputs[0], &mut sums[0], &mut args[0]).map_err(Into::into)?;
        stream.synchronize()?;
        let us = self.timer.median_us(|step| {
            if let Step::Run(i) = step {
                call(ws, &bufs.inputs[i % k], &mut sums[i % k], &mut args[i % k]).map_err(Into::into)?;
            }
            Ok(())
        })?;
        let last = self.timer.last_buffer(k);
        let (got, want) = if algo == Algo::ArgMin {
            let got = stream.clone_dtoh(&args[last])?[0];
            (
                format!("{:?}", (got.index, got.value)),
                format!("{:?}", host::arg_min(&bufs.host).map(|(i, v)| (i as u64, v))),
            )
        } else {
            (
                format!("{:?}", stream.clone_dtoh(&sums[last])?[0]),
                format!("{:?}", host::reduce(&bufs.host, ScanOp::Sum)?),
            )
        };
        // arg_min's result as Some((index, value)) on the device side too.
        let got = if algo == Algo::ArgMin { format!("Some({got})") } else { got };
        if got != want {
            return Err(
                format!("CHECK FAILED {label} {} n={}: got {got}, want {want}", T::NAME, bufs.host.len()).into()
            );
        }
        Ok(us)
    }
}

/// The float types of the `affine_user` row (`lookback::rtc::linear_recurrence` over f32: 8-byte
/// accumulators, one 16-byte status unit; f64: 16 bytes, two units).
trait AffineFloat: BenchElement + RecurrenceFloat + lookback::Element + Default + std::fmt::Display
where
    Affine<Self>: DeviceType,
{
    /// How far the scan may stray from the sequential f64 loop.
    const TOLERANCE: f64;
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
}
impl AffineFloat for f32 {
    const TOLERANCE: f64 = 1e-4;
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}
impl AffineFloat for f64 {
    const TOLERANCE: f64 = 1e-9;
    fn from_f64(x: f64) -> Self {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// The compile (or cache lookup) of a user row's kernels.
fn print_compile(row: &str, ty: &str, log2n: u32, r: &CompileReport) {
    println!(
        "compile {row} {ty} n=2^{log2n}: {:?} in {:.1} ms ({}, {} bytes)",
        r.hit,
        r.seconds * 1e3,
        r.arch,
        r.cubin_bytes
    );
}

/// The rows to time for each element type of `--types`: the chosen algorithms with default back-off,
/// then the inclusive sum under each back-off of the sweep.
fn plan(args: &Args) -> Vec<(ElemType, Vec<RowSpec>)> {
    let algos = common::paired(&args.algos, Algo::base);
    let sweep = args.backoffs.iter().map(|&b| RowSpec { algo: Algo::InclusiveSum, backoff: Some(b) });
    let specs = || algos.iter().map(|&algo| RowSpec { algo, backoff: None }).chain(sweep.clone()).collect();
    args.types.iter().map(|&t| (t, specs())).collect()
}

fn run(args: &Args, stream: &Arc<CudaStream>) -> BoxResult<()> {
    common::open_gpu(stream, args.reps)?;
    let mut bench = Bench {
        timer: Timer::new(stream, args.reps)?,
        ws: Workspace::new(stream),
        memcpy: MemcpyBaseline::default(),
        engine: args.engine,
    };
    bench.ws.set_engine(args.engine);
    let paired = args.algos.iter().any(|a| a.base().is_some());
    let mut report = Report::create_with(&common::csv_paths(&args.csv, CSV_NAME), paired)?;
    for (ty, specs) in plan(args) {
        for &log2n in &args.sizes {
            bench.run_type(ty, log2n, &specs, &mut report)?;
        }
    }
    report.summary();
    Ok(())
}

fn main() -> BoxResult<()> {
    common::bench_main("scan", USAGE, parse_args, run)
}
