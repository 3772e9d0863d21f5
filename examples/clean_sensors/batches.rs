//! Batch mode (`--batches N --batch-rows R`): the pipeline as a cleaning job runs it on a stream of
//! batches. Device buffers of capacity R and a `Workspace` reserved for R are made once, and every call is
//! a `Workspace::*_into` form, so the whole GPU pipeline is captured once as a CUDA graph and replayed on
//! each batch after its rows are copied into the same input buffers: no allocation, no count read back,
//! no host decision between stages.
//!
//! That works because each stage is sized by the count the previous one left on the device
//! (`Workspace::with_count`; tiles past the count exit at once), never by a count read back to the host:
//!
//! | stage | calls | sized by |
//! |---|---|---|
//! | validate | `count_if_into` ×3 (NaN, ±inf, sentinel), `mask_if_into`, `select_flagged_into` ×3 | the batch's row count, copied up with its rows |
//! | dedup | `unique_by_key_into` ×2 (row key → value, row key → sensor) | `num_valid` |
//! | long runs | `non_trivial_runs_into(value)`, then `mask_if_into(length > K)` and `select_flagged_into` ×2 | `num_unique`, then `num_runs` |
//! | stats | `reduce_by_key_into` ×3 (sum, min, max of value by sensor), `run_length_encode_into(sensor)` | `num_unique` |
//! | offsets | `exclusive_scan_into` of the rows per sensor: each sensor's first row | `num_sensors` |
//!
//! What it leaves out of the main pipeline, and why: the split into accepted and quarantined rows needs
//! the long runs cut at sensor boundaries first (`stuck.rs`), a host step between two device stages, and a
//! graph has no host in it (the library has no element-wise map that could cut them on the device). So
//! here the host cuts the long runs after each batch (stuck ranges are found and counted, not
//! quarantined), and the per-sensor statistics are over the validated, deduplicated rows.
//!
//! Every batch runs twice: eagerly, the same calls with a `synchronize` after each stage (where a
//! host-driven pipeline waits), and as one replay of the graph. Both results are checked against
//! `lookback::host` running the same stage list; the outputs are poisoned before each run, so a result a
//! run failed to write cannot pass; a difference is an error.
use crate::backend::{Census, LongRuns, SensorStats, StuckRange};
use crate::error::AppError;
use crate::generate;
use crate::host::stats_rows;
use crate::pipeline::Config;
use crate::progress::Progress;
use crate::report::count;
use crate::stuck::stuck_ranges;
use crate::table::Table;
use lookback::cudarc::driver::{CudaGraph, CudaSlice, CudaStream, DevicePtrMut, DeviceRepr, result};
use lookback::{Pred, ScanOp, Workspace, host};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The stages (for the summary line); `enqueue` runs them in this order.
const STAGES: usize = 5;
/// Library calls in one run of the pipeline.
const CALLS: usize = 18;

/// Batch mode's settings, from the command line.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub batches: usize,
    /// Rows of each batch: the capacity of every device buffer.
    pub rows: usize,
    /// Sensors of each synthetic batch.
    pub sensors: usize,
    /// Batch `b` is the synthetic log of seed `seed + b`.
    pub seed: u64,
    pub config: Config,
}

impl Plan {
    /// The batches, generated one at a time as they are needed (not timed).
    fn tables(self) -> impl Iterator<Item = Table> {
        let Plan { batches, rows, sensors, seed, .. } = self;
        (0..batches as u64)
            .map(move |b| generate::generate(rows, sensors, seed.wrapping_add(b), &Progress::new(false)).0)
    }
}

/// The counts a run left on the device. A count never written reads as the poison, `u64::MAX`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub rows: u64,
    /// Dropped as NaN, ±inf and the sentinel (the other invalid rows were out of range).
    pub nan: u64,
    pub infinite: u64,
    pub sentinel: u64,
    pub valid: u64,
    pub unique: u64,
    /// Runs of equal values longer than one row, and of those, longer than the stuck threshold.
    pub runs: u64,
    pub long_runs: u64,
    pub sensors: u64,
}

/// What one batch produced: read back from the device, or computed by `lookback::host`.
#[derive(Clone, Debug, Default)]
pub struct BatchResult {
    pub counts: Counts,
    /// The validated, deduplicated rows.
    pub unique: Table,
    /// The runs of equal values longer than the threshold (they may still span two sensors).
    pub runs: LongRuns,
    /// Count, sum, min and max of each sensor's unique rows.
    pub stats: Vec<SensorStats>,
    /// Index of each sensor's first row in `unique`.
    pub first_row: Vec<u64>,
}

