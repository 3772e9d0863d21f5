//! Device-wide scan benchmark: times `lookback` scans with CUDA events and compares their bandwidth
//! with a device-to-device memcpy of the same byte count, measured in the same process.
//!
//! Run `cargo bench --bench scan -- --help` for the flags; `benches/README.md` explains the output.
//! Without a GPU (or without kernels) it prints one line and exits 0, so `cargo bench` passes anywhere.

use lookback::cudarc::driver::{
    CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtrMut, DriverError, result, sys,
};
use lookback::half::f16;
use lookback::{Backoff, Element, ScanOp, Workspace, host};
use std::collections::HashMap;
use std::error::Error;
use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;

type BoxResult<T> = Result<T, Box<dyn Error>>;

const MIB: usize = 1 << 20;
const GIB: usize = 1 << 30;
/// Untimed calls before the timed ones (module load, workspace growth, clocks).
const WARMUP: usize = 3;
const DEFAULT_REPS: usize = 30;
const MIN_REPS: usize = 20;
const DEFAULT_SIZES: [u32; 8] = [16, 18, 20, 22, 24, 26, 28, 30];
/// Rotating among copies that span this many bytes keeps each run's data out of the 60 MB L2.
const ROTATION_BYTES: usize = 256 * MIB;
const MAX_COPIES: usize = 64;
/// Device memory one (type, size) may use for its input and output copies.
const ROW_BUDGET_BYTES: usize = 24 * GIB;
/// Items compared with the host at each end of the output.
const CHECK_ITEMS: usize = 1000;
/// The size whose rows the final summary lists.
const SUMMARY_LOG2N: u32 = 28;
/// A memset of this many bytes (~0.3 ms on an H200) keeps the GPU busy while the host enqueues...
const HEAD_START_BYTES: usize = GIB;
/// ...this many runs, so back-to-back small kernels are timed without host launch gaps.
const RUNS_PER_HEAD_START: usize = 15;
const CSV_NAME: &str = "bench-scan.csv";
const CSV_HEADER: &str = "algo,type,log2n,n,median_us,gbps,vs_memcpy,memcpy_gbps";

const USAGE: &str = "\
usage: cargo bench --bench scan -- [OPTIONS]
  --reps N                  timed runs per row, median reported (default 30, at least 20)
  --sizes A,B,...           log2 of the item count (default 16,18,20,22,24,26,28,30)
  --types T,...             element types among i32,u8,i64,f16,f32,f64 (default i32)
  --algos A,...             among inclusive_sum,inclusive_sum_in_place,exclusive_sum,inclusive_max
                            (default: all four)
  --backoff FIRST:POLL,...  also time inclusive_sum on i32 with each look-back back-off (ns),
                            labelled inclusive_sum@FIRST:POLL
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
}

impl Algo {
    /// The default rows, in an order where rows checked against the same host result are adjacent.
    const ALL: [Algo; 4] = [
        Algo::InclusiveSum,
        Algo::InclusiveSumInPlace,
        Algo::ExclusiveSum,
        Algo::InclusiveMax,
    ];

    fn name(self) -> &'static str {
        match self {
            Algo::InclusiveSum => "inclusive_sum",
            Algo::ExclusiveSum => "exclusive_sum",
            Algo::InclusiveSumInPlace => "inclusive_sum_in_place",
            Algo::InclusiveMax => "inclusive_max",
        }
    }

    fn parse(s: &str) -> Result<Algo, String> {
        Algo::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| format!("unknown algorithm `{s}`"))
    }

    fn in_place(self) -> bool {
        self == Algo::InclusiveSumInPlace
    }

    /// The host computation the output is checked against.
    fn reference(self) -> Reference {
        match self {
            Algo::InclusiveSum | Algo::InclusiveSumInPlace => Reference::InclusiveSum,
            Algo::ExclusiveSum => Reference::ExclusiveSum,
            Algo::InclusiveMax => Reference::InclusiveMax,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ElemType {
    I32,
    U8,
    I64,
    F16,
    F32,
    F64,
}

impl ElemType {
    const ALL: [ElemType; 6] = [
        ElemType::I32,
        ElemType::U8,
        ElemType::I64,
        ElemType::F16,
        ElemType::F32,
        ElemType::F64,
    ];

    fn name(self) -> &'static str {
        match self {
            ElemType::I32 => "i32",
            ElemType::U8 => "u8",
            ElemType::I64 => "i64",
            ElemType::F16 => "f16",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        }
    }

    fn parse(s: &str) -> Result<ElemType, String> {
        ElemType::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| format!("unknown type `{s}` (choose among i32,u8,i64,f16,f32,f64)"))
    }
}

