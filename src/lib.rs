//! # lookback
//!
//! Device-wide prefix scans and stream compaction for NVIDIA GPUs, built on one engine: the single-pass
//! scan with *decoupled look-back* (Merrill & Garland, 2016), written in CUDA C, compiled by nvcc when this
//! crate builds and launched through [`cudarc`]. Selection is fused into the look-back: the scanned value
//! is the number of selected items, and a tile's prefix is its output offset.
//!
//! | concept | what it is |
//! |---|---|
//! | [`inclusive_scan`], [`exclusive_scan`] (+ `_into`, `_in_place`) | scans with [`ScanOp`] |
//! | [`reduce`], [`arg_min`], [`arg_max`], [`reduce_user`] (+ `Workspace::*_into`) | one-pass reductions on the same engine: the total, or the index and value of the least or greatest item ([`ArgItem`]) |
//! | [`select_if`], [`select_flagged`], [`unique`] (+ `_into`, `_in_place`) | order-preserving compaction |
//! | [`count_if`], [`mask_if`] | count, or evaluate a predicate once into a byte mask |
//! | [`table`]: `Workspace::filter_columns_into`, `filter_indices_into`, `count_filtered_into` | the rows of up to eight columns of mixed types by one mask or predicate (over one column, or two: [`rtc::UserPred2`]) in one pass |
//! | [`partition_if`], `Workspace::partition_if_{reversed,stable,split}_into` | partitions in three layouts |
//! | [`partition_three_way`], `Workspace::partition_three_way_into` | two predicates → three parts, each in order |
//! | [`reduce_by_key`], [`unique_by_key`], [`inclusive_scan_by_key`], [`exclusive_scan_by_key`] (+ `Workspace::*_into`) | keyed primitives over runs of equal adjacent keys |
//! | [`run_length_encode`], [`run_end_encode`], [`non_trivial_runs`] (+ `Workspace::*_into`) | run encodings; lengths are [`RunLength`] (`u32`/`u64`); results are [`Runs`] |
//! | [`Pred`] | predicates as data (comparisons, ranges, NaN and bit tests, `&`, `\|`, `!`), run on the device |
//! | [`rtc::UserPred`] | your own predicate in CUDA C++, compiled at run time (NVRTC) into the same kernels; any [`Predicate`] goes where a `Pred` does |
//! | [`rtc::UserScanOp`] | your own associative operator in CUDA C++ for the scans ([`inclusive_scan_user`], …), reductions ([`reduce_user`]) and keyed primitives ([`reduce_by_key_user`], [`inclusive_scan_by_key_user`], [`exclusive_scan_by_key_user`]); [`rtc::linear_recurrence`] is `h[t] = a[t]·h[t-1] + b[t]` ready-made |
//! | [`rtc::UserEq`] | your own key equality in CUDA C++ over any 1-, 2-, 4- or 8-byte [`rtc::DeviceType`] (structs too): [`unique_by`], [`run_length_encode_by`], [`run_end_encode_by`], [`non_trivial_runs_by`], [`unique_by_key_by`], [`reduce_by_key_user_by`], [`inclusive_scan_by_key_user_by`], [`exclusive_scan_by_key_user_by`] |
//! | [`Workspace`] | reusable look-back state: repeated calls allocate nothing |
//! | [`Workspace::with_count`], [`graph::capture`] | sizes in device memory, and pipelines captured in a CUDA graph and replayed (see [`graph`]) |
//! | [`Engine`] | classic look-back or, on sm_90+, the persistent warp-specialised engine (scans at 0.97 of memcpy); chosen per call by default |
//! | [`ScanOp`] | `Sum`, `Min`, `Max` for every type; `BitAnd`, `BitOr`, `BitXor` for integers |
//! | [`Element`] | the twelve element types: `i8`…`i64`, `u8`…`u64`, `f32`, `f64`, `f16`, `bf16` |
//! | [`shard`] | one column over several GPUs (NCCL with feature `nccl`): sharded scans, compaction and run-based calls |
//! | [`host`] | sequential reference implementations (the test oracle; the no-GPU path) |
//!
//! Every call runs on the stream of its input buffer, is one kernel launch (the stable one-buffer
//! partition: two), and does not block the host unless its docs say so: one-shot and in-place selections
//! read their count back. An empty input launches nothing (a selection writes a zero count), except a
//! reduction, whose one block writes the identity.
//!
//! ## Guarantees
//! * Selected items keep their input order; in-place selection is safe because a tile writes only after
//!   every earlier tile has finished reading (see `cuda/classic/select.cuh`). Partitions are not in-place.
//! * `unique` and the keyed/run primitives compare floats with IEEE `==`: `-0.0 == 0.0`, and a NaN equals
//!   nothing (every NaN is kept by `unique`, and is a run of its own). `reduce_by_key` and `unique_by_key`
//!   output the first key of each run.
//! * The keyed and run primitives are not in place: an output overlapping an input is [`Error::Overlap`].
//! * Counts and offsets are 64-bit: more than 2^32 items work.
//!
//! ## Numerics
//! * Integer sums wrap around.
//! * `f16` and `bf16` are accumulated in `f32` and rounded once per output item.
//! * Float sums are not associative, and the look-back combines tiles in an order that depends on
//!   timing, so a float sum can differ from a sequential sum by rounding (and between runs). The tests
//!   bound the difference by `n · ε · Σ|xᵢ|` of the accumulator type. [`Workspace::set_deterministic`]
//!   makes float sums bit-identical from run to run. Float `Min`/`Max` ignore NaN
//!   and are exact.
//!
//! ## Without a GPU
//! Without a CUDA driver, [`default_stream`] returns [`Error::NoCudaDriver`] (cudarc itself would
//! panic); if the crate was built without nvcc, GPU calls return [`Error::KernelsNotBuilt`]. The
//! [`host`] module computes the same results on the CPU.
//!
//! ## Examples
//! ```
//! # fn main() -> lookback::Result<()> {
//! use lookback::ScanOp;
//! let data = [3i32, 1, 4, 1, 5];
//! match lookback::default_stream(0) {
//!     Ok(stream) if lookback::kernels_built() => {
//!         let input = stream.clone_htod(&data)?;
//!         let sums = lookback::inclusive_scan(&input, ScanOp::Sum)?;
//!         assert_eq!(stream.clone_dtoh(&sums)?, [3, 4, 8, 9, 14]);
//!     }
//!     _ => assert_eq!(lookback::host::inclusive_scan(&data, ScanOp::Sum)?, [3, 4, 8, 9, 14]),
//! }
//! # Ok(()) }
//! ```
//!
//! Compaction in place, with a compound predicate:
//! ```
//! # fn main() -> lookback::Result<()> {
//! # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
//! # if !lookback::kernels_built() { return Ok(()) }
//! use lookback::Pred;
//! let mut readings = stream.clone_htod(&[12.5f32, -9999.0, f32::NAN, 14.0, 80.0])?;
//! let plausible = Pred::between(-40.0, 60.0) & Pred::is_finite();
//! let kept = lookback::select_if_in_place(&mut readings, &plausible)?;
//! assert_eq!(stream.clone_dtoh(&readings.slice(..kept))?, [12.5, 14.0]);
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

