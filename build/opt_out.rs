//! Whether this build compiles the kernels, and the error when it should but finds no nvcc.
//!
//! A build without kernels used to succeed with a cargo warning, which cargo hides for registry
//! dependencies: a user first met the missing nvcc as `Error::KernelsNotBuilt` at run time. So nvcc is
//! required unless the build says, in one of three ways, that it wants no kernels:
//!
//! * the `kernels` feature is off (`default-features = false`): for a crate that uses only
//!   `lookback::host`. A feature is what a dependent can declare in its own Cargo.toml, and it stays true
//!   wherever that crate is built; being additive, any crate of the graph that keeps the default gets the
//!   kernels it expects;
//! * `LOOKBACK_NO_NVCC` is set: for one build (CI lint jobs, `scripts/check-coexist.sh`, a machine without
//!   CUDA); an environment variable reaches every build script of the graph, whatever the features;
//! * `DOCS_RS` is set: docs.rs sets it for every crate it documents, dependents of this one included,
//!   and has no nvcc. Docs need no kernels.
use super::NVCC_HINT;
use std::env;

/// Environment variables that turn the kernels off (build.rs reruns when they change).
pub(crate) const ENV_VARS: [&str; 2] = ["LOOKBACK_NO_NVCC", "DOCS_RS"];

/// Why this build compiles no kernels, if it opted out; `None` when the kernels are wanted.
pub(crate) fn reason() -> Option<&'static str> {
    if env::var_os("CARGO_FEATURE_KERNELS").is_none() {
        Some("the `kernels` feature is off")
    } else if env::var_os("LOOKBACK_NO_NVCC").is_some() {
        Some("LOOKBACK_NO_NVCC is set")
    } else if env::var_os("DOCS_RS").is_some() {
        Some("DOCS_RS is set (a docs.rs build)")
    } else {
        None
    }
}

/// Fails the build: the kernels are wanted and no nvcc was found. `cargo::error` is shown for registry
/// dependencies too (warnings are not), one line per instruction.
pub(crate) fn missing_nvcc() {
    for line in [
        "lookback: nvcc (CUDA 13.0) was not found, so the GPU kernels cannot be built.",
        "  Searched: $NVCC, $CUDA_HOME/bin, $CUDA_PATH/bin, every PATH entry, /usr/local/cuda/bin, and the \
         PyPI wheel (python3 -c 'import nvidia.cu13').",
        &format!("  To get the pinned nvcc: {NVCC_HINT}."),
        "  To build without GPU kernels (GPU calls then return Error::KernelsNotBuilt; lookback::host \
         works): depend on lookback with `default-features = false`, or set LOOKBACK_NO_NVCC=1.",
    ] {
        println!("cargo::error={line}");
    }
}