#[derive(Debug)]
struct Args {
    reps: usize,
    sizes: Vec<u32>,
    types: Vec<ElemType>,
    algos: Vec<Algo>,
    backoffs: Vec<Backoff>,
    csv: PathBuf,
}

/// Parses the flags; `Ok(None)` means `--help`. Accepts `--flag value` and `--flag=value`, and
/// ignores the `--bench` cargo appends.
fn parse_args(mut argv: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut args = Args {
        reps: DEFAULT_REPS,
        sizes: DEFAULT_SIZES.to_vec(),
        types: vec![ElemType::I32],
        algos: Algo::ALL.to_vec(),
        backoffs: Vec::new(),
        csv: PathBuf::from(CSV_NAME),
    };
    while let Some(arg) = argv.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (arg, None),
        };
        match flag.as_str() {
            "--bench" => continue,
            "--help" | "-h" => return Ok(None),
            _ => {}
        }
        let value = inline
            .or_else(|| argv.next())
            .ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--reps" => {
                args.reps = value.parse().map_err(|_| format!("bad --reps `{value}`"))?;
                if args.reps < MIN_REPS {
                    return Err(format!("--reps must be at least {MIN_REPS}"));
                }
            }
            "--sizes" => args.sizes = parse_list(&value, parse_log2n)?,
            "--types" => args.types = parse_list(&value, ElemType::parse)?,
            "--algos" => args.algos = parse_list(&value, Algo::parse)?,
            "--backoff" => args.backoffs = parse_list(&value, parse_backoff)?,
            "--csv" => args.csv = PathBuf::from(value),
            _ => return Err(format!("unknown flag `{flag}`")),
        }
    }
    Ok(Some(args))
}

fn parse_list<T>(s: &str, item: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(item)
        .collect()
}

fn parse_log2n(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(v) if (1..=31).contains(&v) => Ok(v),
        _ => Err(format!("bad size `{s}` (log2 of the item count, 1..=31)")),
    }
}

fn parse_backoff(s: &str) -> Result<Backoff, String> {
    let bad = || format!("bad back-off `{s}` (expected FIRST:POLL in nanoseconds)");
    let (first, poll) = s.split_once(':').ok_or_else(bad)?;
    Ok(Backoff {
        first_poll_ns: first.trim().parse().map_err(|_| bad())?,
        poll_ns: poll.trim().parse().map_err(|_| bad())?,
    })
}

// ---------------------------------------------------------------------------------------------
// Element types: how inputs are made and outputs compared
// ---------------------------------------------------------------------------------------------

/// What the benchmark needs of an element type beyond [`Element`].
trait Sample: Element {
    const NAME: &'static str;
    /// The exclusive-sum seed.
    const ZERO: Self;
    /// An input value from 64 random bits.
    fn sample(bits: u64) -> Self;
    /// Whether a device output matches the host reference.
    fn matches(got: Self, want: Self) -> bool;
}

macro_rules! int_sample {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            const NAME: &'static str = stringify!($t);
            const ZERO: Self = 0;
            fn sample(bits: u64) -> Self {
                // 0..1000 (u8 wraps to 0..255): sums of i32 wrap the same way on both sides.
                (bits % 1000) as $t
            }
            fn matches(got: Self, want: Self) -> bool {
                got == want
            }
        }
    )*};
}
int_sample!(i32, u8, i64);

macro_rules! float_sample {
    ($($t:ty: $from:expr, $to:expr);*) => {$(
        impl Sample for $t {
            const NAME: &'static str = stringify!($t);
            const ZERO: Self = <$t>::from_bits(0);
            fn sample(bits: u64) -> Self {
                // Multiples of 1/8 in [-0.5, 0.5] with mean 0: every partial sum stays a small dyadic
                // rational, so sums are exact in any order (and a 2^30 random walk stays inside f16).
                $from(((bits % 9) as f64 - 4.0) / 8.0)
            }
            fn matches(got: Self, want: Self) -> bool {
                let (g, w) = ($to(got), $to(want));
                // Exact in practice; the slack (one f16 ulp) only forgives a rounding-mode difference.
                g == w || (g.is_finite() && (g - w).abs() <= 1e-3 * w.abs().max(1.0))
            }
        }
    )*};
}
float_sample! {
    f16: f16::from_f64, f16::to_f64;
    f32: |x: f64| x as f32, f64::from;
    f64: |x: f64| x, |x: f64| x
}

