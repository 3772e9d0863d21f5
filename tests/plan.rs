//! Dispatch, pinned on the host (no GPU needed): for each primitive, which kernel it launches, with which
//! tuning row and tile, on which engine, and where the thresholds between them lie (`src/plan.rs`). A
//! change of any choice fails here first; a deliberate one updates the pin and says why in the log.
use lookback::__private::plan::{
    Algo, Buffers, Call, Elem, Launch, MAX_SHARES, Mode, Plan, Primitive, RunsMode, Shape, encode_small_grid_items,
    grid, plan, small_grid_tiles,
};
use lookback::half::{bf16, f16};
use lookback::{DType, Engine, ScanOp};

/// Buffers that are all 16-byte aligned.
const ALIGNED: Buffers = Buffers { input: 0x10000, output: 0x20000, values: 0x30000, flags: 0x40000 };
/// Key sizes the run-based primitives are compiled for.
const KEY_BYTES: [usize; 4] = [1, 2, 4, 8];

/// Every element type.
fn elems() -> [Elem; 12] {
    [
        Elem::of::<i8>(),
        Elem::of::<i16>(),
        Elem::of::<i32>(),
        Elem::of::<i64>(),
        Elem::of::<u8>(),
        Elem::of::<u16>(),
        Elem::of::<u32>(),
        Elem::of::<u64>(),
        Elem::of::<f32>(),
        Elem::of::<f64>(),
        Elem::of::<f16>(),
        Elem::of::<bf16>(),
    ]
}

/// A call on an sm_90 GPU with aligned buffers.
fn call(primitive: Primitive, n: usize, engine: Engine) -> Call {
    Call { primitive, n, engine, sm90: true, buffers: ALIGNED, small_grids: true }
}

fn planned(call: &Call) -> Plan {
    plan(call).unwrap_or_else(|e| panic!("{call:?}: {e}"))
}

/// The launch taken where the persistent kernel fits the GPU's shared memory (every one does on an
/// H200: `tests/kernel_table.rs`).
fn taken(call: &Call) -> Launch {
    let p = planned(call);
    p.persistent.unwrap_or(p.classic)
}

fn name(launch: &Launch) -> &'static str {
    launch.kernel.name
}

/// Tiles of `n` items of `bytes` under `launch`'s shape.
fn tiles(launch: &Launch, n: usize, bytes: usize) -> usize {
    n.div_ceil(launch.tile_items(bytes))
}

fn scan(op: ScanOp, ty: Elem) -> Primitive {
    Primitive::Scan { op, ty }
}
fn select(ty: Elem, mode: Mode) -> Primitive {
    Primitive::Select { ty, mode, flagged: false }
}
fn flagged(ty: Elem) -> Primitive {
    Primitive::Select { ty, mode: Mode::Compact, flagged: true }
}

/// Every primitive that has a persistent kernel, with its item size for the tile count (a run-based
/// slot holds a key and a value: the next power of two of their sizes).
/// Whether this build compiles the persistent kernel of `primitive`: the run-based ones only with the
/// `persistent-runs` feature, but for those Engine::Auto takes, the keyed ones of 1-byte keys and values
/// (build/persistent_runs.rs). Without its kernel, a call that forces Engine::Persistent takes the
/// classic one.
fn built(primitive: Primitive) -> bool {
    lookback::__private::ALL_PERSISTENT_RUNS
        || match primitive {
            Primitive::ReduceByKey { key_bytes, value, .. } | Primitive::ScanByKey { key_bytes, value, .. } => {
                key_bytes == 1 && value.bytes == 1
            }
            Primitive::UniqueByKey { .. } | Primitive::Encode { .. } => false,
            _ => true,
        }
}

/// Checks the launch Engine::Persistent takes for `primitive`: `kernel` where the build has it, else the
/// classic engine's launch.
fn check_forced_persistent(primitive: Primitive, n: usize, kernel: &str) {
    let pipe = taken(&call(primitive, n, Engine::Persistent));
    if built(primitive) {
        assert_eq!(name(&pipe), kernel);
    } else {
        assert_eq!(pipe, planned(&call(primitive, n, Engine::Classic)).classic, "{primitive:?}");
    }
}

