//! CUDA graphs and sizes on the device: every primitive family captured once and replayed many times, each
//! replay with new input data and a new item count in device memory ([`Workspace::with_count`]), checked
//! against the host reference, with the outputs past each count checked untouched. Also: the replay of
//! an ordinary capture (the defect of replayed launches reusing host-side look-back state), ordinary calls
//! interleaved with replays, a chained pipeline in one graph, and the typed errors of what a capture
//! cannot hold.
//!
//! The tests of this file run one at a time (`serial`): `graph::capture` turns cudarc's event tracking off
//! for the whole context while it captures.
mod common;

use common::{gpu, random_vec, runs};
use lookback::cudarc::driver::{CudaGraph, CudaSlice, CudaStream};
use lookback::{Engine, Error, Pred, ScanOp, Workspace, host};
use std::sync::{Arc, Mutex, MutexGuard};

/// Replays of each captured family.
const REPLAYS: usize = 100;
/// What outputs hold before each replay: anything the replay should not write keeps it.
const POISON: i32 = -0x5eed_0bad;
const POISON_COUNT: u64 = 0xdead_beef_dead_beef;

fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A stream of its own (the legacy default stream cannot capture), or `None` without a GPU.
fn capture_stream() -> Option<Arc<CudaStream>> {
    let stream = gpu()?;
    Some(stream.context().new_stream().unwrap())
}

fn capture(stream: &Arc<CudaStream>, calls: impl FnOnce() -> lookback::Result<()>) -> CudaGraph {
    // SAFETY: the tests of this binary that use the context run one at a time (`serial`).
    unsafe { lookback::graph::capture(stream, |_| calls()) }.unwrap()
}

/// The device counts the replays use: empty, one item, both sides of `tile` and of two tiles, the
/// capacity, and pseudo-random sizes in between.
fn sizes(capacity: usize, tile: usize, seed: u64) -> Vec<usize> {
    let mut fixed = vec![0, 1, tile - 1, tile, tile + 1, 2 * tile - 1, 2 * tile + 1, capacity, capacity - 1];
    fixed.retain(|&n| n <= capacity);
    let mut rng = common::Rng::new(seed);
    (0..REPLAYS)
        .map(|r| fixed.get(r).copied().unwrap_or_else(|| (rng.next_u64() % (capacity as u64 + 1)) as usize))
        .collect()
}

fn poison<T: lookback::cudarc::driver::DeviceRepr + Copy>(stream: &Arc<CudaStream>, buf: &mut CudaSlice<T>, value: T) {
    let host = vec![value; buf.len()];
    stream.memcpy_htod(&host, buf).unwrap();
}

fn set_count(stream: &Arc<CudaStream>, count: &mut CudaSlice<u64>, n: usize) {
    stream.memcpy_htod(&[n as u64], count).unwrap();
}

fn read_count(stream: &Arc<CudaStream>, count: &CudaSlice<u64>) -> usize {
    stream.clone_dtoh(count).unwrap()[0] as usize
}

/// `got[..want.len()] == want` and everything after it still `poison`.
fn check_prefix<T: PartialEq + std::fmt::Debug + Copy>(got: &[T], want: &[T], poison: T, what: &str) {
    assert!(got.len() >= want.len(), "{what}: {} items, {} expected", got.len(), want.len());
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!("{what}: item {i} is {:?}, expected {:?} ({} items)", got[i], want[i], want.len());
    }
    if let Some(i) = got[want.len()..].iter().position(|x| *x != poison) {
        panic!("{what}: item {} past the result was written ({:?})", want.len() + i, got[want.len() + i]);
    }
}

/// Classic, and the persistent engine where the GPU has it (the classic agent otherwise).
const ENGINES: [Engine; 2] = [Engine::Classic, Engine::Persistent];

fn workspace(stream: &Arc<CudaStream>, engine: Engine, capacity: usize) -> Workspace {
    let mut ws = Workspace::new(stream);
    ws.set_engine(engine);
    ws.reserve(capacity).unwrap();
    ws
}

/// The defect this file started from: one ordinary call captured and replayed with new input. Replayed
/// launches must not reuse the tile counter and epoch of the capture; an ordinary call on the same
/// workspace afterwards must still work.
#[test]
fn captured_scan_replays_with_new_input() {
    let _serial = serial();
    let Some(stream) = capture_stream() else { return };
    for engine in ENGINES {
        for n in [1usize << 20, 1 << 24, 5000] {
            let mut ws = workspace(&stream, engine, n);
            let mut input = stream.alloc_zeros::<i32>(n).unwrap();
            let mut out = stream.alloc_zeros::<i32>(n).unwrap();
            let graph = capture(&stream, || ws.inclusive_scan_into(&input, &mut out, ScanOp::Sum));
            let replays = if n > 1 << 22 { 8 } else { 40 };
            for r in 0..replays {
                let data: Vec<i32> = random_vec(n, 1000 + r as u64, 0.0);
                stream.memcpy_htod(&data, &mut input).unwrap();
                poison(&stream, &mut out, POISON);
                graph.launch().unwrap();
                let got = stream.clone_dtoh(&out).unwrap();
                check_prefix(
                    &got,
                    &host::inclusive_scan(&data, ScanOp::Sum).unwrap(),
                    POISON,
                    &format!("{engine:?} n={n} replay {r}"),
                );
                if r % 5 == 4 {
                    // An ordinary call between replays, on the same workspace, with another size.
                    let m = n / 3 + r;
                    let view = input.slice(..m);
                    ws.exclusive_scan_into(&view, &mut out, 7, ScanOp::Sum).unwrap();
                    let got = stream.clone_dtoh(&out.slice(..m)).unwrap();
                    assert_eq!(
                        got,
                        host::exclusive_scan(&data[..m], 7, ScanOp::Sum).unwrap(),
                        "{engine:?} eager after replay {r}"
                    );
                }
            }
        }
    }
}

