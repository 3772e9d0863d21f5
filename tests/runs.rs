//! The run-based primitives against the host reference: reduce_by_key (Sum, Min, Max), unique_by_key,
//! inclusive/exclusive scan_by_key, run-length encoding (u32 and u64 lengths), run-end encoding and
//! non-trivial runs — for several key/value type pairs, run shapes (length 1, 2, geometric, one run over
//! many tiles, runs ending exactly at tile boundaries, all equal, all distinct, NaN keys) and sizes around
//! tile boundaries. Outputs are poisoned, with guard items past the end that must stay untouched.
//!
//! Every case runs on both engines (set explicitly on the workspace): the classic one at sizes around its
//! tiles, the persistent one (`cuda/persistent/runs_work.cuh`: encodings, unique_by_key, reduce_by_key; the
//! other primitives fall back to classic there) around its keyed and key-only tiles, ±1 item and ±16
//! bytes (the bulk copies' trailing bytes), and over more tiles than every SM's ring holds.
mod common;

use common::{GUARD, Rng, TestElement, check_scan, gpu, same, upload_poisoned};
use lookback::cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use lookback::half::{bf16, f16};
use lookback::{Engine, ScanOp, Workspace, host};
use proptest::prelude::*;
use std::sync::Arc;

/// How the keys of a test are laid out.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// Every key differs from its neighbours.
    Distinct,
    /// Runs of exactly two.
    Pairs,
    /// Geometric run lengths of this mean.
    Geometric(f64),
    /// One key throughout.
    AllEqual,
    /// Runs of exactly one tile: every run ends on a tile boundary.
    TileRuns,
    /// Runs of half a tile.
    HalfTileRuns,
    /// Runs of one tile starting a third into a tile: every run spans a tile boundary.
    StraddleRuns,
    /// Geometric runs with NaN keys sprinkled in (floats only; no-op for integers).
    WithNans,
}

const SHAPES: [Shape; 9] = [
    Shape::Distinct,
    Shape::Pairs,
    Shape::Geometric(4.0),
    Shape::Geometric(1000.0),
    Shape::AllEqual,
    Shape::TileRuns,
    Shape::HalfTileRuns,
    Shape::StraddleRuns,
    Shape::WithNans,
];

fn keys<K: TestElement>(n: usize, shape: Shape, tile: usize, seed: u64) -> Vec<K> {
    let mut rng = Rng::new(seed);
    let mut current = 0u8;
    let mut next = |rng: &mut Rng| {
        // A key different from the current one.
        current = (current + 1 + (rng.next_u64() % 98) as u8) % 100;
        K::small(current)
    };
    let mut key = next(&mut rng);
    let nan = K::random(&mut Rng::new(1), 1.0);
    (0..n)
        .map(|i| {
            let new_run = match shape {
                Shape::Distinct => true,
                Shape::Pairs => i % 2 == 0,
                Shape::Geometric(mean) => rng.unit() < 1.0 / mean,
                Shape::AllEqual => false,
                Shape::TileRuns => i % tile == 0,
                Shape::HalfTileRuns => i % (tile / 2) == 0,
                Shape::StraddleRuns => (i + tile / 3).is_multiple_of(tile),
                Shape::WithNans => {
                    if K::ACC_EPS > 0.0 && rng.unit() < 0.05 {
                        return nan;
                    }
                    rng.unit() < 0.25
                }
            };
            if new_run && i > 0 {
                key = next(&mut rng);
            }
            key
        })
        .collect()
}

/// The first `count` items of `out`, after checking that nothing past `n` was written.
fn front<T: TestElement>(stream: &Arc<CudaStream>, out: &CudaSlice<T>, count: usize, n: usize, what: &str) -> Vec<T> {
    let all = stream.clone_dtoh(out).unwrap();
    assert!(all[n..].iter().all(|g| *g == T::poison()), "{what}: wrote past the output's {n} items");
    all[..count].to_vec()
}

/// Run aggregates: exact except float sums, which the look-back adds in another order than the host
/// (bound as in `check_scan`, on the run's own magnitudes).
fn same_aggregates<K: TestElement, V: TestElement>(
    keys: &[K],
    values: &[V],
    got: &[V],
    want: &[V],
    op: ScanOp,
    what: &str,
) {
    assert_eq!(got.len(), want.len(), "{what}: count");
    if op != ScanOp::Sum || V::ACC_EPS == 0.0 {
        return same(got, want, what);
    }
    let (_, lengths) = host::run_length_encode(keys);
    let mut start = 0usize;
    for (r, &len) in lengths.iter().enumerate() {
        let len = len as usize;
        let abs: f64 = values[start..start + len].iter().map(|v| v.as_f64().abs()).sum();
        let (g, w) = (got[r].as_f64(), want[r].as_f64());
        let bound = 2.0 * (128.0 + len as f64 / 256.0) * V::ACC_EPS * abs + 2.0 * V::OUT_EPS * w.abs();
        let ok = (g - w).abs() <= bound || g == w || (g.is_nan() && w.is_nan());
        assert!(ok, "{what}: run {r} (len {len}): got {g}, want {w}");
        start += len;
    }
}

/// The tile that `TileRuns` and its kin align runs to on an engine: the classic one, or the persistent
/// keyed one (whose multiples the larger key-only tile of the encodings is).
fn tile_of<K: TestElement, V: TestElement>(engine: Engine) -> usize {
    if engine == Engine::Classic {
        lookback::__private::runs_tile_items(size_of::<K>().max(size_of::<V>()))
    } else {
        lookback::__private::pipe_runs_tile_items(size_of::<K>(), size_of::<V>())
    }
}