/// The primitives with a persistent kernel in this build, with the bytes of one item of their tiles.
fn persistent_primitives() -> Vec<(Primitive, usize)> {
    let mut all = Vec::new();
    for ty in elems() {
        all.push((scan(ScanOp::Sum, ty), ty.bytes));
        for mode in [Mode::Compact, Mode::Count, Mode::PartitionReverse, Mode::PartitionSplit, Mode::PartitionStable] {
            all.push((select(ty, mode), ty.bytes));
        }
        for key_bytes in KEY_BYTES {
            let slot = (key_bytes + ty.bytes).next_power_of_two();
            all.push((Primitive::ReduceByKey { op: ScanOp::Max, key_bytes, value: ty }, slot));
            all.push((Primitive::UniqueByKey { key_bytes, value: ty }, slot));
            all.push((Primitive::ScanByKey { op: ScanOp::Sum, key_bytes, value: ty }, slot));
        }
    }
    for bytes in [4, 8] {
        all.push((flagged(Elem { dtype: DType::U32, bytes }), bytes));
    }
    for key_bytes in KEY_BYTES {
        for mode in [RunsMode::Encode, RunsMode::Ends, RunsMode::NonTrivial] {
            all.push((Primitive::Encode { mode, key_bytes }, key_bytes.next_power_of_two()));
        }
    }
    all.retain(|(p, _)| built(*p));
    all
}

/// An operator's name in kernel names.
fn op_kernel_name(op: ScanOp) -> &'static str {
    match op {
        ScanOp::BitAnd => "and",
        ScanOp::BitOr => "or",
        ScanOp::BitXor => "xor",
        _ => op.name(),
    }
}

#[test]
fn scans_take_the_scan_kernels_and_rows() {
    for ty in elems() {
        for op in ScanOp::ALL.into_iter().filter(|op| op.supports(ty.dtype)) {
            let op_name = op_kernel_name(op);
            let p = planned(&call(scan(op, ty), 1 << 28, Engine::Auto));
            assert_eq!(name(&p.classic), format!("lookback_scan_{op_name}_{}", ty.dtype.name()));
            assert_eq!(p.classic.row, Algo::Scan);
            let pipe = p.persistent.expect("2^28 items are above the scan row's min_tiles");
            assert_eq!(name(&pipe), format!("lookback_pipe_scan_{op_name}_{}", ty.dtype.name()));
            assert_eq!(pipe.row, Algo::Scan);
        }
    }
    // No classic kernel, no plan (the callers reject the operator first).
    assert!(plan(&call(scan(ScanOp::BitAnd, Elem::of::<f32>()), 10, Engine::Auto)).is_err());
}

/// The reductions of built-in operators and arg_min / arg_max take the reduction kernels on the `reduce`
/// row, never the persistent engine, with at most MAX_SHARES blocks (one for an input of one tile).
#[test]
fn reductions_take_the_shares() {
    for ty in elems() {
        let t = ty.dtype.name();
        let tile =
            planned(&call(Primitive::ArgReduce { max: false, ty }, 1, Engine::Auto)).classic.tile_items(ty.bytes);
        assert_eq!(tile * ty.bytes, 16384, "{t}: 16 KB tiles");
        let mut primitives: Vec<(Primitive, String)> = ScanOp::ALL
            .into_iter()
            .filter(|op| op.supports(ty.dtype))
            .map(|op| (Primitive::Reduce { op, ty }, format!("lookback_reduce_{}_{t}", op_kernel_name(op))))
            .collect();
        primitives.push((Primitive::ArgReduce { max: false, ty }, format!("lookback_arg_min_{t}")));
        primitives.push((Primitive::ArgReduce { max: true, ty }, format!("lookback_arg_max_{t}")));
        for (primitive, kernel) in primitives {
            for engine in [Engine::Auto, Engine::Classic, Engine::Persistent] {
                for (n, blocks) in [(1, 1), (tile, 1), (tile + 1, 2), (1 << 28, MAX_SHARES)] {
                    let p = planned(&call(primitive, n, engine));
                    assert_eq!(p.persistent, None, "{kernel}: no persistent reduction");
                    assert_eq!((name(&p.classic), p.classic.row), (kernel.as_str(), Algo::Reduce));
                    assert_eq!(p.classic.tiles, n.div_ceil(tile));
                    let g = grid(&p.classic, 132).expect("a reduction always has a grid");
                    assert_eq!(g.blocks as usize, blocks, "{kernel} n={n}");
                }
            }
        }
    }
}

