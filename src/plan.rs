//! Dispatch in one place: which kernel a call launches, with which tile, on which engine, and how the
//! launch is shaped. Pure host logic — no CUDA call — so that every choice is pinned by host tests
//! (`tests/plan.rs`, which runs without a GPU).
//!
//! [`plan`] takes a [`Call`]: the primitive and what picks its kernel (operator, element, key and value
//! types; [`Primitive`]), the item count, the [`Engine`] setting, whether the GPU is sm_90 or newer, and
//! the addresses of the buffers the persistent engine bulk-copies (which must be 16-byte aligned). It
//! returns a [`Plan`]: the classic launch (one tile per block), and the persistent launch (one block per
//! SM, sm_90+) where the engine setting, the GPU, the size and the alignment allow it. One thing needs
//! the driver and stays in `launch/`: whether the persistent kernel's ring and static shared memory fit
//! a block of this GPU (`Workspace::plan_launch`, which takes the classic launch where they do not).
//! [`grid`] then shapes the launch: blocks, threads, shared memory, the default back-off, the prefetch.
//!
//! | primitive | classic agent: tuning row (`cuda/core/tuning.cuh`) | persistent row | [`Engine::Auto`] takes it |
//! |---|---|---|---|
//! | scans | `scan` | `scan` | from the row's `min_tiles` |
//! | scans with user code | `scan`, tile from [`user_scan_tuning`] | `scan` | from `min_tiles` of input |
//! | `reduce`, `arg_min`, `arg_max` | `reduce`, [`MAX_SHARES`] blocks at most (no look-back) | none | — |
//! | reductions with user operators | the user scan's (agent in reduce mode) | `scan` | from `min_tiles` of input |
//! | `select_if`, `unique`, `count_if` | `select` | `select` | from `min_tiles` |
//! | the partitions' three layouts | `select` | `partition` | from `min_tiles` |
//! | `select_flagged` | `select` | `flagged` (4- and 8-byte items) | from `min_tiles` |
//! | `mask_if`, the three-way partition | `select` | none | — |
//! | the table filter (`crate::table`) | `select` of its widest column (the agent compiled at run time) | none | — |
//! | the encodings | `heads_encode` (4-, 8-byte keys), else `encode`; `encode_small` up to 256 / 1024 of those tiles | `runs` | never |
//! | `reduce_by_key`, `unique_by_key` | `heads` (4-byte keys and values), else `runs` | `runs` | never |
//! | the scans by key | `scan_by_key` (8-byte values), else `runs` | `runs` | 1-byte keys and values, from `min_tiles` of keys |
//! | keyed primitives with user operators (reduce_by_key, the scans by key) | `runs` (the run agent compiled at run time) | none | — |
//! | the encodings and unique_by_key by a user equality | `encode` (encodings), `runs` (the run agent compiled at run time) | none | — |
//! | `unique` by a user equality | `select` of the key size's unsigned type | `select` | from `min_tiles` |
//!
//! The measurements behind each choice are in the bench log,
//! `benches/log/2026-11-30-to-2026-12-02-notes.md`, under the dates given here.
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernels::{self, Algo, DType, Kernel, PipeTuning, Tuning};
use crate::launch::{Backoff, Engine};
use crate::op::ScanOp;
use crate::runs::RunsMode;
use crate::select::Mode;

/// An element type as dispatch sees it: the kernel table's type and its size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elem {
    /// The type, for kernels compiled per type.
    pub dtype: DType,
    /// Its size, for kernels compiled per size and for the tile shapes.
    pub bytes: usize,
}

impl Elem {
    /// The element type `T`.
    pub fn of<T: Element>() -> Self {
        Elem { dtype: T::DTYPE, bytes: size_of::<T>() }
    }

    /// The unsigned integer type of `bytes` (1, 2, 4 or 8; `None` otherwise): how items of a user key type
    /// travel, so its kernels are planned as that type's (`cuda/rtc/unique.cuh`).
    pub(crate) fn bits(bytes: usize) -> Option<Self> {
        let dtype = match bytes {
            1 => DType::U8,
            2 => DType::U16,
            4 => DType::U32,
            8 => DType::U64,
            _ => return None,
        };
        Some(Elem { dtype, bytes })
    }
}