/// Items per tile of the classic scans by key of `(K, V)`: the register tile of 8-byte values
/// (`cuda/classic/scan_by_key_tile.cuh`) differs from the other run-based kernels' tile.
fn scan_tile<K: TestElement, V: TestElement>() -> usize {
    lookback::__private::scan_by_key_tile_items(size_of::<K>().max(size_of::<V>()), size_of::<V>())
}

/// Every run-based primitive of `n` keys of `shape`, whose runs align to `tile` where the shape says so.
fn check_all<K: TestElement, V: TestElement>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    n: usize,
    (shape, tile): (Shape, usize),
    seed: u64,
    engine: Engine,
) {
    ws.set_engine(engine);
    let keys: Vec<K> = keys(n, shape, tile, seed);
    let what = format!("{}/{} n={n} {shape:?} seed={seed} {engine:?}", K::DTYPE.name(), V::DTYPE.name());
    check_keys::<K, V>(stream, ws, &keys, seed, &what);
}

/// Every run-based primitive on `keys` (random values of type `V`) on the workspace's engine.
fn check_keys<K: TestElement, V: TestElement>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    keys: &[K],
    seed: u64,
    what: &str,
) {
    let n = keys.len();
    let keys = keys.to_vec();
    let values: Vec<V> = common::random_vec(n, seed ^ 0x5555, 0.01);
    let d_keys = stream.clone_htod(&keys).unwrap();
    let d_values = stream.clone_htod(&values).unwrap();
    let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
    let read_count = |c: &CudaSlice<u64>| stream.clone_dtoh(c).unwrap()[0] as usize;

    for op in [ScanOp::Sum, ScanOp::Min, ScanOp::Max] {
        let (want_k, want_v) = host::reduce_by_key(&keys, &values, op).unwrap();
        let mut ko = upload_poisoned::<K>(stream, n);
        let mut vo = upload_poisoned::<V>(stream, n);
        ws.reduce_by_key_into(&d_keys, &d_values, &mut ko, &mut vo, &mut count, op).unwrap();
        let k = read_count(&count);
        let w = format!("reduce_by_key {op:?} {what}");
        assert_eq!(k, want_k.len(), "{w}: runs");
        same(&front(stream, &ko, k, n, &w), &want_k, &w);
        same_aggregates(&keys, &values, &front(stream, &vo, k, n, &w), &want_v, op, &w);

        let w = format!("inclusive_scan_by_key {op:?} {what}");
        let want = host::inclusive_scan_by_key(&keys, &values, op).unwrap();
        let mut out = upload_poisoned::<V>(stream, n);
        ws.inclusive_scan_by_key_into(&d_keys, &d_values, &mut out, op).unwrap();
        check_scan(&values, &front(stream, &out, n, n, &w), &want, op, false).unwrap_or_else(|e| panic!("{w}: {e}"));

        let w = format!("exclusive_scan_by_key {op:?} {what}");
        let init = V::small(7);
        let want = host::exclusive_scan_by_key(&keys, &values, init, op).unwrap();
        let mut out = upload_poisoned::<V>(stream, n);
        ws.exclusive_scan_by_key_into(&d_keys, &d_values, &mut out, init, op).unwrap();
        check_scan(&values, &front(stream, &out, n, n, &w), &want, op, true).unwrap_or_else(|e| panic!("{w}: {e}"));
    }

    let w = format!("unique_by_key {what}");
    let (want_k, want_v) = host::unique_by_key(&keys, &values).unwrap();
    let mut ko = upload_poisoned::<K>(stream, n);
    let mut vo = upload_poisoned::<V>(stream, n);
    ws.unique_by_key_into(&d_keys, &d_values, &mut ko, &mut vo, &mut count).unwrap();
    let k = read_count(&count);
    same(&front(stream, &ko, k, n, &w), &want_k, &w);
    same(&front(stream, &vo, k, n, &w), &want_v, &w);

    check_encodings::<K>(stream, ws, &keys, &d_keys, what);
}

/// Run-length (u32 and u64), run-end and non-trivial-run encodings of `keys`.
fn check_encodings<K: TestElement>(
    stream: &Arc<CudaStream>,
    ws: &mut Workspace,
    keys: &[K],
    d_keys: &impl DevicePtr<K>,
    what: &str,
) {
    let n = keys.len();
    let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
    let read_count = |c: &CudaSlice<u64>| stream.clone_dtoh(c).unwrap()[0] as usize;
    let (want_values, want_lengths) = host::run_length_encode(keys);
    let (_, want_ends) = host::run_end_encode(keys);
    let (want_offsets, want_nt_lengths) = host::non_trivial_runs(keys);
    let poison32 = |n: usize| stream.clone_htod(&vec![0xdead_beefu32; n + GUARD]).unwrap();
    let poison64 = |n: usize| stream.clone_htod(&vec![0xdead_beef_dead_beefu64; n + GUARD]).unwrap();
    let read32 = |b: &CudaSlice<u32>, k: usize| -> Vec<u64> {
        let all = stream.clone_dtoh(b).unwrap();
        assert!(all[n..].iter().all(|&g| g == 0xdead_beef), "{what}: wrote past the end");
        all[..k].iter().map(|&x| x as u64).collect()
    };
    let read64 = |b: &CudaSlice<u64>, k: usize| -> Vec<u64> {
        let all = stream.clone_dtoh(b).unwrap();
        assert!(all[n..].iter().all(|&g| g == 0xdead_beef_dead_beef), "{what}: wrote past the end");
        all[..k].to_vec()
    };

    let w = format!("run_length_encode<u32> {what}");
    let mut vals = upload_poisoned::<K>(stream, n);
    let mut lens = poison32(n);
    ws.run_length_encode_into(d_keys, &mut vals, &mut lens, &mut count).unwrap();
    let k = read_count(&count);
    assert_eq!(k, want_values.len(), "{w}: runs");
    same(&front(stream, &vals, k, n, &w), &want_values, &w);
    assert_eq!(read32(&lens, k), want_lengths, "{w}: lengths");

    let w = format!("run_length_encode<u64> {what}");
    let mut lens = poison64(n);
    ws.run_length_encode_into(d_keys, &mut vals, &mut lens, &mut count).unwrap();
    assert_eq!(read_count(&count), want_values.len(), "{w}: runs");
    assert_eq!(read64(&lens, k), want_lengths, "{w}: lengths");

    let w = format!("run_end_encode<u32> {what}");
    let mut vals = upload_poisoned::<K>(stream, n);
    let mut ends = poison32(n);
    ws.run_end_encode_into(d_keys, &mut vals, &mut ends, &mut count).unwrap();
    assert_eq!(read_count(&count), want_values.len(), "{w}: runs");
    same(&front(stream, &vals, k, n, &w), &want_values, &w);
    assert_eq!(read32(&ends, k), want_ends, "{w}: ends");

    let w = format!("non_trivial_runs<u64> {what}");
    let mut offsets = poison64(n);
    let mut lens = poison64(n);
    ws.non_trivial_runs_into(d_keys, &mut offsets, &mut lens, &mut count).unwrap();
    let k = read_count(&count);
    assert_eq!(k, want_offsets.len(), "{w}: runs");
    assert_eq!(read64(&offsets, k), want_offsets, "{w}: offsets");
    assert_eq!(read64(&lens, k), want_nt_lengths, "{w}: lengths");

    let w = format!("non_trivial_runs<u32> {what}");
    let mut offsets = poison32(n);
    let mut lens = poison32(n);
    ws.non_trivial_runs_into(d_keys, &mut offsets, &mut lens, &mut count).unwrap();
    assert_eq!(read_count(&count), want_offsets.len(), "{w}: runs");
    assert_eq!(read32(&offsets, k), want_offsets, "{w}: offsets");
    assert_eq!(read32(&lens, k), want_nt_lengths, "{w}: lengths");
}

