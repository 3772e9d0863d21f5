//! The one place that launches kernels, and what it needs: the `#[repr(C)]` parameter blocks
//! (`params.rs`), the reusable look-back workspace (`workspace.rs`), the launcher that takes a call's
//! plan (`crate::plan`) to a launch (`launcher.rs`), and the checks every call makes (`checks.rs`).
mod checks;
mod launcher;
mod params;
mod workspace;

pub(crate) use checks::{Span, check_disjoint, check_room, is_capturing, same_context, zero_counts};
pub(crate) use params::{
    Partition3Params, ReduceParams, RunsParams, SCAN_EXCLUSIVE, SCAN_INCLUSIVE, SCAN_INCLUSIVE_SEEDED, ScanParams,
    SelectParams, TABLE_MAX_COLUMNS, TableParams,
};
pub use workspace::Workspace;
pub(crate) use workspace::{FINISHED_WORD, PARTIALS_WORD};

/// Back-off of the look-back's polling, in nanoseconds. The defaults come from `cuda/core/tuning.cuh`;
/// override them with [`Workspace::set_backoff`] (the benchmark sweeps them).
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::{Backoff, ScanOp, Workspace};
/// let mut ws = Workspace::new(&stream);
/// // Poll without sleeping: only the timing changes, never the result.
/// ws.set_backoff(Some(Backoff { first_poll_ns: 0, poll_ns: 0 }));
/// let input = stream.clone_htod(&[2u16, 4, 6])?;
/// let mut out = stream.alloc_zeros::<u16>(3)?;
/// ws.inclusive_scan_into(&input, &mut out, ScanOp::Sum)?;
/// assert_eq!(stream.clone_dtoh(&out)?, [2, 6, 12]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Sleep before the first poll of a predecessor's status.
    pub first_poll_ns: u32,
    /// Sleep between polls of a status that is not ready yet.
    pub poll_ns: u32,
}

/// Which kernel structure runs a primitive that has more than one.
///
/// Scans have two: the classic decoupled look-back (one tile per block, any GPU) and a persistent,
/// warp-specialised one for sm_90 and newer GPUs (`cuda/persistent/scan_work.cuh`), which keeps several tiles
/// per SM in flight with bulk copies and resolves prefixes from tile aggregates only. `Auto` (the default)
/// picks the persistent one when the GPU, the buffers' 16-byte alignment and the size allow it (measured
/// in the bench log, `benches/log/2026-11-30-to-2026-12-02-results.md`); the others force a choice, for
/// benchmarks and tests. Results are the same either way, up to the rounding of float sums.
///
/// The same choice applies to compaction, counting and partitions by predicate or uniqueness
/// (`select_if`, `unique`, `count_if`, `partition_if*`, in place too), and to `select_flagged` of 4- and
/// 8-byte items. Every run-based primitive has both engines too (`cuda/persistent/runs_work.cuh`,
/// `cuda/persistent/scan_by_key_work.cuh`, which need the keys and values 16-byte aligned), but `Auto` takes
/// the persistent one only for the scans by key of 1-byte keys and values: the classic agent measured
/// faster for the others. So a default build compiles only those persistent run-based kernels; the
/// `persistent-runs` feature (or `LOOKBACK_PERSISTENT_RUNS=1` at build time) compiles the rest, without
/// which `Persistent` takes the classic engine for them. `mask_if` and the three-way partition have only the classic engine. Every
/// choice is made in one place, `src/plan.rs`, whose table lists them.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::{Engine, ScanOp, Workspace};
/// let mut ws = Workspace::new(&stream);
/// ws.set_engine(Engine::Classic);
/// let input = stream.clone_htod(&[1u32, 2, 3])?;
/// let mut out = stream.alloc_zeros::<u32>(3)?;
/// ws.inclusive_scan_into(&input, &mut out, ScanOp::Sum)?;
/// assert_eq!(stream.clone_dtoh(&out)?, [1, 3, 6]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// The persistent engine where it applies, else the classic one.
    #[default]
    Auto,
    /// Always the classic one-tile-per-block look-back.
    Classic,
    /// The persistent engine whenever the GPU (sm_90+, with about 220 KB of shared memory per block) and
    /// the buffers (16-byte aligned input — keys and values for the run-based primitives, items and flags
    /// for `select_flagged` — and output for scans) allow it, at every size; the classic one otherwise
    /// (also for `select_flagged` of 1- and 2-byte items, whose flags leave no room for the ring).
    Persistent,
}