/// More replays than the look-back has epochs (255 per status region, two regions): the state the
/// kernels keep on the device wraps, and words left by earlier launches never read as fresh.
#[test]
fn replays_cross_the_epoch_wrap() {
    let _serial = serial();
    let Some(stream) = capture_stream() else { return };
    let tile = lookback::__private::scan_tile_items(4);
    let capacity = 40 * tile + 3;
    let mut ws = workspace(&stream, Engine::Classic, capacity);
    let mut input = stream.alloc_zeros::<i32>(capacity).unwrap();
    let mut out = stream.alloc_zeros::<i32>(capacity).unwrap();
    let mut count = stream.alloc_zeros::<u64>(1).unwrap();
    let graph = capture(&stream, || ws.with_count(&count, |ws| ws.inclusive_scan_into(&input, &mut out, ScanOp::Sum)));
    let data: Vec<i32> = random_vec(capacity, 7, 0.0);
    stream.memcpy_htod(&data, &mut input).unwrap();
    for r in 0..1100usize {
        // Mostly small launches, so most words a launch could read were left by larger ones.
        let n = if r % 50 == 0 { capacity } else { 2 * tile + r % 97 };
        set_count(&stream, &mut count, n);
        graph.launch().unwrap();
        if r % 10 == 0 || (250..=260).contains(&r) || (505..=515).contains(&r) || (760..=770).contains(&r) {
            let got = stream.clone_dtoh(&out.slice(..n)).unwrap();
            assert_eq!(got, host::inclusive_scan(&data[..n], ScanOp::Sum).unwrap(), "replay {r}, n={n}");
        }
    }
}

/// Scans, inclusive and exclusive, sized on the device.
#[test]
fn scans_replay_with_device_sizes() {
    let _serial = serial();
    let Some(stream) = capture_stream() else { return };
    let tile = lookback::__private::scan_tile_items(4);
    let capacity = 6 * tile + 5;
    for engine in ENGINES {
        for exclusive in [false, true] {
            let mut ws = workspace(&stream, engine, capacity);
            let mut input = stream.alloc_zeros::<i32>(capacity).unwrap();
            let mut out = stream.alloc_zeros::<i32>(capacity).unwrap();
            let mut count = stream.alloc_zeros::<u64>(1).unwrap();
            let graph = capture(&stream, || {
                ws.with_count(&count, |ws| {
                    if exclusive {
                        ws.exclusive_scan_into(&input, &mut out, -3, ScanOp::Sum)
                    } else {
                        ws.inclusive_scan_into(&input, &mut out, ScanOp::Max)
                    }
                })
            });
            for (r, n) in sizes(capacity, tile, 11).into_iter().enumerate() {
                let data: Vec<i32> = random_vec(capacity, r as u64, 0.0);
                stream.memcpy_htod(&data, &mut input).unwrap();
                set_count(&stream, &mut count, n);
                poison(&stream, &mut out, POISON);
                graph.launch().unwrap();
                let want = if exclusive {
                    host::exclusive_scan(&data[..n], -3, ScanOp::Sum).unwrap()
                } else {
                    host::inclusive_scan(&data[..n], ScanOp::Max).unwrap()
                };
                let got = stream.clone_dtoh(&out).unwrap();
                check_prefix(&got, &want, POISON, &format!("{engine:?} exclusive={exclusive} replay {r} n={n}"));
            }
        }
    }
}