fn edge_sizes(tile: usize) -> Vec<usize> {
    vec![0, 1, 2, 17, tile - 1, tile, tile + 1, 2 * tile, 3 * tile - 1, 9 * tile + 5]
}

/// Items per tile of the classic encodings of keys `K` (8-byte keys have a larger tile there than the
/// keyed kernels: `cuda/core/tuning.cuh`).
fn encode_tile<K: TestElement>() -> usize {
    lookback::__private::encode_tile_items(size_of::<K>())
}

/// Items per tile of the classic encodings' small-grid kernel for keys `K`.
fn encode_small_tile<K: TestElement>() -> usize {
    lookback::__private::encode_small_tile_items(size_of::<K>())
}

/// Sizes for the classic engine: around the keyed kernels' tile, the scans by key's, both tiles of the
/// encodings, and the register tiles whose run heads write every output where `(K, V)` and `K` have them.
fn classic_edge_sizes<K: TestElement, V: TestElement>() -> Vec<usize> {
    let mut sizes = edge_sizes(tile_of::<K, V>(Engine::Classic));
    sizes.extend(edge_sizes(scan_tile::<K, V>()));
    sizes.extend(edge_sizes(encode_tile::<K>()));
    sizes.extend(edge_sizes(encode_small_tile::<K>()));
    for value_bytes in [size_of::<V>(), 0] {
        if let Some(tile) = lookback::__private::heads_tile_items(size_of::<K>(), value_bytes) {
            sizes.extend(edge_sizes(tile));
        }
    }
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// Sizes for the persistent engine: around its keyed tile and its key-only tile (the encodings'), ±1 item
/// and ±16 bytes of the narrower column (the bulk copies move 16-byte multiples; the rest is read from
/// global memory), and 20 tiles (more than three rings of 6 slots).
fn pipe_edge_sizes<K: TestElement, V: TestElement>() -> Vec<usize> {
    let narrow = 16 / size_of::<K>().min(size_of::<V>());
    let mut sizes = vec![0, 1, 2, 17];
    for t in [
        lookback::__private::pipe_runs_tile_items(size_of::<K>(), size_of::<V>()),
        lookback::__private::pipe_runs_tile_items(size_of::<K>(), 0),
    ] {
        sizes.extend([t - narrow, t - 1, t, t + 1, t + narrow, 2 * t + 3, 20 * t + 5]);
    }
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

fn edge_cases<K: TestElement, V: TestElement>() {
    let Some(stream) = gpu() else { return };
    for engine in [Engine::Classic, Engine::Persistent] {
        let mut ws = Workspace::new(&stream);
        let sizes = if engine == Engine::Classic { classic_edge_sizes::<K, V>() } else { pipe_edge_sizes::<K, V>() };
        // Runs aligned to the engine's tile, and on the classic engine to the scans by key's own tile
        // where it differs (8-byte values).
        let mut tiles = vec![tile_of::<K, V>(engine)];
        if engine == Engine::Classic {
            // The scans by key's tile and the register tiles whose run heads write every output (with
            // values; the encodings'), where they differ.
            let heads = [size_of::<V>(), 0].map(|v| lookback::__private::heads_tile_items(size_of::<K>(), v));
            for t in std::iter::once(scan_tile::<K, V>()).chain(heads.into_iter().flatten()) {
                if !tiles.contains(&t) {
                    tiles.push(t);
                }
            }
        }
        for (i, n) in sizes.into_iter().enumerate() {
            for (s, shape) in SHAPES.into_iter().enumerate() {
                let aligned = matches!(shape, Shape::TileRuns | Shape::HalfTileRuns | Shape::StraddleRuns);
                for &tile in if aligned { &tiles[..] } else { &tiles[..1] } {
                    check_all::<K, V>(&stream, &mut ws, n, (shape, tile), (i * 16 + s) as u64, engine);
                }
            }
        }
    }
}

fn random_cases() -> impl Strategy<Value = (usize, usize, u64)> {
    (0.0f64..22.0, 0..SHAPES.len(), any::<u64>()).prop_map(|(l, s, seed)| (2f64.powf(l) as usize, s, seed))
}

macro_rules! runs_tests {
    ($($k:ty, $v:ty => $edge:ident, $random:ident;)*) => {$(
        #[test]
        fn $edge() {
            edge_cases::<$k, $v>();
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 6, failure_persistence: None, ..ProptestConfig::default() })]
            #[test]
            fn $random(case in random_cases()) {
                let Some(stream) = gpu() else { return Ok(()) };
                let (n, s, seed) = case;
                let mut ws = Workspace::new(&stream);
                for engine in [Engine::Classic, Engine::Persistent] {
                    let tile = tile_of::<$k, $v>(engine);
                    check_all::<$k, $v>(&stream, &mut ws, n, (SHAPES[s], tile), seed, engine);
                }
            }
        }
    )*};
}

