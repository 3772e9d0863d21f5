//! A sensor-log cleaning pipeline, end to end, on lookback's device-wide primitives:
//!
//! ```text
//! cargo run --release --example clean_sensors -- [INPUT.csv | --generate N] [--out clean.csv] [--help]
//! ```
//!
//! Stages, each a few library calls on device-resident columns (sensor u32, packed row key u64, value f32):
//! 1. validate — `mask_if` of `is_finite & ne(sentinel) & between(min, max)`, then `select_flagged_in_place`
//!    of each column; `count_if` says why rows were dropped;
//! 2. dedup — `unique_by_key` on the packed (sensor, time) row key: one reading per sensor and time;
//! 3. stuck — `non_trivial_runs` of the values, the runs longer than `--stuck-run` kept, cut at sensor
//!    boundaries;
//! 4. split — accepted and quarantined (stuck) rows by `select_flagged`;
//! 5. stats — per-sensor sum, min and max by `reduce_by_key`, counts by `run_length_encode`.
//!
//! Without a GPU the same stages run on `lookback::host`. `README.md` beside this file has the design.
//!
//! `--batches N --batch-rows R` is batch mode (`batches.rs`): N synthetic batches through one GPU pipeline
//! of `Workspace::*_into` calls, each stage sized by the previous one's count on the device
//! (`Workspace::with_count`), captured once as a CUDA graph and replayed per batch; it prints the time per
//! batch, eager and replayed, and checks every batch against `lookback::host`.
mod backend;
mod batches;
mod cli;
mod csv_in;
mod csv_out;
mod error;
mod generate;
mod gpu;
mod host;
mod pipeline;
mod progress;
mod report;
mod stuck;
mod table;
mod tally;
mod traffic;

use backend::{Backend, Validity};
use clap::Parser;
use error::AppError;
use lookback::cudarc::driver::CudaStream;
use pipeline::{Config, Outcome};
use progress::Progress;
use std::sync::Arc;
use std::time::Instant;
use table::Table;

fn main() -> Result<(), AppError> {
    let args = cli::Args::parse();
    args.check()?;
    let progress = Progress::new(!args.quiet);
    let config = Config {
        validity: Validity { lo: args.min, hi: args.max, sentinel: args.sentinel },
        stuck_run: args.stuck_run,
    };
    if let Some(batches) = args.batches {
        let rows = args.batch_rows;
        let sensors = args.sensors.unwrap_or(rows / generate::ROWS_PER_SENSOR).clamp(1, rows);
        let plan = batches::Plan { batches, rows, sensors, seed: args.seed, config };
        return batches::run(&plan, open_gpu(&args), &progress);
    }

    let start = Instant::now();
    let input = load(&args, &progress)?;
    println!("input ready in {:.2} s", start.elapsed().as_secs_f64());

    let outcome = clean(&args, &input, &config, &progress)?;
    drop(input);
    print!("{}", outcome.report.render(args.top, args.show));

    let start = Instant::now();
    let writes = [(&args.out, &outcome.accepted, "accepted"), (&args.quarantine, &outcome.quarantined, "quarantined")];
    for (path, rows, what) in writes {
        if let Some(path) = path {
            csv_out::write_table(path, rows, &progress)?;
            println!("wrote {} {what} rows to {}", report::count(rows.len() as u64), path.display());
        }
    }
    if let Some(path) = &args.stats {
        csv_out::write_stats(path, &outcome.report.sensors)?;
        println!("wrote statistics of {} sensors to {}", outcome.report.sensors.len(), path.display());
    }
    if args.out.is_some() || args.quarantine.is_some() || args.stats.is_some() {
        println!("written in {:.2} s", start.elapsed().as_secs_f64());
    }
    Ok(())
}

/// The input table: generated, or read from the CSV named (or the shipped sample).
fn load(args: &cli::Args, progress: &Progress) -> Result<Table, AppError> {
    let Some(rows) = args.generate else {
        let path = args.input.clone().unwrap_or_else(csv_in::sample_path);
        if args.input.is_none() {
            println!("no INPUT given: cleaning the shipped sample (see --help)");
        }
        let table = csv_in::load(&path, progress)?;
        let sensors = table.sensor.windows(2).filter(|w| w[0] != w[1]).count() + usize::from(!table.is_empty());
        println!("input: {} ({} rows, {sensors} sensors)", path.display(), report::count(table.len() as u64));
        return Ok(table);
    };
    let sensors = args.sensors.unwrap_or((rows / generate::ROWS_PER_SENSOR).max(1));
    let (table, injected) = generate::generate(rows, sensors, args.seed, progress);
    println!("input: synthetic log of {} rows, {sensors} sensors, seed {}", report::count(rows as u64), args.seed);
    let i = &injected;
    println!(
        "  injected: {} NaN, {} sentinels, {} spikes, {} duplicates, {} stuck episodes ({} rows)",
        report::count(i.nan),
        report::count(i.sentinel),
        report::count(i.spike),
        report::count(i.duplicate),
        report::count(i.stuck_episodes),
        report::count(i.stuck_rows)
    );
    if let Some(path) = &args.save_generated {
        csv_out::write_table(path, &table, progress)?;
        println!("  saved to {}", path.display());
    }
    Ok(table)
}

/// GPU `--device`, or why the host path runs instead (`--host`, no driver, no kernels).
fn open_gpu(args: &cli::Args) -> Result<Arc<CudaStream>, String> {
    if args.host {
        return Err("--host was given".to_string());
    }
    match lookback::default_stream(args.device) {
        Ok(stream) if lookback::kernels_built() => Ok(stream),
        Ok(_) => Err(lookback::Error::KernelsNotBuilt.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs the pipeline on GPU `--device` or, without one (or with `--host`), on the host path.
fn clean(args: &cli::Args, input: &Table, config: &Config, progress: &Progress) -> Result<Outcome, AppError> {
    let why_not = match open_gpu(args) {
        Ok(stream) => {
            let mut gpu = gpu::GpuBackend::new(stream);
            println!("running on {}", gpu.name());
            // Untimed: loads the kernel modules, so stage times measure the work alone.
            pipeline::run(&mut gpu, &pipeline::warm_up_table(), config, &Progress::new(false))?;
            return pipeline::run(&mut gpu, input, config, progress);
        }
        Err(why) => why,
    };
    println!("running on the host reference path (lookback::host), because: {why_not}");
    pipeline::run(&mut host::HostBackend, input, config, progress)
}