/// Reductions sized on the device: the total and arg_min, each writing one item (the identity, or no
/// index, for a count of 0) and nothing past it.
#[test]
fn reductions_replay_with_device_sizes() {
    let _serial = serial();
    let Some(stream) = capture_stream() else { return };
    // The reductions' count of finished blocks must be zero again after every replay.
    let tile = lookback::__private::reduce_tile_items(4);
    let capacity = 6 * tile + 5;
    for engine in ENGINES {
        let mut ws = workspace(&stream, engine, capacity);
        let mut input = stream.alloc_zeros::<i32>(capacity).unwrap();
        let mut total = stream.alloc_zeros::<i32>(2).unwrap();
        let mut arg = stream.alloc_zeros::<lookback::ArgItem<i32>>(2).unwrap();
        let mut count = stream.alloc_zeros::<u64>(1).unwrap();
        let graph = capture(&stream, || {
            ws.with_count(&count, |ws| {
                ws.reduce_into(&input, &mut total, ScanOp::Sum)?;
                ws.arg_min_into(&input, &mut arg)
            })
        });
        let arg_poison = lookback::ArgItem { index: 3, value: POISON };
        for (r, n) in sizes(capacity, tile, 12).into_iter().enumerate() {
            // Few distinct values: arg_min's ties cross tiles.
            let data: Vec<i32> = random_vec::<i32>(capacity, r as u64, 0.0).iter().map(|x| x % 7).collect();
            stream.memcpy_htod(&data, &mut input).unwrap();
            set_count(&stream, &mut count, n);
            poison(&stream, &mut total, POISON);
            poison(&stream, &mut arg, arg_poison);
            graph.launch().unwrap();
            let what = format!("{engine:?} replay {r} n={n}");
            let want = host::reduce(&data[..n], ScanOp::Sum).unwrap();
            check_prefix(&stream.clone_dtoh(&total).unwrap(), &[want], POISON, &what);
            let got = stream.clone_dtoh(&arg).unwrap();
            assert_eq!(got[0].get(), host::arg_min(&data[..n]), "{what}");
            assert_eq!(got[1], arg_poison, "{what}: wrote past the result");
        }
    }
}

/// The selection family: compaction by predicate, flags and uniqueness (out of place and in place),
/// counting and masks.
#[test]
fn selections_replay_with_device_sizes() {
    let _serial = serial();
    let Some(stream) = capture_stream() else { return };
    let tile = lookback::__private::select_tile_items(4);
    let capacity = 5 * tile + 9;
    let pred = Pred::gt(0) & Pred::lt(1 << 28);
    // 0: select_if, 1: select_flagged, 2: unique, 3: select_if in place, 4: unique in place, 5: count_if,
    // 6: mask_if.
    for engine in ENGINES {
        for form in 0..7 {
            let mut ws = workspace(&stream, engine, capacity);
            let mut input = stream.alloc_zeros::<i32>(capacity).unwrap();
            let mut flags = stream.alloc_zeros::<u8>(capacity).unwrap();
            let mut out = stream.alloc_zeros::<i32>(capacity).unwrap();
            let mut mask = stream.alloc_zeros::<u8>(capacity).unwrap();
            let mut num = stream.alloc_zeros::<u64>(1).unwrap();
            let mut count = stream.alloc_zeros::<u64>(1).unwrap();
            let graph = capture(&stream, || {
                ws.with_count(&count, |ws| match form {
                    0 => ws.select_if_into(&input, &pred, &mut out, &mut num),
                    1 => ws.select_flagged_into(&input, &flags, &mut out, &mut num),
                    2 => ws.unique_into(&input, &mut out, &mut num),
                    3 => ws.select_if_in_place_into(&mut input, &pred, &mut num),
                    4 => ws.unique_in_place_into(&mut input, &mut num),
                    5 => ws.count_if_into(&input, &pred, &mut num),
                    _ => ws.mask_if_into(&input, &pred, &mut mask),
                })
            });
            for (r, n) in sizes(capacity, tile, 20 + form).into_iter().enumerate() {
                let seed = 100 * form + r as u64;
                let data: Vec<i32> =
                    if form == 2 || form == 4 { runs(capacity, 3.0, seed) } else { random_vec(capacity, seed, 0.0) };
                let flag_data: Vec<u8> = random_vec::<u8>(capacity, seed + 7, 0.0).iter().map(|f| f & 1).collect();
                stream.memcpy_htod(&data, &mut input).unwrap();
                stream.memcpy_htod(&flag_data, &mut flags).unwrap();
                set_count(&stream, &mut count, n);
                poison(&stream, &mut out, POISON);
                poison(&stream, &mut mask, 0xa5);
                poison(&stream, &mut num, POISON_COUNT);
                graph.launch().unwrap();
                let what = format!("{engine:?} form {form} replay {r} n={n}");
                let items = &data[..n];
                let want = match form {
                    0 | 3 => host::select_if(items, &pred),
                    1 => host::select_flagged(items, &flag_data[..n]).unwrap(),
                    2 | 4 => host::unique(items),
                    5 => {
                        assert_eq!(read_count(&stream, &num), host::count_if(items, &pred), "{what}");
                        continue;
                    }
                    _ => {
                        check_prefix(&stream.clone_dtoh(&mask).unwrap(), &host::mask_if(items, &pred), 0xa5, &what);
                        assert_eq!(stream.clone_dtoh(&num).unwrap()[0], POISON_COUNT, "{what}: mask wrote a count");
                        continue;
                    }
                };
                assert_eq!(read_count(&stream, &num), want.len(), "{what}: count");
                if form == 3 || form == 4 {
                    // In place: the selected items first, the rest of the buffer as it was.
                    let got = stream.clone_dtoh(&input).unwrap();
                    assert_eq!(&got[..want.len()], &want[..], "{what}");
                    assert_eq!(&got[n..], &data[n..], "{what}: items past the count were written");
                } else {
                    check_prefix(&stream.clone_dtoh(&out).unwrap(), &want, POISON, &what);
                }
            }
        }
    }
}