runs_tests! {
    i32, i32 => edge_i32_i32, random_i32_i32;
    u8, f64 => edge_u8_f64, random_u8_f64;
    f16, i64 => edge_f16_i64, random_f16_i64;
    f64, f16 => edge_f64_f16, random_f64_f16;
    u64, u8 => edge_u64_u8, random_u64_u8;
    bf16, f32 => edge_bf16_f32, random_bf16_f32;
    f32, bf16 => edge_f32_bf16, random_f32_bf16;
    i16, u16 => edge_i16_u16, random_i16_u16;
    i8, u32 => edge_i8_u32, random_i8_u32;
    i64, f64 => edge_i64_f64, random_i64_f64;
    f64, f64 => edge_f64_f64, random_f64_f64;
    f32, u64 => edge_f32_u64, random_f32_u64;
    f32, f32 => edge_f32_f32, random_f32_f32;
    u32, u32 => edge_u32_u32, random_u32_u32;
}

#[test]
fn every_key_type_encodes_like_the_host() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    for engine in [Engine::Classic, Engine::Persistent] {
        ws.set_engine(engine);
        every_key_type(&stream, &mut ws);
    }
}

/// Every key type's encodings at 100,000 items (several persistent tiles of every key size).
fn every_key_type(stream: &Arc<CudaStream>, ws: &mut Workspace) {
    fn one<K: TestElement>(stream: &Arc<CudaStream>, ws: &mut Workspace) {
        for (s, shape) in SHAPES.into_iter().enumerate() {
            let n = 100_000 + s;
            let keys: Vec<K> = keys(n, shape, 4096, s as u64);
            let d = stream.clone_htod(&keys).unwrap();
            check_encodings::<K>(stream, ws, &keys, &d, &format!("{} {shape:?}", K::DTYPE.name()));
        }
    }
    one::<i8>(stream, ws);
    one::<i16>(stream, ws);
    one::<i32>(stream, ws);
    one::<i64>(stream, ws);
    one::<u8>(stream, ws);
    one::<u16>(stream, ws);
    one::<u32>(stream, ws);
    one::<u64>(stream, ws);
    one::<f32>(stream, ws);
    one::<f64>(stream, ws);
    one::<f16>(stream, ws);
    one::<bf16>(stream, ws);
}

/// Float keys of every width, bit patterns chosen to tell IEEE == from bit equality: +0 and -0 (equal),
/// NaNs of both signs and several payloads (each equal to nothing, itself included), ±inf, denormals
/// (distinct from zero and from each other), ±1, the largest finite value.
trait FloatKey: TestElement {
    const SPECIALS: [u64; 13];
    fn from_key_bits(bits: u64) -> Self;
    fn key_bits(self) -> u64;
}
macro_rules! float_key {
    ($($t:ty, $bits:ty, [$($b:expr),*];)*) => {$(
        impl FloatKey for $t {
            const SPECIALS: [u64; 13] = [$($b),*];
            fn from_key_bits(bits: u64) -> Self { <$t>::from_bits(bits as $bits) }
            fn key_bits(self) -> u64 { <$t>::to_bits(self) as u64 }
        }
    )*};
}
float_key! {
    f16, u16, [0x0000, 0x8000, 0x7e00, 0xfe00, 0x7c01, 0x7c00, 0xfc00, 0x0001, 0x0002, 0x8001, 0x3c00, 0xbc00, 0x7bff];
    bf16, u16, [0x0000, 0x8000, 0x7fc0, 0xffc0, 0x7f81, 0x7f80, 0xff80, 0x0001, 0x0002, 0x8001, 0x3f80, 0xbf80, 0x7f7f];
    f32, u32, [0, 0x8000_0000, 0x7fc0_0000, 0xffc0_0000, 0x7f80_0001, 0x7f80_0000, 0xff80_0000, 1, 2, 0x8000_0001,
        0x3f80_0000, 0xbf80_0000, 0x7f7f_ffff];
    f64, u64, [0, 0x8000_0000_0000_0000, 0x7ff8_0000_0000_0000, 0xfff8_0000_0000_0000, 0x7ff0_0000_0000_0001,
        0x7ff0_0000_0000_0000, 0xfff0_0000_0000_0000, 1, 2, 0x8000_0000_0000_0001, 0x3ff0_0000_0000_0000,
        0xbff0_0000_0000_0000, 0x7fef_ffff_ffff_ffff];
}

/// Runs (geometric, mean 3) of keys drawn from `K::SPECIALS`, so that neighbouring runs often hold keys
/// that are equal under IEEE == but differ in bits (±0) or are bit-equal but not equal (a NaN).
fn special_keys<K: FloatKey>(n: usize, seed: u64) -> Vec<K> {
    let mut rng = Rng::new(seed);
    let mut key = K::from_key_bits(K::SPECIALS[0]);
    (0..n)
        .map(|_| {
            if rng.unit() < 1.0 / 3.0 {
                key = K::from_key_bits(K::SPECIALS[(rng.next_u64() % 13) as usize]);
            }
            key
        })
        .collect()
}

