//! Writes tables (cleaned rows, quarantined rows, a generated log) and the per-sensor statistics as CSV.
use crate::error::AppError;
use crate::progress::Progress;
use crate::report::SensorLine;
use crate::table::{Table, unpack};
use std::fmt::Write as _;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// Rows between progress updates.
const UPDATE_EVERY: usize = 1 << 16;

fn create(path: &Path) -> Result<csv::Writer<BufWriter<File>>, AppError> {
    let file = File::create(path).map_err(|source| AppError::Write { path: path.to_path_buf(), source })?;
    Ok(csv::Writer::from_writer(BufWriter::with_capacity(1 << 20, file)))
}

fn write_error(path: &Path) -> impl Fn(csv::Error) -> AppError + '_ {
    move |e| AppError::Write { path: path.to_path_buf(), source: std::io::Error::other(e) }
}

/// Writes `sensor_id,timestamp,value` rows: the input format, so the output can be cleaned again.
pub fn write_table(path: &Path, table: &Table, progress: &Progress) -> Result<(), AppError> {
    let fail = write_error(path);
    let mut out = create(path)?;
    out.write_record(["sensor_id", "timestamp", "value"]).map_err(&fail)?;
    let bar = progress.rows("writing", table.len() as u64);
    // Three reused buffers: formatting 50 M rows allocates nothing.
    let (mut sensor, mut time, mut value) = (String::new(), String::new(), String::new());
    for (i, (&key, &v)) in table.key.iter().zip(&table.value).enumerate() {
        let (s, t) = unpack(key);
        sensor.clear();
        time.clear();
        value.clear();
        // Writing to a String cannot fail.
        let _ = (write!(sensor, "{s}"), write!(time, "{t}"), write!(value, "{v}"));
        out.write_record([&sensor, &time, &value]).map_err(&fail)?;
        if i.is_multiple_of(UPDATE_EVERY) {
            bar.set_position(i as u64);
        }
    }
    out.flush().map_err(|source| AppError::Write { path: path.to_path_buf(), source })?;
    bar.finish_and_clear();
    Ok(())
}

/// Writes one line per sensor: where its rows went, and the statistics of the accepted ones.
pub fn write_stats(path: &Path, sensors: &[SensorLine]) -> Result<(), AppError> {
    let fail = write_error(path);
    let mut out = create(path)?;
    let header = ["sensor_id", "rows", "invalid", "duplicate", "stuck", "accepted", "min", "max", "mean"];
    out.write_record(header).map_err(&fail)?;
    for s in sensors {
        let (min, max, mean) = match s.stats {
            Some(st) => (st.min.to_string(), st.max.to_string(), st.mean.to_string()),
            None => Default::default(),
        };
        let counts = [s.sensor as u64, s.rows_in, s.invalid, s.duplicate, s.stuck, s.accepted].map(|c| c.to_string());
        out.write_record(counts.iter().chain([&min, &max, &mean])).map_err(&fail)?;
    }
    out.flush().map_err(|source| AppError::Write { path: path.to_path_buf(), source })
}