/// xorshift64: plenty for benchmark inputs, and no dependency.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn random_input<T: Sample>(n: usize, seed: u64) -> Vec<T> {
    let mut rng = XorShift(seed | 1);
    (0..n).map(|_| T::sample(rng.next())).collect()
}

// ---------------------------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------------------------

/// What the timer asks of a row: run call `i`, or undo its effect on the data (for in-place scans)
/// outside the timed interval.
#[derive(Clone, Copy)]
enum Step {
    Run(usize),
    Reset(usize),
}

struct Timer {
    stream: Arc<CudaStream>,
    reps: usize,
    starts: Vec<CudaEvent>,
    ends: Vec<CudaEvent>,
    head_start: CudaSlice<u8>,
}

impl Timer {
    fn new(stream: &Arc<CudaStream>, reps: usize) -> Result<Timer, DriverError> {
        let ctx = stream.context();
        let events = || -> Result<Vec<CudaEvent>, DriverError> {
            (0..reps)
                .map(|_| ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)))
                .collect()
        };
        Ok(Timer {
            stream: stream.clone(),
            reps,
            starts: events()?,
            ends: events()?,
            head_start: stream.alloc_zeros(HEAD_START_BYTES)?,
        })
    }

    /// Median time of one call, in microseconds: `WARMUP` untimed calls, then `reps` calls each
    /// between its own pair of events. Everything is enqueued before the first wait, behind a long
    /// memset, so the events measure the GPU's time for the call and not the host's launch latency.
    fn median_us(&mut self, mut step: impl FnMut(Step) -> BoxResult<()>) -> BoxResult<f64> {
        let total = WARMUP + self.reps;
        for _ in 0..total.div_ceil(RUNS_PER_HEAD_START) {
            self.stream.memset_zeros(&mut self.head_start)?;
        }
        for i in 0..total {
            let timed = i.checked_sub(WARMUP);
            if let Some(t) = timed {
                self.starts[t].record(&self.stream)?;
            }
            step(Step::Run(i))?;
            if let Some(t) = timed {
                self.ends[t].record(&self.stream)?;
            }
            if i + 1 < total {
                step(Step::Reset(i))?;
            }
        }
        let mut ms = self
            .starts
            .iter()
            .zip(&self.ends)
            .map(|(s, e)| s.elapsed_ms(e))
            .collect::<Result<Vec<f32>, _>>()?;
        Ok(median(&mut ms) * 1e3)
    }

    /// The index of the buffer the last timed call used, with `copies` buffers in rotation.
    fn last_buffer(&self, copies: usize) -> usize {
        (WARMUP + self.reps - 1) % copies
    }
}

fn median(v: &mut [f32]) -> f64 {
    v.sort_by(f32::total_cmp);
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (f64::from(v[m - 1]) + f64::from(v[m])) / 2.0
    } else {
        f64::from(v[m])
    }
}

