//! The pipeline against an independent computation in plain loops (no lookback calls), on a generated log,
//! on random logs dense with every fault, and on hand-made edge cases; and, where there is a GPU, the GPU
//! backend against the host backend. `tests/clean_sensors.rs` compiles this module and the example's
//! others into a test crate, so `cargo test` runs them.
use crate::backend::Validity;
use crate::generate::{Rng, generate};
use crate::gpu::GpuBackend;
use crate::host::HostBackend;
use crate::pipeline::{self, Config, Outcome};
use crate::progress::Progress;
use crate::report::{Report, SensorLine};
use crate::table::{Table, pack, unpack};
use lookback::cudarc::driver::CudaStream;
use std::collections::BTreeMap;
use std::sync::{Arc, Once};

// Batch mode. `tests/clean_sensors.rs` lists the example's modules but not this one, so it is compiled
// here, as a child of this module (a `#[path]` is relative to this file's directory).
#[path = "batches.rs"]
mod batches;

const RULE: Validity = Validity { lo: -100.0, hi: 1000.0, sentinel: -9999.0 };

/// Per sensor: rows in, invalid, duplicate, stuck, and the accepted values.
#[derive(Default, Debug)]
struct SensorTruth {
    rows_in: u64,
    invalid: u64,
    duplicate: u64,
    stuck: u64,
    accepted: Vec<f32>,
}

/// What a careful person computes with loops.
#[derive(Default, Debug)]
struct Truth {
    nan: u64,
    infinite: u64,
    sentinel: u64,
    out_of_range: u64,
    valid: u64,
    unique: u64,
    stuck: u64,
    accepted: Vec<(u32, i64, f32)>,
    quarantined: Vec<(u32, i64, f32)>,
    sensors: BTreeMap<u32, SensorTruth>,
}

fn truth(table: &Table, rule: &Validity, stuck_run: usize) -> Truth {
    let mut t = Truth::default();
    // 1. Validity, with the reasons in the report's order.
    let mut valid: Vec<(u32, i64, f32)> = Vec::new();
    for (&key, &x) in table.key.iter().zip(&table.value) {
        let (sensor, time) = unpack(key);
        let s = t.sensors.entry(sensor).or_default();
        s.rows_in += 1;
        let reason = if x.is_nan() {
            &mut t.nan
        } else if x.is_infinite() {
            &mut t.infinite
        } else if x == rule.sentinel {
            &mut t.sentinel
        } else if x < rule.lo || x > rule.hi {
            &mut t.out_of_range
        } else {
            valid.push((sensor, time, x));
            continue;
        };
        *reason += 1;
        s.invalid += 1;
    }
    t.valid = valid.len() as u64;
    // 2. One reading per (sensor, time): the first one.
    let mut unique: Vec<(u32, i64, f32)> = Vec::new();
    for row in valid {
        if unique.last().is_some_and(|last| (last.0, last.1) == (row.0, row.1)) {
            t.sensors.entry(row.0).or_default().duplicate += 1;
        } else {
            unique.push(row);
        }
    }
    t.unique = unique.len() as u64;
    // 3. Runs of equal values within one sensor, longer than the threshold.
    let mut stuck = vec![false; unique.len()];
    let mut i = 0;
    while i < unique.len() {
        let mut j = i + 1;
        while j < unique.len() && unique[j].0 == unique[i].0 && unique[j].2 == unique[i].2 {
            j += 1;
        }
        if j - i > stuck_run {
            stuck[i..j].fill(true);
        }
        i = j;
    }
    // 4. Split, and the values per sensor.
    for (row, stuck) in unique.into_iter().zip(stuck) {
        let s = t.sensors.entry(row.0).or_default();
        if stuck {
            s.stuck += 1;
            t.stuck += 1;
            t.quarantined.push(row);
        } else {
            s.accepted.push(row.2);
            t.accepted.push(row);
        }
    }
    t
}

fn rows(table: &Table) -> Vec<(u32, i64, u32)> {
    table.key.iter().zip(&table.value).map(|(&k, v)| (unpack(k).0, unpack(k).1, v.to_bits())).collect()
}