#[test]
fn selections_take_their_rows() {
    for ty in elems() {
        let t = ty.dtype.name();
        let at = |primitive| planned(&call(primitive, 1 << 28, Engine::Auto));
        for (mode, row, kernel) in [
            (Mode::Compact, Some(Algo::Select), format!("lookback_pipe_select_{t}")),
            (Mode::Count, Some(Algo::Select), format!("lookback_pipe_select_{t}")),
            (Mode::PartitionReverse, Some(Algo::Partition), format!("lookback_pipe_partition_{t}")),
            (Mode::PartitionSplit, Some(Algo::Partition), format!("lookback_pipe_partition_{t}")),
            (Mode::PartitionStable, Some(Algo::Partition), format!("lookback_pipe_partition_{t}")),
            (Mode::Mask, None, String::new()),
        ] {
            let p = at(select(ty, mode));
            assert_eq!((name(&p.classic), p.classic.row), (format!("lookback_select_{t}").as_str(), Algo::Select));
            assert_eq!(p.persistent.map(|l| l.row), row, "{mode:?} {t}");
            if let Some(pipe) = p.persistent {
                assert_eq!(name(&pipe), kernel);
            }
        }
        // select_flagged: the classic selection kernel; the persistent one for 4- and 8-byte items only.
        let p = at(flagged(ty));
        assert_eq!(name(&p.classic), format!("lookback_select_{t}"));
        match ty.bytes {
            4 | 8 => {
                let pipe = p.persistent.expect("persistent select_flagged of 4- and 8-byte items");
                assert_eq!(
                    (name(&pipe), pipe.row),
                    (format!("lookback_pipe_flagged_b{}", ty.bytes).as_str(), Algo::Flagged)
                );
                // Its ring slots carry a flag byte per item after each tile.
                let Shape::Persistent(shape) = pipe.shape else { unreachable!() };
                assert_eq!(shape.side_bytes_per_tile as usize, (shape.tile_bytes() / ty.bytes).div_ceil(16) * 16);
            }
            _ => assert_eq!(p.persistent, None, "select_flagged of {t}"),
        }
        // Flags select nothing persistent in the other modes.
        for mode in [Mode::Count, Mode::PartitionReverse, Mode::PartitionStable, Mode::Mask] {
            let p = at(Primitive::Select { ty, mode, flagged: true });
            assert_eq!(p.persistent, None);
        }
        // The three-way partition: classic only, on the selection row.
        let p = at(Primitive::Partition3 { ty });
        assert_eq!(
            (name(&p.classic), p.classic.row, p.persistent),
            (format!("lookback_partition3_{t}").as_str(), Algo::Select, None)
        );
    }
}

#[test]
fn reduce_by_key_takes_the_heads_tile_for_4_byte_keys_and_values() {
    for key_bytes in KEY_BYTES {
        for value in elems() {
            for (op, op_name) in [(ScanOp::Sum, "sum"), (ScanOp::Min, "min"), (ScanOp::Max, "max")] {
                let p = planned(&call(Primitive::ReduceByKey { op, key_bytes, value }, 1 << 20, Engine::Auto));
                let t = value.dtype.name();
                let (kernel, row) = if key_bytes == 4 && value.bytes == 4 {
                    (format!("lookback_heads_{op_name}_k4_{t}"), Algo::Heads)
                } else {
                    (format!("lookback_by_key_{op_name}_k{key_bytes}_{t}"), Algo::Runs)
                };
                assert_eq!((name(&p.classic), p.classic.row), (kernel.as_str(), row));
                let tile = expected_tile(&p.classic, key_bytes.max(value.bytes));
                assert_eq!(p.classic.tiles, (1usize << 20).div_ceil(tile));
                // Engine::Auto never takes the persistent kernel; Engine::Persistent does.
                assert_eq!(p.persistent, None);
                let primitive = Primitive::ReduceByKey { op, key_bytes, value };
                check_forced_persistent(
                    primitive,
                    1 << 20,
                    &format!("lookback_pipe_by_key_{op_name}_k{key_bytes}_{t}"),
                );
            }
        }
    }
}

