//! The stages on the CPU, with `lookback::host`: the sequential reference implementations of the same
//! primitives `gpu.rs` calls, one for one. Used when there is no GPU (or with `--host`).
use crate::backend::{Backend, Census, LongRuns, SensorStats, StuckRange, Validated, Validity};
use crate::table::Table;
use lookback::{Pred, ScanOp, host};

/// The host reference path.
#[derive(Debug, Default)]
pub struct HostBackend;

impl Backend for HostBackend {
    type Columns = Table;

    fn name(&self) -> String {
        "host reference path (lookback::host)".to_string()
    }

    fn on_device(&self) -> bool {
        false
    }

    fn upload(&mut self, table: &Table) -> lookback::Result<Table> {
        Ok(table.clone())
    }

    fn rows(&self, columns: &Table) -> usize {
        columns.len()
    }

    fn census(&mut self, columns: &Table) -> lookback::Result<Census> {
        let (sensors, rows) = host::run_length_encode(&columns.sensor);
        Ok(sensors.into_iter().zip(rows).collect())
    }

    fn validate(&mut self, columns: Table, rule: &Validity) -> lookback::Result<(Table, Validated)> {
        let v = &columns.value;
        let nan = host::count_if(v, &rule.nan()) as u64;
        let infinite = host::count_if(v, &rule.infinite()) as u64;
        let sentinel = host::count_if(v, &rule.sentinel()) as u64;
        let ok = host::mask_if(v, &rule.valid());
        let kept = select(&columns, &ok)?;
        let counts = Validated { kept: kept.len() as u64, nan, infinite, sentinel };
        Ok((kept, counts))
    }

    fn dedup(&mut self, columns: Table) -> lookback::Result<Table> {
        let (key, value) = host::unique_by_key(&columns.key, &columns.value)?;
        let (_, sensor) = host::unique_by_key(&columns.key, &columns.sensor)?;
        Ok(Table { sensor, key, value })
    }

    fn long_runs(&mut self, columns: &Table, longer_than: u64) -> lookback::Result<LongRuns> {
        let (offsets, lengths) = host::non_trivial_runs(&columns.value);
        let long = host::mask_if(&lengths, &Pred::gt(longer_than));
        Ok(LongRuns {
            offsets: host::select_flagged(&offsets, &long)?,
            lengths: host::select_flagged(&lengths, &long)?,
            non_trivial: offsets.len() as u64,
        })
    }

    fn split(&mut self, columns: Table, stuck: &[StuckRange]) -> lookback::Result<(Table, Table)> {
        if stuck.is_empty() {
            return Ok((columns, Table::default()));
        }
        let mut flags = vec![0u8; columns.len()];
        for r in stuck {
            flags[r.start..r.start + r.len].fill(1);
        }
        let keep = host::mask_if(&flags, &Pred::eq(0));
        Ok((select(&columns, &keep)?, select(&columns, &flags)?))
    }

    fn stats(&mut self, columns: &Table) -> lookback::Result<Vec<SensorStats>> {
        let (s, v) = (&columns.sensor, &columns.value);
        let (sensors, sums) = host::reduce_by_key(s, v, ScanOp::Sum)?;
        let (_, mins) = host::reduce_by_key(s, v, ScanOp::Min)?;
        let (_, maxs) = host::reduce_by_key(s, v, ScanOp::Max)?;
        let (_, counts) = host::run_length_encode(s);
        Ok(stats_rows(&sensors, &counts, &sums, &mins, &maxs))
    }

    fn download(&mut self, columns: &Table) -> lookback::Result<Table> {
        Ok(columns.clone())
    }

    fn finish(&mut self) -> lookback::Result<()> {
        Ok(())
    }
}

/// The rows of every column whose flag is set.
fn select(columns: &Table, flags: &[u8]) -> lookback::Result<Table> {
    Ok(Table {
        sensor: host::select_flagged(&columns.sensor, flags)?,
        key: host::select_flagged(&columns.key, flags)?,
        value: host::select_flagged(&columns.value, flags)?,
    })
}

/// Zips the per-sensor columns (one entry per sensor, in the same order) into rows.
pub fn stats_rows(sensors: &[u32], counts: &[u64], sums: &[f32], mins: &[f32], maxs: &[f32]) -> Vec<SensorStats> {
    (0..sensors.len())
        .map(|i| SensorStats { sensor: sensors[i], count: counts[i], sum: sums[i], min: mins[i], max: maxs[i] })
        .collect()
}
