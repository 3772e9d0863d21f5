//! Whether this build compiles every kernel of the persistent engine's run-based primitives.
//!
//! `Engine::Auto` takes the persistent engine for the run-based primitives only for scans by key of
//! 1-byte keys and values (`auto_scan_by_key` in `src/plan.rs`): the classic agents measured faster for
//! the rest. The other persistent keyed kernels (`cuda/kernels/pipe_by_key_*.cu`, every key size × value
//! type) and the persistent encodings (`pipe_runs.cu`) run only when a call forces
//! `Engine::Persistent`, yet they were most of the sm_90 code: about half of a default build's time and of
//! its kernel images (README, "Build time and size"). So a default build compiles the rows Auto takes
//! (`LOOKBACK_PIPE_BY_KEY_K1_TYPES` in `cuda/core/types.cuh`), the kernel tables say `None` for the
//! others, and calls that force the persistent engine on them take the classic one, as they do for
//! unaligned buffers. Every row is built, for benchmarks and tests of the persistent engine, with
//!
//! * the `persistent-runs` feature, which a dependent can declare; or
//! * `LOOKBACK_PERSISTENT_RUNS=1`, for one build (the GPU bundle scripts set it).
use std::env;

/// The environment variable that builds every row (build.rs reruns when it changes).
pub(crate) const ENV_VAR: &str = "LOOKBACK_PERSISTENT_RUNS";

/// The nvcc define that makes `pipe_by_key.cuh` and `pipe_runs.cu` instantiate every row.
const DEFINE: &str = "-DLOOKBACK_ALL_PERSISTENT_RUNS";

/// Whether every row is built: the feature is on, or the variable is set to anything but `0` or empty.
pub(crate) fn all() -> bool {
    env::var_os("CARGO_FEATURE_PERSISTENT_RUNS").is_some() || env::var(ENV_VAR).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The nvcc flags that say so.
pub(crate) fn nvcc_flags() -> Vec<String> {
    if all() { vec![DEFINE.to_string()] } else { Vec::new() }
}
