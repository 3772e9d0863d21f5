//! `Workspace::set_deterministic`: every float sum gives the same bits on every run, whatever the timing.
//!
//! Each case runs one call many times on the same input while other streams load the GPU (a scan and
//! device-to-device copies of their own, enqueued before each run so that they overlap it), and compares
//! the bits of every run with the first. The results are also checked against the host, so the ordered
//! path is tested for being right, not only for being repeatable. Both engines, every float type, the
//! scans (inclusive, exclusive, in place), the scans by key and reduce_by_key, at 2^24 items and at sizes
//! around tile boundaries; keyed sums on keys whose runs cross many tiles, and on short runs mixed with
//! them (keyed tiles with a head publish their inclusive prefix in the deterministic mode too).
mod common;

use common::{TestElement, check_scan, gpu, random_vec};
use lookback::cudarc::driver::{CudaSlice, CudaStream};
use lookback::half::{bf16, f16};
use lookback::{Engine, ScanOp, Workspace, host};
use std::sync::Arc;

/// Runs of the 2^24-item cases (the tile-boundary cases run fewer).
const RUNS: usize = 200;
const BIG: usize = 1 << 24;

/// Work on two other streams of the same GPU, enqueued before each measured run so that it competes
/// with it for SMs and memory: the measured call's blocks start, and find their predecessors' prefixes,
/// at times that differ from run to run.
struct Load {
    streams: [Arc<CudaStream>; 2],
    ws: Workspace,
    src: CudaSlice<f32>,
    dst: [CudaSlice<f32>; 2],
}

impl Load {
    /// Load of `n`-item scans and copies.
    fn new(stream: &Arc<CudaStream>, n: usize) -> Load {
        let ctx = stream.context();
        let streams = [ctx.new_stream().unwrap(), ctx.new_stream().unwrap()];
        let values: Vec<f32> = random_vec(n, 99, 0.0);
        let src = streams[0].clone_htod(&values).unwrap();
        let dst = [streams[0].alloc_zeros(n).unwrap(), streams[1].alloc_zeros(n).unwrap()];
        streams[0].synchronize().unwrap();
        Load { ws: Workspace::new(&streams[0]), streams, src, dst }
    }

    /// Enqueues the load for run `k`: how much of it comes first changes with `k`.
    fn kick(&mut self, k: usize) {
        let [a, b] = &mut self.dst;
        self.ws.inclusive_scan_into(&self.src, a, ScanOp::Sum).unwrap();
        for _ in 0..k % 3 {
            self.streams[1].memcpy_dtod(&self.src, b).unwrap();
        }
    }

    fn finish(&self) {
        for s in &self.streams {
            s.synchronize().unwrap();
        }
    }
}

/// Whether two results are the same bits (every element type widens exactly to f64); the first item that
/// differs otherwise.
fn first_difference<T: TestElement>(got: &[T], want: &[T]) -> Option<usize> {
    if got.len() != want.len() {
        return Some(got.len().min(want.len()));
    }
    got.iter().zip(want).position(|(g, w)| g.as_f64().to_bits() != w.as_f64().to_bits())
}

/// Runs `call` `runs` times under load and panics unless every run gave the bits of the first; returns
/// the first result. `call` makes the call and copies its result into the host buffer it is given
/// (reused from run to run: no allocation per run).
fn repeatable<T: TestElement>(
    stream: &Arc<CudaStream>,
    load: &mut Load,
    runs: usize,
    what: &str,
    mut call: impl FnMut(&mut Vec<T>),
) -> Vec<T> {
    let mut first = Vec::new();
    load.kick(0);
    call(&mut first);
    let mut got = Vec::new();
    for k in 1..runs {
        load.kick(k);
        call(&mut got);
        if let Some(i) = first_difference(&got, &first) {
            panic!(
                "{what}: run {k} differs from run 0 at item {i} of {}: {:?} vs {:?}",
                got.len(),
                got.get(i).map(|x| x.as_f64()),
                first.get(i).map(|x| x.as_f64())
            );
        }
    }
    load.finish();
    stream.synchronize().unwrap();
    // The bits' digest, for comparing builds or GPUs (`--nocapture` shows it): the grouping is fixed by
    // the input and the tile partition, so two builds of the same kernels on one GPU print the same line.
    println!("digest {what}: {:016x}", digest(&first));
    first
}

/// FNV-1a over every element's bits (widened to f64, exactly).
fn digest<T: TestElement>(xs: &[T]) -> u64 {
    xs.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, x| {
        x.as_f64().to_bits().to_le_bytes().iter().fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
    })
}

