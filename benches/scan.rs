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
                            the default row it is compared with)
  --backoff FIRST:POLL,...  also time inclusive_sum on i32 with each look-back back-off (ns),
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
}

impl Algo {
    /// The default rows, in an order where rows checked against the same host result are adjacent.
    const DEFAULT: [Algo; 4] = [Algo::InclusiveSum, Algo::InclusiveSumInPlace, Algo::ExclusiveSum, Algo::InclusiveMax];
    /// Every row `--algos` takes: the default ones and the opt-in `_devsize` and `_det` rows.
    const ALL: [Algo; 7] = [
        Algo::InclusiveSum,
        Algo::InclusiveSumInPlace,
        Algo::ExclusiveSum,
        Algo::InclusiveMax,
        Algo::InclusiveSumDevSize,
        Algo::InclusiveSumDet,
        Algo::ExclusiveSumDet,
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
        }
    }

    /// The row a paired row is compared with: a `_devsize` row's host-size call, a `_det` row's default
    /// (not deterministic) call.
    fn base(self) -> Option<Algo> {
        match self {
            Algo::InclusiveSumDevSize | Algo::InclusiveSumDet => Some(Algo::InclusiveSum),
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
            Algo::InclusiveSum | Algo::InclusiveSumInPlace | Algo::InclusiveSumDevSize | Algo::InclusiveSumDet => {
                Reference::InclusiveSum
            }
            Algo::ExclusiveSum | Algo::ExclusiveSumDet => Reference::ExclusiveSum,
            Algo::InclusiveMax => Reference::InclusiveMax,
        }
    }
}

type Args = common::Args<Algo>;

/// The common flags (`--backoff` takes a list: a sweep of the inclusive sum).
fn parse_args(argv: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    common::parse_args(argv, CSV_NAME, &ElemType::ALL, &Algo::DEFAULT, Algo::parse)
}

// ---------------------------------------------------------------------------------------------
// Element types: how inputs are made and outputs compared
// ---------------------------------------------------------------------------------------------

/// What the scan benchmark needs of an element type beyond [`BenchElement`].
trait Sample: BenchElement {
    /// The exclusive-sum seed.
    const ZERO: Self;
    /// An input value from 64 random bits.
    fn sample(bits: u64) -> Self;
}

macro_rules! int_sample {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            const ZERO: Self = 0;
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
/// holds the item count on the device, for the `_devsize` row.
fn call<T: Sample>(
    ws: &mut Workspace,
    algo: Algo,
    input: &CudaSlice<T>,
    output: &mut CudaSlice<T>,
    device_n: &CudaSlice<u64>,
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
        self.ws.set_backoff(spec.backoff);
        let ws = &mut self.ws;
        let timed =
            time_row(&mut self.timer, algo, bufs, |input, output| Ok(call(ws, algo, input, output, &device_n)?));
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
            Algo::InclusiveSumDevSize => return None,
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
            ElemType::F32 => self.run_size::<f32>(log2n, specs, report),
            ElemType::F64 => self.run_size::<f64>(log2n, specs, report),
        }
    }
}

/// The rows to time for each element type: the chosen algorithms with default back-off, plus the
/// back-off sweep on i32 (which brings i32 in even if `--types` left it out).
fn plan(args: &Args) -> Vec<(ElemType, Vec<RowSpec>)> {
    let algos = common::paired(&args.algos, Algo::base);
    let defaults = || algos.iter().map(|&algo| RowSpec { algo, backoff: None }).collect::<Vec<_>>();
    let mut plan: Vec<(ElemType, Vec<RowSpec>)> = args.types.iter().map(|&t| (t, defaults())).collect();
    if !args.backoffs.is_empty() {
        let sweep = args.backoffs.iter().map(|&b| RowSpec { algo: Algo::InclusiveSum, backoff: Some(b) });
        match plan.iter_mut().find(|(t, _)| *t == ElemType::I32) {
            Some((_, specs)) => specs.extend(sweep),
            None => plan.push((ElemType::I32, sweep.collect())),
        }
    }
    plan
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
