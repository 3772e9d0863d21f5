//! What the benchmarks share: flag parsing, opening the GPU, CUDA-event timing with a median, buffer
//! rotation against the L2, the memcpy baseline, output checks, and the printed and CSV report.
//!
//! Each bench includes this file with `mod common;`, and no bench uses every item of it.
//! With the `cub-baseline` feature, `cub` adds CUB on the same buffers (benches/README.md).
#![allow(dead_code)]

#[cfg(feature = "cub-baseline")]
pub mod cub;

use lookback::Element;
use lookback::cudarc::driver::{
    CudaContext, CudaEvent, CudaSlice, CudaStream, CudaView, DevicePtrMut, DriverError, result, sys,
};
use lookback::half::f16;
use std::collections::HashMap;
use std::error::Error;
use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub type BoxResult<T> = Result<T, Box<dyn Error>>;

pub const MIB: usize = 1 << 20;
pub const GIB: usize = 1 << 30;
/// Untimed calls before the timed ones (module load, workspace growth, clocks).
pub const WARMUP: usize = 3;
pub const DEFAULT_REPS: usize = 30;
pub const MIN_REPS: usize = 20;
pub const DEFAULT_SIZES: [u32; 8] = [16, 18, 20, 22, 24, 26, 28, 30];
/// Rotating among copies that span this many bytes keeps each run's data out of the 60 MB L2.
pub const ROTATION_BYTES: usize = 256 * MIB;
pub const MAX_COPIES: usize = 64;
/// Device memory one (type, size) may use for its input and output copies.
pub const ROW_BUDGET_BYTES: usize = 24 * GIB;
/// Items compared with the host at each end of an output.
pub const CHECK_ITEMS: usize = 1000;
/// The size whose rows the final summary lists.
pub const SUMMARY_LOG2N: u32 = 28;
/// A memset of this many bytes (~0.3 ms on an H200) keeps the GPU busy while the host enqueues...
pub const HEAD_START_BYTES: usize = GIB;
/// ...this many runs, so back-to-back small kernels are timed without host launch gaps.
pub const RUNS_PER_HEAD_START: usize = 15;
#[cfg(not(feature = "cub-baseline"))]
pub const CSV_HEADER: &str = "algo,type,log2n,n,median_us,gbps,vs_memcpy,memcpy_gbps";
/// With CUB, one more column at the end (so readers of the others are unaffected): CUB's time over
/// lookback's, on lookback rows that have a `cub:` row; empty elsewhere.
#[cfg(feature = "cub-baseline")]
pub const CSV_HEADER: &str = "algo,type,log2n,n,median_us,gbps,vs_memcpy,memcpy_gbps,vs_cub";
/// What ends a CSV line that has no `vs_cub` value.
const CSV_NO_VS_CUB: &str = if cfg!(feature = "cub-baseline") { "," } else { "" };
/// With paired rows (`Report::create_with`), two more columns at the very end: the median of the row's
/// base and the row's time over it; empty on rows that have no base.
pub const CSV_VERSUS_COLUMNS: &str = ",base_us,vs_base";

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

/// Walks the flags, accepting `--flag value` and `--flag=value` and ignoring the `--bench` cargo
/// appends, and hands each flag with its value to `flag`. `Ok(false)` means `--help`.
pub fn parse_flags(
    mut argv: impl Iterator<Item = String>,
    mut flag: impl FnMut(&str, String) -> Result<(), String>,
) -> Result<bool, String> {
    while let Some(arg) = argv.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (arg, None),
        };
        match name.as_str() {
            "--bench" => continue,
            "--help" | "-h" => return Ok(false),
            _ => {}
        }
        let value = inline.or_else(|| argv.next()).ok_or_else(|| format!("{name} needs a value"))?;
        flag(&name, value)?;
    }
    Ok(true)
}

/// The flags every benchmark takes. `A` is the bench's row type.
#[derive(Debug)]
pub struct Args<A> {
    pub reps: usize,
    pub sizes: Vec<u32>,
    pub types: Vec<ElemType>,
    pub algos: Vec<A>,
    /// `--backoff F:P[,F:P...]`: the scan sweeps a list; the other benches take at most one.
    pub backoffs: Vec<lookback::Backoff>,
    /// `--engine auto|classic|persistent`: the kernel structure of primitives that have two.
    pub engine: lookback::Engine,
    pub csv: PathBuf,
}