fn truth_rows(rows: &[(u32, i64, f32)]) -> Vec<(u32, i64, u32)> {
    rows.iter().map(|&(s, t, v)| (s, t, v.to_bits())).collect()
}

/// The report and the output tables against the loops.
fn check_against_truth(what: &str, out: &Outcome, t: &Truth) {
    let r = &out.report;
    let i = &r.invalid;
    assert_eq!(
        (i.nan, i.infinite, i.sentinel, i.out_of_range),
        (t.nan, t.infinite, t.sentinel, t.out_of_range),
        "{what}: invalid reasons"
    );
    let rows_in: u64 = t.sensors.values().map(|s| s.rows_in).sum();
    let accepted = t.accepted.len() as u64;
    assert_eq!(
        (r.rows_in, r.duplicate, r.stuck, r.accepted),
        (rows_in, t.valid - t.unique, t.stuck, accepted),
        "{what}: totals"
    );
    let stage_rows: Vec<_> = r.stages.iter().map(|s| (s.name, s.rows_in, s.rows_out)).collect();
    let with_readings = t.sensors.values().filter(|s| !s.accepted.is_empty()).count() as u64;
    let want = [
        ("validate", rows_in, t.valid),
        ("dedup", t.valid, t.unique),
        ("stuck", t.unique, t.unique),
        ("split", t.unique, accepted),
        ("stats", accepted, with_readings),
    ];
    assert_eq!(stage_rows, want, "{what}: rows in and out of each stage");
    assert_eq!(rows(&out.accepted), truth_rows(&t.accepted), "{what}: accepted rows");
    assert_eq!(rows(&out.quarantined), truth_rows(&t.quarantined), "{what}: quarantined rows");

    let sensors: Vec<u32> = r.sensors.iter().map(|s| s.sensor).collect();
    assert_eq!(sensors, t.sensors.keys().copied().collect::<Vec<_>>(), "{what}: sensors");
    for (line, (_, s)) in r.sensors.iter().zip(&t.sensors) {
        let counts = (line.rows_in, line.invalid, line.duplicate, line.stuck, line.accepted);
        let want = (s.rows_in, s.invalid, s.duplicate, s.stuck, s.accepted.len() as u64);
        assert_eq!(counts, want, "{what}: sensor {} counts", line.sensor);
        check_stats(what, line, &s.accepted);
    }
}

/// Min and max exactly; the mean within the rounding of an f32 sum: summed in any order, n items land
/// within (n−1)·u·Σ|x| of the exact sum (u = ε/2), so their mean lies within u·Σ|x| < ε·Σ|x| of the exact
/// mean. (The GPU sums in another order than the host.)
fn check_stats(what: &str, line: &SensorLine, values: &[f32]) {
    let Some(st) = line.stats else {
        assert!(values.is_empty(), "{what}: sensor {} has accepted rows but no stats", line.sensor);
        return;
    };
    let min = values.iter().copied().fold(f32::INFINITY, f32::min);
    let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    assert_eq!((st.min, st.max), (min, max), "{what}: sensor {} min, max", line.sensor);
    let n = values.len() as f64;
    let sum: f64 = values.iter().map(|&v| f64::from(v)).sum();
    let magnitude: f64 = values.iter().map(|&v| f64::from(v).abs()).sum();
    let tolerance = f64::from(f32::EPSILON) * magnitude + 1e-9;
    assert!((st.mean - sum / n).abs() <= tolerance, "{what}: sensor {} mean {} vs {}", line.sensor, st.mean, sum / n);
}

