//! The embedded kernels: the generated name table, a per-context module cache, and typed lookup.
//! This module and `launch` are the only places that touch CUDA modules.
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A compiled kernel: its symbol and the image that holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Kernel {
    /// The symbol.
    pub name: &'static str,
    /// Index of its fatbin in `IMAGES`, or `RUNTIME_IMAGES` plus the id of a cubin compiled at run time
    /// (`crate::rtc`).
    pub image: usize,
}

/// Where the ids of run-time compiled images start in [`Kernel::image`] (far above any embedded fatbin).
pub const RUNTIME_IMAGES: usize = 1 << 30;

impl Kernel {
    /// Kernel `name` of the run-time compiled image `id` (`crate::rtc`). Every such image holds the same
    /// names, so a kernel is known by (image, name).
    pub(crate) const fn runtime(name: &'static str, id: usize) -> Self {
        Kernel { name, image: RUNTIME_IMAGES + id }
    }
}

/// An algorithm family, as keyed in `cuda/core/tuning.cuh`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// The scans.
    Scan,
    /// The selections (compaction, count, mask, partitions, three-way partition).
    Select,
    /// The partitions on the persistent engine (compaction's Work without writer warps).
    Partition,
    /// select_flagged on the persistent engine (its ring slots hold the flags too).
    Flagged,
    /// The run-based kernels with a value column (by key, unique_by_key).
    Runs,
    /// The encodings: run-based kernels without a value column.
    Encode,
    /// The encodings' small-grid kernel (`runs_small_kernel`).
    EncodeSmall,
    /// The scans by key of 8-byte values (`scan_by_key_kernel`: `cuda/classic/scan_by_key_tile.cuh`).
    ScanByKey,
    /// reduce_by_key and unique_by_key on the register tile whose run heads write every output
    /// (`heads_kernel`, `heads_runs_kernel` with values: `cuda/classic/runs_at_heads.cuh`).
    Heads,
    /// Run-length and run-end encoding (`heads_runs_kernel` without values) and the non-trivial runs
    /// (`heads_non_trivial_kernel`) on that tile.
    HeadsEncode,
    /// The reductions of built-in operators and arg_min / arg_max (`reduce_kernel`, `arg_min_kernel`,
    /// `arg_max_kernel`: `cuda/classic/reduce.cuh`), whose rows give a block's tile per step of its share.
    Reduce,
}

/// One row of `cuda/core/tuning.cuh`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    /// Threads per block.
    pub block_threads: u32,
    /// 16-byte chunks of a tile per thread.
    pub chunks_per_thread: u32,
    /// Default sleep before the first poll of a predecessor's status.
    pub first_poll_ns: u32,
    /// Default sleep between polls.
    pub poll_ns: u32,
}

impl Tuning {
    /// Items in one tile of an element type of `bytes` bytes (a chunk is 16 bytes).
    pub const fn tile_items(self, bytes: usize) -> usize {
        self.block_threads as usize * self.chunks_per_thread as usize * (16 / bytes)
    }
}

/// One row of `LOOKBACK_PIPE_TUNING` in `cuda/core/tuning.cuh`: the persistent, warp-specialised agent
/// (`cuda/persistent/scan_work.cuh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipeTuning {
    /// Warps that reduce and scan tiles.
    pub compute_warps: u32,
    /// 16-byte chunks of a tile per compute lane.
    pub chunks_per_lane: u32,
    /// Tiles in the shared-memory ring.
    pub stages: u32,
    /// Calls of fewer tiles use the classic agent.
    pub min_tiles: u32,
    /// Warps that write tiles out while the compute warps reduce later ones (0: the compute warps write).
    pub writer_warps: u32,
    /// Bytes of a side stream after each tile in its ring slot (`with_side_stream`), 0 for none.
    pub side_bytes_per_tile: u32,
}