impl<A> Args<A> {
    /// The one `--backoff` of benches that do not sweep (`None`: the tuned defaults).
    pub fn single_backoff(&self) -> Result<Option<lookback::Backoff>, String> {
        match self.backoffs.as_slice() {
            [] => Ok(None),
            [b] => Ok(Some(*b)),
            _ => Err("--backoff takes one F:P here".to_string()),
        }
    }
}

/// Parses the common flags; `Ok(None)` means `--help`. Accepts `--flag value` and `--flag=value`, and
/// ignores the `--bench` cargo appends. `types` are the element types the bench offers, `all` its rows.
pub fn parse_args<A: Copy>(
    argv: impl Iterator<Item = String>,
    csv_name: &str,
    types: &[ElemType],
    all: &[A],
    parse_algo: impl Fn(&str) -> Result<A, String>,
) -> Result<Option<Args<A>>, String> {
    let mut args = Args {
        reps: DEFAULT_REPS,
        sizes: DEFAULT_SIZES.to_vec(),
        types: vec![ElemType::I32],
        algos: all.to_vec(),
        backoffs: Vec::new(),
        engine: lookback::Engine::Auto,
        csv: PathBuf::from(csv_name),
    };
    let go_on = parse_flags(argv, |flag, value| {
        match flag {
            "--reps" => args.reps = parse_reps(&value)?,
            "--sizes" => args.sizes = parse_list(&value, parse_log2n)?,
            "--types" => args.types = parse_list(&value, |s| ElemType::parse_among(s, types))?,
            "--algos" => args.algos = parse_list(&value, &parse_algo)?,
            "--backoff" => args.backoffs = parse_list(&value, parse_backoff)?,
            "--engine" => args.engine = parse_engine(&value)?,
            "--csv" => args.csv = PathBuf::from(value),
            _ => return Err(unknown_flag(flag)),
        }
        Ok(())
    })?;
    Ok(go_on.then_some(args))
}

pub fn unknown_flag(flag: &str) -> String {
    format!("unknown flag `{flag}`")
}

pub fn parse_reps(value: &str) -> Result<usize, String> {
    let reps = value.parse().map_err(|_| format!("bad --reps `{value}`"))?;
    if reps < MIN_REPS {
        return Err(format!("--reps must be at least {MIN_REPS}"));
    }
    Ok(reps)
}

pub fn parse_list<T>(s: &str, item: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    s.split(',').map(str::trim).filter(|x| !x.is_empty()).map(item).collect()
}

pub fn parse_log2n(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(v) if (1..=31).contains(&v) => Ok(v),
        _ => Err(format!("bad size `{s}` (log2 of the item count, 1..=31)")),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemType {
    I32,
    U8,
    I64,
    F16,
    F32,
    F64,
}

impl ElemType {
    pub const ALL: [ElemType; 6] =
        [ElemType::I32, ElemType::U8, ElemType::I64, ElemType::F16, ElemType::F32, ElemType::F64];

    pub fn name(self) -> &'static str {
        match self {
            ElemType::I32 => "i32",
            ElemType::U8 => "u8",
            ElemType::I64 => "i64",
            ElemType::F16 => "f16",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        }
    }

    /// The type named `s`, among those a bench supports.
    pub fn parse_among(s: &str, allowed: &[ElemType]) -> Result<ElemType, String> {
        allowed.iter().copied().find(|t| t.name() == s).ok_or_else(|| {
            let names: Vec<&str> = allowed.iter().map(|t| t.name()).collect();
            format!("unknown type `{s}` (choose among {})", names.join(","))
        })
    }
}

/// The CSV files to write: `csv`, and `$OUT/name` if `OUT` is set.
pub fn csv_paths(csv: &Path, name: &str) -> Vec<PathBuf> {
    let mut paths = vec![csv.to_path_buf()];
    if let Some(out) = std::env::var_os("OUT") {
        let extra = PathBuf::from(out).join(name);
        if extra != csv {
            paths.push(extra);
        }
    }
    paths
}

// ---------------------------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------------------------

/// With `cub-baseline`, the shim's functions of an element type; without, nothing.
#[cfg(feature = "cub-baseline")]
pub use cub::Element as CubElement;
#[cfg(not(feature = "cub-baseline"))]
pub trait CubElement {}
#[cfg(not(feature = "cub-baseline"))]
impl<T> CubElement for T {}

