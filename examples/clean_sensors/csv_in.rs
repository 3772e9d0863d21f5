//! Reads `sensor_id,timestamp,value` CSV (header line first; rows sorted by sensor, then time) into
//! columns. Every line becomes a row or an error naming the line: a bad number, a wrong field count or
//! an out-of-order row stops the load, so no row disappears without the report counting it. Missing
//! readings (an empty field, `NA`, `null`) load as NaN and are counted as invalid by the pipeline.
use crate::error::{AppError, LineProblem, excerpt};
use crate::progress::Progress;
use crate::table::{self, Table};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::str::FromStr;

const HEADER: [&str; 3] = ["sensor_id", "timestamp", "value"];
/// Rows between progress updates.
const UPDATE_EVERY: u64 = 1 << 16;

/// The shipped sample, relative to the crate root.
const SAMPLE: &str = "examples/data/sensors_sample.csv";

/// The shipped sample: in the crate this was built from, or else under the working directory (a binary
/// run from another copy of the crate, as on a GPU machine).
pub fn sample_path() -> PathBuf {
    let built_here = Path::new(env!("CARGO_MANIFEST_DIR")).join(SAMPLE);
    if built_here.exists() { built_here } else { PathBuf::from(SAMPLE) }
}

/// Loads the file.
pub fn load(path: &Path, progress: &Progress) -> Result<Table, AppError> {
    let file = File::open(path).map_err(|source| AppError::Open { path: path.to_path_buf(), source })?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    read(file, size, path, progress)
}

/// Reads CSV text from any reader (`path` names it in errors).
pub fn read(input: impl std::io::Read, size: u64, path: &Path, progress: &Progress) -> Result<Table, AppError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false) // the header is checked here, with a clear message
        .flexible(true) // a wrong field count is reported below with the line's content
        .trim(csv::Trim::All)
        .buffer_capacity(1 << 20)
        .from_reader(input);
    let bar = progress.bytes("loading", size);
    // A sample line is ~20 bytes; reserving avoids most regrowth of the columns.
    let mut table = Table::with_capacity((size / 24) as usize);
    let mut record = csv::ByteRecord::new();
    let line_error = |record: &csv::ByteRecord, problem| AppError::Line {
        path: path.to_path_buf(),
        line: record.position().map_or(0, |p| p.line()),
        content: excerpt(&joined(record)),
        problem,
    };
    let csv_error = |e: csv::Error| match e.kind() {
        csv::ErrorKind::Io(_) => AppError::Open {
            path: path.to_path_buf(),
            source: match e.into_kind() {
                csv::ErrorKind::Io(io) => io,
                _ => std::io::Error::other("read failed"),
            },
        },
        _ => AppError::Line {
            path: path.to_path_buf(),
            line: e.position().map_or(0, |p| p.line()),
            content: String::new(),
            problem: LineProblem::Csv(e.to_string()),
        },
    };

    if !reader.read_byte_record(&mut record).map_err(csv_error)? {
        return Err(AppError::NoHeader { path: path.to_path_buf() });
    }
    let header_ok = record.len() == 3 && record.iter().zip(HEADER).all(|(f, h)| f.eq_ignore_ascii_case(h.as_bytes()));
    if !header_ok {
        return Err(line_error(&record, LineProblem::Header));
    }

    let mut previous: Option<u64> = None;
    let mut rows = 0u64;
    while reader.read_byte_record(&mut record).map_err(csv_error)? {
        let (key, value) = parse_row(&record, previous).map_err(|p| line_error(&record, p))?;
        table.push(key, value);
        previous = Some(key);
        rows += 1;
        if rows.is_multiple_of(UPDATE_EVERY) {
            bar.set_position(record.position().map_or(0, |p| p.byte()));
        }
    }
    bar.finish_and_clear();
    Ok(table)
}

/// One data row: its packed key (checked to follow `previous`) and value.
fn parse_row(record: &csv::ByteRecord, previous: Option<u64>) -> Result<(u64, f32), LineProblem> {
    if record.len() != 3 {
        return Err(LineProblem::ColumnCount(record.len()));
    }
    let sensor: u32 = number(&record[0], "sensor_id", "an unsigned 32-bit integer")?;
    let time: i64 = number(&record[1], "timestamp", "a whole number of seconds since 1970")?;
    let value = reading(&record[2])?;
    let key = table::pack(sensor, time)?;
    if let Some(prev) = previous.filter(|&p| key < p) {
        let ((prev_sensor, prev_time), (sensor, time)) = (table::unpack(prev), (sensor, time));
        return Err(LineProblem::Unsorted { sensor, time, prev_sensor, prev_time });
    }
    Ok((key, value))
}

