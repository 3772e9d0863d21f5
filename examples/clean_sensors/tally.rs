//! Turns what the stages measured into the report: rows in and out of each stage, bytes and rates,
//! where each sensor's rows went (differences of the censuses between stages), and a check that every
//! input row is counted exactly once — per sensor, in total, and in the tables that came back.
use crate::backend::{Census, SensorStats, StuckRange};
use crate::error::AppError;
use crate::pipeline::{Config, Measured};
use crate::report::{Invalid, Report, SensorLine, StageLine, Stats, Transfer, count};
use crate::table::Table;
use crate::traffic;
use std::collections::BTreeMap;

const CALLS_VALIDATE: &str = "count_if x3, mask_if, select_flagged_in_place x3; run_length_encode x2 (census)";
const CALLS_DEDUP: &str = "unique_by_key x2 (row key with value, then with sensor); run_length_encode (census)";
const CALLS_STUCK: &str = "non_trivial_runs, mask_if, select_flagged x2 (long runs); split at sensors on the host";
const CALLS_SPLIT: &str = "memcpy per stuck run (flags), mask_if, select_flagged x3, select_flagged_in_place x3";
const CALLS_STATS: &str = "reduce_by_key x3 (sum, min, max), run_length_encode (counts)";

fn accounting(what: String) -> AppError {
    AppError::Accounting(what)
}

/// `a - b`, or an accounting error if a stage produced more rows than it was given.
fn minus(a: u64, b: u64, what: &str) -> Result<u64, AppError> {
    a.checked_sub(b).ok_or_else(|| accounting(format!("{what}: {b} out of {a} in")))
}

/// The report of one run.
pub fn report(m: &Measured, config: &Config, accepted: &Table, quarantined: &Table) -> Result<Report, AppError> {
    let v = &m.valid;
    let reasons = v.nan + v.infinite + v.sentinel;
    let dropped = minus(m.rows_in, v.kept, "validate")?;
    let invalid = Invalid {
        nan: v.nan,
        infinite: v.infinite,
        sentinel: v.sentinel,
        out_of_range: minus(dropped, reasons, "invalid rows by reason")?,
    };
    let duplicate = minus(v.kept, m.unique, "dedup")?;
    let stuck: u64 = m.stuck.iter().map(|r| r.len as u64).sum();
    let s = &m.seconds;
    let sensors = |c: &Census| c.len() as u64;
    let line = |name, calls, (rows_in, rows_out), note, seconds, bytes| StageLine {
        name,
        calls,
        rows_in,
        rows_out,
        note,
        seconds,
        bytes,
    };
    let stages = vec![
        line(
            "validate",
            CALLS_VALIDATE,
            (m.rows_in, v.kept),
            format!("{} invalid", count(invalid.total())),
            s.validate,
            traffic::validate(m.rows_in, v.kept, sensors(&m.census_in), sensors(&m.census_valid)),
        ),
        line(
            "dedup",
            CALLS_DEDUP,
            (v.kept, m.unique),
            format!("{} duplicate", count(duplicate)),
            s.dedup,
            traffic::dedup(v.kept, m.unique, sensors(&m.census_unique)),
        ),
        line(
            "stuck",
            CALLS_STUCK,
            (m.unique, m.unique),
            format!("{} flagged in {} runs", count(stuck), m.stuck.len()),
            s.stuck,
            traffic::stuck(m.unique, m.non_trivial_runs, m.long_runs),
        ),
        line(
            "split",
            CALLS_SPLIT,
            (m.unique, m.accepted),
            format!("+ {} quarantined", count(quarantined.len() as u64)),
            s.split,
            traffic::split(m.unique, stuck),
        ),
        line(
            "stats",
            CALLS_STATS,
            (m.accepted, m.stats.len() as u64),
            "sensors".to_string(),
            s.stats,
            traffic::stats(m.accepted, m.stats.len() as u64),
        ),
    ];
    // On the host path upload and download are copies, not transfers: not reported.
    let mut transfers = Vec::new();
    if m.on_device {
        let downloaded = accepted.len() as u64 + quarantined.len() as u64;
        transfers.push(Transfer { what: "upload", bytes: traffic::transfer(m.rows_in), seconds: s.upload });
        transfers.push(Transfer { what: "download", bytes: traffic::transfer(downloaded), seconds: s.download });
    }
    let report = Report {
        backend: m.backend.clone(),
        validity: config.validity,
        stuck_run: config.stuck_run,
        rows_in: m.rows_in,
        invalid,
        duplicate,
        stuck,
        stuck_ranges: m.stuck.len() as u64,
        accepted: m.accepted,
        stages,
        transfers,
        sensors: per_sensor(&m.census_in, &m.census_valid, &m.census_unique, &m.stuck, &m.stats)?,
    };
    check(&report, accepted, quarantined)?;
    Ok(report)
}