/// Float keys delimit runs by IEEE ==, on both engines, for every float width (f16 and bf16 share the
/// 2-byte kernels and are told apart by the parameters): every primitive against the host reference,
/// and the encoded keys bit for bit (a run's key is its first item's, so -0 after +0 stays +0).
#[test]
fn float_keys_compare_as_ieee() {
    let Some(stream) = gpu() else { return };
    fn one<K: FloatKey>(stream: &Arc<CudaStream>, ws: &mut Workspace) {
        for (i, n) in [1, 2, 100, 3 * encode_tile::<K>() + 7, 100_003].into_iter().enumerate() {
            let keys: Vec<K> = special_keys(n, 90 + i as u64);
            let what = format!("{} special keys n={n}", K::DTYPE.name());
            check_keys::<K, i32>(stream, ws, &keys, i as u64, &what);
            let (want, _) = host::run_length_encode(&keys);
            let d_keys = stream.clone_htod(&keys).unwrap();
            let mut vals = upload_poisoned::<K>(stream, n);
            let mut lens = stream.alloc_zeros::<u32>(n).unwrap();
            let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
            ws.run_length_encode_into(&d_keys, &mut vals, &mut lens, &mut count).unwrap();
            let runs = stream.clone_dtoh(&count).unwrap()[0] as usize;
            let got = stream.clone_dtoh(&vals).unwrap();
            let bits = |v: &[K]| v.iter().map(|k| k.key_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got[..runs.min(n)]), bits(&want), "{what}: run keys, bit for bit");
        }
    }
    let mut ws = Workspace::new(&stream);
    for engine in [Engine::Classic, Engine::Persistent] {
        ws.set_engine(engine);
        one::<f16>(&stream, &mut ws);
        one::<bf16>(&stream, &mut ws);
        one::<f32>(&stream, &mut ws);
        one::<f64>(&stream, &mut ws);
    }
}

/// The classic encodings take a second kernel, with a tile of its own, for small inputs (`small_grid_tiles`
/// in src/plan.rs: 1024 run-agent tiles, or 256 of the register tile where the key size has one): both
/// sides of that threshold, and the small kernel's own tile edges, for a key size of each kernel shape.
#[test]
fn encodings_on_both_sides_of_the_small_grid_threshold() {
    let Some(stream) = gpu() else { return };
    fn one<K: TestElement>(stream: &Arc<CudaStream>, ws: &mut Workspace) {
        let tile = encode_tile::<K>();
        // check_encodings runs all three encodings, which share the threshold.
        {
            let threshold =
                lookback::__private::encode_small_grid_items(size_of::<K>()).expect("encodings of the key size");
            for (i, (n, shape)) in [
                (threshold, Shape::Geometric(4.0)),
                (threshold + 1, Shape::StraddleRuns),
                (threshold + threshold / 13 + 7, Shape::Pairs),
            ]
            .into_iter()
            .enumerate()
            {
                let keys: Vec<K> = keys(n, shape, tile, 70 + i as u64);
                let d = stream.clone_htod(&keys).unwrap();
                check_encodings::<K>(stream, ws, &keys, &d, &format!("{} {n} items {shape:?}", K::DTYPE.name()));
            }
        }
        let small = encode_small_tile::<K>();
        for (i, n) in edge_sizes(small).into_iter().enumerate() {
            for shape in [Shape::TileRuns, Shape::StraddleRuns, Shape::Geometric(4.0)] {
                let keys: Vec<K> = keys(n, shape, small, 80 + i as u64);
                let d = stream.clone_htod(&keys).unwrap();
                let what = format!("{} {n} items {shape:?} (small-grid tile {small})", K::DTYPE.name());
                check_encodings::<K>(stream, ws, &keys, &d, &what);
            }
        }
    }
    let mut ws = Workspace::new(&stream);
    ws.set_engine(Engine::Classic);
    one::<i32>(&stream, &mut ws);
    one::<u8>(&stream, &mut ws);
    one::<f16>(&stream, &mut ws);
    one::<f64>(&stream, &mut ws);
}

#[test]
fn one_shot_forms_match_the_into_forms() {
    let Some(stream) = gpu() else { return };
    let keys: Vec<u32> = keys(50_000, Shape::Geometric(3.0), 4096, 9);
    let values: Vec<f32> = common::random_vec(50_000, 10, 0.0);
    let (dk, dv) = (stream.clone_htod(&keys).unwrap(), stream.clone_htod(&values).unwrap());
    let rbk = lookback::reduce_by_key(&dk, &dv, ScanOp::Max).unwrap();
    assert_eq!(rbk.to_vecs().unwrap(), host::reduce_by_key(&keys, &values, ScanOp::Max).unwrap());
    let ubk = lookback::unique_by_key(&dk, &dv).unwrap();
    assert_eq!(ubk.to_vecs().unwrap(), host::unique_by_key(&keys, &values).unwrap());
    let rle = lookback::run_length_encode::<u32, u64, _>(&dk).unwrap();
    assert_eq!(rle.to_vecs().unwrap(), host::run_length_encode(&keys));
    let ree = lookback::run_end_encode::<u32, u64, _>(&dk).unwrap();
    assert_eq!(ree.to_vecs().unwrap(), host::run_end_encode(&keys));
    let ntr = lookback::non_trivial_runs::<u32, u64, _>(&dk).unwrap();
    assert_eq!(ntr.to_vecs().unwrap(), host::non_trivial_runs(&keys));
    let mins = lookback::inclusive_scan_by_key(&dk, &dv, ScanOp::Min).unwrap();
    assert_eq!(stream.clone_dtoh(&mins).unwrap(), host::inclusive_scan_by_key(&keys, &values, ScanOp::Min).unwrap());
    let maxs = lookback::exclusive_scan_by_key(&dk, &dv, -1.0, ScanOp::Max).unwrap();
    assert_eq!(
        stream.clone_dtoh(&maxs).unwrap(),
        host::exclusive_scan_by_key(&keys, &values, -1.0, ScanOp::Max).unwrap()
    );
    let empty = stream.alloc_zeros::<u32>(0).unwrap();
    assert!(lookback::run_length_encode::<u32, u32, _>(&empty).unwrap().is_empty());
}