/// Copies `src` into `host`, resized to its length.
fn download<T: TestElement, S: lookback::cudarc::driver::DevicePtr<T>>(
    stream: &Arc<CudaStream>,
    src: &S,
    len: usize,
    host: &mut Vec<T>,
) {
    host.resize(len, T::poison());
    stream.memcpy_dtoh(src, host.as_mut_slice()).unwrap();
}

/// A scan, deterministic, `runs` times on one input of `n` items: identical bits every run, and the
/// host's result within rounding.
fn scan_case<T: TestElement>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    load: &mut Load,
    n: usize,
    runs: usize,
    init: Option<T>,
    in_place: bool,
) {
    let input: Vec<T> = random_vec(n, n as u64 ^ 0xd5, 0.0);
    let d_in = stream.clone_htod(&input).unwrap();
    let mut out = stream.clone_htod(&vec![T::poison(); n]).unwrap();
    let what = format!(
        "{} {} {:?} n={n}{}",
        T::DTYPE.name(),
        if init.is_some() { "exclusive" } else { "inclusive" },
        ws.engine(),
        if in_place { " in place" } else { "" }
    );
    let got = repeatable::<T>(stream, load, runs, &what, |host| {
        if in_place {
            stream.memcpy_dtod(&d_in, &mut out).unwrap();
            match init {
                Some(v) => ws.exclusive_scan_in_place(&mut out, v, ScanOp::Sum).unwrap(),
                None => ws.inclusive_scan_in_place(&mut out, ScanOp::Sum).unwrap(),
            }
        } else {
            match init {
                Some(v) => ws.exclusive_scan_into(&d_in, &mut out, v, ScanOp::Sum).unwrap(),
                None => ws.inclusive_scan_into(&d_in, &mut out, ScanOp::Sum).unwrap(),
            }
        }
        download(stream, &out, n, host);
    });
    let want = match init {
        Some(v) => host::exclusive_scan(&input, v, ScanOp::Sum),
        None => host::inclusive_scan(&input, ScanOp::Sum),
    }
    .unwrap();
    check_scan(&input, &got, &want, ScanOp::Sum, init.is_some()).unwrap_or_else(|e| panic!("{what}: {e}"));
}

/// Keys in runs of random lengths up to `max_run`: long runs make keyed sums cross many tiles.
fn run_keys(n: usize, max_run: usize, seed: u64) -> Vec<i32> {
    let mut rng = common::Rng::new(seed);
    let mut keys = Vec::with_capacity(n);
    let mut key = 0i32;
    while keys.len() < n {
        let len = 1 + (rng.next_u64() as usize) % max_run;
        keys.extend(std::iter::repeat_n(key, len.min(n - keys.len())));
        key += 1;
    }
    keys
}

/// A keyed float sum against the exact one: `exact` and `abs` are the f64 sum of the values it adds and
/// of their magnitudes, `count` how many it adds. The bound is the scan tests' (`check_scan`): the
/// rounding of a tree within tiles and of a chain of tiles. A tile's aggregate folded in twice or left
/// out would be off by about a tile's sum, far more than this.
fn close<V: TestElement>(got: V, exact: f64, abs: f64, count: usize) -> bool {
    let g = got.as_f64();
    let bound = 2.0 * (128.0 + count as f64 / 256.0) * V::ACC_EPS * abs + 2.0 * V::OUT_EPS * exact.abs();
    (g - exact).abs() <= bound
}

/// Keys whose first `aligned` runs are `tile` items each, so that each of those tiles starts with a head
/// and needs no prefix (the classic agents' anchors must still publish the deterministic chain's entries,
/// or the later tiles, whose runs cross tiles, would wait for them forever), then runs of up to 3 tiles.
fn tile_aligned_keys(n: usize, tile: usize, aligned: usize, seed: u64) -> Vec<i32> {
    let mut keys: Vec<i32> = (0..(aligned * tile).min(n)).map(|i| (i / tile) as i32).collect();
    let rest = run_keys(n - keys.len(), 3 * tile, seed);
    let base = aligned as i32;
    keys.extend(rest.into_iter().map(|k| k + base));
    keys
}