/// A primitive, with what picks its kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Primitive {
    /// An inclusive or exclusive scan (one kernel does both).
    Scan {
        /// The operator.
        op: ScanOp,
        /// The element type.
        ty: Elem,
    },
    /// An inclusive or exclusive scan with a user operator ([`crate::rtc::UserScanOp`]): its kernels,
    /// compiled at run time from the built-in scans' agents, and its item sizes.
    UserScan {
        /// The kernels compiled for the operator.
        kernels: crate::rtc::ScanKernels,
        /// Bytes of an input item.
        input_bytes: usize,
        /// Bytes of an output item.
        output_bytes: usize,
        /// Bytes of the accumulator (which fix its status entry: [`status_units`]).
        acc_bytes: usize,
    },
    /// A reduction with a built-in operator (`cuda/classic/reduce.cuh`).
    Reduce {
        /// The operator.
        op: ScanOp,
        /// The element type.
        ty: Elem,
    },
    /// arg_min (`max` false) or arg_max (`cuda/classic/reduce.cuh`, over (index, item) pairs).
    ArgReduce {
        /// arg_max rather than arg_min.
        max: bool,
        /// The element type.
        ty: Elem,
    },
    /// A reduction with a user operator: its scan kernels in reduce mode.
    UserReduce {
        /// The kernels compiled for the operator.
        kernels: crate::rtc::ScanKernels,
        /// Bytes of an input item.
        input_bytes: usize,
        /// Bytes of an output item (the agent's tile is the scan's).
        output_bytes: usize,
        /// Bytes of the accumulator (which fix its status entry: [`status_units`]).
        acc_bytes: usize,
    },
    /// One launch of the selection kernels (`select_raw`): compaction, count, mask or a partition as
    /// `mode` says, by a predicate or uniqueness, or by a flag column (`flagged`).
    Select {
        /// The item type.
        ty: Elem,
        /// Where the items go.
        mode: Mode,
        /// Whether a flag column selects.
        flagged: bool,
    },
    /// A table filter (`cuda/classic/table.cuh`): its kernel, compiled at run time for the call's columns
    /// and decision, and the bytes of its widest column, whose selection row gives the tile.
    Table {
        /// The kernel compiled for the call's column signature.
        kernel: Kernel,
        /// Bytes of the widest column (decision columns included).
        bytes: usize,
    },
    /// The three-way partition.
    Partition3 {
        /// The item type.
        ty: Elem,
    },
    /// Run-length encoding ([`RunsMode::Encode`]), run-end encoding (`Ends`) or the non-trivial runs
    /// (`NonTrivial`) of keys of `key_bytes`.
    Encode {
        /// Which encoding.
        mode: RunsMode,
        /// Bytes of a key.
        key_bytes: usize,
    },
    /// reduce_by_key.
    ReduceByKey {
        /// The reduction.
        op: ScanOp,
        /// Bytes of a key.
        key_bytes: usize,
        /// The value type.
        value: Elem,
    },
    /// unique_by_key.
    UniqueByKey {
        /// Bytes of a key.
        key_bytes: usize,
        /// The value type.
        value: Elem,
    },
    /// The classic run agent compiled at run time for user code (the mode says which primitive):
    /// reduce_by_key or an inclusive or exclusive scan by key with a user operator
    /// ([`crate::rtc::UserScanOp`]; `cuda/rtc/by_key.cuh`), its keys compared as the key type says or by a
    /// user equality ([`crate::rtc::UserEq`]); or an encoding (`value_bytes` 0) or unique_by_key by a user
    /// equality (`cuda/rtc/runs.cuh`).
    UserByKey {
        /// The kernel compiled for the user code and the key size.
        kernel: Kernel,
        /// Bytes of a key.
        key_bytes: usize,
        /// Bytes of a value (an input item; results have the same size); 0 for the encodings, which have
        /// no value column.
        value_bytes: usize,
    },
    /// An inclusive or exclusive scan by key (one kernel does both).
    ScanByKey {
        /// The operator.
        op: ScanOp,
        /// Bytes of a key.
        key_bytes: usize,
        /// The value type.
        value: Elem,
    },
}

/// Device addresses of a call's buffers whose alignment can matter (0: none). Which ones must be 16-byte
/// aligned for the persistent engine is [`plan`]'s business: a scan's input and output; a selection's
/// input, and select_flagged's flags; a run-based primitive's keys (`input`) and values, and a scan by
/// key's output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Buffers {
    /// The input, or the keys.
    pub input: u64,
    /// The output (the scans').
    pub output: u64,
    /// The value column of the run-based primitives.
    pub values: u64,
    /// select_flagged's flags.
    pub flags: u64,
}

/// A call, as dispatch sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    /// What runs.
    pub primitive: Primitive,
    /// Items (keys), at least one.
    pub n: usize,
    /// The workspace's engine setting.
    pub engine: Engine,
    /// Whether the GPU is sm_90 or newer (has the persistent engine's bulk copies).
    pub sm90: bool,
    /// The buffers, for their alignment.
    pub buffers: Buffers,
    /// Whether small encodings may take their small-grid kernel (tests turn it off:
    /// `__private::set_small_grids`).
    pub small_grids: bool,
}