/// A few sizes and shapes of two type pairs on both engines: small enough for compute-sanitizer's
/// racecheck. The persistent sizes are partial tiles with bulk-copy tails, a few tiles, and once (as in
/// tests/scan.rs) 900 tiles of i32/i32, more than 132 SMs × 6 slots, so that blocks go round their rings.
#[test]
fn sanitizer_cases() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    for (i, shape) in [Shape::Geometric(4.0), Shape::TileRuns, Shape::WithNans].into_iter().enumerate() {
        let tile = lookback::__private::runs_tile_items(4);
        for n in [1, tile + 1, 3 * tile - 1] {
            check_all::<i32, i32>(&stream, &mut ws, n, (shape, tile), i as u64, Engine::Classic);
            check_all::<f64, f16>(&stream, &mut ws, n, (shape, tile), i as u64 + 7, Engine::Classic);
        }
        // The register tile whose run heads write every output (cuda/classic/runs_at_heads.cuh): i32/i32 above runs
        // there for reduce_by_key, unique_by_key and the encodings; float keys and values too.
        let tile = lookback::__private::heads_tile_items(4, 4).expect("a heads tile for 4-byte keys and values");
        let encode = lookback::__private::heads_tile_items(4, 0).expect("a heads tile for 4-byte keys");
        for n in [tile + 1, 3 * tile - 1, 2 * encode + 7] {
            check_all::<f32, f32>(&stream, &mut ws, n, (shape, tile), i as u64 + 5, Engine::Classic);
        }
        // Its encodings (with non-trivial runs) of 4- and 8-byte keys, past the small-grid kernel.
        lookback::__private::set_small_grids(&mut ws, false);
        for (n, seed) in [(2 * encode + 7, 13), (encode - 1, 17)] {
            let keys: Vec<i32> = keys(n, shape, encode, i as u64 + seed);
            check_encodings::<i32>(&stream, &mut ws, &keys, &stream.clone_htod(&keys).unwrap(), "sanitizer i32");
        }
        let wide = lookback::__private::heads_tile_items(8, 0).expect("a heads tile for 8-byte keys");
        let keys: Vec<f64> = keys(2 * wide + 9, shape, wide, i as u64 + 19);
        check_encodings::<f64>(&stream, &mut ws, &keys, &stream.clone_htod(&keys).unwrap(), "sanitizer f64");
        lookback::__private::set_small_grids(&mut ws, true);
        // The register tile of the scans by key of 8-byte values (cuda/classic/scan_by_key_tile.cuh).
        let tile = lookback::__private::scan_by_key_tile_items(8, 8);
        for n in [1, tile + 1, 3 * tile - 1] {
            check_all::<i32, f64>(&stream, &mut ws, n, (shape, tile), i as u64 + 3, Engine::Classic);
        }
        let t = lookback::__private::pipe_runs_tile_items(4, 4);
        for n in [5, t + 3, 7 * t + 1] {
            check_all::<i32, i32>(&stream, &mut ws, n, (shape, t), i as u64, Engine::Persistent);
        }
        let t = lookback::__private::pipe_runs_tile_items(8, 2);
        check_all::<f64, f16>(&stream, &mut ws, 2 * t + 7, (shape, t), i as u64 + 7, Engine::Persistent);
        // 8-byte reductions: the 16-byte status entries (RunsPairState TWO_WORDS).
        let t = lookback::__private::pipe_runs_tile_items(4, 8);
        check_all::<i32, f64>(&stream, &mut ws, 3 * t + 5, (shape, t), i as u64 + 11, Engine::Persistent);
    }
    // Rings: reduce_by_key and run-length encoding only (two launches keep racecheck short).
    ws.set_engine(Engine::Persistent);
    let n = 900 * lookback::__private::pipe_runs_tile_items(4, 4) + 1;
    let keys: Vec<i32> = keys(n, Shape::Geometric(4.0), 4096, 99);
    let values: Vec<i32> = common::random_vec(n, 100, 0.0);
    let (dk, dv) = (stream.clone_htod(&keys).unwrap(), stream.clone_htod(&values).unwrap());
    let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
    let (mut ko, mut vo) = (upload_poisoned::<i32>(&stream, n), upload_poisoned::<i32>(&stream, n));
    ws.reduce_by_key_into(&dk, &dv, &mut ko, &mut vo, &mut count, ScanOp::Sum).unwrap();
    let (want_k, want_v) = host::reduce_by_key(&keys, &values, ScanOp::Sum).unwrap();
    let k = stream.clone_dtoh(&count).unwrap()[0] as usize;
    assert_eq!(k, want_k.len(), "reduce_by_key, 900 tiles: runs");
    same(&front(&stream, &ko, k, n, "900 tiles keys"), &want_k, "900 tiles keys");
    same(&front(&stream, &vo, k, n, "900 tiles sums"), &want_v, "900 tiles sums");
    let mut lengths = upload_poisoned::<u64>(&stream, n);
    ws.run_length_encode_into(&dk, &mut ko, &mut lengths, &mut count).unwrap();
    let (want_values, want_lengths) = host::run_length_encode(&keys);
    assert_eq!(stream.clone_dtoh(&count).unwrap()[0] as usize, want_values.len(), "rle, 900 tiles: runs");
    same(&front(&stream, &ko, want_values.len(), n, "900 tiles values"), &want_values, "900 tiles values");
    let got_lengths = front(&stream, &lengths, want_lengths.len(), n, "900 tiles lengths");
    assert_eq!(got_lengths, want_lengths, "900 tiles lengths");
}

