//! The `clean_sensors` example's tests: its modules are compiled into this test crate by path, so that
//! `cargo test` runs them (the pipeline against plain loops in `examples/clean_sensors/tests.rs`, and each
//! module's unit tests), and so does the GPU bundle, which runs the test binaries on the device with
//! `LOOKBACK_REQUIRE_GPU=1` (there the GPU backend is also compared with the host backend).
#![allow(dead_code)] // items only the example's `main` uses

#[path = "../examples/clean_sensors/backend.rs"]
mod backend;
#[path = "../examples/clean_sensors/csv_in.rs"]
mod csv_in;
#[path = "../examples/clean_sensors/csv_out.rs"]
mod csv_out;
#[path = "../examples/clean_sensors/error.rs"]
mod error;
#[path = "../examples/clean_sensors/generate.rs"]
mod generate;
#[path = "../examples/clean_sensors/gpu.rs"]
mod gpu;
#[path = "../examples/clean_sensors/host.rs"]
mod host;
#[path = "../examples/clean_sensors/pipeline.rs"]
mod pipeline;
#[path = "../examples/clean_sensors/progress.rs"]
mod progress;
#[path = "../examples/clean_sensors/report.rs"]
mod report;
#[path = "../examples/clean_sensors/stuck.rs"]
mod stuck;
#[path = "../examples/clean_sensors/table.rs"]
mod table;
#[path = "../examples/clean_sensors/tally.rs"]
mod tally;
#[path = "../examples/clean_sensors/tests.rs"]
mod tests;
#[path = "../examples/clean_sensors/traffic.rs"]
mod traffic;