/// What a batch found, summed over the batches for the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Findings {
    pub rows_in: u64,
    pub invalid: u64,
    pub duplicate: u64,
    pub stuck_ranges: u64,
    pub stuck_rows: u64,
    pub sensors: u64,
}

impl std::ops::AddAssign for Findings {
    fn add_assign(&mut self, o: Findings) {
        self.rows_in += o.rows_in;
        self.invalid += o.invalid;
        self.duplicate += o.duplicate;
        self.stuck_ranges += o.stuck_ranges;
        self.stuck_rows += o.stuck_rows;
        self.sensors += o.sensors;
    }
}

impl BatchResult {
    /// The long runs cut at sensor boundaries (`stuck.rs`), with the counts per sensor as the census.
    pub fn stuck(&self, longer_than: u64) -> Vec<StuckRange> {
        let census: Census = self.stats.iter().map(|s| (s.sensor, s.count)).collect();
        stuck_ranges(&self.runs, &census, longer_than)
    }

    pub fn findings(&self, longer_than: u64) -> Findings {
        let c = &self.counts;
        let stuck = self.stuck(longer_than);
        Findings {
            rows_in: c.rows,
            invalid: c.rows - c.valid,
            duplicate: c.valid - c.unique,
            stuck_ranges: stuck.len() as u64,
            stuck_rows: stuck.iter().map(|r| r.len as u64).sum(),
            sensors: c.sensors,
        }
    }
}

/// The same stage list on the host, call for call, with `lookback::host`: what every batch is checked
/// against.
pub fn reference(table: &Table, config: &Config) -> lookback::Result<BatchResult> {
    let rule = &config.validity;
    let v = &table.value;
    let ok = host::mask_if(v, &rule.valid());
    let select = |flags: &[u8]| -> lookback::Result<Table> {
        Ok(Table {
            sensor: host::select_flagged(&table.sensor, flags)?,
            key: host::select_flagged(&table.key, flags)?,
            value: host::select_flagged(v, flags)?,
        })
    };
    let valid = select(&ok)?;
    let (key, value) = host::unique_by_key(&valid.key, &valid.value)?;
    let (_, sensor) = host::unique_by_key(&valid.key, &valid.sensor)?;
    let unique = Table { sensor, key, value };
    let (offsets, lengths) = host::non_trivial_runs(&unique.value);
    let long = host::mask_if(&lengths, &Pred::gt(config.stuck_run));
    let runs = LongRuns {
        offsets: host::select_flagged(&offsets, &long)?,
        lengths: host::select_flagged(&lengths, &long)?,
        non_trivial: offsets.len() as u64,
    };
    let (s, x) = (&unique.sensor, &unique.value);
    let (sensors, sums) = host::reduce_by_key(s, x, ScanOp::Sum)?;
    let (_, mins) = host::reduce_by_key(s, x, ScanOp::Min)?;
    let (_, maxs) = host::reduce_by_key(s, x, ScanOp::Max)?;
    let (_, rows) = host::run_length_encode(s);
    let first_row = host::exclusive_scan(&rows, 0, ScanOp::Sum)?;
    let counts = Counts {
        rows: table.len() as u64,
        nan: host::count_if(v, &rule.nan()) as u64,
        infinite: host::count_if(v, &rule.infinite()) as u64,
        sentinel: host::count_if(v, &rule.sentinel()) as u64,
        valid: valid.len() as u64,
        unique: unique.len() as u64,
        runs: runs.non_trivial,
        long_runs: runs.offsets.len() as u64,
        sensors: sensors.len() as u64,
    };
    let stats = stats_rows(&sensors, &rows, &sums, &mins, &maxs);
    Ok(BatchResult { counts, unique, runs, stats, first_row })
}

