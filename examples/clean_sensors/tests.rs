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