/// Two reports of the same input from different backends: equal but for timing and the float sums.
fn check_same(what: &str, gpu: &Outcome, host: &Outcome) {
    let (g, h) = (&gpu.report, &host.report);
    let counts = |r: &Report| (r.rows_in, r.invalid, r.duplicate, r.stuck, r.stuck_ranges, r.accepted);
    assert_eq!(counts(g), counts(h), "{what}: GPU vs host totals");
    let stage = |r: &Report| r.stages.iter().map(|s| (s.name, s.rows_in, s.rows_out, s.bytes)).collect::<Vec<_>>();
    assert_eq!(stage(g), stage(h), "{what}: GPU vs host stages");
    assert_eq!(rows(&gpu.accepted), rows(&host.accepted), "{what}: GPU vs host accepted rows");
    assert_eq!(rows(&gpu.quarantined), rows(&host.quarantined), "{what}: GPU vs host quarantined rows");
    assert_eq!(g.sensors.len(), h.sensors.len());
    for (a, b) in g.sensors.iter().zip(&h.sensors) {
        let key = |s: &SensorLine| (s.sensor, s.rows_in, s.invalid, s.duplicate, s.stuck, s.accepted);
        assert_eq!(key(a), key(b), "{what}: GPU vs host sensor counts");
        let minmax = |s: &SensorLine| s.stats.map(|st| (st.min, st.max));
        assert_eq!(minmax(a), minmax(b), "{what}: GPU vs host sensor {} min, max", a.sensor);
    }
}

fn run_host(table: &Table, stuck_run: u64) -> Outcome {
    let config = Config { validity: RULE, stuck_run };
    pipeline::run(&mut HostBackend, table, &config, &Progress::new(false)).unwrap()
}

/// The GPU stream, or `None` after one visible SKIPPED line; a failure instead with LOOKBACK_REQUIRE_GPU=1
/// (the convention of `tests/common/mod.rs`).
fn gpu() -> Option<Arc<CudaStream>> {
    let why = match lookback::default_stream(0) {
        Ok(_) if !lookback::kernels_built() => "the crate was built without nvcc (no kernels)".to_string(),
        Ok(s) => return Some(s),
        Err(e) => e.to_string(),
    };
    if std::env::var("LOOKBACK_REQUIRE_GPU").is_ok_and(|v| v == "1") {
        panic!("LOOKBACK_REQUIRE_GPU=1 but no usable GPU: {why}");
    }
    static NOTE: Once = Once::new();
    NOTE.call_once(|| {
        use std::io::Write;
        // The raw stderr handle: libtest captures eprintln! of passing tests, and this line must be seen.
        let _ =
            writeln!(std::io::stderr(), "SKIPPED GPU tests: {why} (set LOOKBACK_REQUIRE_GPU=1 to make this a failure)");
    });
    None
}

/// The host pipeline against the loops and, with a GPU, the GPU pipeline against both. Returns the host
/// report.
fn check_all(what: &str, table: &Table, stuck_run: u64) -> Report {
    let t = truth(table, &RULE, stuck_run as usize);
    let host = run_host(table, stuck_run);
    check_against_truth(&format!("{what} (host)"), &host, &t);
    if let Some(stream) = gpu() {
        let config = Config { validity: RULE, stuck_run };
        let gpu = pipeline::run(&mut GpuBackend::new(stream), table, &config, &Progress::new(false)).unwrap();
        check_against_truth(&format!("{what} (GPU)"), &gpu, &t);
        check_same(what, &gpu, &host);
    }
    host.report
}

/// A log dense with every fault: few distinct values (long natural runs), repeated times with equal or
/// different values, NaN, ±inf, sentinels, spikes, ±0, one-row sensors, and runs across sensor boundaries.
fn nasty_table(rows: usize, seed: u64) -> Table {
    let mut rng = Rng::new(seed);
    let mut table = Table::with_capacity(rows);
    let (mut sensor, mut time) = (0u32, 0i64);
    let mut value = 1.0f32;
    while table.len() < rows {
        if rng.unit() < 0.002 || table.is_empty() {
            // A new sensor: ids skip, and times may restart anywhere (even equal to the last one).
            sensor += 1 + (rng.next_u64() % 3) as u32;
            time = [time, 0, -1_000_000][(rng.next_u64() % 3) as usize];
        }
        match rng.unit() {
            u if u < 0.05 => {} // same time as the previous row: a duplicate or a conflicting re-send
            _ => time += 1 + (rng.next_u64() % 60) as i64,
        }
        let u = rng.unit();
        // Mostly repeat the last value (runs of ~7, some far longer), else pick from a tiny set or a fault.
        if u < 0.15 {
            value = match rng.next_u64() % 12 {
                0 => f32::NAN,
                1 => f32::INFINITY,
                2 => f32::NEG_INFINITY,
                3 => RULE.sentinel,
                4 => 5000.0,
                5 => -0.0,
                6 => 0.0,
                7 => RULE.lo,
                8 => RULE.hi,
                _ => (rng.next_u64() % 4) as f32,
            };
        }
        table.push(pack(sensor, time).unwrap(), value);
    }
    table
}