/// `Ok` if `got` is `want`: counts, rows (bitwise), long runs, sensors, counts per sensor, min, max and
/// offsets exactly, and each sum within the rounding of an f32 sum in another order (n·ε·Σ|x|: the GPU
/// combines tiles in a timing-dependent order); else what differs first.
pub fn compare(got: &BatchResult, want: &BatchResult) -> Result<(), String> {
    if got.counts != want.counts {
        return Err(format!("counts {:?}, expected {:?}", got.counts, want.counts));
    }
    let bits = |t: &Table, i: usize| (t.sensor[i], t.key[i], t.value[i].to_bits());
    if let Some(i) = (0..want.unique.len()).find(|&i| bits(&got.unique, i) != bits(&want.unique, i)) {
        return Err(format!("unique row {i} is {:?}, expected {:?}", bits(&got.unique, i), bits(&want.unique, i)));
    }
    if got.runs != want.runs {
        return Err(format!("long runs {:?}, expected {:?}", got.runs, want.runs));
    }
    if got.first_row != want.first_row {
        return Err(format!("first rows {:?}, expected {:?}", got.first_row, want.first_row));
    }
    for ((g, w), &first) in got.stats.iter().zip(&want.stats).zip(&want.first_row) {
        // Min and max compare with ==: fmin and fmax may pick either zero of -0.0 and 0.0.
        if (g.sensor, g.count, g.min, g.max) != (w.sensor, w.count, w.min, w.max) {
            return Err(format!("sensor stats {g:?}, expected {w:?}"));
        }
        let rows = &want.unique.value[first as usize..(first + w.count) as usize];
        let magnitude: f64 = rows.iter().map(|&x| f64::from(x).abs()).sum();
        let tolerance = w.count as f64 * f64::from(f32::EPSILON) * magnitude;
        // A NaN (the poison) is within no tolerance.
        let within = (f64::from(g.sum) - f64::from(w.sum)).abs() <= tolerance;
        if !within {
            return Err(format!("sensor {} sum {}, expected {} within {tolerance}", w.sensor, g.sum, w.sum));
        }
    }
    Ok(())
}

/// The three columns on the device.
struct Columns {
    sensor: CudaSlice<u32>,
    key: CudaSlice<u64>,
    value: CudaSlice<f32>,
}

impl Columns {
    fn new(stream: &Arc<CudaStream>, capacity: usize) -> lookback::Result<Columns> {
        Ok(Columns {
            sensor: stream.alloc_zeros(capacity)?,
            key: stream.alloc_zeros(capacity)?,
            value: stream.alloc_zeros(capacity)?,
        })
    }
}

/// One `u64` count on the device.
type Count = CudaSlice<u64>;

/// Every buffer the pipeline touches, allocated once, each with room for a whole batch (every row may be
/// valid, unique, its own run or its own sensor): no call allocates, so the graph's addresses stay valid.
struct Buffers {
    capacity: usize,
    /// The batch's row count, copied up with its rows: it sizes the first stage.
    rows: Count,
    input: Columns,
    nan: Count,
    infinite: Count,
    sentinel: Count,
    valid_mask: CudaSlice<u8>,
    valid: Columns,
    num_valid: Count,
    unique: Columns,
    num_unique: Count,
    run_offset: CudaSlice<u64>,
    run_length: CudaSlice<u64>,
    num_runs: Count,
    long_mask: CudaSlice<u8>,
    long_offset: CudaSlice<u64>,
    long_length: CudaSlice<u64>,
    num_long: Count,
    sensor: CudaSlice<u32>,
    sum: CudaSlice<f32>,
    min: CudaSlice<f32>,
    max: CudaSlice<f32>,
    rows_per_sensor: CudaSlice<u64>,
    num_sensors: Count,
    first_row: CudaSlice<u64>,
}

impl Buffers {
    fn new(stream: &Arc<CudaStream>, capacity: usize) -> lookback::Result<Buffers> {
        let n = capacity;
        Ok(Buffers {
            capacity,
            rows: stream.alloc_zeros(1)?,
            input: Columns::new(stream, n)?,
            nan: stream.alloc_zeros(1)?,
            infinite: stream.alloc_zeros(1)?,
            sentinel: stream.alloc_zeros(1)?,
            valid_mask: stream.alloc_zeros(n)?,
            valid: Columns::new(stream, n)?,
            num_valid: stream.alloc_zeros(1)?,
            unique: Columns::new(stream, n)?,
            num_unique: stream.alloc_zeros(1)?,
            run_offset: stream.alloc_zeros(n)?,
            run_length: stream.alloc_zeros(n)?,
            num_runs: stream.alloc_zeros(1)?,
            long_mask: stream.alloc_zeros(n)?,
            long_offset: stream.alloc_zeros(n)?,
            long_length: stream.alloc_zeros(n)?,
            num_long: stream.alloc_zeros(1)?,
            sensor: stream.alloc_zeros(n)?,
            sum: stream.alloc_zeros(n)?,
            min: stream.alloc_zeros(n)?,
            max: stream.alloc_zeros(n)?,
            rows_per_sensor: stream.alloc_zeros(n)?,
            num_sensors: stream.alloc_zeros(1)?,
            first_row: stream.alloc_zeros(n)?,
        })
    }