/// Keys that mix stretches of short runs (1-8 items, over up to 40 tiles) with long runs of 1-70 whole
/// tiles and a part of one, starting anywhere in a tile. In the classic deterministic look-back a keyed tile
/// with a head publishes its inclusive prefix (P) and its successors may stop there, while a run spanning
/// whole headless tiles goes through the anchors (`cuda/core/lookback.cuh`, "Keyed sums"): here P's sit
/// before, inside and after headless stretches that cross windows of 32 tiles and their anchors.
fn mixed_keys(n: usize, tile: usize, seed: u64) -> Vec<i32> {
    let mut rng = common::Rng::new(seed);
    let mut keys = Vec::with_capacity(n);
    let mut key = 0i32;
    while keys.len() < n {
        let r = rng.next_u64();
        if r.is_multiple_of(3) {
            let len = tile * (1 + (r >> 8) as usize % 70) + (r >> 24) as usize % tile;
            keys.extend(std::iter::repeat_n(key, len.min(n - keys.len())));
            key += 1;
        } else {
            let end = (keys.len() + 1 + (r >> 8) as usize % (40 * tile)).min(n);
            while keys.len() < end {
                let len = 1 + (rng.next_u64() % 8) as usize;
                keys.extend(std::iter::repeat_n(key, len.min(end - keys.len())));
                key += 1;
            }
        }
    }
    keys
}

/// reduce_by_key and the inclusive scan by key (sum), deterministic, `runs` times each, on keys in runs
/// of up to `max_run` items.
fn keyed_case<V: TestElement>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    load: &mut Load,
    n: usize,
    max_run: usize,
    runs: usize,
) {
    keyed_case_on::<V>(stream, ws, load, run_keys(n, max_run, n as u64), runs);
}

/// reduce_by_key and the inclusive scan by key (sum) on `keys`, deterministic, `runs` times each.
fn keyed_case_on<V: TestElement>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    load: &mut Load,
    keys: Vec<i32>,
    runs: usize,
) {
    let n = keys.len();
    let values: Vec<V> = random_vec(n, n as u64 ^ 0x77, 0.0);
    let (dk, dv) = (stream.clone_htod(&keys).unwrap(), stream.clone_htod(&values).unwrap());
    let what = format!("{} keyed {:?} n={n}", V::DTYPE.name(), ws.engine());
    // The exact scan by key in f64, the magnitudes it adds and its position in its run; each run's last
    // item holds the run's reduction.
    let (mut exact, mut abs, mut position) = (vec![0.0f64; n], vec![0.0f64; n], vec![0usize; n]);
    let mut run_ends = Vec::new();
    for i in 0..n {
        let (v, head) = (values[i].as_f64(), i == 0 || keys[i] != keys[i - 1]);
        if head && i > 0 {
            run_ends.push(i - 1);
        }
        (exact[i], abs[i], position[i]) =
            if head { (v, v.abs(), 1) } else { (exact[i - 1] + v, abs[i - 1] + v.abs(), position[i - 1] + 1) };
    }
    run_ends.extend(n.checked_sub(1));

    let mut ko = stream.clone_htod(&vec![-1i32; n]).unwrap();
    let mut vo = stream.clone_htod(&vec![V::poison(); n]).unwrap();
    let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
    let want_k = host::reduce_by_key(&keys, &values, ScanOp::Sum).unwrap().0;
    let got = repeatable::<V>(stream, load, runs, &format!("reduce_by_key {what}"), |host| {
        ws.reduce_by_key_into(&dk, &dv, &mut ko, &mut vo, &mut count, ScanOp::Sum).unwrap();
        let runs = stream.clone_dtoh(&count).unwrap()[0] as usize;
        assert_eq!(runs, want_k.len(), "reduce_by_key {what}: number of runs");
        download(stream, &vo.slice(0..runs), runs, host);
    });
    assert_eq!(stream.clone_dtoh(&ko.slice(0..want_k.len())).unwrap(), want_k, "reduce_by_key {what}: keys");
    for (r, (&g, &e)) in got.iter().zip(&run_ends).enumerate() {
        assert!(
            close(g, exact[e], abs[e], position[e]),
            "reduce_by_key {what}: run {r}: {:?} vs {}",
            g.as_f64(),
            exact[e]
        );
    }

    let mut out = stream.clone_htod(&vec![V::poison(); n]).unwrap();
    let got = repeatable::<V>(stream, load, runs, &format!("inclusive_scan_by_key {what}"), |host| {
        ws.inclusive_scan_by_key_into(&dk, &dv, &mut out, ScanOp::Sum).unwrap();
        download(stream, &out, n, host);
    });
    for (i, &g) in got.iter().enumerate() {
        assert!(
            close(g, exact[i], abs[i], position[i]),
            "inclusive_scan_by_key {what}: item {i}: {:?} vs {}",
            g.as_f64(),
            exact[i]
        );
    }
}

fn deterministic_workspace(stream: &Arc<CudaStream>, engine: Engine) -> Workspace {
    let mut ws = Workspace::new(stream);
    ws.set_engine(engine);
    ws.set_deterministic(true);
    ws
}