/// Where each sensor's rows went: differences of the censuses between stages, the stuck ranges, and the
/// statistics. Every sensor of the input gets a line, even one whose rows were all dropped.
fn per_sensor(
    census_in: &Census,
    census_valid: &Census,
    census_unique: &Census,
    stuck: &[StuckRange],
    stats: &[SensorStats],
) -> Result<Vec<SensorLine>, AppError> {
    let lookup = |census: &Census| census.iter().copied().collect::<BTreeMap<u32, u64>>();
    let (valid, unique) = (lookup(census_valid), lookup(census_unique));
    let mut stuck_rows = BTreeMap::<u32, u64>::new();
    for r in stuck {
        *stuck_rows.entry(r.sensor).or_default() += r.len as u64;
    }
    let stats: BTreeMap<u32, &SensorStats> = stats.iter().map(|s| (s.sensor, s)).collect();
    let mut lines = Vec::with_capacity(census_in.len());
    for &(sensor, rows_in) in census_in {
        let valid = valid.get(&sensor).copied().unwrap_or(0);
        let unique = unique.get(&sensor).copied().unwrap_or(0);
        let stuck = stuck_rows.get(&sensor).copied().unwrap_or(0);
        let st = stats.get(&sensor);
        let accepted = st.map_or(0, |s| s.count);
        let invalid = minus(rows_in, valid, &format!("sensor {sensor} validate"))?;
        let duplicate = minus(valid, unique, &format!("sensor {sensor} dedup"))?;
        if unique != stuck + accepted {
            let got = format!("{unique} unique rows, {stuck} stuck + {accepted} accepted");
            return Err(accounting(format!("sensor {sensor}: {got}")));
        }
        let stats = st.map(|s| Stats { min: s.min, max: s.max, mean: f64::from(s.sum) / s.count as f64 });
        lines.push(SensorLine { sensor, rows_in, invalid, duplicate, stuck, accepted, stats });
    }
    Ok(lines)
}

/// The totals add up, per sensor and overall, and the downloaded tables hold what the counts say.
fn check(report: &Report, accepted: &Table, quarantined: &Table) -> Result<(), AppError> {
    let r = report;
    let sum = |f: fn(&SensorLine) -> u64| r.sensors.iter().map(f).sum::<u64>();
    let checks = [
        ("invalid + duplicate + stuck + accepted", r.invalid.total() + r.duplicate + r.stuck + r.accepted, r.rows_in),
        ("rows of all sensors", sum(|s| s.rows_in), r.rows_in),
        ("invalid rows of all sensors", sum(|s| s.invalid), r.invalid.total()),
        ("duplicate rows of all sensors", sum(|s| s.duplicate), r.duplicate),
        ("stuck rows of all sensors", sum(|s| s.stuck), r.stuck),
        ("accepted rows of all sensors", sum(|s| s.accepted), r.accepted),
        ("accepted rows written", accepted.len() as u64, r.accepted),
        ("quarantined rows written", quarantined.len() as u64, r.stuck),
    ];
    for (what, got, want) in checks {
        if got != want {
            return Err(accounting(format!("{what}: {got} != {want}")));
        }
    }
    Ok(())
}
