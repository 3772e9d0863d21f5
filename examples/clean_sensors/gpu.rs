//! The stages on the GPU. The columns stay in device memory from upload to download; each stage is a few
//! lookback calls, and what comes back to the host between stages is a count, one entry per sensor, or
//! the short list of long runs.
use crate::backend::{Backend, Census, LongRuns, SensorStats, StuckRange, Validated, Validity};
use crate::host::stats_rows;
use crate::table::Table;
use lookback::cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};
use lookback::{Pred, ScanOp};
use std::sync::Arc;

/// Device-resident columns. One-shot results keep their input's length, so the buffers may be longer
/// than `rows`; only the first `rows` items of each are the table.
pub struct GpuColumns {
    sensor: CudaSlice<u32>,
    key: CudaSlice<u64>,
    value: CudaSlice<f32>,
    rows: usize,
}

/// The GPU path: every stage on one stream.
pub struct GpuBackend {
    stream: Arc<CudaStream>,
    name: String,
}

impl GpuBackend {
    pub fn new(stream: Arc<CudaStream>) -> Self {
        let context = stream.context();
        let model = context.name().unwrap_or_else(|_| "unknown model".to_string());
        let name = format!("GPU {} ({model})", context.ordinal());
        GpuBackend { stream, name }
    }

    /// Columns with no rows. (Buffers of one item: the driver refuses empty allocations.)
    fn empty(&self) -> lookback::Result<GpuColumns> {
        let table = Table::default();
        self.upload_table(&table)
    }

    fn upload_table(&self, table: &Table) -> lookback::Result<GpuColumns> {
        Ok(GpuColumns {
            sensor: upload(&self.stream, &table.sensor)?,
            key: upload(&self.stream, &table.key)?,
            value: upload(&self.stream, &table.value)?,
            rows: table.len(),
        })
    }
}

/// Copies a column to a new device buffer of at least one item.
fn upload<T: DeviceRepr + ValidAsZeroBits>(stream: &Arc<CudaStream>, data: &[T]) -> lookback::Result<CudaSlice<T>> {
    let mut buffer = stream.alloc_zeros::<T>(data.len().max(1))?;
    if !data.is_empty() {
        stream.memcpy_htod(data, &mut buffer.slice_mut(..data.len()))?;
    }
    Ok(buffer)
}

/// Keeps, in place and in order, the rows of every column whose flag is set; returns how many.
fn select_in_place(c: &mut GpuColumns, flags: &CudaSlice<u8>) -> lookback::Result<usize> {
    let n = c.rows;
    let kept = lookback::select_flagged_in_place(&mut c.sensor.slice_mut(..n), flags)?;
    lookback::select_flagged_in_place(&mut c.key.slice_mut(..n), flags)?;
    lookback::select_flagged_in_place(&mut c.value.slice_mut(..n), flags)?;
    c.rows = kept;
    Ok(kept)
}

impl Backend for GpuBackend {
    type Columns = GpuColumns;

    fn name(&self) -> String {
        self.name.clone()
    }

    fn on_device(&self) -> bool {
        true
    }

    fn upload(&mut self, table: &Table) -> lookback::Result<GpuColumns> {
        self.upload_table(table)
    }

    fn rows(&self, columns: &GpuColumns) -> usize {
        columns.rows
    }

    fn census(&mut self, c: &GpuColumns) -> lookback::Result<Census> {
        if c.rows == 0 {
            return Ok(Census::new());
        }
        let (sensors, rows) = lookback::run_length_encode::<u32, u64, _>(&c.sensor.slice(..c.rows))?.to_vecs()?;
        Ok(sensors.into_iter().zip(rows).collect())
    }

    fn validate(&mut self, mut c: GpuColumns, rule: &Validity) -> lookback::Result<(GpuColumns, Validated)> {
        if c.rows == 0 {
            return Ok((c, Validated::default()));
        }
        let (counts, ok) = {
            let v = c.value.slice(..c.rows);
            let nan = lookback::count_if(&v, &rule.nan())? as u64;
            let infinite = lookback::count_if(&v, &rule.infinite())? as u64;
            let sentinel = lookback::count_if(&v, &rule.sentinel())? as u64;
            // The compound predicate runs once; its mask then selects all three columns.
            let ok = lookback::mask_if(&v, &rule.valid())?;
            (Validated { kept: 0, nan, infinite, sentinel }, ok)
        };
        let kept = select_in_place(&mut c, &ok)? as u64;
        Ok((c, Validated { kept, ..counts }))
    }

