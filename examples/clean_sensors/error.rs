//! Everything that can go wrong, with the context a user needs to fix it (never a panic).
use crate::table::KeyError;
use std::fmt;
use std::path::PathBuf;

/// What is wrong with one line of the input CSV.
#[derive(Debug, thiserror::Error)]
pub enum LineProblem {
    #[error("expected the header `sensor_id,timestamp,value`")]
    Header,
    #[error("expected 3 fields (sensor_id,timestamp,value), found {0}")]
    ColumnCount(usize),
    #[error("{column} `{text}` is not {expected}")]
    Field { column: &'static str, text: String, expected: &'static str },
    #[error("{0}")]
    Key(#[from] KeyError),
    #[error(
        "rows must be sorted by sensor_id, then timestamp, but (sensor {sensor}, time {time}) follows \
         (sensor {prev_sensor}, time {prev_time})"
    )]
    Unsorted { sensor: u32, time: i64, prev_sensor: u32, prev_time: i64 },
    #[error("not readable as CSV: {0}")]
    Csv(String),
}

/// The example's error: `main` returns it, and it prints as one clear message.
#[derive(thiserror::Error)]
pub enum AppError {
    #[error("cannot read `{path}`: {source}")]
    Open { path: PathBuf, source: std::io::Error },
    #[error("`{path}` line {line}: {problem}\n    the line: {content}")]
    Line { path: PathBuf, line: u64, content: String, problem: LineProblem },
    #[error("`{path}` is empty: it has no header line")]
    NoHeader { path: PathBuf },
    #[error("cannot write `{path}`: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("invalid arguments: {0}")]
    Args(String),
    #[error("stage `{stage}` failed on the {backend}: {source}")]
    Stage { stage: &'static str, backend: String, source: lookback::Error },
    #[error("internal accounting error (a bug): {0}")]
    Accounting(String),
    #[error("batch {batch}, {run}: the GPU's result differs from the host reference: {what}")]
    BatchMismatch { batch: usize, run: &'static str, what: String },
}

/// `main` returns `Result<(), AppError>`, and Rust prints the error with `Debug`: make that the message.
impl fmt::Debug for AppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Shortens a line for an error message (a malformed line can be arbitrarily long).
pub fn excerpt(line: &str) -> String {
    const MAX: usize = 200;
    match line.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}… ({} bytes)", &line[..cut], line.len()),
        None => line.to_string(),
    }
}