/// GB/s for `bytes` moved in `us` microseconds.
fn gbps(bytes: usize, us: f64) -> f64 {
    bytes as f64 / (us * 1e3)
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

/// How many input (and output) copies to rotate among so one pass over them all exceeds the L2.
fn copies_for(bytes: usize) -> usize {
    let budget = (ROW_BUDGET_BYTES / (2 * bytes)).max(1);
    ROTATION_BYTES
        .div_ceil(bytes)
        .clamp(1, MAX_COPIES)
        .min(budget)
}

impl<T: Sample> Buffers<T> {
    /// Uploads one random input once, then copies it on the device.
    fn new(stream: &Arc<CudaStream>, n: usize, seed: u64) -> BoxResult<Buffers<T>> {
        let host = random_input::<T>(n, seed);
        let copies = copies_for(n * size_of::<T>());
        let first = stream.clone_htod(&host)?;
        let mut inputs = (1..copies)
            .map(|_| stream.clone_dtod(&first))
            .collect::<Result<Vec<_>, _>>()?;
        inputs.push(first);
        let outputs = (0..copies)
            // SAFETY: every output is poisoned or overwritten before it is read (and any bit
            // pattern is a valid `Element`).
            .map(|_| unsafe { stream.alloc::<T>(n) })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Buffers {
            host,
            inputs,
            outputs,
            reference: ReferenceCache(None),
        })
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

/// Fills `buf` with 0xFF bytes: -1 for signed integers, the maximum for unsigned ones, NaN for floats.
fn poison<T: Element>(stream: &Arc<CudaStream>, buf: &mut CudaSlice<T>) -> Result<(), DriverError> {
    let bytes = buf.num_bytes();
    let (ptr, _guard) = buf.device_ptr_mut(stream);
    // SAFETY: `ptr` is valid for `bytes` bytes on `stream`'s context and the guard keeps the slice
    // borrowed until the memset is enqueued; every bit pattern is a valid `Element`.
    unsafe { result::memset_d8_async(ptr, 0xFF, bytes, stream.cu_stream()) }
}

/// One timed call of `algo` from `input` into `output` (in-place scans use `output` only).
fn call<T: Sample>(
    ws: &mut Workspace,
    algo: Algo,
    input: &CudaSlice<T>,
    output: &mut CudaSlice<T>,
) -> lookback::Result<()> {
    match algo {
        Algo::InclusiveSum => ws.inclusive_scan_into(input, output, ScanOp::Sum),
        Algo::ExclusiveSum => ws.exclusive_scan_into(input, output, T::ZERO, ScanOp::Sum),
        Algo::InclusiveSumInPlace => ws.inclusive_scan_in_place(output, ScanOp::Sum),
        Algo::InclusiveMax => ws.inclusive_scan_into(input, output, ScanOp::Max),
    }
}

/// A mismatch between the device output and the host reference.
#[derive(Debug)]
struct CheckFailed(String);

impl fmt::Display for CheckFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for CheckFailed {}

/// Compares the first and last `CHECK_ITEMS` items of `out` (so also the final one) with `want`.
fn check<T: Sample>(
    stream: &Arc<CudaStream>,
    label: &str,
    out: &CudaSlice<T>,
    want: &[T],
) -> BoxResult<()> {
    let n = out.len();
    let head = n.min(CHECK_ITEMS);
    let tail = n.saturating_sub(CHECK_ITEMS).max(head);
    for w in [0..head, tail..n] {
        if w.is_empty() {
            continue;
        }
        let got = stream.clone_dtoh(&out.slice(w.clone()))?;
        let bad = got
            .iter()
            .zip(&want[w.clone()])
            .position(|(&g, &e)| !T::matches(g, e));
        if let Some(off) = bad {
            let i = w.start + off;
            return Err(Box::new(CheckFailed(format!(
                "{label} {} n={n}: item {i} is {:?}, host says {:?}",
                T::NAME,
                got[off],
                want[i]
            ))));
        }
    }
    Ok(())
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
    fn label(&self) -> String {
        match self.backoff {
            None => self.algo.name().to_string(),
            Some(b) => format!("{}@{}:{}", self.algo.name(), b.first_poll_ns, b.poll_ns),
        }
    }
}

struct Row {
    label: String,
    ty: &'static str,
    log2n: u32,
    copies: usize,
    median_us: f64,
    gbps: f64,
    memcpy_gbps: f64,
}

impl Row {
    fn vs_memcpy(&self) -> f64 {
        self.gbps / self.memcpy_gbps
    }
}

/// Prints rows, appends them to the CSV files as they come (a failed run keeps what it measured),
/// and remembers them for the summary.
struct Report {
    csv: Vec<BufWriter<File>>,
    rows: Vec<Row>,
}

impl Report {
    fn create(paths: &[PathBuf]) -> BoxResult<Report> {
        let mut csv = Vec::new();
        for p in paths {
            let file =
                File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()))?;
            let mut w = BufWriter::new(file);
            writeln!(w, "{CSV_HEADER}")?;
            csv.push(w);
        }
        Ok(Report {
            csv,
            rows: Vec::new(),
        })
    }

    fn push(&mut self, row: Row) -> BoxResult<()> {
        println!(
            "{:<30} {:>3} n=2^{:<2}  t={:>10.1} us   GB/s {:>7.1}  vs_memcpy {:.3}  (copies {})",
            row.label,
            row.ty,
            row.log2n,
            row.median_us,
            row.gbps,
            row.vs_memcpy(),
            row.copies
        );
        for w in &mut self.csv {
            writeln!(
                w,
                "{},{},{},{},{:.3},{:.2},{:.4},{:.2}",
                row.label,
                row.ty,
                row.log2n,
                1u64 << row.log2n,
                row.median_us,
                row.gbps,
                row.vs_memcpy(),
                row.memcpy_gbps
            )?;
            w.flush()?;
        }
        self.rows.push(row);
        Ok(())
    }

    fn summary(&self) {
        let rows: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| r.log2n == SUMMARY_LOG2N)
            .collect();
        if rows.is_empty() {
            return;
        }
        println!("\nsummary, n = 2^{SUMMARY_LOG2N}:");
        println!(
            "{:<30} {:>4} {:>10} {:>8} {:>10}",
            "algo", "type", "us", "GB/s", "vs_memcpy"
        );
        for r in rows {
            println!(
                "{:<30} {:>4} {:>10.1} {:>8.1} {:>10.3}",
                r.label,
                r.ty,
                r.median_us,
                r.gbps,
                r.vs_memcpy()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The benchmark
// ---------------------------------------------------------------------------------------------

struct Bench {
    timer: Timer,
    ws: Workspace,
    /// memcpy GB/s by byte count, so each size is measured once per run.
    memcpy_gbps: HashMap<usize, f64>,
}

impl Bench {
    fn stream(&self) -> Arc<CudaStream> {
        self.timer.stream.clone()
    }

    /// Every row of one element type at one size, sharing one set of buffers.
    fn run_size<T: Sample>(
        &mut self,
        log2n: u32,
        specs: &[RowSpec],
        report: &mut Report,
    ) -> BoxResult<()> {
        let seed = 0x9E37_79B9_7F4A_7C15 ^ u64::from(log2n);
        let mut bufs = Buffers::<T>::new(&self.stream(), 1 << log2n, seed)?;
        let memcpy_gbps = self.memcpy::<T>(log2n, &mut bufs, report)?;
        for &spec in specs {
            let row = self.run_row(spec, log2n, &mut bufs, memcpy_gbps)?;
            report.push(row)?;
        }
        Ok(())
    }

    /// The device-to-device copy of the same bytes, timed the same way (cached by byte count).
    fn memcpy<T: Sample>(
        &mut self,
        log2n: u32,
        bufs: &mut Buffers<T>,
        report: &mut Report,
    ) -> BoxResult<f64> {
        let bytes = bufs.bytes();
        if let Some(&g) = self.memcpy_gbps.get(&bytes) {
            return Ok(g);
        }
        let stream = self.stream();
        let k = bufs.copies();
        let (inputs, outputs) = (&bufs.inputs, &mut bufs.outputs);
        let us = self.timer.median_us(|step| {
            if let Step::Run(i) = step {
                stream.memcpy_dtod(&inputs[i % k], &mut outputs[i % k])?;
            }
            Ok(())
        })?;
        let g = gbps(2 * bytes, us);
        self.memcpy_gbps.insert(bytes, g);
        report.push(Row {
            label: "memcpy".to_string(),
            ty: T::NAME,
            log2n,
            copies: k,
            median_us: us,
            gbps: g,
            memcpy_gbps: g,
        })?;
        Ok(g)
    }

    /// Times one row, then checks the output of its last run against the host.
    fn run_row<T: Sample>(
        &mut self,
        spec: RowSpec,
        log2n: u32,
        bufs: &mut Buffers<T>,
        memcpy_gbps: f64,
    ) -> BoxResult<Row> {
        let stream = self.stream();
        let algo = spec.algo;
        let k = bufs.copies();
        bufs.prepare(&stream, algo)?;
        self.ws.set_backoff(spec.backoff);
        let ws = &mut self.ws;
        let (inputs, outputs) = (&bufs.inputs, &mut bufs.outputs);
        let timed = self.timer.median_us(|step| {
            match step {
                Step::Run(i) => call(ws, algo, &inputs[i % k], &mut outputs[i % k])?,
                // The in-place scan consumed its input: restore it, untimed, for the call that
                // next uses this buffer (k runs later, so the copy is out of the L2 by then).
                Step::Reset(i) if algo.in_place() => {
                    stream.memcpy_dtod(&inputs[i % k], &mut outputs[i % k])?
                }
                Step::Reset(_) => {}
            }
            Ok(())
        });
        self.ws.set_backoff(None);
        let us = timed?;

        let last = self.timer.last_buffer(k);
        let label = spec.label();
        let want = bufs.reference.get(&bufs.host, algo.reference())?;
        check(&stream, &label, &bufs.outputs[last], want)?;
        Ok(Row {
            label,
            ty: T::NAME,
            log2n,
            copies: k,
            median_us: us,
            gbps: gbps(2 * bufs.bytes(), us),
            memcpy_gbps,
        })
    }

    fn run_type(
        &mut self,
        ty: ElemType,
        log2n: u32,
        specs: &[RowSpec],
        report: &mut Report,
    ) -> BoxResult<()> {
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
    let defaults = || {
        args.algos
            .iter()
            .map(|&algo| RowSpec {
                algo,
                backoff: None,
            })
            .collect::<Vec<_>>()
    };
    let mut plan: Vec<(ElemType, Vec<RowSpec>)> =
        args.types.iter().map(|&t| (t, defaults())).collect();
    if !args.backoffs.is_empty() {
        let sweep = args.backoffs.iter().map(|&b| RowSpec {
            algo: Algo::InclusiveSum,
            backoff: Some(b),
        });
        match plan.iter_mut().find(|(t, _)| *t == ElemType::I32) {
            Some((_, specs)) => specs.extend(sweep),
            None => plan.push((ElemType::I32, sweep.collect())),
        }
    }
    plan
}

/// Keeps allocator noise out of the timings. Must run before anything is allocated.
fn quiet_allocator(ctx: &Arc<CudaContext>) -> Result<(), DriverError> {
    // SAFETY: the benchmark uses one stream, so cudarc's per-allocation events (which only order
    // work across streams) are pure overhead; no slice exists yet.
    unsafe { ctx.disable_event_tracking() };
    // The default pool's release threshold is 0, which hands memory back to the OS at every
    // synchronization; keep it instead (cudarc-notes §6).
    // SAFETY: `cu_device` is this context's device.
    let pool = unsafe { result::device::get_default_mem_pool(ctx.cu_device()) }?;
    let mut threshold = u64::MAX;
    // SAFETY: the pool is valid and the release threshold attribute is a u64.
    unsafe {
        result::mem_pool::set_attribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&raw mut threshold).cast(),
        )
    }
}

fn csv_paths(args: &Args) -> Vec<PathBuf> {
    let mut paths = vec![args.csv.clone()];
    if let Some(out) = std::env::var_os("OUT") {
        let extra = PathBuf::from(out).join(CSV_NAME);
        if extra != args.csv {
            paths.push(extra);
        }
    }
    paths
}

fn run(args: &Args, stream: &Arc<CudaStream>) -> BoxResult<()> {
    let ctx = stream.context();
    quiet_allocator(ctx)?;
    println!(
        "GPU 0: {}; median of {} runs after {WARMUP} warm-ups; inputs rotated over >= {} MiB \
         (at most {MAX_COPIES} copies)",
        ctx.name()?,
        args.reps,
        ROTATION_BYTES / MIB
    );
    // Load every kernel now, so module loading cannot eat into the first row's head start.
    if let Err(e) = lookback::__private::load_all_kernels(stream) {
        println!("warning: preloading the kernels failed ({e}); the first calls will load them");
    }
    let mut bench = Bench {
        timer: Timer::new(stream, args.reps)?,
        ws: Workspace::new(stream),
        memcpy_gbps: HashMap::new(),
    };
    let mut report = Report::create(&csv_paths(args))?;
    for (ty, specs) in plan(args) {
        for &log2n in &args.sizes {
            bench.run_type(ty, log2n, &specs, &mut report)?;
        }
    }
    report.summary();
    Ok(())
}

fn main() -> BoxResult<()> {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}");
            return Ok(());
        }
        Err(msg) => {
            eprintln!("bench scan: {msg}\n{USAGE}");
            std::process::exit(2);
        }
    };
    // No GPU is not a failure: `cargo bench` must pass on build machines.
    let stream = match lookback::default_stream(0) {
        Ok(stream) => stream,
        Err(e) => {
            println!("bench scan: skipped, no usable GPU 0 ({e})");
            return Ok(());
        }
    };
    if !lookback::kernels_built() {
        println!("bench scan: skipped, lookback was built without nvcc so it has no GPU kernels");
        return Ok(());
    }
    match run(&args, &stream) {
        Err(e) if e.is::<CheckFailed>() => {
            eprintln!("\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
            eprintln!("CHECK FAILED: {e}");
            eprintln!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
            std::process::exit(1);
        }
        other => other,
    }
}