/// A scan by key stores each lane's results with one vector store, so the persistent engine needs a
/// 16-byte aligned output as well as aligned inputs: an output view one item in falls back to the classic
/// agent under `Engine::Persistent` and is still right (inputs of several persistent tiles).
#[test]
fn scan_by_key_into_unaligned_output() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    ws.set_engine(Engine::Persistent);
    let n = 3 * lookback::__private::pipe_runs_tile_items(4, 4) + 5;
    let keys: Vec<i32> = keys(n, Shape::Geometric(4.0), 4096, 21);
    let values: Vec<i32> = common::random_vec(n, 22, 0.0);
    let (dk, dv) = (stream.clone_htod(&keys).unwrap(), stream.clone_htod(&values).unwrap());
    let mut out = upload_poisoned::<i32>(&stream, n + 1);
    ws.inclusive_scan_by_key_into(&dk, &dv, &mut out.slice_mut(1..), ScanOp::Sum).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    same(&got[1..=n], &host::inclusive_scan_by_key(&keys, &values, ScanOp::Sum).unwrap(), "unaligned inclusive");
    ws.exclusive_scan_by_key_into(&dk, &dv, &mut out.slice_mut(1..), 3, ScanOp::Max).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    same(&got[1..=n], &host::exclusive_scan_by_key(&keys, &values, 3, ScanOp::Max).unwrap(), "unaligned exclusive");
}

/// The register tile of 8-byte values (`cuda/classic/scan_by_key_tile.cuh`) moves whole tiles in 16-byte units
/// only when keys, values and output are aligned to them; views one item in take its item-by-item path on
/// every tile, not only the last. Several tiles, keys and values and output each one item in.
#[test]
fn scan_by_key_8_byte_values_unaligned_views() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    ws.set_engine(Engine::Classic);
    let n = 3 * lookback::__private::scan_by_key_tile_items(8, 8) + 5;
    let keys: Vec<f64> = keys(n + 1, Shape::Geometric(4.0), 4096, 31);
    let values: Vec<f64> = common::random_vec(n + 1, 32, 0.0);
    let (dk, dv) = (stream.clone_htod(&keys).unwrap(), stream.clone_htod(&values).unwrap());
    let (k, v) = (&keys[1..], &values[1..]);
    let mut out = upload_poisoned::<f64>(&stream, n + 1);
    ws.inclusive_scan_by_key_into(&dk.slice(1..), &dv.slice(1..), &mut out.slice_mut(1..), ScanOp::Sum).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let want = host::inclusive_scan_by_key(k, v, ScanOp::Sum).unwrap();
    check_scan(v, &got[1..=n], &want, ScanOp::Sum, false).unwrap_or_else(|e| panic!("unaligned inclusive: {e}"));
    ws.exclusive_scan_by_key_into(&dk.slice(1..), &dv.slice(1..), &mut out.slice_mut(1..), 2.5, ScanOp::Max).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    same(&got[1..=n], &host::exclusive_scan_by_key(k, v, 2.5, ScanOp::Max).unwrap(), "unaligned exclusive");
}

/// The register tile whose run heads write every output (`cuda/classic/runs_at_heads.cuh`) loads whole tiles in
/// 16-byte units only when keys (and values) are aligned to them; views one item in take its
/// item-by-item path on every tile. Several tiles of both of its shapes (with and without values), and
/// runs that cross tiles, so the tile's first head takes its value from the look-back. Small grids are
/// off: at this size the encodings would take the run agent's small-grid kernel.
#[test]
fn heads_tile_unaligned_views() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    ws.set_engine(Engine::Classic);
    lookback::__private::set_small_grids(&mut ws, false);
    let tile = lookback::__private::heads_tile_items(4, 4).expect("a heads tile for 4-byte keys and values");
    let encode_tile = lookback::__private::heads_tile_items(4, 0).expect("a heads tile for 4-byte keys");
    let n = 3 * tile.max(encode_tile) + 5;
    for (s, shape) in [Shape::Geometric(4.0), Shape::StraddleRuns, Shape::AllEqual].into_iter().enumerate() {
        let keys: Vec<i32> = keys(n + 1, shape, tile, 41 + s as u64);
        let values: Vec<i32> = common::random_vec(n + 1, 42 + s as u64, 0.0);
        let (dk, dv) = (stream.clone_htod(&keys).unwrap(), stream.clone_htod(&values).unwrap());
        let (k, v) = (&keys[1..], &values[1..]);
        let what = format!("unaligned views {shape:?}");
        let mut count = stream.clone_htod(&[u64::MAX]).unwrap();
        let (mut ko, mut vo) = (upload_poisoned::<i32>(&stream, n), upload_poisoned::<i32>(&stream, n));
        ws.reduce_by_key_into(&dk.slice(1..), &dv.slice(1..), &mut ko, &mut vo, &mut count, ScanOp::Sum).unwrap();
        let (want_k, want_v) = host::reduce_by_key(k, v, ScanOp::Sum).unwrap();
        let runs = stream.clone_dtoh(&count).unwrap()[0] as usize;
        assert_eq!(runs, want_k.len(), "reduce_by_key {what}: runs");
        same(&front(&stream, &ko, runs, n, &what), &want_k, &format!("reduce_by_key keys {what}"));
        same(&front(&stream, &vo, runs, n, &what), &want_v, &format!("reduce_by_key sums {what}"));
        // Fresh poison for each primitive, so that an output one of them leaves unwritten cannot pass on
        // the previous one's (the keys of all four are the same).
        let (mut ko, mut vo) = (upload_poisoned::<i32>(&stream, n), upload_poisoned::<i32>(&stream, n));
        ws.unique_by_key_into(&dk.slice(1..), &dv.slice(1..), &mut ko, &mut vo, &mut count).unwrap();
        let (want_k, want_v) = host::unique_by_key(k, v).unwrap();
        assert_eq!(stream.clone_dtoh(&count).unwrap()[0] as usize, want_k.len(), "unique_by_key {what}: runs");
        same(&front(&stream, &ko, runs, n, &what), &want_k, &format!("unique_by_key keys {what}"));
        same(&front(&stream, &vo, runs, n, &what), &want_v, &format!("unique_by_key values {what}"));
        let (mut ko, mut lengths) = (upload_poisoned::<i32>(&stream, n), upload_poisoned::<u32>(&stream, n));
        ws.run_length_encode_into(&dk.slice(1..), &mut ko, &mut lengths, &mut count).unwrap();
        let (want_values, want_lengths) = host::run_length_encode(k);
        assert_eq!(stream.clone_dtoh(&count).unwrap()[0] as usize, want_values.len(), "rle {what}: runs");
        same(&front(&stream, &ko, runs, n, &what), &want_values, &format!("rle values {what}"));
        let got: Vec<u64> = front(&stream, &lengths, runs, n, &what).into_iter().map(u64::from).collect();
        assert_eq!(got, want_lengths, "rle lengths {what}");
        let (mut ko, mut ends) = (upload_poisoned::<i32>(&stream, n), upload_poisoned::<u64>(&stream, n));
        ws.run_end_encode_into(&dk.slice(1..), &mut ko, &mut ends, &mut count).unwrap();
        let (want_values, want_ends) = host::run_end_encode(k);
        assert_eq!(stream.clone_dtoh(&count).unwrap()[0] as usize, want_ends.len(), "run_end_encode {what}: runs");
        same(&front(&stream, &ko, runs, n, &what), &want_values, &format!("run_end_encode values {what}"));
        assert_eq!(front(&stream, &ends, runs, n, &what), want_ends, "run_end_encode ends {what}");
    }
}