#[test]
fn unique_by_key_takes_the_heads_tile_for_4_byte_keys_and_values() {
    for key_bytes in KEY_BYTES {
        for value in elems() {
            let primitive = Primitive::UniqueByKey { key_bytes, value };
            let p = planned(&call(primitive, 1 << 20, Engine::Auto));
            let v = value.bytes;
            let (kernel, row) = if key_bytes == 4 && v == 4 {
                ("lookback_heads_runs_k4_v4".to_string(), Algo::Heads)
            } else {
                (format!("lookback_runs_k{key_bytes}_v{v}"), Algo::Runs)
            };
            assert_eq!((name(&p.classic), p.classic.row, p.persistent), (kernel.as_str(), row, None));
            check_forced_persistent(primitive, 1 << 20, &format!("lookback_pipe_runs_k{key_bytes}_v{v}"));
        }
    }
}

#[test]
fn scans_by_key_take_the_register_tile_for_8_byte_values() {
    for key_bytes in KEY_BYTES {
        for value in elems() {
            for (op, op_name) in [(ScanOp::Sum, "sum"), (ScanOp::Min, "min"), (ScanOp::Max, "max")] {
                let primitive = Primitive::ScanByKey { op, key_bytes, value };
                let p = planned(&call(primitive, 1 << 20, Engine::Classic));
                let t = value.dtype.name();
                let (kernel, row) = if value.bytes == 8 {
                    (format!("lookback_scan_by_key_{op_name}_k{key_bytes}_{t}"), Algo::ScanByKey)
                } else {
                    (format!("lookback_by_key_{op_name}_k{key_bytes}_{t}"), Algo::Runs)
                };
                assert_eq!((name(&p.classic), p.classic.row, p.persistent), (kernel.as_str(), row, None));
                // The persistent kernel is reduce_by_key's.
                check_forced_persistent(
                    primitive,
                    1 << 20,
                    &format!("lookback_pipe_by_key_{op_name}_k{key_bytes}_{t}"),
                );
            }
        }
    }
}

#[test]
fn encodings_take_the_heads_tile_for_4_and_8_byte_keys() {
    for key_bytes in KEY_BYTES {
        for mode in [RunsMode::Encode, RunsMode::Ends, RunsMode::NonTrivial] {
            let primitive = Primitive::Encode { mode, key_bytes };
            // Above the small-grid threshold.
            let p = planned(&call(primitive, 1 << 24, Engine::Auto));
            let (kernel, row) = match (key_bytes, mode) {
                (4 | 8, RunsMode::NonTrivial) => {
                    (format!("lookback_heads_non_trivial_k{key_bytes}"), Algo::HeadsEncode)
                }
                (4 | 8, _) => (format!("lookback_heads_runs_k{key_bytes}_v0"), Algo::HeadsEncode),
                _ => (format!("lookback_runs_k{key_bytes}_v0"), Algo::Encode),
            };
            assert_eq!((name(&p.classic), p.classic.row, p.persistent), (kernel.as_str(), row, None), "{mode:?}");
            check_forced_persistent(primitive, 1 << 24, &format!("lookback_pipe_runs_k{key_bytes}_v0"));
            if built(primitive) {
                assert_eq!(taken(&call(primitive, 1 << 24, Engine::Persistent)).row, Algo::Runs);
            }
        }
    }
}