/// The partitions: CUB's reversed layout, stable in one buffer, split into two, and three-way.
#[test]
fn partitions_replay_with_device_sizes() {
    let _serial = serial();
    let Some(stream) = capture_stream() else { return };
    let tile = lookback::__private::select_tile_items(4);
    let capacity = 4 * tile + 21;
    let pred = Pred::lt(0);
    let second = Pred::gt(1 << 29);
    // 0: reversed, 1: stable, 2: split, 3: three-way.
    for engine in ENGINES {
        for form in 0..4u64 {
            let mut ws = workspace(&stream, engine, capacity);
            let mut input = stream.alloc_zeros::<i32>(capacity).unwrap();
            let mut out = stream.alloc_zeros::<i32>(capacity).unwrap();
            let mut out2 = stream.alloc_zeros::<i32>(capacity).unwrap();
            let mut out3 = stream.alloc_zeros::<i32>(capacity).unwrap();
            let mut num = stream.alloc_zeros::<u64>(2).unwrap();
            let mut count = stream.alloc_zeros::<u64>(1).unwrap();
            let graph = capture(&stream, || {
                ws.with_count(&count, |ws| match form {
                    0 => ws.partition_if_reversed_into(&input, &pred, &mut out, &mut num),
                    1 => ws.partition_if_stable_into(&input, &pred, &mut out, &mut num),
                    2 => ws.partition_if_split_into(&input, &pred, &mut out, &mut out2, &mut num),
                    _ => ws.partition_three_way_into(&input, &pred, &second, &mut out, &mut out2, &mut out3, &mut num),
                })
            });
            for (r, n) in sizes(capacity, tile, 40 + form).into_iter().enumerate() {
                let data: Vec<i32> = random_vec(capacity, 300 * form + r as u64, 0.0);
                stream.memcpy_htod(&data, &mut input).unwrap();
                set_count(&stream, &mut count, n);
                for b in [&mut out, &mut out2, &mut out3] {
                    poison(&stream, b, POISON);
                }
                poison(&stream, &mut num, POISON_COUNT);
                graph.launch().unwrap();
                let what = format!("{engine:?} form {form} replay {r} n={n}");
                let items = &data[..n];
                let counts = stream.clone_dtoh(&num).unwrap();
                let (got1, got2, got3) = (
                    stream.clone_dtoh(&out).unwrap(),
                    stream.clone_dtoh(&out2).unwrap(),
                    stream.clone_dtoh(&out3).unwrap(),
                );
                match form {
                    0 | 1 => {
                        let (want, selected) = if form == 0 {
                            host::partition_if_reversed(items, &pred)
                        } else {
                            host::partition_if(items, &pred)
                        };
                        assert_eq!(counts[0] as usize, selected, "{what}: count");
                        check_prefix(&got1, &want, POISON, &what);
                    }
                    2 => {
                        let (want, selected) = host::partition_if(items, &pred);
                        assert_eq!(counts[0] as usize, selected, "{what}: count");
                        check_prefix(&got1, &want[..selected], POISON, &format!("{what}: selected"));
                        check_prefix(&got2, &want[selected..], POISON, &format!("{what}: rejected"));
                    }
                    _ => {
                        let (a, b, c) = host::partition_three_way(items, &pred, &second);
                        assert_eq!(&counts[..2], &[a.len() as u64, b.len() as u64], "{what}: counts");
                        check_prefix(&got1, &a, POISON, &format!("{what}: first"));
                        check_prefix(&got2, &b, POISON, &format!("{what}: second"));
                        check_prefix(&got3, &c, POISON, &format!("{what}: rest"));
                    }
                }
            }
        }
    }
}

