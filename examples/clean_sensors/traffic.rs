//! Bytes each stage reads and writes, for its GB/s. One model for both backends: it counts the memory
//! traffic of the calls `gpu.rs` makes (each input read once, each output written once; the host
//! backend makes the same calls on vectors), so the two reports' figures are comparable.
//!
//! Sizes: sensor 4 B, key 8 B, value 4 B, a mask byte 1 B, run offsets and lengths 8 B (u64), and a
//! census or statistics entry 12 B (a u32 sensor and a u64 or two f32s).
const SENSOR: u64 = 4;
const KEY: u64 = 8;
const VALUE: u64 = 4;
const ROW: u64 = SENSOR + KEY + VALUE;
const MASK: u64 = 1;
const RUN: u64 = 8;
const ENTRY: u64 = 12;

/// `run_length_encode` of the sensor column of `rows` rows into `sensors` entries.
fn census(rows: u64, sensors: u64) -> u64 {
    rows * SENSOR + sensors * ENTRY
}

/// Census of the input; three `count_if` and one `mask_if` over values; `select_flagged_in_place` of the
/// three columns by the mask; census of the output.
pub fn validate(rows_in: u64, rows_out: u64, sensors_in: u64, sensors_out: u64) -> u64 {
    census(rows_in, sensors_in)
        + 3 * rows_in * VALUE
        + rows_in * (VALUE + MASK)
        + rows_in * (ROW + 3 * MASK)
        + rows_out * ROW
        + census(rows_out, sensors_out)
}

/// `unique_by_key` of (key, value) and of (key, sensor); census of the output.
pub fn dedup(rows_in: u64, rows_out: u64, sensors: u64) -> u64 {
    rows_in * (2 * KEY + VALUE + SENSOR) + rows_out * (2 * KEY + VALUE + SENSOR) + census(rows_out, sensors)
}

/// `non_trivial_runs` of the values into `non_trivial` (offset, length) pairs; `mask_if` of the lengths;
/// `select_flagged` of offsets and lengths into `long` pairs, which are read back.
pub fn stuck(rows: u64, non_trivial: u64, long: u64) -> u64 {
    rows * VALUE
        + non_trivial * 2 * RUN
        + non_trivial * (RUN + MASK)
        + 2 * non_trivial * (RUN + MASK)
        + 2 * long * 2 * RUN
}

/// A zeroed flag per row with the stuck ranges set; `mask_if` inverting it; `select_flagged` of the three
/// columns by the flags (quarantine) and `select_flagged_in_place` by the inverse (accepted). Nothing
/// when nothing is stuck.
pub fn split(rows: u64, quarantined: u64) -> u64 {
    if quarantined == 0 {
        return 0;
    }
    let accepted = rows - quarantined;
    rows * MASK
        + 2 * quarantined * MASK
        + 2 * rows * MASK
        + 2 * rows * (ROW + 3 * MASK)
        + quarantined * ROW
        + accepted * ROW
}

/// Three `reduce_by_key` (sum, min, max) of values by sensor and a census.
pub fn stats(rows: u64, sensors: u64) -> u64 {
    3 * (rows * (SENSOR + VALUE) + sensors * ENTRY) + census(rows, sensors)
}

/// Moving `rows` rows of the three columns between host and device.
pub fn transfer(rows: u64) -> u64 {
    rows * ROW
}