/// What every bench needs of an element type beyond [`Element`].
pub trait BenchElement: Element + CubElement {
    const NAME: &'static str;
    /// Whether a device output matches the host reference.
    fn matches(got: Self, want: Self) -> bool;
}

macro_rules! int_element {
    ($($t:ty),*) => {$(
        impl BenchElement for $t {
            const NAME: &'static str = stringify!($t);
            fn matches(got: Self, want: Self) -> bool {
                got == want
            }
        }
    )*};
}
int_element!(i32, u8, i64);

macro_rules! float_element {
    ($($t:ty: $to:expr);*) => {$(
        impl BenchElement for $t {
            const NAME: &'static str = stringify!($t);
            fn matches(got: Self, want: Self) -> bool {
                let (g, w) = ($to(got), $to(want));
                // Exact in practice; the slack (one f16 ulp) only forgives a rounding-mode difference.
                g == w || (g.is_finite() && (g - w).abs() <= 1e-3 * w.abs().max(1.0))
            }
        }
    )*};
}
float_element! {
    f16: f16::to_f64;
    f32: f64::from;
    f64: |x: f64| x
}

/// xorshift64: plenty for benchmark inputs, and no dependency.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

// ---------------------------------------------------------------------------------------------
// The GPU
// ---------------------------------------------------------------------------------------------

/// GPU 0's stream, or `None` after printing why the bench is skipped: no GPU is not a failure, as
/// `cargo bench` must pass on build machines.
pub fn gpu_or_skip(bench: &str) -> Option<Arc<CudaStream>> {
    let stream = match lookback::default_stream(0) {
        Ok(stream) => stream,
        Err(e) => {
            println!("bench {bench}: skipped, no usable GPU 0 ({e})");
            return None;
        }
    };
    if !lookback::kernels_built() {
        println!("bench {bench}: skipped, lookback was built without nvcc so it has no GPU kernels");
        return None;
    }
    Some(stream)
}