/// How a launch is shaped: one block per tile with a classic row, one persistent block per SM with a
/// persistent row, or a fixed number of shares of the tiles. A persistent launch needs its kernel opted in
/// to its ring of shared memory, which `Workspace::plan_launch` does before it returns one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One block per tile.
    Classic(Tuning),
    /// One block per share of the tiles: `min(tiles, MAX_SHARES)` blocks, block `b` taking tiles `b`,
    /// `b + blocks`, … (the reductions, which need no look-back state: `cuda/classic/reduce.cuh`).
    Shares(Tuning),
    /// One block per SM (at most one per tile), with a ring of tiles in shared memory.
    Persistent(PipeTuning),
}

/// One planned launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The kernel.
    pub kernel: Kernel,
    /// The tuning row its shape comes from (classic or persistent, as `shape` says).
    pub row: Algo,
    /// The shape.
    pub shape: Shape,
    /// Tiles of the input.
    pub tiles: usize,
    /// 16-byte units of a tile's status entry: 1, or more for a user accumulator of more than 8 bytes
    /// ([`status_units`]).
    pub status_units: usize,
}

impl Launch {
    /// Whether this is a persistent launch.
    pub fn is_persistent(&self) -> bool {
        matches!(self.shape, Shape::Persistent(_))
    }
    /// Items per tile for items of `bytes` bytes (a persistent tile of the run-based kernels holds keys and
    /// values: pass the next power of two of their sizes' sum).
    pub fn tile_items(&self, bytes: usize) -> usize {
        match self.shape {
            Shape::Classic(tuning) | Shape::Shares(tuning) => tuning.tile_items(bytes),
            Shape::Persistent(pipe) => pipe.tile_bytes() / bytes,
        }
    }
}

/// What [`plan`] answers: the classic launch, and the persistent one where it may be taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The launch on the classic agent: taken when there is no persistent one, or when its kernel does not
    /// fit the GPU's shared memory.
    pub classic: Launch,
    /// The persistent launch, if the engine setting, the GPU, the size and the alignment allow it.
    pub persistent: Option<Launch>,
}

/// The plan of `call`.
///
/// # Errors
/// [`Error::Unsupported`] for a call without a classic kernel (the callers check operators and types
/// first, so only a kernel table that disagrees with `cuda/` gets here).
pub fn plan(call: &Call) -> Result<Plan> {
    Ok(Plan { classic: classic(call)?, persistent: persistent(call) })
}

