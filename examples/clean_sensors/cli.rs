//! Command-line options (clap).
use crate::error::AppError;
use crate::generate;
use crate::table::MAX_SENSOR;
use clap::Parser;
use std::path::PathBuf;

/// Cleans a sensor log on the GPU (or on the host without one): drops invalid readings and duplicate
/// rows, quarantines stuck sensors, and reports per-sensor statistics.
///
/// Input: CSV `sensor_id,timestamp,value` with a header line, sorted by sensor, then time; timestamps in
/// whole seconds since 1970; a missing reading may be empty, NA or null. Without INPUT and --generate,
/// the shipped sample (examples/data/sensors_sample.csv, NOAA series) is cleaned.
///
/// With --batches N, batch mode instead: N synthetic batches of --batch-rows rows run through one GPU
/// pipeline that is captured once as a CUDA graph and replayed per batch (each stage sized by the
/// previous one's count on the device); it prints the time per batch, eager and replayed, and checks
/// every batch against the host reference.
#[derive(Debug, Parser)]
#[command(name = "clean_sensors", version, after_help = EXAMPLES)]
#[command(group(clap::ArgGroup::new("synthetic").args(["generate", "batches"])))]
pub struct Args {
    /// The CSV log to clean.
    #[arg(conflicts_with = "generate")]
    pub input: Option<PathBuf>,

    /// Clean a synthetic log of N rows (default 50,000,000) with injected faults instead of a file.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "50000000")]
    pub generate: Option<usize>,

    /// Seed of the synthetic log (the same seed gives the same log; with --batches, batch b has seed + b).
    #[arg(long, default_value_t = 1, requires = "synthetic")]
    pub seed: u64,

    /// Sensors in the synthetic log, or in each batch (default: one per 25,000 rows).
    #[arg(long, value_name = "S", requires = "synthetic")]
    pub sensors: Option<usize>,

    /// Batch mode: clean N synthetic batches with one pipeline captured as a CUDA graph and replayed per
    /// batch; print the time per batch, eager and replayed.
    ///
    /// Each batch runs eagerly (a wait after each stage) and as one graph replay, and both results are
    /// checked against the host reference. Long runs are cut into stuck ranges and counted, not
    /// quarantined. Without a GPU (or with --host) only the host reference runs.
    #[arg(long, value_name = "N", conflicts_with_all = ["input", "out", "quarantine", "stats"])]
    pub batches: Option<usize>,

    /// Rows of each batch in batch mode: the capacity of the device buffers, allocated once.
    #[arg(long, value_name = "R", default_value_t = 1_000_000, requires = "batches")]
    pub batch_rows: usize,

    /// Also write the synthetic log as CSV (the input format) to PATH.
    #[arg(long, value_name = "PATH", requires = "generate")]
    pub save_generated: Option<PathBuf>,

    /// Write the accepted (cleaned) rows as CSV to PATH.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,

    /// Write the quarantined (stuck) rows as CSV to PATH.
    #[arg(long, value_name = "PATH")]
    pub quarantine: Option<PathBuf>,

    /// Write every sensor's counts and statistics as CSV to PATH.
    #[arg(long, value_name = "PATH")]
    pub stats: Option<PathBuf>,

    /// Smallest plausible reading.
    #[arg(long, default_value_t = -100.0, allow_negative_numbers = true)]
    pub min: f32,

    /// Largest plausible reading.
    #[arg(long, default_value_t = 1000.0, allow_negative_numbers = true)]
    pub max: f32,

    /// The "no reading" value loggers write.
    #[arg(long, default_value_t = generate::SENTINEL, allow_negative_numbers = true)]
    pub sentinel: f32,

    /// More than K equal readings in a row from one sensor mean it is stuck.
    #[arg(long, value_name = "K", default_value_t = 50)]
    pub stuck_run: u64,

    /// Run on the host reference path even if a GPU is available.
    #[arg(long)]
    pub host: bool,

    /// Which GPU to use.
    #[arg(long, value_name = "ORDINAL", default_value_t = 0)]
    pub device: usize,

    /// Problem sensors to list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,

    /// Sensors whose statistics to print.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub show: usize,

    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
}

const EXAMPLES: &str = "Examples:
  cargo run --release --example clean_sensors
  cargo run --release --example clean_sensors -- --generate 1000000 --out clean.csv
  cargo run --release --example clean_sensors -- readings.csv --min -40 --max 60 --stuck-run 120
  cargo run --release --example clean_sensors -- --batches 50 --batch-rows 1000000";

impl Args {
    /// Checks what clap cannot: the rules must make sense together.
    pub fn check(&self) -> Result<(), AppError> {
        let bad = |why: String| Err(AppError::Args(why));
        if !(self.min.is_finite() && self.max.is_finite() && self.min <= self.max) {
            return bad(format!("--min {} and --max {} must be finite with min <= max", self.min, self.max));
        }
        if !self.sentinel.is_finite() {
            return bad(format!("--sentinel {} must be finite (NaN readings are counted apart)", self.sentinel));
        }
        if self.stuck_run < 2 {
            return bad(format!(
                "--stuck-run {} must be at least 2 (runs of 2 equal readings are normal)",
                self.stuck_run
            ));
        }
        if self.generate == Some(0) {
            return bad("--generate needs at least one row".to_string());
        }
        if self.batches == Some(0) || self.batch_rows == 0 {
            return bad("--batches and --batch-rows need at least one batch of one row".to_string());
        }
        if self.sensors.is_some_and(|s| s == 0 || s > MAX_SENSOR as usize - 1000) {
            return bad(format!("--sensors must be between 1 and {}", MAX_SENSOR - 1000));
        }
        Ok(())
    }
}