/// The keyed primitives and the run encodings, on runs that cross tiles.
#[test]
fn runs_replay_with_device_sizes() {
    let _serial = serial();
    let Some(stream) = capture_stream() else { return };
    let tile = lookback::__private::runs_tile_items(4);
    let capacity = 5 * tile + 13;
    // 0: reduce_by_key, 1: unique_by_key, 2: inclusive scan by key, 3: exclusive scan by key,
    // 4: run-length encoding, 5: run-end encoding, 6: non-trivial runs.
    for engine in ENGINES {
        for form in 0..7u64 {
            let mut ws = workspace(&stream, engine, capacity);
            let mut keys = stream.alloc_zeros::<i32>(capacity).unwrap();
            let mut values = stream.alloc_zeros::<i32>(capacity).unwrap();
            let mut out_keys = stream.alloc_zeros::<i32>(capacity).unwrap();
            let mut out_values = stream.alloc_zeros::<i32>(capacity).unwrap();
            let mut lengths = stream.alloc_zeros::<u32>(capacity).unwrap();
            let mut offsets = stream.alloc_zeros::<u32>(capacity).unwrap();
            let mut num = stream.alloc_zeros::<u64>(1).unwrap();
            let mut count = stream.alloc_zeros::<u64>(1).unwrap();
            let graph = capture(&stream, || {
                ws.with_count(&count, |ws| match form {
                    0 => ws.reduce_by_key_into(&keys, &values, &mut out_keys, &mut out_values, &mut num, ScanOp::Sum),
                    1 => ws.unique_by_key_into(&keys, &values, &mut out_keys, &mut out_values, &mut num),
                    2 => ws.inclusive_scan_by_key_into(&keys, &values, &mut out_values, ScanOp::Sum),
                    3 => ws.exclusive_scan_by_key_into(&keys, &values, &mut out_values, 5, ScanOp::Sum),
                    4 => ws.run_length_encode_into(&keys, &mut out_keys, &mut lengths, &mut num),
                    5 => ws.run_end_encode_into(&keys, &mut out_keys, &mut lengths, &mut num),
                    _ => ws.non_trivial_runs_into(&keys, &mut offsets, &mut lengths, &mut num),
                })
            });
            for (r, n) in sizes(capacity, tile, 60 + form).into_iter().enumerate() {
                let seed = 500 * form + r as u64;
                let key_data: Vec<i32> = runs(capacity, if r % 3 == 0 { 300.0 } else { 4.0 }, seed);
                let value_data: Vec<i32> = random_vec(capacity, seed + 1, 0.0);
                stream.memcpy_htod(&key_data, &mut keys).unwrap();
                stream.memcpy_htod(&value_data, &mut values).unwrap();
                set_count(&stream, &mut count, n);
                poison(&stream, &mut out_keys, POISON);
                poison(&stream, &mut out_values, POISON);
                poison(&stream, &mut lengths, POISON as u32);
                poison(&stream, &mut offsets, POISON as u32);
                poison(&stream, &mut num, POISON_COUNT);
                graph.launch().unwrap();
                let what = format!("{engine:?} form {form} replay {r} n={n}");
                let (k, v) = (&key_data[..n], &value_data[..n]);
                let got_keys = stream.clone_dtoh(&out_keys).unwrap();
                let got_values = stream.clone_dtoh(&out_values).unwrap();
                let got_lengths = stream.clone_dtoh(&lengths).unwrap();
                let as_u32 = |x: Vec<u64>| x.into_iter().map(|x| x as u32).collect::<Vec<_>>();
                match form {
                    0 | 1 => {
                        let (wk, wv) = if form == 0 {
                            host::reduce_by_key(k, v, ScanOp::Sum).unwrap()
                        } else {
                            host::unique_by_key(k, v).unwrap()
                        };
                        assert_eq!(read_count(&stream, &num), wk.len(), "{what}: count");
                        check_prefix(&got_keys, &wk, POISON, &format!("{what}: keys"));
                        check_prefix(&got_values, &wv, POISON, &format!("{what}: values"));
                    }
                    2 | 3 => {
                        let want = if form == 2 {
                            host::inclusive_scan_by_key(k, v, ScanOp::Sum).unwrap()
                        } else {
                            host::exclusive_scan_by_key(k, v, 5, ScanOp::Sum).unwrap()
                        };
                        check_prefix(&got_values, &want, POISON, &what);
                    }
                    4 | 5 => {
                        let (wk, wl) = if form == 4 { host::run_length_encode(k) } else { host::run_end_encode(k) };
                        assert_eq!(read_count(&stream, &num), wk.len(), "{what}: count");
                        check_prefix(&got_keys, &wk, POISON, &format!("{what}: keys"));
                        check_prefix(&got_lengths, &as_u32(wl), POISON as u32, &format!("{what}: lengths"));
                    }
                    _ => {
                        let (wo, wl) = host::non_trivial_runs(k);
                        assert_eq!(read_count(&stream, &num), wo.len(), "{what}: count");
                        check_prefix(
                            &stream.clone_dtoh(&offsets).unwrap(),
                            &as_u32(wo),
                            POISON as u32,
                            &format!("{what}: offsets"),
                        );
                        check_prefix(&got_lengths, &as_u32(wl), POISON as u32, &format!("{what}: lengths"));
                    }
                }
            }
        }
    }
}