/// The classic launch of a call: see the table in the module docs.
fn classic(call: &Call) -> Result<Launch> {
    let tiled = |kernel, row, bytes: usize| {
        let tuning = kernels::tuning(row, bytes);
        let tiles = call.n.div_ceil(tuning.tile_items(bytes));
        Launch { kernel, row, shape: Shape::Classic(tuning), tiles, status_units: 1 }
    };
    let shares = |kernel, bytes: usize| {
        let tuning = kernels::tuning(Algo::Reduce, bytes);
        Launch {
            kernel,
            row: Algo::Reduce,
            shape: Shape::Shares(tuning),
            tiles: call.n.div_ceil(tuning.tile_items(bytes)),
            status_units: 1,
        }
    };
    Ok(match call.primitive {
        Primitive::Scan { op, ty } => {
            let kernel = kernels::scan_kernel(op.kind(), ty.dtype).ok_or_else(|| unsupported(op, ty))?;
            tiled(kernel, Algo::Scan, ty.bytes)
        }
        Primitive::Reduce { op, ty } => {
            let kernel = kernels::reduce_kernel(op.kind(), ty.dtype).ok_or_else(|| unsupported(op, ty))?;
            shares(kernel, ty.bytes)
        }
        Primitive::ArgReduce { max, ty } => {
            let kernel = if max { kernels::arg_max_kernel(ty.dtype) } else { kernels::arg_min_kernel(ty.dtype) };
            shares(kernel, ty.bytes)
        }
        Primitive::UserScan { kernels, input_bytes, output_bytes, acc_bytes }
        | Primitive::UserReduce { kernels, input_bytes, output_bytes, acc_bytes } => {
            let tuning = user_scan_tuning(input_bytes, output_bytes);
            let tiles = call.n.div_ceil(tuning.tile_items(input_bytes));
            let status_units = status_units(acc_bytes);
            Launch { kernel: kernels.classic, row: Algo::Scan, shape: Shape::Classic(tuning), tiles, status_units }
        }
        Primitive::Select { ty, .. } => tiled(kernels::select_kernel(ty.dtype), Algo::Select, ty.bytes),
        Primitive::Partition3 { ty } => tiled(kernels::partition3_kernel(ty.dtype), Algo::Select, ty.bytes),
        Primitive::Table { kernel, bytes } => tiled(kernel, Algo::Select, bytes),
        Primitive::Encode { mode, key_bytes } => {
            let (kernel, row) = encode_kernel(key_bytes, mode)?;
            let launch = tiled(kernel, row, key_bytes);
            match kernels::runs_small_kernel(key_bytes) {
                Some(small) if call.small_grids && launch.tiles <= small_grid_tiles(row) => {
                    tiled(small, Algo::EncodeSmall, key_bytes)
                }
                _ => launch,
            }
        }
        Primitive::ReduceByKey { op, key_bytes, value } => {
            let (kernel, row) = match kernels::heads_kernel(op.kind(), key_bytes, value.dtype) {
                Some(heads) => (heads, Algo::Heads),
                None => (by_key_kernel(op, key_bytes, value)?, Algo::Runs),
            };
            tiled(kernel, row, key_bytes.max(value.bytes))
        }
        Primitive::UniqueByKey { key_bytes, value } => {
            let (kernel, row) = match kernels::heads_runs_kernel(key_bytes, value.bytes) {
                Some(heads) => (heads, Algo::Heads),
                None => (positional_kernel(key_bytes, value.bytes)?, Algo::Runs),
            };
            tiled(kernel, row, key_bytes.max(value.bytes))
        }
        // The run agent's own row, by the larger of key and value, as the built-in keyed kernels; the
        // encodings' (no value column) is `encode`, as runs.cu's lookback_runs_k*_v0.
        Primitive::UserByKey { kernel, key_bytes, value_bytes: 0 } => tiled(kernel, Algo::Encode, key_bytes),
        Primitive::UserByKey { kernel, key_bytes, value_bytes } => {
            tiled(kernel, Algo::Runs, key_bytes.max(value_bytes))
        }
        Primitive::ScanByKey { op, key_bytes, value } => {
            let row = scan_by_key_row(value.bytes);
            let kernel = match row {
                Algo::ScanByKey => kernels::scan_by_key_kernel(op.kind(), key_bytes, value.dtype)
                    .ok_or_else(|| unsupported(op, value))?,
                _ => by_key_kernel(op, key_bytes, value)?,
            };
            tiled(kernel, row, key_bytes.max(value.bytes))
        }
    })
}