#[test]
fn scans_of_2_24_items_repeat_bit_for_bit() {
    let Some(stream) = gpu() else { return };
    let mut load = Load::new(&stream, BIG);
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = deterministic_workspace(&stream, engine);
        scan_case::<f32>(&stream, &mut ws, &mut load, BIG, RUNS, None, false);
        scan_case::<f32>(&stream, &mut ws, &mut load, BIG, RUNS, Some(0.25), true);
        scan_case::<f64>(&stream, &mut ws, &mut load, BIG, RUNS, None, true);
        scan_case::<f64>(&stream, &mut ws, &mut load, BIG, RUNS, Some(-1.5), false);
        scan_case::<f16>(&stream, &mut ws, &mut load, BIG, RUNS, None, false);
        scan_case::<bf16>(&stream, &mut ws, &mut load, BIG, RUNS, Some(bf16::from_f32(2.0)), false);
    }
}

/// What the setting is for: by default the same calls vary from run to run under load. Not asserted (the
/// timing may happen to repeat); printed, on the raw stderr handle, so the device logs show it.
#[test]
fn default_float_sums_vary_under_load() {
    use std::io::Write;
    let Some(stream) = gpu() else { return };
    let mut load = Load::new(&stream, BIG);
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = Workspace::new(&stream);
        ws.set_engine(engine);
        let input: Vec<f32> = random_vec(BIG, 3, 0.0);
        let d_in = stream.clone_htod(&input).unwrap();
        let mut out = stream.alloc_zeros::<f32>(BIG).unwrap();
        let (mut first, mut got, mut differing) = (Vec::new(), Vec::new(), 0);
        for k in 0..50 {
            load.kick(k);
            ws.inclusive_scan_into(&d_in, &mut out, ScanOp::Sum).unwrap();
            download(&stream, &out, BIG, if k == 0 { &mut first } else { &mut got });
            differing += usize::from(k > 0 && first_difference(&got, &first).is_some());
        }
        load.finish();
        let _ = writeln!(
            std::io::stderr(),
            "default f32 inclusive sum, 2^24, {engine:?}: {differing} of 49 runs differ from the first"
        );
    }
}

#[test]
fn keyed_sums_of_2_24_items_repeat_bit_for_bit() {
    let Some(stream) = gpu() else { return };
    let mut load = Load::new(&stream, BIG);
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = deterministic_workspace(&stream, engine);
        keyed_case::<f32>(&stream, &mut ws, &mut load, BIG, 200_000, RUNS);
        keyed_case::<f64>(&stream, &mut ws, &mut load, BIG, 200_000, RUNS);
        // f16 sums stay below 65504 (the largest f16) in runs of up to 1000 values below 100.
        keyed_case::<f16>(&stream, &mut ws, &mut load, BIG, 1000, RUNS / 4);
        // Short runs (tiles with heads, which publish P) around long headless runs.
        let tile = lookback::__private::runs_tile_items(4);
        keyed_case_on::<f32>(&stream, &mut ws, &mut load, mixed_keys(BIG, tile, 41), RUNS);
        keyed_case_on::<f64>(&stream, &mut ws, &mut load, mixed_keys(BIG, tile, 43), RUNS);
    }
}