#[test]
fn generated_log_matches_the_loops() {
    let (table, _) = generate(400_000, 13, 7, &Progress::new(false));
    let r = check_all("generated log", &table, 50);
    assert!(r.invalid.nan > 0 && r.invalid.sentinel > 0 && r.invalid.out_of_range > 0);
    assert!(r.duplicate > 0 && r.stuck > 0);
}

#[test]
fn fault_dense_logs_match_the_loops() {
    for (rows, seed, stuck_run) in [(50_000, 1, 3), (50_000, 2, 8), (200_000, 3, 20), (3_000, 4, 10)] {
        let what = format!("nasty log {rows}/{seed}/{stuck_run}");
        let r = check_all(&what, &nasty_table(rows, seed), stuck_run);
        let i = r.invalid;
        let each = [i.nan, i.infinite, i.sentinel, i.out_of_range, r.duplicate, r.stuck, r.accepted];
        assert!(each.iter().all(|&c| c > 0), "{what}: every fault occurs ({each:?})");
    }
}

#[test]
fn edge_cases_at_sensor_boundaries() {
    let mut table = Table::default();
    let mut push = |sensor: u32, time: i64, value: f32| table.push(pack(sensor, time).unwrap(), value);
    // Sensor 1 ends and sensor 2 starts at the same time with the same value: not a duplicate.
    push(1, 100, 7.0);
    push(2, 100, 7.0);
    // Sensor 2 ends with 30 readings of 5.0 and sensor 3 starts with 30: no stuck sensor (threshold 50).
    for t in 0..30 {
        push(2, 200 + t, 5.0);
    }
    for t in 0..30 {
        push(3, t, 5.0);
    }
    // Sensor 3 then: a conflicting re-send (same time, other value) is dropped, the first reading kept.
    push(3, 40, 1.0);
    push(3, 40, 2.0);
    // 60 copies of one row are one reading, so no stuck run.
    for _ in 0..60 {
        push(3, 50, 9.0);
    }
    // Sensor 4: 30 equal readings, a NaN, 30 more: the NaN is dropped first, so 60 in a row — stuck;
    // -0.0 and 0.0 are one value.
    for t in 0..61 {
        push(4, t, if t == 30 { f32::NAN } else { 3.0 });
    }
    for t in 100..151 {
        push(4, t, if t % 2 == 0 { 0.0 } else { -0.0 });
    }
    let out = run_host(&table, 50);
    let r = &out.report;
    assert_eq!((r.invalid.nan, r.duplicate, r.stuck, r.stuck_ranges), (1, 60, 111, 2));
    let line = |id| *r.sensors.iter().find(|s| s.sensor == id).unwrap();
    assert_eq!((line(1).accepted, line(2).accepted, line(2).stuck), (1, 31, 0));
    assert_eq!((line(3).accepted, line(3).duplicate, line(3).stuck), (32, 60, 0));
    assert_eq!((line(4).stuck, line(4).accepted, line(4).invalid), (111, 0, 1));
    assert!(line(4).stats.is_none());
    check_all("edge cases", &table, 50);
}

#[test]
fn empty_and_tiny_inputs() {
    check_all("empty", &Table::default(), 50);
    let mut one = Table::default();
    one.push(pack(1, 0).unwrap(), f32::NAN);
    check_all("one invalid row", &one, 50);
    check_all("warm-up table", &pipeline::warm_up_table(), 50);
    let out = run_host(&Table::default(), 50);
    assert_eq!((out.report.rows_in, out.report.accepted, out.report.sensors.len()), (0, 0, 0));
    // The report renders without a sensor.
    assert!(out.report.render(10, 10).contains("none"));
}