/// The persistent launch of a call, if it has a persistent kernel and the engine setting, the buffers'
/// alignment, the size (under [`Engine::Auto`]) and the GPU allow it.
fn persistent(call: &Call) -> Option<Launch> {
    let (n, b) = (call.n, call.buffers);
    let runs = kernels::pipe_tuning(Algo::Runs);
    // (row, its shape, kernel, bytes of tiled data, the bytes Engine::Auto counts against the row's
    // `min_tiles` or None: it never takes the persistent launch, the buffers that must be 16-byte aligned)
    let (row, pipe, kernel, bytes, auto_bytes, aligned) = match call.primitive {
        Primitive::Scan { op, ty } => {
            let bytes = n.saturating_mul(ty.bytes);
            let kernel = kernels::pipe_scan_kernel(op.kind(), ty.dtype);
            (Algo::Scan, kernels::pipe_tuning(Algo::Scan), kernel, bytes, Some(bytes), [b.input, b.output, 0])
        }
        // Tiles of input bytes, as the built-in scans; the output is stored in whole spans of a lane's
        // items, so it must be aligned too.
        Primitive::UserScan { kernels, input_bytes, .. } => {
            let bytes = n.saturating_mul(input_bytes);
            let pipe = kernels::pipe_tuning(Algo::Scan);
            (Algo::Scan, pipe, Some(kernels.persistent), bytes, Some(bytes), [b.input, b.output, 0])
        }
        // The reductions of built-in operators have no look-back to hide: the shares are their only shape.
        Primitive::Reduce { .. } | Primitive::ArgReduce { .. } => return None,
        // A user reduction reads like the user scan and writes one value, anywhere: only the input is
        // bulk-copied.
        Primitive::UserReduce { kernels, input_bytes, .. } => {
            let bytes = n.saturating_mul(input_bytes);
            let pipe = kernels::pipe_tuning(Algo::Scan);
            (Algo::Scan, pipe, Some(kernels.persistent), bytes, Some(bytes), [b.input, 0, 0])
        }
        // The persistent engine covers every layout by predicate or uniqueness, and compaction by flags of
        // 4- and 8-byte items (the flags a side stream of its tiles; for 1- and 2-byte items they would not
        // leave room for the ring), in three kernel families with a row each: compaction and count_if
        // (`select`, with writer warps), the partitions (`partition`, without: they copy every item out,
        // and writer warps made them slower), select_flagged (`flagged`). The mask-only mode stays on the
        // classic agent. Under Engine::Auto every mode switches at its row's `min_tiles` (32 MB).
        // H200, 2026-12-01: select_flagged 7-10 % faster persistent from there, 0-5 % slower below;
        // compaction (µs, classic / persistent / CUB) i32 2^23 select_if 26.5 / 23.2 / 26.8, in place
        // 29.2 / 28.0 / 27.7, unique 24.8 / 21.0 / 26.1; i64 2^22 select_if 26.0 / 23.3 / 25.0, in place
        // 27.7 / 27.3 / 26.1; still slower at 16 MB (i32 2^22 select_if 16.9 / 18.3, in place 17.6 / 19.8).
        Primitive::Select { ty, mode, flagged } => {
            let bytes = n.saturating_mul(ty.bytes);
            let (row, pipe, kernel, flags) = match (mode, flagged) {
                (Mode::Mask, _) => return None,
                (Mode::Compact, true) => {
                    let pipe = kernels::pipe_flagged_tuning(ty.bytes);
                    (Algo::Flagged, pipe, kernels::pipe_flagged_kernel(ty.bytes), b.flags)
                }
                (_, true) => return None,
                (Mode::PartitionReverse | Mode::PartitionSplit | Mode::PartitionStable, false) => {
                    let kernel = kernels::pipe_partition_kernel(ty.dtype);
                    (Algo::Partition, kernels::pipe_tuning(Algo::Partition), Some(kernel), 0)
                }
                (Mode::Compact | Mode::Count, false) => {
                    let kernel = kernels::pipe_select_kernel(ty.dtype);
                    (Algo::Select, kernels::pipe_tuning(Algo::Select), Some(kernel), 0)
                }
            };
            (row, pipe, kernel, bytes, Some(bytes), [b.input, flags, 0])
        }
        Primitive::Partition3 { .. } | Primitive::Table { .. } => return None,
        Primitive::Encode { key_bytes, .. } => {
            let kernel = kernels::pipe_runs_kernel(key_bytes, 0);
            (Algo::Runs, runs, kernel, runs_bytes(n, key_bytes, 0), None, [b.input, 0, 0])
        }
        Primitive::ReduceByKey { op, key_bytes, value } => {
            let kernel = kernels::pipe_by_key_kernel(op.kind(), key_bytes, value.dtype);
            (Algo::Runs, runs, kernel, runs_bytes(n, key_bytes, value.bytes), None, [b.input, b.values, 0])
        }
        // Only the classic run agent is compiled for user operators.
        Primitive::UserByKey { .. } => return None,
        Primitive::UniqueByKey { key_bytes, value } => {
            let kernel = kernels::pipe_runs_kernel(key_bytes, value.bytes);
            (Algo::Runs, runs, kernel, runs_bytes(n, key_bytes, value.bytes), None, [b.input, b.values, 0])
        }
        // The persistent kernel is reduce_by_key's (the mode picks its scan Work); its lanes store their
        // results with one vector store each, so the output must be aligned too.
        Primitive::ScanByKey { op, key_bytes, value } => {
            let kernel = kernels::pipe_by_key_kernel(op.kind(), key_bytes, value.dtype);
            let auto =
                auto_scan_by_key(key_bytes, value.bytes).then(|| n.saturating_mul(key_bytes.next_power_of_two()));
            (Algo::Runs, runs, kernel, runs_bytes(n, key_bytes, value.bytes), auto, [b.input, b.values, b.output])
        }
    };
    let (pipe, kernel) = (pipe?, kernel?);
    if call.engine == Engine::Classic || aligned.iter().any(|a| a % 16 != 0) {
        return None;
    }
    let tiles_of = |bytes: usize| bytes.div_ceil(pipe.tile_bytes());
    let auto = auto_bytes.is_some_and(|auto| tiles_of(auto) >= pipe.min_tiles as usize);
    if call.engine == Engine::Auto && !auto {
        return None;
    }
    let tiles = tiles_of(bytes);
    if u32::try_from(tiles).is_err() || !call.sm90 {
        return None;
    }
    let status_units = match call.primitive {
        Primitive::UserScan { acc_bytes, .. } | Primitive::UserReduce { acc_bytes, .. } => status_units(acc_bytes),
        _ => 1,
    };
    Some(Launch { kernel, row, shape: Shape::Persistent(pipe), tiles, status_units })
}