/// A pipeline in one graph, each stage sized by the count the stage before it left on the device:
/// reduce_by_key and the exclusive scan by key with a user operator (compiled before the capture, which
/// must not compile or load a module): a composition of affine maps over u32, packed `m << 32 | c`, which
/// does not commute.
#[test]
fn keyed_user_operators_replay_with_device_sizes() {
    let _serial = serial();
    let Some(stream) = capture_stream() else { return };
    if !common::nvrtc() {
        return;
    }
    fn compose(a: u64, b: u64) -> u64 {
        let (am, ac, bm, bc) = ((a >> 32) as u32, a as u32, (b >> 32) as u32, b as u32);
        (u64::from(am.wrapping_mul(bm)) << 32) | u64::from(bm.wrapping_mul(ac).wrapping_add(bc))
    }
    let cuda = "((uint64_t)((uint32_t)(a >> 32) * (uint32_t)(b >> 32)) << 32) | \
                (uint32_t)((uint32_t)(b >> 32) * (uint32_t)a + (uint32_t)b)";
    // SAFETY: a pure expression of a and b.
    let op = unsafe { lookback::rtc::UserScanOp::new(cuda, "1ull << 32", compose, 1 << 32) }.unwrap();
    op.compile_by_key::<u32>(&stream).unwrap();
    let tile = lookback::__private::runs_tile_items(8);
    let capacity = 5 * tile + 13;
    let mut ws = workspace(&stream, Engine::Classic, capacity);
    let mut keys = stream.alloc_zeros::<u32>(capacity).unwrap();
    let mut values = stream.alloc_zeros::<u64>(capacity).unwrap();
    let mut out_keys = stream.alloc_zeros::<u32>(capacity).unwrap();
    let mut out_values = stream.alloc_zeros::<u64>(capacity).unwrap();
    let mut scanned = stream.alloc_zeros::<u64>(capacity).unwrap();
    let mut num = stream.alloc_zeros::<u64>(1).unwrap();
    let mut count = stream.alloc_zeros::<u64>(1).unwrap();
    let graph = capture(&stream, || {
        ws.with_count(&count, |ws| {
            ws.reduce_by_key_user_into(&keys, &values, &mut out_keys, &mut out_values, &mut num, &op)?;
            ws.exclusive_scan_by_key_user_into(&keys, &values, &mut scanned, 1 << 32, &op)
        })
    });
    const POISON_U32: u32 = 0xdead_0bad;
    for (r, n) in sizes(capacity, tile, 21).into_iter().enumerate() {
        let key_data: Vec<u32> = runs(capacity, 50.0, r as u64);
        // Odd multipliers (bit 32): even ones would make a run's composition forget its first items.
        let value_data: Vec<u64> =
            random_vec::<u64>(capacity, 100 + r as u64, 0.0).into_iter().map(|v| v | 1 << 32).collect();
        stream.memcpy_htod(&key_data, &mut keys).unwrap();
        stream.memcpy_htod(&value_data, &mut values).unwrap();
        set_count(&stream, &mut count, n);
        poison(&stream, &mut out_keys, POISON_U32);
        poison(&stream, &mut out_values, POISON_COUNT);
        poison(&stream, &mut scanned, POISON_COUNT);
        poison(&stream, &mut num, POISON_COUNT);
        graph.launch().unwrap();
        let what = format!("user keyed replay {r} n={n}");
        let (want_keys, want_values) = host::reduce_by_key_user(&key_data[..n], &value_data[..n], &op).unwrap();
        assert_eq!(read_count(&stream, &num), want_keys.len(), "{what}");
        check_prefix(&stream.clone_dtoh(&out_keys).unwrap(), &want_keys, POISON_U32, &what);
        check_prefix(&stream.clone_dtoh(&out_values).unwrap(), &want_values, POISON_COUNT, &what);
        let want = host::exclusive_scan_by_key_user(&key_data[..n], &value_data[..n], 1 << 32, &op).unwrap();
        check_prefix(&stream.clone_dtoh(&scanned).unwrap(), &want, POISON_COUNT, &what);
    }
}