    /// Copies a batch into the input buffers, and its row count. Rows past the count keep an earlier,
    /// longer batch's: the count bounds every call.
    fn upload(&mut self, stream: &Arc<CudaStream>, table: &Table) -> lookback::Result<()> {
        let n = table.len();
        if n > 0 {
            stream.memcpy_htod(&table.sensor, &mut self.input.sensor.slice_mut(..n))?;
            stream.memcpy_htod(&table.key, &mut self.input.key.slice_mut(..n))?;
            stream.memcpy_htod(&table.value, &mut self.input.value.slice_mut(..n))?;
        }
        stream.memcpy_htod(&[n as u64], &mut self.rows)?;
        Ok(())
    }

    /// Fills every output with 0xFF bytes, so that what a run fails to write cannot pass the check.
    fn poison(&mut self, stream: &Arc<CudaStream>) -> lookback::Result<()> {
        macro_rules! poison_all { ($($buf:expr),+ $(,)?) => { $( poison(stream, &mut $buf)?; )+ } }
        poison_all!(self.nan, self.infinite, self.sentinel, self.valid_mask, self.num_valid, self.num_unique);
        poison_all!(self.valid.sensor, self.valid.key, self.valid.value, self.unique.sensor, self.unique.key);
        poison_all!(self.unique.value, self.run_offset, self.run_length, self.num_runs, self.long_mask);
        poison_all!(self.long_offset, self.long_length, self.num_long, self.sensor, self.sum, self.min, self.max);
        poison_all!(self.rows_per_sensor, self.num_sensors, self.first_row);
        Ok(())
    }

    /// Reads a run's results back (after the stream is synchronized). The lengths are the device's counts,
    /// capped at the capacity: the counts themselves are compared.
    fn download(&self, stream: &Arc<CudaStream>) -> lookback::Result<BatchResult> {
        let read = |c: &Count| -> lookback::Result<u64> { Ok(stream.clone_dtoh(c)?[0]) };
        let counts = Counts {
            rows: read(&self.rows)?,
            nan: read(&self.nan)?,
            infinite: read(&self.infinite)?,
            sentinel: read(&self.sentinel)?,
            valid: read(&self.num_valid)?,
            unique: read(&self.num_unique)?,
            runs: read(&self.num_runs)?,
            long_runs: read(&self.num_long)?,
            sensors: read(&self.num_sensors)?,
        };
        let cap = |n: u64| usize::try_from(n).unwrap_or(usize::MAX).min(self.capacity);
        let (u, l, s) = (cap(counts.unique), cap(counts.long_runs), cap(counts.sensors));
        let unique = Table {
            sensor: head(stream, &self.unique.sensor, u)?,
            key: head(stream, &self.unique.key, u)?,
            value: head(stream, &self.unique.value, u)?,
        };
        let runs = LongRuns {
            offsets: head(stream, &self.long_offset, l)?,
            lengths: head(stream, &self.long_length, l)?,
            non_trivial: counts.runs,
        };
        let stats = stats_rows(
            &head(stream, &self.sensor, s)?,
            &head(stream, &self.rows_per_sensor, s)?,
            &head(stream, &self.sum, s)?,
            &head(stream, &self.min, s)?,
            &head(stream, &self.max, s)?,
        );
        Ok(BatchResult { counts, unique, runs, stats, first_row: head(stream, &self.first_row, s)? })
    }
}

/// Sets every byte of `buf` to 0xFF: counts read `u64::MAX` (beyond any capacity), sensors `u32::MAX`,
/// values NaN, masks "selected".
fn poison<T: DeviceRepr>(stream: &Arc<CudaStream>, buf: &mut CudaSlice<T>) -> lookback::Result<()> {
    let bytes = buf.num_bytes();
    let (ptr, _write) = buf.device_ptr_mut(stream);
    // SAFETY: `ptr` addresses the `bytes` bytes of `buf`, allocated on `stream` and borrowed by `_write`
    // until the memset is enqueued; all-ones bytes are a valid u8, u32, u64 and f32 (a NaN).
    unsafe { result::memset_d8_async(ptr, 0xFF, bytes, stream.cu_stream()) }?;
    Ok(())
}