/// Sizes around the tiles of each engine: one tile, a tile and one item, across the 32-tile windows of
/// the classic look-back, and around one full wave of persistent blocks (132 SMs on an H200).
#[test]
fn sizes_around_tile_boundaries_repeat_bit_for_bit() {
    let Some(stream) = gpu() else { return };
    let mut load = Load::new(&stream, BIG);
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = deterministic_workspace(&stream, engine);
        let t = match engine {
            Engine::Persistent => lookback::__private::pipe_scan_tile_items(4),
            _ => lookback::__private::scan_tile_items(4),
        };
        // 1100 and 2100 tiles: the classic anchors (one per 32 tiles) span more than one window of 32.
        let sizes =
            [1, t - 1, t, t + 1, 2 * t + 3, 31 * t, 32 * t + 1, 33 * t - 1, 65 * t + 7, 133 * t + 1, 900 * t + 5];
        for n in sizes.into_iter().chain([1100 * t + 17, 2100 * t - 1]) {
            scan_case::<f32>(&stream, &mut ws, &mut load, n, 20, None, false);
            scan_case::<f32>(&stream, &mut ws, &mut load, n, 5, Some(1.0), true);
        }
        let t64 = match engine {
            Engine::Persistent => lookback::__private::pipe_scan_tile_items(8),
            _ => lookback::__private::scan_tile_items(8),
        };
        for n in [t64 + 1, 33 * t64 - 1, 300 * t64 + 9] {
            scan_case::<f64>(&stream, &mut ws, &mut load, n, 20, None, false);
        }
        for n in [1000, 100_003, 3_000_001] {
            keyed_case::<f32>(&stream, &mut ws, &mut load, n, 200_000, 10);
        }
        // Tiles that start with a head, among them anchors, before tiles that need a prefix: every
        // classic keyed tile size (reduce_by_key on the heads tile or the runs agent, the scans by key on
        // the runs agent or the register tile).
        let tiles = [
            lookback::__private::heads_tile_items(4, 4),
            lookback::__private::heads_tile_items(4, 8),
            Some(lookback::__private::runs_tile_items(4)),
            Some(lookback::__private::runs_tile_items(8)),
            Some(lookback::__private::scan_by_key_tile_items(8, 8)),
        ];
        for tile in tiles.into_iter().flatten() {
            let keys = tile_aligned_keys(100 * tile + 13, tile, 70, tile as u64);
            keyed_case_on::<f32>(&stream, &mut ws, &mut load, keys.clone(), 5);
            keyed_case_on::<f64>(&stream, &mut ws, &mut load, keys, 5);
            // Short runs around long headless ones, ending around windows of 32 tiles.
            for (i, n) in [32 * tile - 1, 32 * tile + 1, 97 * tile, 300 * tile + 5].into_iter().enumerate() {
                let keys = mixed_keys(n, tile, (tile + i) as u64);
                keyed_case_on::<f32>(&stream, &mut ws, &mut load, keys.clone(), 10);
                keyed_case_on::<f64>(&stream, &mut ws, &mut load, keys, 10);
            }
        }
    }
}

/// Integer results do not change under the setting (their kernels take the same path): exact against
/// the host. Float min/max are exact too.
#[test]
fn integers_and_min_max_are_unchanged() {
    let Some(stream) = gpu() else { return };
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = deterministic_workspace(&stream, engine);
        let input: Vec<i32> = random_vec(3_000_017, 5, 0.0);
        let d_in = stream.clone_htod(&input).unwrap();
        let mut out = stream.clone_htod(&vec![i32::poison(); input.len()]).unwrap();
        ws.inclusive_scan_into(&d_in, &mut out, ScanOp::Sum).unwrap();
        assert_eq!(stream.clone_dtoh(&out).unwrap(), host::inclusive_scan(&input, ScanOp::Sum).unwrap());
        let input: Vec<f32> = random_vec(3_000_017, 6, 0.0);
        let d_in = stream.clone_htod(&input).unwrap();
        let mut out = stream.clone_htod(&vec![f32::poison(); input.len()]).unwrap();
        ws.inclusive_scan_into(&d_in, &mut out, ScanOp::Max).unwrap();
        let want = host::inclusive_scan(&input, ScanOp::Max).unwrap();
        let got = stream.clone_dtoh(&out).unwrap();
        assert_eq!(first_difference(&got, &want), None, "{engine:?} f32 max");
    }
}

/// Small enough for compute-sanitizer (`run.sh sanitize BIN sanitizer_cases`): the deterministic look-back
/// of both engines, across several windows of 32 tiles, the keyed pair fold, and anchors without a prefix
/// of their own.
#[test]
fn sanitizer_cases() {
    let Some(stream) = gpu() else { return };
    let mut load = Load::new(&stream, 1 << 16);
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = deterministic_workspace(&stream, engine);
        let t = lookback::__private::scan_tile_items(4);
        scan_case::<f32>(&stream, &mut ws, &mut load, 70 * t + 3, 2, None, false);
        scan_case::<f64>(&stream, &mut ws, &mut load, 9 * t + 1, 2, Some(0.5), true);
        keyed_case::<f32>(&stream, &mut ws, &mut load, 200_003, 50_000, 2);
        // Anchors whose tiles start with a head (classic heads tile: reduce_by_key of i32 keys, f32 values).
        if let Some(tile) = lookback::__private::heads_tile_items(4, 4) {
            keyed_case_on::<f32>(&stream, &mut ws, &mut load, tile_aligned_keys(40 * tile + 5, tile, 33, 7), 2);
            // Tiles with heads publishing P among headless ones (the keyed way out of the anchors).
            keyed_case_on::<f32>(&stream, &mut ws, &mut load, mixed_keys(70 * tile + 9, tile, 11), 2);
        }
    }
}

#[test]
fn the_setting_is_off_by_default_and_reads_back() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    assert!(!ws.deterministic());
    ws.set_deterministic(true);
    assert!(ws.deterministic());
    ws.set_deterministic(false);
    assert!(!ws.deterministic());
}
