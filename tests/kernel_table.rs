//! The generated kernel table agrees with the Rust types and operators, and every kernel it names
//! exists in the embedded fatbins.
mod common;

use lookback::half::{bf16, f16};
use lookback::{DType, Element, ScanOp};

#[test]
fn rust_element_types_match_the_c_type_list() {
    let rust = [
        i8::DTYPE,
        i16::DTYPE,
        i32::DTYPE,
        i64::DTYPE,
        u8::DTYPE,
        u16::DTYPE,
        u32::DTYPE,
        u64::DTYPE,
        f32::DTYPE,
        f64::DTYPE,
        f16::DTYPE,
        bf16::DTYPE,
    ];
    assert_eq!(rust, DType::ALL, "src/element.rs and cuda/core/types.cuh list different types");
    let names: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
    assert_eq!(names, ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "f16", "bf16"]);
}

#[test]
fn a_scan_kernel_exists_exactly_for_supported_pairs() {
    let mut count = 0;
    for dtype in DType::ALL {
        for op in ScanOp::ALL {
            assert_eq!(lookback::__private::has_scan_kernel(op, dtype), op.supports(dtype), "{op:?} {dtype:?}");
            count += op.supports(dtype) as usize;
        }
    }
    assert_eq!(count, 8 * 6 + 4 * 3);
    // Each scan pair has a classic and a persistent kernel. Plus a classic selection, a persistent
    // compaction, a persistent partition and a three-way partition kernel per type, keyed
    // reductions/scans per (Sum/Min/Max, key size, value type), and encodings per (key size, value size
    // or none), each classic and persistent, plus the encodings' small-grid kernel per key size, and a
    // persistent select_flagged kernel per item size of 4 and 8 bytes, and the register-tile scans by key
    // per (Sum/Min/Max, key size, 8-byte value type), and the register tile whose run heads write every
    // output: reduce_by_key per (Sum/Min/Max, 4-byte values: i32, u32, f32), unique_by_key of 4-byte
    // keys and values, and for 4- and 8-byte keys run-length / run-end encoding and the non-trivial runs.
    // The persistent keyed and encoding kernels: every row with the persistent-runs feature, else the
    // keyed ones of 1-byte keys with the two 1-byte value types, and no encoding (build/persistent_runs.rs).
    let all = lookback::__private::ALL_PERSISTENT_RUNS;
    let pipe_keyed = if all { 3 * 4 * DType::ALL.len() } else { 3 * 2 };
    let pipe_encodings = if all { 4 * 5 } else { 0 };
    let keyed = 3 * 4 * DType::ALL.len() + pipe_keyed + 3 * 4 * 3 + 3 * 3;
    let encodings = 4 * 5 + pipe_encodings + 4 + 1 + 2 * 2;
    let flagged = 2;
    // The reductions: one per scan pair, and arg_min and arg_max per type.
    let reductions = count + 2 * DType::ALL.len();
    assert_eq!(
        lookback::__private::ALL_KERNELS.len(),
        2 * count + 4 * DType::ALL.len() + keyed + encodings + flagged + reductions
    );
}

#[test]
fn every_kernel_in_the_table_loads() {
    let Some(stream) = common::gpu() else { return };
    assert_eq!(lookback::__private::load_all_kernels(&stream).unwrap(), lookback::__private::ALL_KERNELS.len());
}

/// A persistent kernel whose ring and static shared memory do not fit a block is not an error: the
/// launcher quietly takes the classic agent, even under `Engine::Persistent`, so its persistent tests
/// would pass without running it. Every persistent kernel must fit an H200-class block (sm_90's 227 KB);
/// on GPUs with less shared memory (sm_120) the classic agents are the intended path, so this test
/// checks only GPUs with at least that much.
#[test]
fn every_persistent_kernel_fits_shared_memory() {
    use lookback::cudarc::driver::sys::CUdevice_attribute as Attr;
    let Some(stream) = common::gpu() else { return };
    let ctx = stream.context();
    let major = ctx.attribute(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR).unwrap();
    let optin = ctx.attribute(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN).unwrap() as usize;
    const SM90_OPTIN: usize = 227 * 1024;
    if major < 9 || optin < SM90_OPTIN {
        return;
    }
    let kernels = lookback::__private::pipe_shared_memory(&stream).unwrap();
    assert!(!kernels.is_empty());
    let mut tightest = (usize::MAX, "");
    for k in &kernels {
        let used = k.static_bytes + k.ring_bytes;
        assert!(used <= optin, "{}: {} static + {} ring > {optin} bytes", k.name, k.static_bytes, k.ring_bytes);
        tightest = tightest.min((optin - used, k.name));
    }
    // Printed for the notes: how much room the fullest kernel has left.
    eprintln!("{} persistent kernels fit; least room left: {} bytes ({})", kernels.len(), tightest.0, tightest.1);
}

/// The host launches each persistent kernel with the block its tuning row describes
/// (`PipeTuning::block_threads`); the kernel was compiled for `PipeEngine::THREADS` (its
/// `__launch_bounds__`). They must agree: a wider launch fails, and a narrower one would leave the last
/// warps (the writer warps) out, and the kernel would wait for them forever.
#[test]
fn every_persistent_kernel_launches_with_its_compiled_block() {
    let Some(stream) = common::gpu() else { return };
    let kernels = lookback::__private::pipe_shared_memory(&stream).unwrap();
    assert!(!kernels.is_empty());
    for k in &kernels {
        assert!(k.block_threads > 0, "{}: no tuning row", k.name);
        assert_eq!(
            k.block_threads, k.max_threads,
            "{}: launched with {} threads, compiled for {}",
            k.name, k.block_threads, k.max_threads
        );
    }
}

/// The encodings of every key size have one small-grid threshold, counted in the tiles of the kernel
/// they take above it: 256 register tiles (`cuda/classic/runs_at_heads.cuh`) for 4- and 8-byte keys, 1024 run-agent
/// tiles otherwise (`small_grid_tiles` in src/plan.rs). Host only: it reads the generated tables (and, in
/// debug builds, checks that all three encodings of a size take kernels of one tile).
#[test]
fn encodings_share_one_small_grid_threshold_per_key_size() {
    for key_bytes in [1, 2, 4, 8] {
        let threshold = lookback::__private::encode_small_grid_items(key_bytes).expect("encodings of every key size");
        let want = match lookback::__private::heads_tile_items(key_bytes, 0) {
            Some(tile) => 256 * tile,
            None => 1024 * lookback::__private::encode_tile_items(key_bytes),
        };
        assert_eq!(threshold, want, "{key_bytes}-byte keys");
    }
    assert!(
        lookback::__private::heads_tile_items(4, 0).is_some() && lookback::__private::heads_tile_items(8, 0).is_some()
    );
    assert_eq!(lookback::__private::encode_small_grid_items(3), None);
}