#[cfg(feature = "arrow")]
pub mod arrow;
mod by_key;
mod device;
mod element;
mod encode;
mod error;
pub mod graph;
pub mod host;
mod kernels;
mod launch;
mod op;
mod partition;
mod partition3;
mod plan;
mod pred;
mod reduce;
pub mod rtc;
mod runs;
mod runs_by;
mod scan;
mod select;
pub mod shard;
pub mod table;
mod user_by_key;
mod user_by_key_by;
mod user_scan;

pub use by_key::{exclusive_scan_by_key, inclusive_scan_by_key, reduce_by_key, unique_by_key};
pub use device::{default_stream, driver_available};
pub use element::{Element, Flag, FloatElement, IntElement};
pub use encode::{non_trivial_runs, run_end_encode, run_length_encode};
pub use error::{Error, Result};
pub use kernels::{DType, kernels_built};
pub use launch::{Backoff, Engine, Workspace};
pub use op::ScanOp;
pub use partition::{Partitioned, partition_if};
pub use partition3::{ThreeWay, partition_three_way};
pub use pred::{MAX_DEPTH, MAX_INSTRUCTIONS, Pred, Predicate};
pub use reduce::{ArgItem, arg_max, arg_min, reduce, reduce_user};
pub use runs::{RunLength, Runs};
pub use runs_by::{non_trivial_runs_by, run_end_encode_by, run_length_encode_by, unique_by_key_by};
pub use scan::{
    exclusive_scan, exclusive_scan_in_place, exclusive_scan_into, inclusive_scan, inclusive_scan_in_place,
    inclusive_scan_into,
};
pub use select::{
    Selected, count_if, mask_if, select_flagged, select_flagged_in_place, select_flagged_into, select_if,
    select_if_in_place, select_if_into, unique, unique_by, unique_in_place, unique_into,
};
pub use user_by_key::{exclusive_scan_by_key_user, inclusive_scan_by_key_user, reduce_by_key_user};
pub use user_by_key_by::{exclusive_scan_by_key_user_by, inclusive_scan_by_key_user_by, reduce_by_key_user_by};