/// The first `n` items of `buf`.
fn head<T: DeviceRepr>(stream: &Arc<CudaStream>, buf: &CudaSlice<T>, n: usize) -> lookback::Result<Vec<T>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    Ok(stream.clone_dtoh(&buf.slice(..n))?)
}

/// Enqueues the whole pipeline: the same calls whether run eagerly or captured. `after_stage` runs after
/// each stage: the eager run waits for the GPU there, the capture cannot (and need not). `stage` names the
/// stage being enqueued, for an error message.
fn enqueue(
    ws: &mut Workspace,
    b: &mut Buffers,
    config: &Config,
    stage: &mut &'static str,
    after_stage: &mut dyn FnMut() -> lookback::Result<()>,
) -> lookback::Result<()> {
    let rule = &config.validity;
    // Validate, sized by the batch's row count. The compound predicate runs once, into a mask that
    // selects all three columns (each call writes the same `num_valid`).
    *stage = "validate";
    ws.with_count(&b.rows, |ws| {
        ws.count_if_into(&b.input.value, &rule.nan(), &mut b.nan)?;
        ws.count_if_into(&b.input.value, &rule.infinite(), &mut b.infinite)?;
        ws.count_if_into(&b.input.value, &rule.sentinel(), &mut b.sentinel)?;
        ws.mask_if_into(&b.input.value, &rule.valid(), &mut b.valid_mask)?;
        ws.select_flagged_into(&b.input.sensor, &b.valid_mask, &mut b.valid.sensor, &mut b.num_valid)?;
        ws.select_flagged_into(&b.input.key, &b.valid_mask, &mut b.valid.key, &mut b.num_valid)?;
        ws.select_flagged_into(&b.input.value, &b.valid_mask, &mut b.valid.value, &mut b.num_valid)
    })?;
    after_stage()?;

    // Dedup: one reading per row key, sized by `num_valid`. Two calls on the same keys find the same runs;
    // the second writes the same keys again rather than needing a scratch column.
    *stage = "dedup";
    ws.with_count(&b.num_valid, |ws| {
        let (keys, out) = (&b.valid.key, &mut b.unique);
        ws.unique_by_key_into(keys, &b.valid.value, &mut out.key, &mut out.value, &mut b.num_unique)?;
        ws.unique_by_key_into(keys, &b.valid.sensor, &mut out.key, &mut out.sensor, &mut b.num_unique)
    })?;
    after_stage()?;

    // Long runs of equal values: every run longer than one row (sized by `num_unique`), then the ones
    // longer than the threshold (sized by how many runs there were).
    *stage = "long runs";
    ws.with_count(&b.num_unique, |ws| {
        ws.non_trivial_runs_into(&b.unique.value, &mut b.run_offset, &mut b.run_length, &mut b.num_runs)
    })?;
    ws.with_count(&b.num_runs, |ws| {
        ws.mask_if_into(&b.run_length, &Pred::gt(config.stuck_run), &mut b.long_mask)?;
        ws.select_flagged_into(&b.run_offset, &b.long_mask, &mut b.long_offset, &mut b.num_long)?;
        ws.select_flagged_into(&b.run_length, &b.long_mask, &mut b.long_length, &mut b.num_long)
    })?;
    after_stage()?;

    // Per-sensor statistics of the unique rows, sized by `num_unique`; each call writes the sensor ids
    // and `num_sensors` again.
    *stage = "stats";
    ws.with_count(&b.num_unique, |ws| {
        let (s, x) = (&b.unique.sensor, &b.unique.value);
        ws.reduce_by_key_into(s, x, &mut b.sensor, &mut b.sum, &mut b.num_sensors, ScanOp::Sum)?;
        ws.reduce_by_key_into(s, x, &mut b.sensor, &mut b.min, &mut b.num_sensors, ScanOp::Min)?;
        ws.reduce_by_key_into(s, x, &mut b.sensor, &mut b.max, &mut b.num_sensors, ScanOp::Max)?;
        ws.run_length_encode_into(s, &mut b.sensor, &mut b.rows_per_sensor, &mut b.num_sensors)
    })?;
    after_stage()?;

    // Each sensor's first row in the cleaned table, sized by `num_sensors`: where a consumer slices one
    // sensor's rows out.
    *stage = "offsets";
    ws.with_count(&b.num_sensors, |ws| ws.exclusive_scan_into(&b.rows_per_sensor, &mut b.first_row, 0, ScanOp::Sum))?;
    after_stage()
}