/// unique, run-length encoding and unique_by_key by a user equality (compiled before the capture), sized
/// by a device count, on both engines for unique: 4-byte keys whose runs are by their high half.
#[test]
fn user_equalities_replay_with_device_sizes() {
    let _serial = serial();
    let Some(stream) = capture_stream() else { return };
    if !common::nvrtc() {
        return;
    }
    // SAFETY: a pure expression of a and b.
    let eq =
        unsafe { lookback::rtc::UserEq::new("(a >> 16) == (b >> 16)", |a: u32, b: u32| a >> 16 == b >> 16) }.unwrap();
    eq.compile(&stream).unwrap();
    eq.compile_encodings(&stream).unwrap();
    eq.compile_unique_by_key::<u64>(&stream).unwrap();
    let tile = lookback::__private::select_tile_items(4).max(lookback::__private::runs_tile_items(8));
    let capacity = 4 * tile + 29;
    const POISON_U32: u32 = 0xdead_0bad;
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = workspace(&stream, engine, capacity);
        let mut keys = stream.alloc_zeros::<u32>(capacity).unwrap();
        let mut values = stream.alloc_zeros::<u64>(capacity).unwrap();
        let mut uniq = stream.alloc_zeros::<u32>(capacity).unwrap();
        let mut rle_values = stream.alloc_zeros::<u32>(capacity).unwrap();
        let mut lengths = stream.alloc_zeros::<u64>(capacity).unwrap();
        let mut out_keys = stream.alloc_zeros::<u32>(capacity).unwrap();
        let mut out_values = stream.alloc_zeros::<u64>(capacity).unwrap();
        let mut nums = [(); 3].map(|_| stream.alloc_zeros::<u64>(1).unwrap());
        let mut count = stream.alloc_zeros::<u64>(1).unwrap();
        let [n_uniq, n_rle, n_ubk] = &mut nums;
        let graph = capture(&stream, || {
            ws.with_count(&count, |ws| {
                ws.unique_by_into(&keys, &mut uniq, n_uniq, &eq)?;
                ws.run_length_encode_by_into(&keys, &mut rle_values, &mut lengths, n_rle, &eq)?;
                ws.unique_by_key_by_into(&keys, &values, &mut out_keys, &mut out_values, n_ubk, &eq)
            })
        });
        for (r, n) in sizes(capacity, tile, 31).into_iter().enumerate() {
            // Runs of equal high halves, the low halves random: the built-in equality would see none.
            let highs: Vec<u32> = runs(capacity, 20.0, r as u64);
            let key_data: Vec<u32> =
                highs.iter().enumerate().map(|(i, h)| h << 16 | (i as u32 * 7919) & 0xffff).collect();
            let value_data: Vec<u64> = random_vec(capacity, 200 + r as u64, 0.0);
            stream.memcpy_htod(&key_data, &mut keys).unwrap();
            stream.memcpy_htod(&value_data, &mut values).unwrap();
            set_count(&stream, &mut count, n);
            for buf in [&mut uniq, &mut rle_values, &mut out_keys] {
                poison(&stream, buf, POISON_U32);
            }
            for buf in [&mut lengths, &mut out_values] {
                poison(&stream, buf, POISON_COUNT);
            }
            for num in nums.iter_mut() {
                poison(&stream, num, POISON_COUNT);
            }
            graph.launch().unwrap();
            let what = format!("{engine:?} user equality replay {r} n={n}");
            let want = host::unique_by(&key_data[..n], &eq);
            assert_eq!(read_count(&stream, &nums[0]), want.len(), "{what}");
            check_prefix(&stream.clone_dtoh(&uniq).unwrap(), &want, POISON_U32, &what);
            let (want_values, want_lengths) = host::run_length_encode_by(&key_data[..n], &eq);
            assert_eq!(read_count(&stream, &nums[1]), want_values.len(), "{what}");
            check_prefix(&stream.clone_dtoh(&rle_values).unwrap(), &want_values, POISON_U32, &what);
            check_prefix(&stream.clone_dtoh(&lengths).unwrap(), &want_lengths, POISON_COUNT, &what);
            let (want_keys, want_firsts) = host::unique_by_key_by(&key_data[..n], &value_data[..n], &eq).unwrap();
            assert_eq!(read_count(&stream, &nums[2]), want_keys.len(), "{what}");
            check_prefix(&stream.clone_dtoh(&out_keys).unwrap(), &want_keys, POISON_U32, &what);
            check_prefix(&stream.clone_dtoh(&out_values).unwrap(), &want_firsts, POISON_COUNT, &what);
        }
    }
}

/// select_if → unique, and reduce_by_key of the selected items by value (runs of equal items) → exclusive
/// scan of the run sums. Replayed with new input and sizes; every stage checked.
#[test]
fn chained_pipeline_replays_in_one_graph() {
    let _serial = serial();
    let Some(stream) = capture_stream() else { return };
    let tile = lookback::__private::select_tile_items(4);
    let capacity = 3 * tile + 77;
    let mut ws = Workspace::new(&stream);
    ws.reserve(capacity).unwrap();
    let mut input = stream.alloc_zeros::<i32>(capacity).unwrap();
    let mut values = stream.alloc_zeros::<i32>(capacity).unwrap();
    let mut kept = stream.alloc_zeros::<i32>(capacity).unwrap();
    let mut uniq = stream.alloc_zeros::<i32>(capacity).unwrap();
    let mut run_keys = stream.alloc_zeros::<i32>(capacity).unwrap();
    let mut sums = stream.alloc_zeros::<i32>(capacity).unwrap();
    let mut offsets = stream.alloc_zeros::<i32>(capacity).unwrap();
    let mut count = stream.alloc_zeros::<u64>(1).unwrap();
    let mut n_kept = stream.alloc_zeros::<u64>(1).unwrap();
    let mut n_uniq = stream.alloc_zeros::<u64>(1).unwrap();
    let mut n_runs = stream.alloc_zeros::<u64>(1).unwrap();
    let pred = Pred::ge(0);
    let graph = capture(&stream, || {
        ws.with_count(&count, |ws| ws.select_if_into(&input, &pred, &mut kept, &mut n_kept))?;
        ws.with_count(&n_kept, |ws| {
            ws.unique_into(&kept, &mut uniq, &mut n_uniq)?;
            ws.reduce_by_key_into(&kept, &values, &mut run_keys, &mut sums, &mut n_runs, ScanOp::Sum)
        })?;
        ws.with_count(&n_runs, |ws| ws.exclusive_scan_into(&sums, &mut offsets, 0, ScanOp::Sum))
    });
    for (r, n) in sizes(capacity, tile, 99).into_iter().enumerate() {
        // Small values in runs, about half of them negative: every stage keeps some and drops some.
        let data: Vec<i32> = runs::<i32>(capacity, 3.0, r as u64).iter().map(|x| x % 64).collect();
        let value_data: Vec<i32> = random_vec(capacity, 7 * r as u64 + 1, 0.0);
        stream.memcpy_htod(&data, &mut input).unwrap();
        stream.memcpy_htod(&value_data, &mut values).unwrap();
        set_count(&stream, &mut count, n);
        for b in [&mut uniq, &mut run_keys, &mut offsets] {
            poison(&stream, b, POISON);
        }
        graph.launch().unwrap();
        let want_kept = host::select_if(&data[..n], &pred);
        let want_uniq = host::unique(&want_kept);
        let (want_keys, want_sums) =
            host::reduce_by_key(&want_kept, &value_data[..want_kept.len()], ScanOp::Sum).unwrap();
        let want = host::exclusive_scan(&want_sums, 0, ScanOp::Sum).unwrap();
        let what = format!("replay {r} n={n}");
        assert_eq!(read_count(&stream, &n_kept), want_kept.len(), "{what}: kept");
        check_prefix(&stream.clone_dtoh(&uniq).unwrap(), &want_uniq, POISON, &format!("{what}: unique"));
        assert_eq!(read_count(&stream, &n_uniq), want_uniq.len(), "{what}: unique count");
        check_prefix(&stream.clone_dtoh(&run_keys).unwrap(), &want_keys, POISON, &format!("{what}: run keys"));
        assert_eq!(read_count(&stream, &n_runs), want_sums.len(), "{what}: runs");
        check_prefix(&stream.clone_dtoh(&offsets).unwrap(), &want, POISON, &what);
    }
}