pub use cudarc;
/// Re-export of `half`, whose `f16` and `bf16` are element types.
pub use half;
/// Re-export of the cudarc version this crate is built against, so callers name the same types.
pub use user_scan::{exclusive_scan_user, exclusive_scan_user_into, inclusive_scan_user, inclusive_scan_user_into};

#[doc(hidden)]
pub mod __private {
    //! Items for this crate's own tests and benchmarks; not part of the API.
    pub use crate::kernels::ALL_KERNELS;
    /// Loads every kernel of the table on `stream`'s context (checks the table against the fatbins).
    pub fn load_all_kernels(stream: &std::sync::Arc<cudarc::driver::CudaStream>) -> crate::Result<usize> {
        crate::kernels::load_all(stream.context())
    }
    pub use crate::kernels::PipeSharedMemory;
    /// Compiles the three-way partition with user code in the first part, the second or both (`None`: a
    /// built-in predicate there) for architecture `arch`, without a GPU.
    pub fn partition3_for_arch<T: crate::Element>(
        first: Option<&crate::rtc::UserPred<T>>,
        second: Option<&crate::rtc::UserPred<T>>,
        arch: &str,
    ) -> crate::Result<crate::rtc::CompileReport> {
        crate::rtc::partition3_for_arch(T::DTYPE, first.map(|p| p.code()), second.map(|p| p.code()), arch)
    }
    /// Compiles the keyed kernel of a user operator (reduce_by_key and the scans by key,
    /// `cuda/rtc/by_key.cuh`) for keys of type `K` and architecture `arch`, without a GPU.
    pub fn by_key_user_for_arch<K: crate::Element, In, A, Out>(
        op: &crate::rtc::UserScanOp<In, A, Out>,
        arch: &str,
    ) -> crate::Result<crate::rtc::CompileReport>
    where
        In: crate::rtc::DeviceType,
        A: crate::rtc::DeviceType,
        Out: crate::rtc::DeviceType,
    {
        op.compile_by_key_for_arch::<K>(arch)
    }
    /// The program NVRTC compiles for a user operator's keyed kernel with keys of type `K` (its text is
    /// the cache key, with the options and versions).
    pub fn by_key_user_program<K: crate::Element, In, A, Out>(op: &crate::rtc::UserScanOp<In, A, Out>) -> String {
        op.code.by_key_program(size_of::<K>(), None)
    }
    /// Compiles the run agent of a user equality for values of `value_bytes` (0: the run encodings; 1, 2,
    /// 4 or 8: unique_by_key, `cuda/rtc/runs.cuh`) for architecture `arch`, without a GPU.
    pub fn eq_runs_for_arch<K: crate::rtc::DeviceType>(
        eq: &crate::rtc::UserEq<K>,
        value_bytes: usize,
        arch: &str,
    ) -> crate::Result<crate::rtc::CompileReport> {
        eq.runs_for_arch(value_bytes, arch)
    }
    /// The shared memory of every persistent kernel on `stream`'s context: a kernel whose ring and static
    /// shared memory exceed the GPU's opt-in limit runs the classic agent instead, silently.
    pub fn pipe_shared_memory(
        stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    ) -> crate::Result<Vec<PipeSharedMemory>> {
        crate::kernels::pipe_shared_memory(stream.context())
    }
    /// Whether every persistent run-based kernel is compiled (the `persistent-runs` feature or
    /// `LOOKBACK_PERSISTENT_RUNS`); otherwise only those `Engine::Auto` takes (scans by key of 1-byte keys and
    /// values), and other run-based calls that force `Engine::Persistent` take the classic engine.
    pub const ALL_PERSISTENT_RUNS: bool = crate::kernels::ALL_PERSISTENT_RUNS;
    /// Whether a scan kernel exists for (operator, type).
    pub fn has_scan_kernel(op: crate::ScanOp, dtype: crate::DType) -> bool {
        crate::kernels::scan_kernel(op.kind(), dtype).is_some()
    }
    /// Compiles the table filter (`cuda/rtc/table.cuh`) decided by a mask, for column codes `columns`
    /// (`B > 0`: items of `B` bytes; `-4`/`-8`: row indices) and architecture `arch`, without a GPU.
    pub fn table_mask_for_arch(columns: &[i32], arch: &str) -> crate::Result<crate::rtc::CompileReport> {
        crate::rtc::check_arch(arch)?;
        let signature = crate::rtc::TableSignature { decision: crate::rtc::Decision::Flags, columns: columns.to_vec() };
        crate::rtc::table_for_arch(&signature, arch)
    }
    /// The same, decided by a predicate over a column of `T` (a built-in `Pred` or a `UserPred`).
    pub fn table_pred_for_arch<T: crate::Element, P: crate::Predicate<T>>(
        pred: &P,
        columns: &[i32],
        arch: &str,
    ) -> crate::Result<crate::rtc::CompileReport> {
        use crate::pred::predicate::DevicePred;
        crate::rtc::check_arch(arch)?;
        let decision = match pred.device()? {
            DevicePred::Program(_) => crate::rtc::Decision::Program(T::DTYPE, size_of::<T>()),
            DevicePred::Code(code) => crate::rtc::Decision::User(code, size_of::<T>()),
        };
        crate::rtc::table_for_arch(&crate::rtc::TableSignature { decision, columns: columns.to_vec() }, arch)
    }
    /// The same, decided by a predicate over two columns.
    pub fn table_pred2_for_arch<A: crate::rtc::DeviceType, B: crate::rtc::DeviceType>(
        pred: &crate::rtc::UserPred2<A, B>,
        columns: &[i32],
        arch: &str,
    ) -> crate::Result<crate::rtc::CompileReport> {
        crate::rtc::check_arch(arch)?;
        let decision = crate::rtc::Decision::User2(&pred.code);
        crate::rtc::table_for_arch(&crate::rtc::TableSignature { decision, columns: columns.to_vec() }, arch)
    }
    /// Items per tile of the selection kernels for an element type of `bytes` bytes.
    pub fn select_tile_items(bytes: usize) -> usize {
        crate::kernels::tuning(crate::kernels::Algo::Select, bytes).tile_items(bytes)
    }
    /// Items per tile of the persistent select_flagged kernel for items of `bytes` bytes, if there is one.
    pub fn pipe_flagged_tile_items(bytes: usize) -> Option<usize> {
        crate::kernels::pipe_flagged_tuning(bytes)
            .filter(|_| crate::kernels::pipe_flagged_kernel(bytes).is_some())
            .map(|p| p.tile_bytes() / bytes)
    }
    /// Items per tile of the classic run-based kernels with a value column whose larger column (key or
    /// value) has `bytes` bytes.
    pub fn runs_tile_items(bytes: usize) -> usize {
        crate::kernels::tuning(crate::kernels::Algo::Runs, bytes).tile_items(bytes)
    }
    /// Items per tile of the classic scans by key with values of `value_bytes` bytes and a larger column
    /// of `bytes` bytes: the register tile for 8-byte values, else the run-based kernels' tile.
    pub fn scan_by_key_tile_items(bytes: usize, value_bytes: usize) -> usize {
        crate::kernels::tuning(crate::plan::scan_by_key_row(value_bytes), bytes).tile_items(bytes)
    }
    /// Items per tile of the register tile whose run heads write every output (`cuda/classic/runs_at_heads.cuh`),
    /// if one is compiled for keys of `key_bytes` and values of `value_bytes` (0: none, the encodings —
    /// run-length, run-end and non-trivial runs): reduce_by_key and unique_by_key with values, the
    /// encodings without.
    pub fn heads_tile_items(key_bytes: usize, value_bytes: usize) -> Option<usize> {
        let bytes = key_bytes.max(value_bytes);
        let algo = if value_bytes == 0 { crate::kernels::Algo::HeadsEncode } else { crate::kernels::Algo::Heads };
        crate::kernels::heads_runs_kernel(key_bytes, value_bytes)
            .map(|_| crate::kernels::tuning(algo, bytes).tile_items(bytes))
    }
    /// Items per tile of the classic encodings (run-length, run-end, non-trivial runs) of keys of
    /// `bytes` bytes.
    pub fn encode_tile_items(bytes: usize) -> usize {
        crate::kernels::tuning(crate::kernels::Algo::Encode, bytes).tile_items(bytes)
    }
    /// Items per tile of the classic encodings' small-grid kernel, which takes inputs of at most 1024
    /// [`encode_tile_items`](encode_tile_items) tiles.
    pub fn encode_small_tile_items(bytes: usize) -> usize {
        crate::kernels::tuning(crate::kernels::Algo::EncodeSmall, bytes).tile_items(bytes)
    }
    /// Lets (or, with `false`, stops) the encodings of later calls on `ws` take their small-grid kernel,
    /// so that tests reach the kernel they take above the threshold with small inputs.
    pub fn set_small_grids(ws: &mut crate::Workspace, on: bool) {
        ws.small_grids = on;
    }
    /// The largest inputs (items) of the classic encodings of keys of `key_bytes` bytes that take the
    /// small-grid kernel (counted in the register tile's tiles where the key size has one, which all
    /// three encodings take; in the run agent's elsewhere); `None` for a size without encodings.
    pub fn encode_small_grid_items(key_bytes: usize) -> Option<usize> {
        crate::plan::encode_small_grid_items(key_bytes)
    }
    /// Items per tile of the reductions (`reduce`, `arg_min`, `arg_max`) of an element type of `bytes`
    /// bytes; a reduction launches at most `plan::MAX_SHARES` blocks, each taking every so many tiles.
    pub fn reduce_tile_items(bytes: usize) -> usize {
        crate::kernels::tuning(crate::kernels::Algo::Reduce, bytes).tile_items(bytes)
    }
    /// Items per tile of the scan of an element type of `bytes` bytes.
    pub fn scan_tile_items(bytes: usize) -> usize {
        crate::kernels::tuning(crate::kernels::Algo::Scan, bytes).tile_items(bytes)
    }
    /// Items per tile of the persistent compaction (sm_90+) of an element type of `bytes` bytes.
    pub fn pipe_select_tile_items(bytes: usize) -> usize {
        crate::kernels::pipe_tuning(crate::kernels::Algo::Select).map_or(0, |p| p.tile_bytes() / bytes)
    }
    /// Items per tile of the persistent partitions (sm_90+) of an element type of `bytes` bytes.
    pub fn pipe_partition_tile_items(bytes: usize) -> usize {
        crate::kernels::pipe_tuning(crate::kernels::Algo::Partition).map_or(0, |p| p.tile_bytes() / bytes)
    }
    /// Items per tile of the persistent run-based kernels (sm_90+) with keys of `key_bytes` bytes and a
    /// value column of `value_bytes` bytes (0: none, the encodings).
    pub fn pipe_runs_tile_items(key_bytes: usize, value_bytes: usize) -> usize {
        crate::plan::pipe_runs_tile_items(key_bytes, value_bytes)
    }
    /// Items per tile of the classic scan with user code of `input_bytes` items into `output_bytes` items.
    pub fn user_scan_tile_items(input_bytes: usize, output_bytes: usize) -> usize {
        crate::plan::user_scan_tuning(input_bytes, output_bytes).tile_items(input_bytes)
    }
    /// Items per tile of the persistent scan (sm_90+) of an element type of `bytes` bytes.
    pub fn pipe_scan_tile_items(bytes: usize) -> usize {
        crate::kernels::pipe_tuning(crate::kernels::Algo::Scan).map_or(0, |p| p.tile_bytes() / bytes)
    }
    /// Dispatch (`src/plan.rs`): a call's description in, its launches out, all on the host; for
    /// `tests/plan.rs`, which pins every choice.
    pub mod plan {
        pub use crate::kernels::{Algo, Kernel, PipeTuning, Tuning};
        pub use crate::plan::{
            Buffers, Call, Elem, Grid, Launch, MAX_SHARES, Plan, Primitive, Shape, encode_small_grid_items, grid, plan,
            small_grid_tiles, status_units, user_scan_tuning,
        };
        pub use crate::runs::RunsMode;
        pub use crate::select::Mode;
    }
}