/// Quiets the allocator, prints the header line and loads every kernel. Must run before anything is
/// allocated.
pub fn open_gpu(stream: &Arc<CudaStream>, reps: usize) -> BoxResult<()> {
    let ctx = stream.context();
    quiet_allocator(ctx)?;
    println!(
        "GPU 0: {}; median of {} runs after {WARMUP} warm-ups; inputs rotated over >= {} MiB \
         (at most {MAX_COPIES} copies)",
        ctx.name()?,
        reps,
        ROTATION_BYTES / MIB
    );
    // Load every kernel now, so module loading cannot eat into the first row's head start.
    if let Err(e) = lookback::__private::load_all_kernels(stream) {
        println!("warning: preloading the kernels failed ({e}); the first calls will load them");
    }
    #[cfg(feature = "cub-baseline")]
    println!(
        "CUB {} on the same buffers (cub-baseline): a cub:<row> line after each lookback row CUB has, \
         lookback/cub = CUB's time / lookback's (> 1: lookback faster)",
        cub::version()
    );
    Ok(())
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

/// Ends the bench: a failed check prints a banner and exits 1; other errors are returned.
pub fn finish(outcome: BoxResult<()>) -> BoxResult<()> {
    match outcome {
        Err(e) if e.is::<CheckFailed>() => {
            eprintln!("\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
            eprintln!("CHECK FAILED: {e}");
            eprintln!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
            std::process::exit(1);
        }
        other => other,
    }
}

// ---------------------------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------------------------

/// What the timer asks of a row: run call `i`, or undo its effect on the data (for in-place calls)
/// outside the timed interval.
#[derive(Clone, Copy)]
pub enum Step {
    Run(usize),
    Reset(usize),
}

pub struct Timer {
    pub stream: Arc<CudaStream>,
    reps: usize,
    starts: Vec<CudaEvent>,
    ends: Vec<CudaEvent>,
    head_start: CudaSlice<u8>,
}

impl Timer {
    pub fn new(stream: &Arc<CudaStream>, reps: usize) -> Result<Timer, DriverError> {
        let ctx = stream.context();
        let events = || -> Result<Vec<CudaEvent>, DriverError> {
            (0..reps).map(|_| ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))).collect()
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
    /// memset, so the events measure the GPU's time for the call and not the host's launch latency
    /// (unless the call itself waits for the GPU).
    pub fn median_us(&mut self, mut step: impl FnMut(Step) -> BoxResult<()>) -> BoxResult<f64> {
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
        let mut ms =
            self.starts.iter().zip(&self.ends).map(|(s, e)| s.elapsed_ms(e)).collect::<Result<Vec<f32>, _>>()?;
        Ok(median(&mut ms) * 1e3)
    }

    /// The index of the call `median_us` makes last (warm-ups included).
    pub fn last_run(&self) -> usize {
        WARMUP + self.reps - 1
    }

    /// The index of the buffer the last timed call used, with `copies` buffers in rotation.
    pub fn last_buffer(&self, copies: usize) -> usize {
        self.last_run() % copies
    }
}

pub fn median(v: &mut [f32]) -> f64 {
    v.sort_by(f32::total_cmp);
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) { (f64::from(v[m - 1]) + f64::from(v[m])) / 2.0 } else { f64::from(v[m]) }
}

/// GB/s for `bytes` moved in `us` microseconds.
pub fn gbps(bytes: usize, us: f64) -> f64 {
    bytes as f64 / (us * 1e3)
}

// ---------------------------------------------------------------------------------------------
// Buffers
// ---------------------------------------------------------------------------------------------

/// How many copies of an input of `bytes` bytes to rotate among so one pass over them all exceeds
/// the L2, when each copy takes `per_copy` bytes of device memory with its outputs.
pub fn copies_for(bytes: usize, per_copy: usize) -> usize {
    let budget = (ROW_BUDGET_BYTES / per_copy).max(1);
    ROTATION_BYTES.div_ceil(bytes).clamp(1, MAX_COPIES).min(budget)
}

/// Uploads `host` once, then copies it on the device: `copies` identical device buffers.
pub fn upload_copies<T: Element>(
    stream: &Arc<CudaStream>,
    host: &[T],
    copies: usize,
) -> Result<Vec<CudaSlice<T>>, DriverError> {
    let first = stream.clone_htod(host)?;
    let mut bufs = (1..copies).map(|_| stream.clone_dtod(&first)).collect::<Result<Vec<_>, _>>()?;
    bufs.push(first);
    Ok(bufs)
}

/// `copies` uninitialised buffers of `n` items, to be poisoned or overwritten before being read.
pub fn alloc_copies<T: Element>(
    stream: &Arc<CudaStream>,
    n: usize,
    copies: usize,
) -> Result<Vec<CudaSlice<T>>, DriverError> {
    (0..copies)
        // SAFETY: every buffer is poisoned or overwritten before it is read (and any bit
        // pattern is a valid `Element`).
        .map(|_| unsafe { stream.alloc::<T>(n) })
        .collect()
}

/// Fills `buf` with 0xFF bytes: -1 for signed integers, the maximum for unsigned ones, NaN for floats.
pub fn poison<T: Element>(stream: &Arc<CudaStream>, buf: &mut CudaSlice<T>) -> Result<(), DriverError> {
    let bytes = buf.num_bytes();
    let (ptr, _guard) = buf.device_ptr_mut(stream);
    // SAFETY: `ptr` is valid for `bytes` bytes on `stream`'s context and the guard keeps the slice
    // borrowed until the memset is enqueued; every bit pattern is a valid `Element`.
    unsafe { result::memset_d8_async(ptr, 0xFF, bytes, stream.cu_stream()) }
}

// ---------------------------------------------------------------------------------------------
// The memcpy baseline
// ---------------------------------------------------------------------------------------------

/// memcpy GB/s by byte count, so each size is measured once per run.
#[derive(Default)]
pub struct MemcpyBaseline(HashMap<usize, f64>);

impl MemcpyBaseline {
    /// The GB/s (read + write) of a device-to-device copy of one of `inputs` into the matching one
    /// of `outputs`, rotating over them and timed like the rows; measured and reported (as a
    /// `memcpy` row) the first time a byte count is asked for. Overwrites `outputs`.
    pub fn gbps<T: BenchElement>(
        &mut self,
        timer: &mut Timer,
        log2n: u32,
        inputs: &[CudaSlice<T>],
        outputs: &mut [CudaSlice<T>],
        report: &mut Report,
    ) -> BoxResult<f64> {
        let bytes = inputs[0].num_bytes();
        if let Some(&g) = self.0.get(&bytes) {
            return Ok(g);
        }
        let stream = timer.stream.clone();
        let k = inputs.len();
        let us = timer.median_us(|step| {
            if let Step::Run(i) = step {
                stream.memcpy_dtod(&inputs[i % k], &mut outputs[i % k])?;
            }
            Ok(())
        })?;
        let g = gbps(2 * bytes, us);
        self.0.insert(bytes, g);
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
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

/// A mismatch between the device output and the host reference.
#[derive(Debug)]
pub struct CheckFailed(pub String);

impl fmt::Display for CheckFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for CheckFailed {}

pub fn check_failed<T>(msg: String) -> BoxResult<T> {
    Err(Box::new(CheckFailed(msg)))
}

/// Compares `got` with `want` (same length): every item if `full`, else the first and last
/// `CHECK_ITEMS` (so also the final one). `n` is the item count the message quotes.
pub fn check<T: BenchElement>(
    stream: &Arc<CudaStream>,
    label: &str,
    n: usize,
    got: &CudaView<'_, T>,
    want: &[T],
    full: bool,
) -> BoxResult<()> {
    let len = got.len();
    if want.len() != len {
        return check_failed(format!("{label} {} n={n}: {len} items to compare, host has {}", T::NAME, want.len()));
    }
    let windows: [Range<usize>; 2] = if full {
        [0..len, len..len]
    } else {
        let head = len.min(CHECK_ITEMS);
        let tail = len.saturating_sub(CHECK_ITEMS).max(head);
        [0..head, tail..len]
    };
    for w in windows {
        if w.is_empty() {
            continue;
        }
        let items = stream.clone_dtoh(&got.slice(w.clone()))?;
        let bad = items.iter().zip(&want[w.clone()]).position(|(&g, &e)| !T::matches(g, e));
        if let Some(off) = bad {
            let i = w.start + off;
            return check_failed(format!(
                "{label} {} n={n}: item {i} is {:?}, host says {:?}",
                T::NAME,
                items[off],
                want[i]
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Rows and output
// ---------------------------------------------------------------------------------------------

pub struct Row {
    pub label: String,
    pub ty: &'static str,
    pub log2n: u32,
    pub copies: usize,
    pub median_us: f64,
    pub gbps: f64,
    pub memcpy_gbps: f64,
}

impl Row {
    pub fn vs_memcpy(&self) -> f64 {
        self.gbps / self.memcpy_gbps
    }
}

/// A row's printed columns, up to `vs_memcpy`.
fn line(row: &Row) -> String {
    format!(
        "{:<30} {:>3} n=2^{:<2}  t={:>10.1} us   GB/s {:>7.1}  vs_memcpy {:.3}",
        row.label,
        row.ty,
        row.log2n,
        row.median_us,
        row.gbps,
        row.vs_memcpy()
    )
}

/// A paired row's printed line: `line`, then its base's median and its time over it.
fn versus_line(row: &Row, v: &Versus) -> String {
    format!("{}  (copies {})  vs {}: {:.1} us, t/base {:.3}", line(row), row.copies, v.base, v.base_us, v.ratio(row))
}

/// The row a paired row is compared with, measured just before it in the same process: a `_devsize`
/// row's host-size row, or the eager chain with a sync after each stage (benches/README.md).
#[derive(Clone, Debug)]
pub struct Versus {
    pub base: String,
    pub base_us: f64,
}

impl Versus {
    /// The paired row's time over its base's (< 1: the paired row is faster).
    pub fn ratio(&self, row: &Row) -> f64 {
        row.median_us / self.base_us
    }
}

/// The rows of one bench in the order they run, each paired row (`base_of(row)` is `Some`) right after
/// its base: where the base was asked for, it keeps its place and its paired rows follow it; otherwise
/// it is added just before the first of them. A row asked for twice runs once.
pub fn paired<A: Copy + PartialEq>(algos: &[A], base_of: impl Fn(A) -> Option<A>) -> Vec<A> {
    let mut out = Vec::new();
    for &a in algos {
        if out.contains(&a) {
            continue;
        }
        match base_of(a) {
            Some(base) => {
                if !out.contains(&base) {
                    out.push(base);
                }
                out.push(a);
            }
            None => {
                out.push(a);
                for &p in algos {
                    if base_of(p) == Some(a) && !out.contains(&p) {
                        out.push(p);
                    }
                }
            }
        }
    }
    out
}

/// The medians measured so far at one (type, size), by row, for the paired rows to quote their base's.
pub struct Measured<A>(Vec<(A, String, f64)>);

impl<A> Default for Measured<A> {
    fn default() -> Self {
        Measured(Vec::new())
    }
}

impl<A: Copy + PartialEq> Measured<A> {
    pub fn record(&mut self, algo: A, row: &Row) {
        self.0.retain(|(a, _, _)| *a != algo);
        self.0.push((algo, row.label.clone(), row.median_us));
    }

    /// The base `base` as measured (`None` if it was not, or if `base` is `None`).
    pub fn versus(&self, base: Option<A>) -> Option<Versus> {
        let base = base?;
        let (_, label, us) = self.0.iter().find(|(a, _, _)| *a == base)?;
        Some(Versus { base: label.clone(), base_us: *us })
    }
}

/// Prints rows, appends them to the CSV files as they come (a failed run keeps what it measured),
/// and remembers them for the summary.
pub struct Report {
    csv: Vec<BufWriter<File>>,
    /// Whether the CSV has the paired rows' columns (`CSV_VERSUS_COLUMNS`).
    versus: bool,
    rows: Vec<(Row, Option<Versus>)>,
}

impl Report {
    pub fn create(paths: &[PathBuf]) -> BoxResult<Report> {
        Report::create_with(paths, false)
    }

    /// `versus`: the run has paired rows, so the CSV gets their two columns (`CSV_VERSUS_COLUMNS`).
    pub fn create_with(paths: &[PathBuf], versus: bool) -> BoxResult<Report> {
        let mut csv = Vec::new();
        let extra = if versus { CSV_VERSUS_COLUMNS } else { "" };
        for p in paths {
            let file = File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()))?;
            let mut w = BufWriter::new(file);
            writeln!(w, "{CSV_HEADER}{extra}")?;
            csv.push(w);
        }
        Ok(Report { csv, versus, rows: Vec::new() })
    }

    pub fn push(&mut self, row: Row) -> BoxResult<()> {
        println!("{}  (copies {})", line(&row), row.copies);
        self.write_csv(&row, CSV_NO_VS_CUB, None)?;
        self.rows.push((row, None));
        Ok(())
    }

    /// Reports a paired row with its base (`None`: as `push`): the base's median and the row's time
    /// over it end the printed line and the CSV line.
    pub fn push_versus(&mut self, row: Row, versus: Option<Versus>) -> BoxResult<()> {
        let Some(v) = versus else { return self.push(row) };
        println!("{}", versus_line(&row, &v));
        self.write_csv(&row, CSV_NO_VS_CUB, Some(&v))?;
        self.rows.push((row, Some(v)));
        Ok(())
    }

    /// Reports a lookback row and right after it CUB's on the same buffers, with CUB's time over
    /// lookback's (`cub`: `None` where CUB has no counterpart). A failed CUB row is printed and
    /// dropped: CUB is only the baseline, and the lookback row stands.
    #[cfg(feature = "cub-baseline")]
    pub fn push_with_cub(&mut self, row: Row, cub: Option<BoxResult<Row>>) -> BoxResult<()> {
        self.push_versus_with_cub(row, None, cub)
    }

    /// `push_with_cub` for a paired row (`versus`: as in `push_versus`); CUB's row has no base.
    #[cfg(feature = "cub-baseline")]
    pub fn push_versus_with_cub(
        &mut self,
        row: Row,
        versus: Option<Versus>,
        cub: Option<BoxResult<Row>>,
    ) -> BoxResult<()> {
        match cub {
            None => self.push_versus(row, versus),
            Some(Ok(c)) => {
                let ratio = c.median_us / row.median_us;
                match &versus {
                    Some(v) => println!("{}", versus_line(&row, v)),
                    None => println!("{}  (copies {})", line(&row), row.copies),
                }
                self.write_csv(&row, &format!(",{ratio:.4}"), versus.as_ref())?;
                println!("{}  lookback/cub {ratio:.3}", line(&c));
                self.write_csv(&c, CSV_NO_VS_CUB, None)?;
                self.rows.push((row, versus));
                self.rows.push((c, None));
                Ok(())
            }
            Some(Err(e)) => {
                self.push_versus(row, versus)?;
                let what = if e.is::<CheckFailed>() { "CUB CHECK FAILED" } else { "CUB FAILED" };
                println!("{what}: {e}");
                Ok(())
            }
        }
    }

    /// One CSV line; `cub` is what follows the common columns (the `vs_cub` column, if any), then the
    /// paired rows' columns if the CSV has them.
    fn write_csv(&mut self, row: &Row, cub: &str, versus: Option<&Versus>) -> BoxResult<()> {
        let end = match versus {
            _ if !self.versus => cub.to_string(),
            Some(v) => format!("{cub},{:.3},{:.4}", v.base_us, v.ratio(row)),
            None => format!("{cub},,"),
        };
        for w in &mut self.csv {
            writeln!(
                w,
                "{},{},{},{},{:.3},{:.2},{:.4},{:.2}{end}",
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
        Ok(())
    }

    pub fn summary(&self) {
        let rows: Vec<&(Row, Option<Versus>)> = self.rows.iter().filter(|(r, _)| r.log2n == SUMMARY_LOG2N).collect();
        if rows.is_empty() {
            return;
        }
        println!("\nsummary, n = 2^{SUMMARY_LOG2N}:");
        println!("{:<30} {:>4} {:>10} {:>8} {:>10}", "algo", "type", "us", "GB/s", "vs_memcpy");
        for (r, versus) in rows {
            let vs = versus.as_ref().map(|v| format!("  t/base {:.3}", v.ratio(r))).unwrap_or_default();
            println!("{:<30} {:>4} {:>10.1} {:>8.1} {:>10.3}{vs}", r.label, r.ty, r.median_us, r.gbps, r.vs_memcpy());
        }
    }
}

use lookback::Backoff;

/// Runs `call` with the workspace deterministic (`Workspace::set_deterministic`), for the `_det` rows,
/// and leaves it as it was.
pub fn deterministic<R>(ws: &mut lookback::Workspace, call: impl FnOnce(&mut lookback::Workspace) -> R) -> R {
    let was = ws.deterministic();
    ws.set_deterministic(true);
    let r = call(ws);
    ws.set_deterministic(was);
    r
}

/// A row label with the engine it was forced to (`name[classic]`, `name[persistent]`; `name` for auto).
pub fn engine_label(name: &str, engine: lookback::Engine) -> String {
    match engine {
        lookback::Engine::Auto => name.to_string(),
        lookback::Engine::Classic => format!("{name}[classic]"),
        lookback::Engine::Persistent => format!("{name}[persistent]"),
    }
}

/// `auto`, `classic` or `persistent`.
pub fn parse_engine(s: &str) -> Result<lookback::Engine, String> {
    match s {
        "auto" => Ok(lookback::Engine::Auto),
        "classic" => Ok(lookback::Engine::Classic),
        "persistent" => Ok(lookback::Engine::Persistent),
        _ => Err(format!("unknown engine `{s}` (expected auto, classic or persistent)")),
    }
}

/// Parses `FIRST:POLL` (nanoseconds) into a look-back back-off.
pub fn parse_backoff(s: &str) -> Result<Backoff, String> {
    let bad = || format!("bad back-off `{s}` (expected FIRST:POLL in nanoseconds)");
    let (first, poll) = s.split_once(':').ok_or_else(bad)?;
    Ok(Backoff {
        first_poll_ns: first.trim().parse().map_err(|_| bad())?,
        poll_ns: poll.trim().parse().map_err(|_| bad())?,
    })
}

/// The shared `main` of the benches: parse the flags (`--help` prints `usage`; a bad flag prints it and
/// exits 2), skip with one line when there is no usable GPU, else run and report the outcome.
pub fn bench_main<A>(
    name: &str,
    usage: &str,
    parse: impl FnOnce(std::iter::Skip<std::env::Args>) -> Result<Option<A>, String>,
    run: impl FnOnce(&A, &std::sync::Arc<lookback::cudarc::driver::CudaStream>) -> BoxResult<()>,
) -> BoxResult<()> {
    let args = match parse(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{usage}");
            return Ok(());
        }
        Err(msg) => {
            eprintln!("bench {name}: {msg}\n{usage}");
            std::process::exit(2);
        }
    };
    let Some(stream) = gpu_or_skip(name) else {
        return Ok(());
    };
    finish(run(&args, &stream))
}