/// Sized on the device without a graph: the same calls, eagerly, for counts above the capacity
/// (taken as the capacity) and an empty count buffer.
#[test]
fn device_counts_eagerly() {
    let _serial = serial();
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    let data: Vec<i32> = random_vec(10_000, 3, 0.0);
    let input = stream.clone_htod(&data).unwrap();
    let mut out = stream.alloc_zeros::<i32>(10_000).unwrap();
    let mut num = stream.alloc_zeros::<u64>(1).unwrap();
    // Above the capacity (the input's length, 6000 here): taken as the capacity.
    let count = stream.clone_htod(&[1u64 << 40]).unwrap();
    let view = input.slice(..6000);
    ws.with_count(&count, |ws| ws.select_if_into(&view, &Pred::gt(0), &mut out, &mut num)).unwrap();
    assert_eq!(read_count(&stream, &num), host::count_if(&data[..6000], &Pred::gt(0)));
    let empty = stream.alloc_zeros::<u64>(0).unwrap();
    let err = ws.with_count(&empty, |ws| ws.inclusive_scan_into(&input, &mut out, ScanOp::Sum)).unwrap_err();
    assert!(matches!(err, Error::EmptyCount), "{err}");
    // A call returning a host count, sized on the device (eager: it may read back).
    let count = stream.clone_htod(&[100u64]).unwrap();
    let mut buf = stream.clone_htod(&data).unwrap();
    let kept = ws.with_count(&count, |ws| ws.select_if_in_place(&mut buf, &Pred::gt(0))).unwrap();
    assert_eq!(kept, host::count_if(&data[..100], &Pred::gt(0)));
}

/// What a capture cannot hold returns `NotCapturable` before it enqueues anything, and the capture stays
/// valid: a workspace that would grow, a count read back to the host, event tracking that would wait on
/// work outside the capture, the legacy default stream.
#[test]
fn uncapturable_calls_are_typed_errors() {
    use lookback::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    let _serial = serial();
    let Some(stream) = capture_stream() else { return };
    let data: Vec<i32> = random_vec(50_000, 5, 0.0);
    let mut input = stream.clone_htod(&data).unwrap();
    let mut out = stream.alloc_zeros::<i32>(50_000).unwrap();
    let not_capturable = |e: Error| matches!(e, Error::NotCapturable { .. });

    // Growth: a fresh workspace.
    let mut ws = Workspace::new(&stream);
    let mut grown = None;
    let graph = capture(&stream, || {
        grown = Some(ws.inclusive_scan_into(&input, &mut out, ScanOp::Sum).unwrap_err());
        assert!(not_capturable(ws.reserve(100).unwrap_err()), "reserve in a capture");
        // Something the capture can hold, so that it records work.
        Ok(stream.memset_zeros(&mut out)?)
    });
    assert!(not_capturable(grown.unwrap()));
    drop(graph);

    // A host count, after the workspace has room.
    ws.reserve(50_000).unwrap();
    let mut read_back = None;
    let _graph = capture(&stream, || {
        read_back = Some(ws.select_if_in_place(&mut input, &Pred::gt(0)).unwrap_err());
        ws.inclusive_scan_into(&input, &mut out, ScanOp::Sum)
    });
    assert!(not_capturable(read_back.unwrap()));
    // Nothing was enqueued by the refused call: the input is as it was.
    assert_eq!(stream.clone_dtoh(&input).unwrap(), data);

    // Event tracking on (the context has two streams): the call refuses, the capture stays valid.
    assert!(stream.context().is_managing_stream_synchronization());
    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).unwrap();
    let err = ws.inclusive_scan_into(&input, &mut out, ScanOp::Sum).unwrap_err();
    let graph = stream.end_capture(CUgraphInstantiate_flags(0));
    assert!(not_capturable(err));
    assert!(graph.is_ok(), "the capture was invalidated");

    // The legacy default stream.
    let default = stream.context().default_stream();
    // SAFETY: serial.
    let refused = unsafe { lookback::graph::capture(&default, |_| Ok(())) };
    assert!(refused.is_err_and(not_capturable));
}
