//! The `#[repr(C)]` mirrors of the kernels' parameter blocks (`cuda/core/params.cuh`): every kernel takes one
//! by value.
use crate::pred::PredProgram;
use cudarc::driver::DeviceRepr;

/// Mirrors `LookbackParams` of `cuda/core/params.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LookbackParams {
    pub status: u64,
    /// The launch word: `round << 32 | tile ids taken` (`cuda/core/tile_state.cuh`).
    pub header: u64,
    /// The device count of a call sized on the device ([`Workspace::with_count`]), or 0.
    pub items: u64,
    /// Entries of one status region: the capacity's tiles, then the anchors (`region_entries`).
    pub status_tiles: u32,
    pub first_poll_ns: u32,
    pub poll_ns: u32,
    /// `LB_PREFETCH_GUESS` (`crate::plan::grid` decides) and `LB_DETERMINISTIC` (the workspace's setting).
    pub flags: u32,
}

/// `LB_PREFETCH_GUESS` of `cuda/core/params.cuh`: the classic agents prefetch tile `blockIdx.x` into L2
/// while their tile-id atomic is in flight (`prefetch_guessed_tile` in `cuda/core/tile_state.cuh`).
pub(crate) const LB_PREFETCH_GUESS: u32 = 1;
/// `LB_DETERMINISTIC` of `cuda/core/params.cuh`: float sums combine tiles strictly in tile order
/// ([`Workspace::set_deterministic`](crate::Workspace::set_deterministic)).
pub(crate) const LB_DETERMINISTIC: u32 = 2;
/// `LB_ENTRY_UNITS_SHIFT` of `cuda/core/params.cuh`: the flags' bits from here hold the 16-byte units of a
/// tile's status entry minus one (user accumulators of more than 8 bytes: [`crate::plan::status_units`]).
pub(crate) const LB_ENTRY_UNITS_SHIFT: u32 = 8;
/// `LB_MAX_ENTRY_UNITS` of `cuda/core/params.cuh`: entries of at most four units (32-byte accumulators).
pub(crate) const LB_MAX_ENTRY_UNITS: usize = 4;
/// Mirrors `ScanParams` of `cuda/core/params.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ScanParams {
    pub input: u64,
    pub output: u64,
    pub n: u64,
    /// The initial value's bytes (an element, or a user accumulator of up to 32 bytes), low bytes first.
    pub seed: [u64; 4],
    /// `SCAN_INCLUSIVE`, `SCAN_EXCLUSIVE` or `SCAN_INCLUSIVE_SEEDED`: which result, and whether `seed` starts it.
    pub exclusive: u32,
    /// Nonzero: a reduction, whose total (seed ⊕ every item when `exclusive`) goes to `output[0]`.
    pub reduce: u32,
    pub lb: LookbackParams,
}

/// `ScanParams::exclusive` of `cuda/core/params.cuh`: `output[i] = input[0] ⊕ … ⊕ input[i]`.
pub(crate) const SCAN_INCLUSIVE: u32 = 0;
/// `output[i] = seed ⊕ input[0] ⊕ … ⊕ input[i-1]`.
pub(crate) const SCAN_EXCLUSIVE: u32 = 1;
/// `output[i] = seed ⊕ input[0] ⊕ … ⊕ input[i]` (the sharded scans' later shards, `src/shard/`).
pub(crate) const SCAN_INCLUSIVE_SEEDED: u32 = 2;

/// Mirrors `ReduceParams` of `cuda/core/params.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ReduceParams {
    pub input: u64,
    pub output: u64,
    /// The shares' values: two words per block.
    pub partials: u64,
    /// The count of finished blocks, zero between launches.
    pub finished: u64,
    /// The device count of a call sized on the device ([`Workspace::with_count`]), or 0.
    pub items: u64,
    pub n: u64,
}

/// Mirrors `SelectParams` of `cuda/core/params.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SelectParams {
    pub input: u64,
    pub output: u64,
    pub output_rejected: u64,
    pub flags: u64,
    pub num_selected: u64,
    pub known_total: u64,
    pub n: u64,
    pub source: u32,
    pub mode: u32,
    pub pred: PredProgram,
    pub lb: LookbackParams,
}

/// Mirrors `RunsParams` of `cuda/core/params.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RunsParams {
    pub keys: u64,
    pub values: u64,
    pub out_keys: u64,
    pub out_values: u64,
    pub num_runs: u64,
    pub n: u64,
    pub seed: u64,
    pub key_abs_mask: u64,
    pub key_inf_bits: u64,
    pub mode: u32,
    pub length_bytes: u32,
    pub lb: LookbackParams,
}

/// Mirrors `Partition3Params` of `cuda/core/params.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Partition3Params {
    pub input: u64,
    pub out_first: u64,
    pub out_second: u64,
    pub out_rest: u64,
    pub num_selected: u64,
    pub n: u64,
    pub first: PredProgram,
    pub second: PredProgram,
    pub lb: LookbackParams,
}

/// `TABLE_MAX_COLUMNS` of `cuda/core/params.cuh`: the most columns one table filter moves.
pub(crate) const TABLE_MAX_COLUMNS: usize = 8;

/// Mirrors `TableParams` of `cuda/core/params.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TableParams {
    /// Column inputs (0 for a column of row indices).
    pub input: [u64; TABLE_MAX_COLUMNS],
    pub output: [u64; TABLE_MAX_COLUMNS],
    /// The mask column, or the predicate's column(s).
    pub decide: [u64; 2],
    pub num_selected: u64,
    pub n: u64,
    pub pred: PredProgram,
    pub lb: LookbackParams,
}

// The C side asserts the same sizes (cuda/core/params.cuh).
const _: () = assert!(
    size_of::<LookbackParams>() == 40
        && size_of::<ScanParams>() == 104
        && size_of::<ReduceParams>() == 48
        && size_of::<SelectParams>() == 384
        && size_of::<RunsParams>() == 120
        && size_of::<Partition3Params>() == 648
        && size_of::<TableParams>() == 480
);

// SAFETY: #[repr(C)] plain-old-data structs of integers, laid out exactly as their C counterparts.
unsafe impl DeviceRepr for LookbackParams {}
unsafe impl DeviceRepr for ScanParams {}
unsafe impl DeviceRepr for ReduceParams {}
unsafe impl DeviceRepr for SelectParams {}
unsafe impl DeviceRepr for RunsParams {}
unsafe impl DeviceRepr for Partition3Params {}
unsafe impl DeviceRepr for TableParams {}