#[test]
fn the_shipped_sample_is_cleaned() {
    let table = crate::csv_in::load(&crate::csv_in::sample_path(), &Progress::new(false)).unwrap();
    check_all("sample", &table, 50);
    let out = run_host(&table, 50);
    // The 59 missing weeks of the Mauna Loa record; Seattle's longest dry spell is 48 days, under 50.
    assert_eq!((out.report.invalid.total(), out.report.duplicate, out.report.stuck), (59, 0, 0));
    let text = out.report.render(10, 10);
    assert!(text.contains("every input row is counted exactly once"));
    // With a threshold of 30 days, the dry spells are flagged: the limit of a value-only stuck test.
    assert!(run_host(&table, 30).report.stuck > 0);
}

#[test]
fn written_csv_reads_back_to_the_same_rows() {
    let (table, _) = generate(20_000, 3, 11, &Progress::new(false));
    let out = run_host(&table, 50);
    let dir = std::env::temp_dir().join(format!("clean_sensors_test_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, rows_written) in
        [("accepted.csv", &out.accepted), ("quarantined.csv", &out.quarantined), ("log.csv", &table)]
    {
        let path = dir.join(name);
        crate::csv_out::write_table(&path, rows_written, &Progress::new(false)).unwrap();
        let back = crate::csv_in::load(&path, &Progress::new(false)).unwrap();
        assert_eq!(rows(&back), rows(rows_written), "{name}");
    }
    let stats = dir.join("stats.csv");
    crate::csv_out::write_stats(&stats, &out.report.sensors).unwrap();
    let text = std::fs::read_to_string(&stats).unwrap();
    assert_eq!(text.lines().count(), 1 + out.report.sensors.len());
    assert!(text.starts_with("sensor_id,rows,invalid,duplicate,stuck,accepted,min,max,mean\n1000,"));
    let err = crate::csv_out::write_table(&dir.join("no/such/dir.csv"), &table, &Progress::new(false)).unwrap_err();
    assert!(err.to_string().starts_with("cannot write"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A batch in which no row survives validation: every reason in turn.
fn all_invalid(rows: usize) -> Table {
    let bad = [f32::NAN, f32::INFINITY, RULE.sentinel, 5000.0, f32::NEG_INFINITY, -5000.0];
    let mut t = Table::default();
    for i in 0..rows {
        t.push(pack(1 + (i / 400) as u32, i as i64).unwrap(), bad[i % bad.len()]);
    }
    t
}

/// A batch in which every row survives validation and dedup: distinct times, values in range, and runs of
/// 20 equal values every 140 rows (sensors change every 333 rows, so the run at 1,320 is cut into a stuck
/// piece of 12 rows and a piece of 8).
fn all_valid(rows: usize) -> Table {
    let mut t = Table::default();
    for i in 0..rows {
        let value = if (i / 20) % 7 == 3 { 42.5 } else { (i % 5) as f32 };
        t.push(pack(10 + (i / 333) as u32, i as i64).unwrap(), value);
    }
    t
}

/// The batch pipeline's host reference against the loops: counts, the unique rows, stuck rows, per-sensor
/// statistics and offsets.
fn check_batch_reference(what: &str, table: &Table, stuck_run: u64) -> batches::BatchResult {
    let got = batches::reference(table, &Config { validity: RULE, stuck_run }).unwrap();
    let t = truth(table, &RULE, stuck_run as usize);
    let c = got.counts;
    assert_eq!(
        (c.rows, c.nan, c.infinite, c.sentinel, c.valid, c.unique),
        (table.len() as u64, t.nan, t.infinite, t.sentinel, t.valid, t.unique),
        "{what}: counts"
    );
    // The unique rows are the accepted and the quarantined ones, in (sensor, time) order.
    let mut unique = truth_rows(&t.accepted);
    unique.extend(truth_rows(&t.quarantined));
    unique.sort_unstable_by_key(|r| (r.0, r.1));
    assert_eq!(rows(&got.unique), unique, "{what}: unique rows");
    let stuck = got.stuck(stuck_run);
    assert_eq!(stuck.iter().map(|r| r.len as u64).sum::<u64>(), t.stuck, "{what}: stuck rows");
    let mut values: BTreeMap<u32, Vec<f32>> = BTreeMap::new();
    for &(sensor, _, v) in t.accepted.iter().chain(&t.quarantined) {
        values.entry(sensor).or_default().push(v);
    }
    let sensors: Vec<u32> = got.stats.iter().map(|s| s.sensor).collect();
    assert_eq!(sensors, values.keys().copied().collect::<Vec<_>>(), "{what}: sensors");
    let mut first = 0;
    for ((st, v), &first_row) in got.stats.iter().zip(values.values()).zip(&got.first_row) {
        assert_eq!((st.count, first_row), (v.len() as u64, first), "{what}: sensor {} rows", st.sensor);
        first += st.count;
        let min = v.iter().copied().fold(f32::INFINITY, f32::min);
        let max = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        assert_eq!((st.min, st.max), (min, max), "{what}: sensor {} min, max", st.sensor);
        // An f32 sum in any order lies within (n-1)·ε/2·Σ|x| of the exact sum.
        let exact: f64 = v.iter().map(|&x| f64::from(x)).sum();
        let magnitude: f64 = v.iter().map(|&x| f64::from(x).abs()).sum();
        let tolerance = v.len() as f64 * f64::from(f32::EPSILON) * magnitude;
        assert!((f64::from(st.sum) - exact).abs() <= tolerance, "{what}: sensor {} sum", st.sensor);
    }
    got
}

#[test]
fn batch_mode_matches_the_loops_and_replays_on_the_gpu() {
    let stuck_run = 8;
    let (generated, _) = generate(30_000, 4, 21, &Progress::new(false));
    // A batch of the full capacity first, then shorter ones, whose input buffers still hold earlier rows
    // past their count; among them one where no row survives validation, one where every row survives
    // validation and dedup, and an empty one.
    let tables = vec![
        generated,
        nasty_table(20_000, 5),
        all_invalid(5_000),
        all_valid(3_000),
        Table::default(),
        nasty_table(999, 6),
    ];
    let want: Vec<batches::Findings> = tables
        .iter()
        .enumerate()
        .map(|(i, table)| check_batch_reference(&format!("batch {i}"), table, stuck_run).findings(stuck_run))
        .collect();
    assert_eq!((want[2].invalid, want[2].sensors), (5_000, 0), "nothing survives");
    assert_eq!((want[3].invalid, want[3].duplicate, want[3].stuck_ranges), (0, 0, 21), "everything survives");
    assert_eq!(want[4], batches::Findings::default(), "empty");
    assert!(want[1].invalid > 0 && want[1].duplicate > 0 && want[1].stuck_ranges > 0);

    let Some(stream) = gpu() else { return };
    let config = Config { validity: RULE, stuck_run };
    // Checks the eager run and the graph replay of every batch against the host reference (an error on any
    // difference), with the outputs poisoned before each.
    let measured = batches::run_gpu(&stream, 30_000, &config, tables, &Progress::new(false)).unwrap();
    assert_eq!(measured.findings, want);
    assert_eq!((measured.eager.len(), measured.replay.len()), (6, 6));
}

#[test]
fn batch_check_catches_wrong_results() {
    let want = batches::reference(&nasty_table(5_000, 7), &Config { validity: RULE, stuck_run: 8 }).unwrap();
    assert!(want.stats.len() > 1 && !want.runs.offsets.is_empty());
    assert_eq!(batches::compare(&want, &want), Ok(()));
    let changed = |change: &dyn Fn(&mut batches::BatchResult)| {
        let mut got = want.clone();
        change(&mut got);
        batches::compare(&got, &want)
    };
    // A count never written reads as the poison.
    assert!(changed(&|r| r.counts.unique = u64::MAX).is_err());
    assert!(changed(&|r| r.unique.key[0] ^= 1).is_err());
    assert!(changed(&|r| r.unique.value[3] = f32::NAN).is_err());
    assert!(changed(&|r| r.runs.lengths[0] += 1).is_err());
    assert!(changed(&|r| r.first_row[1] += 1).is_err());
    assert!(changed(&|r| r.stats[1].max = f32::NAN).is_err());
    assert!(changed(&|r| r.stats[1].sum = f32::NAN).is_err());
    // A sum in another order may differ in its last bits.
    assert!(changed(&|r| r.stats[1].sum = f32::from_bits(r.stats[1].sum.to_bits() + 1)).is_ok());
}