/// The items per tile of a classic launch, from its row (16-byte chunks).
fn expected_tile(launch: &Launch, bytes: usize) -> usize {
    let Shape::Classic(t) = launch.shape else { panic!("not classic") };
    t.block_threads as usize * t.chunks_per_thread as usize * (16 / bytes)
}

#[test]
fn encodings_take_the_small_grid_kernel_up_to_their_threshold() {
    // Counted in tiles of the kernel taken above it: 256 register tiles, 1024 run-agent tiles.
    assert_eq!((small_grid_tiles(Algo::HeadsEncode), small_grid_tiles(Algo::Encode)), (256, 1024));
    for key_bytes in KEY_BYTES {
        let threshold = encode_small_grid_items(key_bytes).expect("encodings of every key size");
        for mode in [RunsMode::Encode, RunsMode::Ends, RunsMode::NonTrivial] {
            let at = |n, small_grids| {
                let mut c = call(Primitive::Encode { mode, key_bytes }, n, Engine::Auto);
                c.small_grids = small_grids;
                planned(&c).classic
            };
            let big = at(threshold + 1, true);
            assert_ne!(big.row, Algo::EncodeSmall);
            assert_eq!(threshold, small_grid_tiles(big.row) * big.tile_items(key_bytes));
            for n in [1, threshold / 2, threshold] {
                let small = at(n, true);
                assert_eq!(
                    (name(&small), small.row),
                    (format!("lookback_runs_small_k{key_bytes}").as_str(), Algo::EncodeSmall)
                );
                assert_eq!(small.tiles, n.div_ceil(expected_tile(&small, key_bytes)));
                // Tests turn the small grids off to reach the other kernel at small sizes.
                assert_eq!(at(n, false).kernel, big.kernel);
            }
        }
    }
    // The other run-based primitives have no small-grid kernel.
    for primitive in [
        Primitive::UniqueByKey { key_bytes: 4, value: Elem::of::<i32>() },
        Primitive::ReduceByKey { op: ScanOp::Sum, key_bytes: 1, value: Elem::of::<u8>() },
        Primitive::ScanByKey { op: ScanOp::Sum, key_bytes: 8, value: Elem::of::<f64>() },
    ] {
        assert_ne!(planned(&call(primitive, 100, Engine::Auto)).classic.row, Algo::EncodeSmall);
    }
    assert_eq!(encode_small_grid_items(3), None);
}

#[test]
fn classic_tiles_follow_the_rows() {
    for ty in elems() {
        for primitive in [scan(ScanOp::Max, ty), select(ty, Mode::Compact), Primitive::Partition3 { ty }] {
            for n in [1, 1000, 1 << 20, (1 << 20) + 1] {
                let p = planned(&call(primitive, n, Engine::Classic));
                assert_eq!(p.classic.tiles, n.div_ceil(expected_tile(&p.classic, ty.bytes)));
            }
        }
    }
}

#[test]
fn auto_switches_at_the_rows_min_tiles() {
    for (primitive, bytes) in persistent_primitives() {
        let pipe = taken(&call(primitive, 1, Engine::Persistent));
        let Shape::Persistent(row) = pipe.shape else { panic!("{primitive:?}: no persistent launch") };
        let auto_takes = |n| planned(&call(primitive, n, Engine::Auto)).persistent.is_some();
        match primitive {
            // The run-based primitives: only the scans by key of 1-byte keys and values, counted on the
            // keys alone.
            Primitive::ScanByKey { key_bytes: 1, value, .. } if value.bytes == 1 => {
                let first = (row.min_tiles as usize - 1) * row.tile_bytes() + 1;
                assert!(!auto_takes(first - 1) && auto_takes(first), "{primitive:?}");
            }
            Primitive::ReduceByKey { .. }
            | Primitive::UniqueByKey { .. }
            | Primitive::ScanByKey { .. }
            | Primitive::Encode { .. } => {
                assert!(!auto_takes(1 << 30), "{primitive:?}");
            }
            // Everything else from the row's min_tiles of the data.
            _ => {
                let items = row.tile_bytes() / bytes;
                let first = (row.min_tiles as usize - 1) * items + 1;
                assert!(!auto_takes(first - 1) && auto_takes(first), "{primitive:?}");
                assert_eq!(
                    planned(&call(primitive, first, Engine::Auto)).persistent.unwrap().tiles,
                    row.min_tiles as usize
                );
            }
        }
    }
}