impl PipeTuning {
    /// Threads per block: the compute warps, a load warp, a look-ahead warp, a publisher warp and the
    /// writer warps (`PipeEngine::THREADS` in `cuda/persistent/engine.cuh`).
    pub const fn block_threads(self) -> u32 {
        (self.compute_warps + 3 + self.writer_warps) * 32
    }
    /// Bytes of one tile (16-byte chunks).
    pub const fn tile_bytes(self) -> usize {
        self.compute_warps as usize * 32 * self.chunks_per_lane as usize * 16
    }
    /// Dynamic shared memory of one block: the ring of `stages` tiles and their side streams.
    pub const fn ring_bytes(self) -> usize {
        self.stages as usize * (self.tile_bytes() + self.side_bytes_per_tile as usize)
    }
    /// This shape with a side stream of `side_bytes` per item of `item_bytes` after each tile, rounded up
    /// to 16 bytes (`SLOT_BYTES` in `cuda/persistent/engine.cuh`).
    pub const fn with_side_stream(self, item_bytes: usize, side_bytes: usize) -> Self {
        let bytes = (self.tile_bytes() / item_bytes * side_bytes).div_ceil(16) * 16;
        Self { side_bytes_per_tile: bytes as u32, ..self }
    }
}

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// Whether this build carries GPU kernels (false when it was built without nvcc).
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::{Error, ScanOp};
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// let input = stream.clone_htod(&[1i32, 2, 3])?;
/// match lookback::inclusive_scan(&input, ScanOp::Sum) {
///     Ok(sums) => {
///         assert!(lookback::kernels_built());
///         assert_eq!(stream.clone_dtoh(&sums)?, [1, 3, 6]);
///     }
///     Err(Error::KernelsNotBuilt) => assert!(!lookback::kernels_built()),
///     Err(e) => return Err(e),
/// }
/// # Ok(()) }
/// ```
pub fn kernels_built() -> bool {
    IMAGES.is_some()
}

type ModuleCache = HashMap<(usize, usize), Arc<CudaModule>>;
type FunctionCache = HashMap<(usize, Kernel), CudaFunction>;

/// Loads (once per context) the module holding `kernel` and returns the function.
///
/// The cache keeps every loaded module — and through it its context — alive for the rest of the process,
/// as CUB's per-device caches do; this is also what keeps the raw context handle used as the key valid.
pub(crate) fn function(ctx: &Arc<CudaContext>, kernel: Kernel) -> Result<CudaFunction> {
    static MODULES: OnceLock<Mutex<ModuleCache>> = OnceLock::new();
    static FUNCTIONS: OnceLock<Mutex<FunctionCache>> = OnceLock::new();
    let ctx_key = ctx.cu_ctx() as usize;
    let functions = FUNCTIONS.get_or_init(Default::default);
    if let Some(f) = lock(functions).get(&(ctx_key, kernel)) {
        return Ok(f.clone());
    }
    let module = {
        let mut modules = lock(MODULES.get_or_init(Default::default));
        match modules.get(&(ctx_key, kernel.image)) {
            Some(m) => m.clone(),
            None => {
                let m = ctx.load_module(Ptx::from_binary(image_bytes(kernel.image)?))?;
                modules.insert((ctx_key, kernel.image), m.clone());
                m
            }
        }
    };
    let f = module.load_function(kernel.name)?;
    lock(functions).insert((ctx_key, kernel), f.clone());
    Ok(f)
}

/// The bytes of image `image`: an embedded fatbin, or a cubin compiled at run time.
fn image_bytes(image: usize) -> Result<Vec<u8>> {
    if image >= RUNTIME_IMAGES {
        let cubin = crate::rtc::cubin(image - RUNTIME_IMAGES);
        return Ok(cubin.expect("runtime image ids come from the registry").to_vec());
    }
    let images = IMAGES.as_ref().ok_or(Error::KernelsNotBuilt)?;
    Ok(images[image].to_vec())
}

/// A poisoned cache only means another thread panicked mid-insert; the map itself is still valid.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

const SCAN_OPS: [OpKind; 6] = [OpKind::Sum, OpKind::Min, OpKind::Max, OpKind::And, OpKind::Or, OpKind::Xor];
const KEYED_OPS: [OpKind; 3] = [OpKind::Sum, OpKind::Min, OpKind::Max];
const KEY_BYTES: [usize; 4] = [1, 2, 4, 8];

/// The shape the persistent select_flagged kernel of `item_bytes` items launches with: the `flagged` row
/// with one flag byte per item after each tile.
pub(crate) fn pipe_flagged_tuning(item_bytes: usize) -> Option<PipeTuning> {
    Some(pipe_tuning(Algo::Flagged)?.with_side_stream(item_bytes, 1))
}