fn number<T: FromStr>(field: &[u8], column: &'static str, expected: &'static str) -> Result<T, LineProblem> {
    std::str::from_utf8(field).ok().and_then(|s| s.parse().ok()).ok_or_else(|| LineProblem::Field {
        column,
        text: String::from_utf8_lossy(field).into_owned(),
        expected,
    })
}

/// A reading: a decimal number (also `nan`, `inf`), or missing (empty, `NA`, `null`), which loads as NaN.
fn reading(field: &[u8]) -> Result<f32, LineProblem> {
    if field.is_empty() || field.eq_ignore_ascii_case(b"na") || field.eq_ignore_ascii_case(b"null") {
        return Ok(f32::NAN);
    }
    number(field, "value", "a number (or empty, NA or null for a missing reading)")
}

/// The record's fields joined with commas: the line as it was, for error messages.
fn joined(record: &csv::ByteRecord) -> String {
    let fields: Vec<_> = record.iter().map(String::from_utf8_lossy).collect();
    fields.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Table, AppError> {
        read(text.as_bytes(), text.len() as u64, Path::new("test.csv"), &Progress::new(false))
    }

    #[test]
    fn reads_rows_and_missing_readings() {
        let t = parse("sensor_id,timestamp,value\n1,10,2.5\n1,20,\n1,20,NA\n2,-5,nan\n2,7,-9999\n").unwrap();
        assert_eq!(t.sensor, [1, 1, 1, 2, 2]);
        assert_eq!(t.key.iter().map(|&k| table::unpack(k).1).collect::<Vec<_>>(), [10, 20, 20, -5, 7]);
        assert_eq!(t.value[0], 2.5);
        assert!(t.value[1].is_nan() && t.value[2].is_nan() && t.value[3].is_nan());
        assert_eq!(t.value[4], -9999.0);
    }

    #[test]
    fn errors_name_the_line_and_its_content() {
        let cases = [
            ("sensor_id,timestamp,value\n1,10,2.5\n1,11,abc\n", "line 3: value `abc` is not a number", "1,11,abc"),
            ("sensor_id,timestamp,value\n1,10,2.5,7\n", "line 2: expected 3 fields", "1,10,2.5,7"),
            ("sensor_id,timestamp,value\n1,10\n", "found 2", "1,10"),
            ("sensor_id,timestamp,value\n1,1.5,2\n", "timestamp `1.5` is not a whole number", "1,1.5,2"),
            ("sensor_id,timestamp,value\n-1,1,2\n", "sensor_id `-1` is not an unsigned", "-1,1,2"),
            ("sensor_id,timestamp,value\n2,10,1\n1,20,1\n", "line 3: rows must be sorted", "1,20,1"),
            ("sensor_id,timestamp,value\n1,20,1\n1,10,1\n", "(sensor 1, time 10) follows (sensor 1, time 20)", ""),
            ("sensor_id,timestamp,value\n16777216,1,1\n", "above 16777215", ""),
            ("id,time,v\n1,2,3\n", "line 1: expected the header", "id,time,v"),
        ];
        for (text, message, content) in cases {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(message), "{err:?} lacks {message:?}");
            assert!(err.contains(content), "{err:?} lacks {content:?}");
        }
        assert!(parse("").unwrap_err().to_string().contains("no header"));
    }

    #[test]
    fn a_missing_file_is_an_error_that_names_it() {
        let err = load(Path::new("/nonexistent/readings.csv"), &Progress::new(false)).unwrap_err().to_string();
        assert!(err.starts_with("cannot read `/nonexistent/readings.csv`"), "{err}");
    }

    #[test]
    fn the_shipped_sample_loads() {
        let t = load(&sample_path(), &Progress::new(false)).unwrap();
        assert_eq!(t.len(), 16_887);
        assert_eq!(t.value.iter().filter(|v| v.is_nan()).count(), 59);
    }
}