/// 16-byte units of a tile's status entry for an accumulator of `acc_bytes` bytes: one up to 8 bytes
/// (the value beside its tag in one word or one 16-byte entry), else one per 8 bytes of the value, each
/// 64-bit word holding 32 bits of it beside the tag (`MultiState` and `entry_units_for` in
/// `cuda/core/tile_state.cuh`).
pub const fn status_units(acc_bytes: usize) -> usize {
    if acc_bytes <= 8 { 1 } else { acc_bytes.div_ceil(8) }
}

/// The classic tile of a scan with user code whose input and output items have `input_bytes` and
/// `output_bytes` (1, 2, 4, 8 or 16, the larger at most 8 times the smaller), as a tuning row whose
/// `chunks_per_thread` counts 16-byte chunks of *input*, so that `tile_items(input_bytes)` is the tile's
/// items. The rule is `ScanShape` of `cuda/core/scan_policy.cuh`: the scan row of the larger size (the
/// 8-byte row for 16) gives the block and a thread's chunks of the larger type, raised to at least one
/// whole chunk of the smaller. Equal sizes of at most 8 bytes give the built-in scans' row itself.
pub fn user_scan_tuning(input_bytes: usize, output_bytes: usize) -> Tuning {
    let (big, small) = (input_bytes.max(output_bytes), input_bytes.min(output_bytes));
    let row = kernels::tuning(Algo::Scan, big.min(8));
    let items_per_thread = (row.chunks_per_thread as usize * 16 / big).max(16 / small);
    Tuning { chunks_per_thread: (items_per_thread * input_bytes / 16) as u32, ..row }
}

/// Bytes of the persistent run-based kernels' tiled data: a slot holds `TILE_ITEMS` keys and values, an
/// item taking the next power of two of their sizes (`cuda/persistent/engine.cuh`): the same tile count as `n`
/// items of that size.
fn runs_bytes(n: usize, key_bytes: usize, value_bytes: usize) -> usize {
    n.saturating_mul((key_bytes + value_bytes).next_power_of_two())
}

/// Whether [`Engine::Auto`] may take the persistent kernel of a scan by key (from the runs row's
/// `min_tiles` up, counted on the keys alone: 1024 tiles of keys, 2^25 u8 keys); for the other run-based
/// primitives it never does. H200, 2026-11-30, both engines in one process: the classic agent was faster
/// at 2^20-2^30 for reduce_by_key (i32 2^28: 1055 against 1096 µs), unique_by_key (990 / 1266), non-trivial
/// runs (728 / 864), and for every primitive with f64 keys (scan_by_key 2775 / 2847, RLE 1212 / 1607). The
/// encodings split by the data (runs of 4: persistent 3-4 % faster from 2^26; runs of 1000: classic 13-25 %
/// faster) and stay classic. The scans by key: since 2026-12-01 a classic tile with a head publishes its
/// inclusive prefix at once and stores before it looks back (`cuda/classic/runs.cuh`), and the classic agent
/// is faster where the larger of key and value has 2 or 4 bytes (both engines, one process: i32 2^28
/// 888-900 against 939 µs, f16 803-837 against 1085) and 8 (f64, 2026-11-30); with 1-byte keys and values
/// its tiles hold 4 KB of keys, and the persistent engine stays faster (u8 2^28 608 against 742-772).
const fn auto_scan_by_key(key_bytes: usize, value_bytes: usize) -> bool {
    key_bytes == 1 && value_bytes == 1
}

/// The classic tuning row of a scan by key with values of `value_bytes`: the register tile
/// (`cuda/classic/scan_by_key_tile.cuh`) for 8-byte values, the run agent's otherwise. H200, f64 keys and values,
/// inclusive sum (2026-12-02): 12.9 / 35.2 / 109.4 / 1585.1 µs at 2^20 / 2^22 / 2^24 / 2^28 against CUB's
/// 17.4 / 41.5 / 120.4 / 1685.0 in the same process; the run agent's tile took 17.1 / 46.3 / 135.7 /
/// 1900.7 in a probe (`benches/probes/scan_by_key_tile.cu`).
pub const fn scan_by_key_row(value_bytes: usize) -> Algo {
    if value_bytes == 8 { Algo::ScanByKey } else { Algo::Runs }
}