    fn dedup(&mut self, c: GpuColumns) -> lookback::Result<GpuColumns> {
        if c.rows == 0 {
            return Ok(c);
        }
        let key = c.key.slice(..c.rows);
        // Two calls on the same keys give the same runs: (key, value), then the sensor column.
        let (key_out, value, rows) = lookback::unique_by_key(&key, &c.value.slice(..c.rows))?.into_parts();
        let (_, sensor, _) = lookback::unique_by_key(&key, &c.sensor.slice(..c.rows))?.into_parts();
        Ok(GpuColumns { sensor, key: key_out, value, rows })
    }

    fn long_runs(&mut self, c: &GpuColumns, longer_than: u64) -> lookback::Result<LongRuns> {
        if c.rows == 0 {
            return Ok(LongRuns::default());
        }
        let runs = lookback::non_trivial_runs::<f32, u64, _>(&c.value.slice(..c.rows))?;
        if runs.is_empty() {
            return Ok(LongRuns::default());
        }
        // Only the long runs come back to the host.
        let long = lookback::mask_if(&runs.second(), &Pred::gt(longer_than))?;
        Ok(LongRuns {
            offsets: lookback::select_flagged(&runs.first(), &long)?.to_vec()?,
            lengths: lookback::select_flagged(&runs.second(), &long)?.to_vec()?,
            non_trivial: runs.len() as u64,
        })
    }

    fn split(&mut self, mut c: GpuColumns, stuck: &[StuckRange]) -> lookback::Result<(GpuColumns, GpuColumns)> {
        let longest = stuck.iter().map(|r| r.len).max().unwrap_or(0);
        if c.rows == 0 || longest == 0 {
            return Ok((c, self.empty()?));
        }
        // One flag byte per row, set over each stuck range by a device-to-device copy from a buffer of
        // ones: one small copy per range (there are few), and nothing row-sized crosses to the host.
        let stream = self.stream.clone();
        let mut flags = stream.alloc_zeros::<u8>(c.rows)?;
        let ones = stream.clone_htod(&vec![1u8; longest])?;
        for r in stuck {
            stream.memcpy_dtod(&ones.slice(..r.len), &mut flags.slice_mut(r.start..r.start + r.len))?;
        }
        let keep = lookback::mask_if(&flags, &Pred::eq(0))?;
        // The quarantine first: selecting the accepted rows in place overwrites the columns.
        let n = c.rows;
        let (sensor, rows) = lookback::select_flagged(&c.sensor.slice(..n), &flags)?.into_parts();
        let (key, _) = lookback::select_flagged(&c.key.slice(..n), &flags)?.into_parts();
        let (value, _) = lookback::select_flagged(&c.value.slice(..n), &flags)?.into_parts();
        let quarantined = GpuColumns { sensor, key, value, rows };
        select_in_place(&mut c, &keep)?;
        Ok((c, quarantined))
    }

    fn stats(&mut self, c: &GpuColumns) -> lookback::Result<Vec<SensorStats>> {
        if c.rows == 0 {
            return Ok(Vec::new());
        }
        let (s, v) = (c.sensor.slice(..c.rows), c.value.slice(..c.rows));
        let (sensors, sums) = lookback::reduce_by_key(&s, &v, ScanOp::Sum)?.to_vecs()?;
        let (_, mins) = lookback::reduce_by_key(&s, &v, ScanOp::Min)?.to_vecs()?;
        let (_, maxs) = lookback::reduce_by_key(&s, &v, ScanOp::Max)?.to_vecs()?;
        let (_, counts) = lookback::run_length_encode::<u32, u64, _>(&s)?.to_vecs()?;
        Ok(stats_rows(&sensors, &counts, &sums, &mins, &maxs))
    }

    fn download(&mut self, c: &GpuColumns) -> lookback::Result<Table> {
        let n = c.rows;
        if n == 0 {
            return Ok(Table::default());
        }
        Ok(Table {
            sensor: self.stream.clone_dtoh(&c.sensor.slice(..n))?,
            key: self.stream.clone_dtoh(&c.key.slice(..n))?,
            value: self.stream.clone_dtoh(&c.value.slice(..n))?,
        })
    }

    fn finish(&mut self) -> lookback::Result<()> {
        Ok(self.stream.synchronize()?)
    }
}