#[test]
fn todays_auto_thresholds() {
    // Scans from 32 MiB of data (i32: 2^23 items, in 1024 tiles of 8192), compaction and the
    // partitions from 819 tiles of 40 KiB (just under 32 MiB), select_flagged from 1024 tiles of 32 KiB,
    // the scans by key of u8 keys and values from 1024 tiles of keys (2^25 keys).
    let first_persistent = |primitive| {
        let auto = |n| planned(&call(primitive, n, Engine::Auto)).persistent.is_some();
        let (mut lo, mut hi) = (1usize, 1 << 40);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if auto(mid) { hi = mid } else { lo = mid + 1 }
        }
        lo
    };
    let i32_ = Elem::of::<i32>();
    assert_eq!(first_persistent(scan(ScanOp::Sum, i32_)), 1023 * 8192 + 1);
    assert_eq!(first_persistent(select(i32_, Mode::Compact)), 818 * 10240 + 1);
    assert_eq!(first_persistent(select(i32_, Mode::PartitionStable)), 818 * 10240 + 1);
    assert_eq!(first_persistent(flagged(i32_)), 1023 * 8192 + 1);
    let u8_ = Elem::of::<u8>();
    assert_eq!(first_persistent(Primitive::ScanByKey { op: ScanOp::Sum, key_bytes: 1, value: u8_ }), 1023 * 32768 + 1);
}

#[test]
fn persistent_tiles_count_the_slot() {
    for (primitive, bytes) in persistent_primitives() {
        for n in [1, 12345, 1 << 24] {
            let pipe = taken(&call(primitive, n, Engine::Persistent));
            assert!(pipe.is_persistent(), "{primitive:?}");
            assert_eq!(pipe.tiles, tiles(&pipe, n, bytes), "{primitive:?} {n}");
        }
    }
}

#[test]
fn classic_engine_and_older_gpus_never_take_the_persistent_kernels() {
    for (primitive, _) in persistent_primitives() {
        for n in [1, 1 << 30] {
            assert_eq!(planned(&call(primitive, n, Engine::Classic)).persistent, None, "{primitive:?}");
            for engine in [Engine::Auto, Engine::Persistent] {
                let mut c = call(primitive, n, engine);
                c.sm90 = false;
                assert_eq!(planned(&c).persistent, None, "{primitive:?}");
            }
        }
    }
}

#[test]
fn unaligned_buffers_take_the_classic_kernels() {
    // Which buffers each primitive's persistent kernel bulk-copies (or stores with vector stores).
    let needs = |primitive: Primitive| -> [bool; 4] {
        // [input, output, values, flags]
        match primitive {
            Primitive::Scan { .. } | Primitive::UserScan { .. } => [true, true, false, false],
            // A user reduction writes one value, wherever it is.
            Primitive::UserReduce { .. } => [true, false, false, false],
            // No persistent kernel.
            Primitive::Reduce { .. }
            | Primitive::ArgReduce { .. }
            | Primitive::Partition3 { .. }
            | Primitive::Table { .. }
            | Primitive::UserByKey { .. } => unreachable!(),
            Primitive::Select { flagged, .. } => [true, false, false, flagged],
            Primitive::Encode { .. } => [true, false, false, false],
            Primitive::ReduceByKey { .. } | Primitive::UniqueByKey { .. } => [true, false, true, false],
            Primitive::ScanByKey { .. } => [true, true, true, false],
        }
    };
    for (primitive, _) in persistent_primitives() {
        for (i, needed) in needs(primitive).into_iter().enumerate() {
            for offset in [1, 4, 8] {
                let mut c = call(primitive, 1 << 20, Engine::Persistent);
                let field = [&mut c.buffers.input, &mut c.buffers.output, &mut c.buffers.values, &mut c.buffers.flags];
                *field.into_iter().nth(i).unwrap() += offset;
                assert_eq!(planned(&c).persistent.is_some(), !needed, "{primitive:?}: buffer {i} off by {offset}");
            }
        }
    }
}