/// Every persistent (sm_90+) kernel the typed lookups can return, with the shape it launches with.
pub(crate) fn pipe_kernels() -> Vec<(Kernel, Option<PipeTuning>)> {
    let row = |k: Kernel, algo| (k, pipe_tuning(algo));
    let mut kernels = Vec::new();
    // Item sizes are the key sizes' list (1, 2, 4, 8 bytes); select_flagged has kernels for some of them.
    for bytes in KEY_BYTES {
        kernels.extend(pipe_flagged_kernel(bytes).map(|k| (k, pipe_flagged_tuning(bytes))));
    }
    for ty in DType::ALL {
        kernels.extend(SCAN_OPS.iter().filter_map(|&op| pipe_scan_kernel(op, ty)).map(|k| row(k, Algo::Scan)));
        kernels.push(row(pipe_select_kernel(ty), Algo::Select));
        kernels.push(row(pipe_partition_kernel(ty), Algo::Partition));
        for key_bytes in KEY_BYTES {
            kernels.extend(
                KEYED_OPS.iter().filter_map(|&op| pipe_by_key_kernel(op, key_bytes, ty)).map(|k| row(k, Algo::Runs)),
            );
        }
    }
    for key_bytes in KEY_BYTES {
        for value_bytes in [0, 1, 2, 4, 8] {
            kernels.extend(pipe_runs_kernel(key_bytes, value_bytes).map(|k| row(k, Algo::Runs)));
        }
    }
    kernels
}

/// Loads every kernel the typed lookups can return; returns how many (the test compares it with the
/// name table, so a kernel missing from the lookups or from the fatbins fails it).
pub(crate) fn load_all(ctx: &Arc<CudaContext>) -> Result<usize> {
    let mut kernels: Vec<Kernel> = pipe_kernels().into_iter().map(|(k, _)| k).collect();
    for ty in DType::ALL {
        kernels.extend(SCAN_OPS.iter().filter_map(|&op| scan_kernel(op, ty)));
        kernels.extend(SCAN_OPS.iter().filter_map(|&op| reduce_kernel(op, ty)));
        kernels.extend([arg_min_kernel(ty), arg_max_kernel(ty)]);
        kernels.push(select_kernel(ty));
        kernels.push(partition3_kernel(ty));
        for key_bytes in KEY_BYTES {
            kernels.extend(KEYED_OPS.iter().filter_map(|&op| by_key_kernel(op, key_bytes, ty)));
            kernels.extend(KEYED_OPS.iter().filter_map(|&op| scan_by_key_kernel(op, key_bytes, ty)));
            kernels.extend(KEYED_OPS.iter().filter_map(|&op| heads_kernel(op, key_bytes, ty)));
        }
    }
    for key_bytes in KEY_BYTES {
        for value_bytes in [0, 1, 2, 4, 8] {
            kernels.extend(runs_kernel(key_bytes, value_bytes));
            kernels.extend(heads_runs_kernel(key_bytes, value_bytes));
        }
        kernels.extend(runs_small_kernel(key_bytes));
        kernels.extend(heads_non_trivial_kernel(key_bytes));
    }
    for &k in &kernels {
        function(ctx, k)?;
    }
    Ok(kernels.len())
}

/// Shared memory of one block of a persistent kernel, as the launcher sees it: its static shared memory
/// (the driver's answer) and its ring (the tuning row's), in bytes.
#[derive(Clone, Copy, Debug)]
pub struct PipeSharedMemory {
    /// The kernel's symbol.
    pub name: &'static str,
    /// Static shared memory (engine state, staging buffers).
    pub static_bytes: usize,
    /// Dynamic shared memory: the ring of tiles.
    pub ring_bytes: usize,
    /// Threads per block the host launches it with (`PipeTuning::block_threads`).
    pub block_threads: u32,
    /// The most threads per block the kernel takes (its `__launch_bounds__`: `PipeEngine::THREADS`).
    pub max_threads: u32,
}

/// [`PipeSharedMemory`] of every persistent kernel, loaded on `ctx`.
pub(crate) fn pipe_shared_memory(ctx: &Arc<CudaContext>) -> Result<Vec<PipeSharedMemory>> {
    pipe_kernels()
        .into_iter()
        .map(|(k, pipe)| {
            let func = function(ctx, k)?;
            let static_bytes =
                func.get_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
            let max_threads =
                func.get_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?;
            Ok(PipeSharedMemory {
                name: k.name,
                static_bytes: static_bytes.max(0) as usize,
                ring_bytes: pipe.map_or(0, PipeTuning::ring_bytes),
                block_threads: pipe.map_or(0, PipeTuning::block_threads),
                max_threads: max_threads.max(0) as u32,
            })
        })
        .collect()
}