/// The encodings on the register tile whose run heads write every output (`cuda/classic/runs_at_heads.cuh`: 4- and
/// 8-byte keys; run-length, run-end and non-trivial runs) at sizes around its tile, runs aligned to it,
/// and views one item in (its item-by-item path on every tile). Small grids are off, so that these
/// sizes reach the tile rather than the run agent's small-grid kernel.
#[test]
fn heads_encodings_around_their_tile() {
    let Some(stream) = gpu() else { return };
    fn one<K: TestElement>(stream: &Arc<CudaStream>, ws: &mut Workspace) {
        let tile = lookback::__private::heads_tile_items(size_of::<K>(), 0).expect("a heads tile for the key size");
        for (i, n) in edge_sizes(tile).into_iter().enumerate() {
            for (s, shape) in SHAPES.into_iter().enumerate() {
                let keys: Vec<K> = keys(n, shape, tile, (i * 16 + s) as u64 + 200);
                let d = stream.clone_htod(&keys).unwrap();
                let what = format!("{} n={n} {shape:?} (heads tile {tile})", K::DTYPE.name());
                check_encodings::<K>(stream, ws, &keys, &d, &what);
            }
        }
        let n = 3 * tile + 5;
        for (s, shape) in
            [Shape::Geometric(4.0), Shape::Pairs, Shape::StraddleRuns, Shape::AllEqual].into_iter().enumerate()
        {
            let keys: Vec<K> = keys(n + 1, shape, tile, 300 + s as u64);
            let d = stream.clone_htod(&keys).unwrap();
            let what = format!("{} unaligned view n={n} {shape:?} (heads tile {tile})", K::DTYPE.name());
            check_encodings::<K>(stream, ws, &keys[1..], &d.slice(1..), &what);
        }
    }
    let mut ws = Workspace::new(&stream);
    ws.set_engine(Engine::Classic);
    lookback::__private::set_small_grids(&mut ws, false);
    one::<i32>(&stream, &mut ws);
    one::<f32>(&stream, &mut ws);
    one::<u64>(&stream, &mut ws);
    one::<f64>(&stream, &mut ws);
}

/// The persistent engine over more tiles than all 132 SMs' rings of 6 slots hold, twice: every block goes
/// round its ring several times and the look-ahead folds many other blocks' aggregates (in tile order: the
/// pair operator does not commute). i32 keys with i32 and f64 values (one-word aggregates and 16-byte
/// entries), and u8 keys alone (the largest tile).
#[test]
fn persistent_many_rings() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    let tiles = 2 * 132 * 6 + 5;
    for (i, shape) in [Shape::Geometric(4.0), Shape::AllEqual, Shape::StraddleRuns].into_iter().enumerate() {
        let t = lookback::__private::pipe_runs_tile_items(4, 4);
        check_all::<i32, i32>(&stream, &mut ws, tiles * t + 3, (shape, t), 40 + i as u64, Engine::Persistent);
        let t = lookback::__private::pipe_runs_tile_items(4, 8);
        check_all::<i32, f64>(&stream, &mut ws, tiles * t + 1, (shape, t), 50 + i as u64, Engine::Persistent);
        let t = lookback::__private::pipe_runs_tile_items(1, 0);
        let n = tiles * t + 9;
        let keys: Vec<u8> = keys(n, shape, t, 60 + i as u64);
        let d = stream.clone_htod(&keys).unwrap();
        check_encodings::<u8>(&stream, &mut ws, &keys, &d, &format!("u8 n={n} {shape:?} Persistent"));
    }
}