#[test]
fn grids_of_classic_launches() {
    let p = planned(&call(scan(ScanOp::Sum, Elem::of::<i32>()), 1 << 20, Engine::Classic)).classic;
    let Shape::Classic(row) = p.shape else { unreachable!() };
    let sms = 132;
    let at = |tiles| grid(&Launch { tiles, ..p }, sms).expect("fewer than 2^32 tiles");
    for tiles in [1, 264, 265, 1023, 1024, 1056, 1057, 1 << 20] {
        let g = at(tiles);
        assert_eq!((g.blocks, g.threads, g.shared_bytes), (tiles as u32, row.block_threads, 0));
        // An eighth of the row's back-off below 1024 tiles (about one wave on an H200).
        let div = if tiles < 1024 { 8 } else { 1 };
        assert_eq!((g.backoff.first_poll_ns, g.backoff.poll_ns), (row.first_poll_ns / div, row.poll_ns / div));
        // The guessed tile is prefetched by grids of at most 2 tiles per SM and of more than 8.
        assert_eq!(g.prefetch, tiles <= 2 * 132 || tiles > 8 * 132, "{tiles} tiles");
    }
    assert!(at(264).prefetch && !at(265).prefetch && !at(1056).prefetch && at(1057).prefetch);
    assert_eq!(grid(&Launch { tiles: 1 << 32, ..p }, sms), None);
}

#[test]
fn grids_of_persistent_launches() {
    let p = taken(&call(scan(ScanOp::Sum, Elem::of::<f64>()), 1 << 20, Engine::Persistent));
    let Shape::Persistent(row) = p.shape else { panic!("persistent") };
    for (tiles, blocks) in [(1, 1), (131, 131), (132, 132), (10_000, 132)] {
        let g = grid(&Launch { tiles, ..p }, 132).unwrap();
        assert_eq!((g.blocks, g.threads, g.shared_bytes as usize), (blocks, row.block_threads(), row.ring_bytes()));
        assert_eq!((g.backoff.first_poll_ns, g.backoff.poll_ns, g.prefetch), (0, 0, false));
    }
    // More tiles than a u32 counts: the classic launch (whose grid then refuses the call).
    let huge = call(scan(ScanOp::Sum, Elem::of::<u8>()), usize::MAX / 2, Engine::Persistent);
    assert_eq!(planned(&huge).persistent, None);
}

#[test]
fn user_scans_take_the_scan_rows_with_their_own_tile() {
    let kernels = lookback::rtc::ScanKernels {
        classic: lookback::__private::plan::Kernel { name: "lookback_rtc_scan", image: 1 << 30 },
        persistent: lookback::__private::plan::Kernel { name: "lookback_rtc_pipe_scan", image: 1 << 30 },
    };
    // u8 flags into u64 offsets: tiles of the classic agent counted in input items.
    let primitive = Primitive::UserScan { kernels, input_bytes: 1, output_bytes: 8, acc_bytes: 8 };
    let tile = lookback::__private::user_scan_tile_items(1, 8);
    let p = planned(&call(primitive, 10 * tile + 1, Engine::Classic));
    assert_eq!((p.classic.kernel, p.classic.tiles, p.persistent), (kernels.classic, 11, None));
    // The persistent kernel where the built-in scan of the same input bytes takes it.
    let p = planned(&call(primitive, 1 << 30, Engine::Auto));
    assert_eq!(p.persistent.map(|l| l.kernel), Some(kernels.persistent));
    // Status entries: one 16-byte unit up to 8-byte accumulators, then one per 8 bytes, on both engines.
    assert_eq!(p.classic.status_units, 1);
    for (acc_bytes, units) in [(1, 1), (4, 1), (8, 1), (9, 2), (12, 2), (16, 2), (17, 3), (24, 3), (32, 4)] {
        assert_eq!(lookback::__private::plan::status_units(acc_bytes), units, "{acc_bytes}");
        let primitive = Primitive::UserScan { kernels, input_bytes: 16, output_bytes: 16, acc_bytes };
        let p = planned(&call(primitive, 1 << 30, Engine::Auto));
        assert_eq!((p.classic.status_units, p.persistent.map(|l| l.status_units)), (units, Some(units)));
        let primitive = Primitive::UserReduce { kernels, input_bytes: 16, output_bytes: 16, acc_bytes };
        assert_eq!(planned(&call(primitive, 1 << 30, Engine::Auto)).classic.status_units, units);
    }
}