/// The classic kernel of an encoding (`mode`) of keys of `key_bytes` and its tuning row. Every encoding
/// takes the register tile whose run heads write every output where one is compiled
/// (`cuda/classic/runs_at_heads.cuh`: 4- and 8-byte keys), other key sizes the run agent; small inputs take the run
/// agent's small-grid kernel either way ([`small_grid_tiles`]). H200, runs of mean 4, at 2^22 / 2^24 /
/// 2^28 (2026-12-02): i32 RLE 16.9 / 47.0 / 530.4 µs against the run agent's 22.1 / 54.6 / 661.6 (probe
/// `benches/probes/runs_tile.cu`); i32 non-trivial runs 19.0 / 44.9 / 498.9 against 21.2 / 52.0 / 622.2,
/// f64 RLE 25.2 / 69.5 / 897.7 against 26.8 / 73.9 / 968.7, f64 non-trivial runs 24.2 / 65.9 / 861.7
/// against 23.8 / 68.4 / 879.5 (probe `benches/probes/encode_tile.cu`). reduce_by_key and unique_by_key of
/// 4-byte keys and values take that tile too: i32 reduce_by_key (runs of mean 4) 22.8 / 62.0 / 211.4 /
/// 798.5 µs at 2^22 / 2^24 / 2^26 / 2^28 against the run agent's 26.3 / 74.5 / 249.4 / 935.0 (2026-12-02,
/// `benches/probes/runs_tile.cu`).
fn encode_kernel(key_bytes: usize, mode: RunsMode) -> Result<(Kernel, Algo)> {
    let heads = match mode {
        RunsMode::NonTrivial => kernels::heads_non_trivial_kernel(key_bytes),
        _ => kernels::heads_runs_kernel(key_bytes, 0),
    };
    Ok(match heads {
        Some(kernel) => (kernel, Algo::HeadsEncode),
        None => (positional_kernel(key_bytes, 0)?, Algo::Encode),
    })
}

/// The most tiles of `row` an encoding may span to take the small-grid kernel (`runs_small_kernel`: 1024
/// resident threads per SM instead of 1536, and its own tile, the `encode_small` row of
/// `cuda/core/tuning.cuh`). The run agent (`encode`): 1024 tiles. H200, i32 runs of 4, A/B in one process
/// (2026-12-01): run_length_encode and non-trivial runs at 2^20 / 2^21 / 2^22 (256 / 512 / 1024 tiles) 4 /
/// 6 / 11 % faster on it, at 2^23 (2048 tiles) 4.5 % and at 2^24 8.5 % slower; its larger tiles for 1-
/// and 2-byte keys: 2026-12-01 too. The register tile (`heads_encode`: 6144 i32 items, so up to 1.5 M
/// items; 3072 f64 items): 256 tiles. H200, runs of mean 4, probe `benches/probes/runs_tile.cu`
/// (2026-12-02): the i32 RLE small-grid kernel took 11.4 / 13.6 / 20.0 µs at 2^20 + 1234 / 2^21 / 2^22
/// (171 / 342 / 683 tiles) against the register tile's 12.6 / 13.5 / 16.9; at 2^20 + 1234
/// (`benches/probes/encode_tile.cu`, 2026-12-02) i32 non-trivial runs 11.9 against 13.4, f64 RLE 13.8
/// against 13.2 and non-trivial runs 12.8 against 13.3 (342 tiles).
pub const fn small_grid_tiles(row: Algo) -> usize {
    match row {
        Algo::HeadsEncode => 256,
        _ => 1024,
    }
}

/// The largest inputs (in items) of the encodings of keys of `key_bytes` that take the small-grid kernel,
/// counted in the tiles of the kernel they take otherwise (the three encodings share it, so they share
/// the threshold). `None` for a key size without encodings.
pub fn encode_small_grid_items(key_bytes: usize) -> Option<usize> {
    let (_, row) = encode_kernel(key_bytes, RunsMode::Encode).ok()?;
    debug_assert!(
        [RunsMode::Ends, RunsMode::NonTrivial]
            .iter()
            .all(|&m| encode_kernel(key_bytes, m).is_ok_and(|(_, r)| r == row)),
        "the encodings of one key size take kernels of one tile"
    );
    Some(small_grid_tiles(row) * kernels::tuning(row, key_bytes).tile_items(key_bytes))
}

/// Items per tile of the persistent run-based kernels with keys of `key_bytes` and a value column of
/// `value_bytes` (0: none): the slot's bytes over the next power of two of an item's bytes.
pub fn pipe_runs_tile_items(key_bytes: usize, value_bytes: usize) -> usize {
    kernels::pipe_tuning(Algo::Runs).map_or(0, |p| p.tile_bytes() / (key_bytes + value_bytes).next_power_of_two())
}

/// The run agent's kernel for `(key bytes, value bytes or 0)`: the encodings' and unique_by_key's. Every
/// element size has one; the error only guards against a table that disagrees with `LOOKBACK_KEY_BYTES`.
fn positional_kernel(key_bytes: usize, value_bytes: usize) -> Result<Kernel> {
    kernels::runs_kernel(key_bytes, value_bytes)
        .ok_or(Error::Unsupported { operation: "run-based primitives of this key or value size", dtype: "any" })
}

