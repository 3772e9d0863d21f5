//! The stage list, run on any backend: upload, validate, dedup, stuck, split, stats, download. Times
//! each stage (after waiting for its work) and hands what it measured to `tally.rs` for the report.
use crate::backend::{Backend, Census, SensorStats, StuckRange, Validated, Validity};
use crate::error::AppError;
use crate::progress::Progress;
use crate::report::Report;
use crate::stuck::stuck_ranges;
use crate::table::{self, Table};
use crate::tally;
use std::time::Instant;

/// The cleaning rules.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub validity: Validity,
    /// A run of more than this many equal readings of one sensor is a stuck sensor.
    pub stuck_run: u64,
}

/// The report, and the rows: accepted (the cleaned data) and quarantined (stuck).
pub struct Outcome {
    pub report: Report,
    pub accepted: Table,
    pub quarantined: Table,
}

/// What the stages found, all of it small: counts, censuses, run lists, statistics, seconds.
pub struct Measured {
    pub backend: String,
    pub on_device: bool,
    pub rows_in: u64,
    /// Rows per sensor of the input, after validation, after dedup.
    pub census_in: Census,
    pub census_valid: Census,
    pub census_unique: Census,
    pub valid: Validated,
    pub unique: u64,
    /// Runs of equal values longer than one row, and of those, longer than the threshold.
    pub non_trivial_runs: u64,
    pub long_runs: u64,
    pub stuck: Vec<StuckRange>,
    pub accepted: u64,
    pub stats: Vec<SensorStats>,
    pub seconds: Seconds,
}

/// Seconds of each step.
#[derive(Clone, Copy, Debug, Default)]
pub struct Seconds {
    pub upload: f64,
    pub validate: f64,
    pub dedup: f64,
    pub stuck: f64,
    pub split: f64,
    pub stats: f64,
    pub download: f64,
}

/// Stages plus the two transfers, for the progress bar.
const STEPS: u64 = 7;

/// Runs `f` (one stage) and waits for its work; returns its result and seconds.
fn timed<B: Backend, T>(
    backend: &mut B,
    stage: &'static str,
    f: impl FnOnce(&mut B) -> lookback::Result<T>,
) -> Result<(T, f64), AppError> {
    let start = Instant::now();
    let result = f(backend).and_then(|out| backend.finish().map(|()| out));
    let out = result.map_err(|source| AppError::Stage { stage, backend: backend.name(), source })?;
    Ok((out, start.elapsed().as_secs_f64()))
}

/// Cleans `input` on `backend`.
pub fn run<B: Backend>(
    backend: &mut B,
    input: &Table,
    config: &Config,
    progress: &Progress,
) -> Result<Outcome, AppError> {
    let bar = progress.stages(STEPS);
    bar.set_prefix("cleaning");
    let k = config.stuck_run;

    bar.set_message("upload");
    let (columns, upload) = timed(backend, "upload", |b| b.upload(input))?;
    bar.inc(1);

    bar.set_message("validate");
    let ((census_in, columns, valid, census_valid), validate) = timed(backend, "validate", |b| {
        let census_in = b.census(&columns)?;
        let (columns, valid) = b.validate(columns, &config.validity)?;
        let census_valid = b.census(&columns)?;
        Ok((census_in, columns, valid, census_valid))
    })?;
    bar.inc(1);

    bar.set_message("dedup");
    let ((columns, census_unique), dedup) = timed(backend, "dedup", |b| {
        let columns = b.dedup(columns)?;
        let census = b.census(&columns)?;
        Ok((columns, census))
    })?;
    let unique = backend.rows(&columns) as u64;
    bar.inc(1);

    bar.set_message("stuck");
    let ((runs, stuck), stuck_s) = timed(backend, "stuck", |b| {
        let runs = b.long_runs(&columns, k)?;
        let stuck = stuck_ranges(&runs, &census_unique, k);
        Ok((runs, stuck))
    })?;
    bar.inc(1);

    bar.set_message("split");
    let ((accepted, quarantined), split) = timed(backend, "split", |b| b.split(columns, &stuck))?;
    let accepted_rows = backend.rows(&accepted) as u64;
    bar.inc(1);

    bar.set_message("stats");
    let (stats, stats_s) = timed(backend, "stats", |b| b.stats(&accepted))?;
    bar.inc(1);

    bar.set_message("download");
    let ((accepted, quarantined), download) =
        timed(backend, "download", |b| Ok((b.download(&accepted)?, b.download(&quarantined)?)))?;
    bar.finish_and_clear();
    let seconds = Seconds { upload, validate, dedup, stuck: stuck_s, split, stats: stats_s, download };

    let measured = Measured {
        backend: backend.name(),
        on_device: backend.on_device(),
        rows_in: input.len() as u64,
        census_in,
        census_valid,
        census_unique,
        valid,
        unique,
        non_trivial_runs: runs.non_trivial,
        long_runs: runs.offsets.len() as u64,
        stuck,
        accepted: accepted_rows,
        stats,
        seconds,
    };
    let report = tally::report(&measured, config, &accepted, &quarantined)?;
    Ok(Outcome { report, accepted, quarantined })
}

/// A small table that makes every stage call every kernel it uses (a NaN, a duplicate, a stuck run), so
/// that loading the GPU modules does not land in the first stage's time.
pub fn warm_up_table() -> Table {
    let mut t = Table::with_capacity(300);
    for i in 0..300i64 {
        let value = match i {
            0..=99 => 5.0,
            150 => f32::NAN,
            _ => i as f32,
        };
        let key = table::pack(1 + (i / 200) as u32, i).unwrap_or_default();
        t.push(key, value);
        if i == 120 {
            t.push(key, value);
        }
    }
    t
}