#[test]
fn keyed_user_operators_take_the_run_agents_row_on_the_classic_engine_only() {
    let kernel = lookback::__private::plan::Kernel { name: "lookback_rtc_by_key", image: 1 << 30 };
    // The row of the larger of key and value, as the built-in keyed kernels of the run agent.
    for (key_bytes, value_bytes) in [(1, 1), (1, 8), (4, 2), (8, 4), (2, 2)] {
        let primitive = Primitive::UserByKey { kernel, key_bytes, value_bytes };
        let tile = lookback::__private::runs_tile_items(key_bytes.max(value_bytes));
        for engine in [Engine::Classic, Engine::Auto, Engine::Persistent] {
            for n in [1, tile, tile + 1, 10 * tile + 3, 1 << 30] {
                let p = planned(&call(primitive, n, engine));
                assert_eq!(p.persistent, None, "{primitive:?} {engine:?} {n}");
                assert_eq!((p.classic.kernel, p.classic.row), (kernel, Algo::Runs), "{primitive:?}");
                assert_eq!(p.classic.tiles, n.div_ceil(tile), "{primitive:?} {n}");
                assert!(matches!(p.classic.shape, Shape::Classic(_)));
            }
        }
    }
}

#[test]
fn encodings_by_a_user_equality_take_the_encode_row_on_the_classic_engine_only() {
    let kernel = lookback::__private::plan::Kernel { name: "lookback_rtc_runs", image: 1 << 30 };
    // No value column: the encodings' own row (runs.cu's lookback_runs_k*_v0), never the small-grid one.
    for key_bytes in [1, 2, 4, 8] {
        let primitive = Primitive::UserByKey { kernel, key_bytes, value_bytes: 0 };
        let tile = lookback::__private::encode_tile_items(key_bytes);
        for engine in [Engine::Classic, Engine::Auto, Engine::Persistent] {
            for n in [1, tile, tile + 1, 10 * tile + 3, 1 << 30] {
                let p = planned(&call(primitive, n, engine));
                assert_eq!(p.persistent, None, "{primitive:?} {engine:?} {n}");
                assert_eq!((p.classic.kernel, p.classic.row), (kernel, Algo::Encode), "{primitive:?}");
                assert_eq!(p.classic.tiles, n.div_ceil(tile), "{primitive:?} {n}");
            }
        }
    }
}

#[test]
fn the_table_filter_takes_the_selection_tile_of_its_widest_column_on_the_classic_agent() {
    let kernel = lookback::__private::plan::Kernel { name: "lookback_rtc_table", image: 1 << 30 };
    for bytes in [1, 2, 4, 8] {
        for engine in [Engine::Auto, Engine::Classic, Engine::Persistent] {
            let n = (1 << 26) + 3;
            let p = planned(&call(Primitive::Table { kernel, bytes }, n, engine));
            assert_eq!((p.classic.kernel, p.classic.row, p.persistent), (kernel, Algo::Select, None));
            let select = planned(&call(select(Elem { dtype: DType::U8, bytes }, Mode::Compact), n, Engine::Classic));
            assert_eq!(p.classic.shape, select.classic.shape, "{bytes}-byte columns");
            assert_eq!(p.classic.tiles, tiles(&p.classic, n, bytes));
            assert_eq!(p.classic.tiles, n.div_ceil(lookback::__private::select_tile_items(bytes)));
        }
    }
}