/// Times and findings of a batch run.
#[derive(Debug, Default)]
pub struct Measured {
    /// Per batch: the eager run (stages waited for one by one), the graph replay, the host reference.
    pub eager: Vec<Duration>,
    pub replay: Vec<Duration>,
    pub host: Vec<Duration>,
    /// Per batch, from the replayed results (checked equal to the eager ones and the host's).
    pub findings: Vec<Findings>,
}

/// Runs `batches` (each of at most `capacity` rows) on `stream`'s GPU, eagerly and as replays of one
/// captured graph, and checks both runs of every batch against the host reference. Times only the
/// pipeline: uploads, poisoning and checks happen between the timed parts, on a synchronized stream.
pub fn run_gpu(
    stream: &Arc<CudaStream>,
    capacity: usize,
    config: &Config,
    batches: impl IntoIterator<Item = Table>,
    progress: &Progress,
) -> Result<Measured, AppError> {
    // The legacy default stream cannot capture: both forms run on a stream of their own.
    let stream = stream.context().new_stream().map_err(|e| on_gpu("setup")(e.into()))?;
    // The driver refuses empty allocations.
    let capacity = capacity.max(1);
    let mut bufs = Buffers::new(&stream, capacity).map_err(on_gpu("setup"))?;
    let mut ws = Workspace::new(&stream);
    // Look-back state for the largest call, now: a workspace cannot grow inside a capture.
    ws.reserve(capacity).map_err(on_gpu("setup"))?;
    // Declared after the buffers and the workspace, so dropped before them: it holds their addresses.
    let mut graph: Option<CudaGraph> = None;
    let mut measured = Measured::default();
    let mut stage = "";
    let batches = batches.into_iter();
    let bar = progress.batches(batches.size_hint().0 as u64);
    for (i, table) in batches.enumerate() {
        if table.len() > capacity {
            return Err(AppError::Args(format!("batch {i} has {} rows, above the capacity {capacity}", table.len())));
        }
        let start = Instant::now();
        let want = reference(&table, config).map_err(on_host)?;
        measured.host.push(start.elapsed());
        bufs.upload(&stream, &table).map_err(on_gpu("upload"))?;
        let check = |run: &'static str, bufs: &Buffers| -> Result<BatchResult, AppError> {
            let got = bufs.download(&stream).map_err(on_gpu("download"))?;
            compare(&got, &want).map_err(|what| AppError::BatchMismatch { batch: i, run, what })?;
            Ok(got)
        };

        // Eager: the calls, and a wait after each stage. The first batch runs once more before, untimed, to
        // load the kernel modules.
        if i == 0 {
            eager(&stream, &mut ws, &mut bufs, config, &mut stage).map_err(on_gpu(stage))?;
        }
        let time = eager(&stream, &mut ws, &mut bufs, config, &mut stage).map_err(on_gpu(stage))?;
        measured.eager.push(time);
        check("eager", &bufs)?;

        // Replay: the same calls, captured once, after the eager run has loaded every kernel.
        if graph.is_none() {
            // SAFETY: nothing else uses this context's buffers while the capture runs: the example is
            // single-threaded, and a test's context (an `Arc<CudaContext>` of its own) is its alone.
            let captured = unsafe {
                lookback::graph::capture(&stream, |_| enqueue(&mut ws, &mut bufs, config, &mut stage, &mut || Ok(())))
            };
            let backend = "GPU (graph capture)".to_string();
            let captured = captured.map_err(|source| AppError::Stage { stage, backend, source })?;
            captured.upload().map_err(|e| on_gpu("graph upload")(e.into()))?;
            graph = Some(captured);
        }
        let replay = graph.as_ref().expect("captured above");
        bufs.poison(&stream).map_err(on_gpu("poison"))?;
        stream.synchronize().map_err(|e| on_gpu("poison")(e.into()))?;
        let start = Instant::now();
        replay.launch().and_then(|()| stream.synchronize()).map_err(|e| on_gpu("graph replay")(e.into()))?;
        measured.replay.push(start.elapsed());
        let got = check("graph replay", &bufs)?;
        measured.findings.push(got.findings(config.stuck_run));
        bar.inc(1);
    }
    bar.finish_and_clear();
    drop(graph);
    Ok(measured)
}