/// The run agent's keyed reduction and scan kernel of `(op, key bytes, value type)`.
fn by_key_kernel(op: ScanOp, key_bytes: usize, value: Elem) -> Result<Kernel> {
    kernels::by_key_kernel(op.kind(), key_bytes, value.dtype).ok_or_else(|| unsupported(op, value))
}

fn unsupported(op: ScanOp, ty: Elem) -> Error {
    Error::Unsupported { operation: op.name(), dtype: ty.dtype.name() }
}

/// The shape of a launch on a GPU of `sms` SMs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Blocks: one per tile, or one per SM (at most one per tile) for a persistent launch.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// Dynamic shared memory per block: the persistent engine's ring, else none.
    pub shared_bytes: u32,
    /// The look-back's back-off unless the workspace overrides it.
    pub backoff: Backoff,
    /// Whether the classic agents prefetch their guessed tile (`LB_PREFETCH_GUESS`).
    pub prefetch: bool,
}

/// The shape of `launch` on a GPU of `sms` SMs; `None` for more than `u32::MAX` tiles.
pub fn grid(launch: &Launch, sms: u32) -> Option<Grid> {
    Some(match launch.shape {
        Shape::Classic(tuning) => Grid {
            blocks: u32::try_from(launch.tiles).ok()?,
            threads: tuning.block_threads,
            shared_bytes: 0,
            backoff: default_backoff(tuning, launch.tiles),
            prefetch: prefetch_guess(launch.tiles, sms as usize),
        },
        // The persistent agent never sleeps: its look-ahead polls aggregates off the critical path.
        Shape::Persistent(pipe) => Grid {
            blocks: u32::try_from(launch.tiles).ok()?.min(sms),
            threads: pipe.block_threads(),
            shared_bytes: pipe.ring_bytes() as u32,
            backoff: Backoff { first_poll_ns: 0, poll_ns: 0 },
            prefetch: false,
        },
        // No look-back: no back-off, nothing to prefetch. At least one block, which writes an empty
        // input's identity.
        Shape::Shares(tuning) => Grid {
            blocks: launch.tiles.clamp(1, MAX_SHARES) as u32,
            threads: tuning.block_threads,
            shared_bytes: 0,
            backoff: Backoff { first_poll_ns: 0, poll_ns: 0 },
            prefetch: false,
        },
    })
}

/// The most blocks of a reduction ([`Shape::Shares`]), each folding a share of the tiles. The count is
/// fixed by the item count alone, so a reduction groups its items the same way on every GPU and every run
/// (its float sums are deterministic). 2048 blocks of 256 threads are about two waves on an H100 or H200
/// (132 SMs × 8 blocks): enough for the last wave to keep HBM busy, few enough that the last block folds
/// the shares' 2048 values in about a microsecond. The workspace keeps an entry per share
/// (`Workspace`'s header).
pub const MAX_SHARES: usize = 2048;

/// Below this many tiles a grid runs in about one wave on an H200 (132 SMs × 8 blocks): predecessors
/// publish almost together, so waiting long before polling only adds latency.
const ONE_WAVE_TILES: usize = 1024;

/// The default back-off of a classic grid of `tiles` tiles: the row's delays, an eighth of them for
/// grids of fewer than [`ONE_WAVE_TILES`] (measured on the H200; see `cuda/core/tuning.cuh`).
const fn default_backoff(tuning: Tuning, tiles: usize) -> Backoff {
    if tiles < ONE_WAVE_TILES {
        Backoff { first_poll_ns: tuning.first_poll_ns / 8, poll_ns: tuning.poll_ns / 8 }
    } else {
        Backoff { first_poll_ns: tuning.first_poll_ns, poll_ns: tuning.poll_ns }
    }
}

/// Whether a classic grid of `tiles` tiles on `sms` SMs prefetches its guessed tiles: the agents prefetch
/// tile `blockIdx.x` into L2 while their tile-id atomic is in flight (`prefetch_guessed_tile` in
/// `cuda/core/tile_state.cuh`). Measured on the H200 (2026-12-01; A/B against no prefetch, same call): grids
/// of at most two tiles per SM gained 3-9 % (i32 2^16-2^20: RLE 2^16 8.0 → 7.3 µs, select_flagged 2^20
/// 11.4 → 10.8) and multi-wave grids 2-7 % (f64 scan_by_key 2^22-2^28, i32 scan_by_key 2^24-2^28), but
/// grids of 4-8 tiles per SM, which start all at once and fill the GPU, lost 2-7 % (every i32 primitive at
/// 2^22, 1024 tiles; f64 scan_by_key at 2^20, 512 tiles).
const fn prefetch_guess(tiles: usize, sms: usize) -> bool {
    tiles <= 2 * sms || tiles > 8 * sms
}
