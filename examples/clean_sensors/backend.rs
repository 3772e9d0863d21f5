//! The pipeline's stages as a trait. `gpu.rs` implements them with lookback's device primitives on
//! device-resident columns, `host.rs` with `lookback::host` on vectors; `pipeline.rs` runs the same
//! stage list on either. What a stage hands back to the host is always small — counts, one entry per
//! sensor, the list of long runs — never the rows.
use crate::table::Table;
use lookback::Pred;

/// The plausibility rule for a reading.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Validity {
    /// Smallest plausible reading.
    pub lo: f32,
    /// Largest plausible reading.
    pub hi: f32,
    /// The value loggers write for "no reading" (checked apart, in case it lies inside the range).
    pub sentinel: f32,
}

impl Validity {
    /// The compound predicate, evaluated once per row into a mask that selects every column.
    pub fn valid(&self) -> Pred<f32> {
        Pred::is_finite() & Pred::ne(self.sentinel) & Pred::between(self.lo, self.hi)
    }
    /// Reason 1: a missing reading (NaN).
    pub fn nan(&self) -> Pred<f32> {
        Pred::is_nan()
    }
    /// Reason 2: ±infinity.
    pub fn infinite(&self) -> Pred<f32> {
        !Pred::is_finite() & !Pred::is_nan()
    }
    /// Reason 3: the sentinel. Whatever else is invalid is out of range (reason 4).
    pub fn sentinel(&self) -> Pred<f32> {
        Pred::eq(self.sentinel)
    }
}

/// What the validation stage counted: the rows it kept, and the first three reasons for dropping one
/// (they are disjoint; the rest of the dropped rows were out of range).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Validated {
    pub kept: u64,
    pub nan: u64,
    pub infinite: u64,
    pub sentinel: u64,
}

/// Rows per sensor, in row order: `(sensor, rows)` for each run of one sensor id (`run_length_encode`).
/// The input is sorted by sensor, so each sensor is one run.
pub type Census = Vec<(u32, u64)>;

/// Runs of equal adjacent values longer than the stuck threshold, as the device found them: they may
/// still span a sensor boundary (`stuck.rs` splits them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LongRuns {
    /// Index of each run's first row.
    pub offsets: Vec<u64>,
    /// Rows in each run.
    pub lengths: Vec<u64>,
    /// How many runs longer than one row there were before the length filter (for the traffic model).
    pub non_trivial: u64,
}

/// A stretch of rows of one sensor reporting one value: flagged as stuck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StuckRange {
    pub sensor: u32,
    pub start: usize,
    pub len: usize,
}

/// One sensor's aggregates over its accepted rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SensorStats {
    pub sensor: u32,
    pub count: u64,
    pub sum: f32,
    pub min: f32,
    pub max: f32,
}

/// The stages, on some kind of columns. Errors are lookback's; the pipeline adds the stage's name.
pub trait Backend {
    /// The three columns (sensor, key, value) and how many rows are valid in them.
    type Columns;

    /// How the report names this backend.
    fn name(&self) -> String;
    /// Whether the columns live in device memory (so that upload and download are real transfers).
    fn on_device(&self) -> bool;
    /// Moves a table to where the stages run.
    fn upload(&mut self, table: &Table) -> lookback::Result<Self::Columns>;
    /// Rows in `columns`.
    fn rows(&self, columns: &Self::Columns) -> usize;
    /// Rows per sensor (`run_length_encode` of the sensor column).
    fn census(&mut self, columns: &Self::Columns) -> lookback::Result<Census>;
    /// Keeps the valid rows (`mask_if` once, then a flagged selection of each column) and counts why the
    /// others were dropped (`count_if`).
    fn validate(&mut self, columns: Self::Columns, rule: &Validity) -> lookback::Result<(Self::Columns, Validated)>;
    /// Keeps the first row of each run of equal row keys (`unique_by_key`): one reading per sensor and time.
    fn dedup(&mut self, columns: Self::Columns) -> lookback::Result<Self::Columns>;
    /// Runs of equal adjacent values longer than `longer_than` rows (`non_trivial_runs`, then a
    /// selection of the long ones).
    fn long_runs(&mut self, columns: &Self::Columns, longer_than: u64) -> lookback::Result<LongRuns>;
    /// Splits the rows into (accepted, quarantined): the stuck ranges go to quarantine. Nothing to do
    /// without stuck ranges.
    fn split(
        &mut self,
        columns: Self::Columns,
        stuck: &[StuckRange],
    ) -> lookback::Result<(Self::Columns, Self::Columns)>;
    /// Count, sum, min and max of the values of each sensor (`reduce_by_key`, `run_length_encode`).
    fn stats(&mut self, columns: &Self::Columns) -> lookback::Result<Vec<SensorStats>>;
    /// Brings columns back to the host.
    fn download(&mut self, columns: &Self::Columns) -> lookback::Result<Table>;
    /// Waits until all queued work is done (so that stage times are the work's).
    fn finish(&mut self) -> lookback::Result<()>;
}