/// One eager run on poisoned outputs: the pipeline's calls with a wait after each stage, as a
/// host-driven pipeline runs them. Returns its time.
fn eager(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    bufs: &mut Buffers,
    config: &Config,
    stage: &mut &'static str,
) -> lookback::Result<Duration> {
    *stage = "poison";
    bufs.poison(stream)?;
    stream.synchronize()?;
    let start = Instant::now();
    enqueue(ws, bufs, config, stage, &mut || Ok(stream.synchronize()?))?;
    Ok(start.elapsed())
}

/// A failed stage on the GPU, as the example reports it.
fn on_gpu(stage: &'static str) -> impl FnOnce(lookback::Error) -> AppError {
    move |source| AppError::Stage { stage, backend: "GPU".to_string(), source }
}

/// A failed host reference.
fn on_host(source: lookback::Error) -> AppError {
    AppError::Stage { stage: "host reference", backend: "host reference path (lookback::host)".to_string(), source }
}

/// Runs every batch of `plan` on the host reference alone (no GPU).
fn run_host(plan: &Plan, progress: &Progress) -> Result<Measured, AppError> {
    let mut measured = Measured::default();
    let bar = progress.batches(plan.batches as u64);
    for table in plan.tables() {
        let start = Instant::now();
        let got = reference(&table, &plan.config).map_err(on_host)?;
        measured.host.push(start.elapsed());
        measured.findings.push(got.findings(plan.config.stuck_run));
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(measured)
}

/// Median in microseconds.
fn median_us(times: &[Duration]) -> f64 {
    let mut us: Vec<f64> = times.iter().map(|t| t.as_secs_f64() * 1e6).collect();
    us.sort_by(f64::total_cmp);
    match us.len() {
        0 => 0.0,
        n if n.is_multiple_of(2) => (us[n / 2 - 1] + us[n / 2]) / 2.0,
        n => us[n / 2],
    }
}

/// Batch mode, from `main`: on the GPU `gpu` when there is one (`Err` says why not), else the host
/// reference alone. Prints the time per batch and what the batches held.
pub fn run(plan: &Plan, gpu: Result<Arc<CudaStream>, String>, progress: &Progress) -> Result<(), AppError> {
    let (rows, n) = (count(plan.rows as u64), plan.batches);
    println!(
        "batch mode: {n} synthetic batches of {rows} rows, {} sensors each, seeds {} to {}",
        plan.sensors,
        plan.seed,
        plan.seed.wrapping_add(n as u64 - 1)
    );
    let measured = match gpu {
        Ok(stream) => {
            let context = stream.context();
            let model = context.name().unwrap_or_else(|_| "unknown model".to_string());
            println!("running on GPU {} ({model})", context.ordinal());
            let m = run_gpu(&stream, plan.rows, &plan.config, plan.tables(), progress)?;
            let (eager, replay) = (median_us(&m.eager), median_us(&m.replay));
            println!(
                "batch pipeline: {rows} rows x {n} batches: eager {eager:.1} us/batch, graph replay {replay:.1} us/batch \
                 ({:.2}x; medians)",
                eager / replay
            );
            println!(
                "  {STAGES} stages, {CALLS} calls, each stage sized by the previous one's count on the device; eager \
                 waits after each stage, the graph (captured once) only at the end"
            );
            println!(
                "  every batch, eager and replayed, matches the host reference (lookback::host: {:.1} us/batch)",
                median_us(&m.host)
            );
            m
        }
        Err(why) => {
            println!("running on the host reference path (lookback::host), because: {why}");
            let m = run_host(plan, progress)?;
            println!(
                "batch pipeline: {rows} rows x {n} batches on the host: {:.1} us/batch (median; eager and graph \
                 replay need a GPU)",
                median_us(&m.host)
            );
            m
        }
    };
    let mut total = Findings::default();
    for f in &measured.findings {
        total += *f;
    }
    println!(
        "  found: {} invalid rows, {} duplicates, {} stuck ranges ({} rows, counted, not quarantined) in {} rows",
        count(total.invalid),
        count(total.duplicate),
        count(total.stuck_ranges),
        count(total.stuck_rows),
        count(total.rows_in)
    );
    Ok(())
}
