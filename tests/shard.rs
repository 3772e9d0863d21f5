//! Sharded columns (`lookback::shard`): every call against the host reference and the single-GPU call on
//! the concatenated column, for shards of size 0, 1 and uneven sizes around tile boundaries, with runs
//! that cross one and several shards, outputs poisoned. On one GPU through `LocalExchange` (several
//! ranks, one stream and workspace each), and with `--features nccl` over a one-rank NCCL communicator.
//! The merge rules themselves are tested on the host (no GPU).
mod common;

use common::{GUARD, Rng, TestElement, gpu, random_vec, same, upload_poisoned};
use lookback::cudarc::driver::CudaStream;
use lookback::shard::merge::{Summary, runs_plan, scan_seeds, selection_parts};
use lookback::shard::{Exchange, LocalExchange, ShardGroup, ShardedColumn, ShardedParts};
use lookback::{Element, Error, Pred, RunLength, ScanOp, host};
use std::sync::Arc;

fn t_scan() -> usize {
    lookback::__private::scan_tile_items(4)
}
fn t_select() -> usize {
    lookback::__private::select_tile_items(4)
}
fn t_runs() -> usize {
    lookback::__private::heads_tile_items(4, 8).unwrap_or_else(|| lookback::__private::runs_tile_items(8))
}

/// The shard size lists of every test, for tile `t`.
fn size_lists(t: usize) -> Vec<Vec<usize>> {
    vec![
        vec![0],
        vec![1],
        vec![0, 5, 0],
        vec![1, 1, 1],
        vec![t - 1, t + 1, 3 * t + 7],
        vec![1 << 20, 0, 12345],
        vec![0, 0, 7, 0, 2 * t],
    ]
}

fn split<T: Clone>(data: &[T], sizes: &[usize]) -> Vec<Vec<T>> {
    let mut start = 0;
    sizes
        .iter()
        .map(|&n| {
            let part = data[start..start + n].to_vec();
            start += n;
            part
        })
        .collect()
}

fn local_group(stream: &Arc<CudaStream>, ranks: usize) -> ShardGroup<LocalExchange> {
    ShardGroup::new(LocalExchange::on_one_gpu(stream, ranks).unwrap()).unwrap()
}

fn column<T: TestElement, X: Exchange>(group: &mut ShardGroup<X>, parts: &[Vec<T>]) -> ShardedColumn<T> {
    let bufs = parts.iter().enumerate().map(|(r, p)| group.stream(r).clone_htod(p).unwrap()).collect();
    group.column(bufs).unwrap()
}

/// Outputs shaped like `parts`, each with `GUARD` more items, all poisoned.
fn poisoned<T: TestElement, U, X: Exchange>(group: &mut ShardGroup<X>, parts: &[Vec<U>]) -> ShardedColumn<T> {
    let bufs = parts.iter().enumerate().map(|(r, p)| upload_poisoned::<T>(group.stream(r), p.len())).collect();
    group.column(bufs).unwrap()
}

fn download<T: TestElement, X: Exchange>(group: &ShardGroup<X>, col: &ShardedColumn<T>) -> Vec<Vec<T>> {
    col.shards().iter().enumerate().map(|(r, s)| group.stream(r).clone_dtoh(s.data()).unwrap()).collect()
}

/// The result's items in rank order, checking the parts' offsets and total, and that the guard items
/// (and, with `untouched_past_part`, every item past a part) are still poison.
fn gather<T: TestElement>(shards: &[Vec<T>], parts: &ShardedParts, untouched_past_part: bool, what: &str) -> Vec<T> {
    let mut all = Vec::new();
    for (r, (shard, p)) in shards.iter().zip(&parts.parts).enumerate() {
        assert_eq!(p.offset, all.len() as u64, "{what}: offset of rank {r}");
        let (start, end) = (p.skip as usize, (p.skip + p.len) as usize);
        all.extend_from_slice(&shard[start..end]);
        let untouched = if untouched_past_part { end } else { shard.len() - GUARD };
        assert!(shard[untouched..].iter().all(|x| *x == T::poison()), "{what}: rank {r} wrote past its part");
    }
    assert_eq!(parts.total, all.len() as u64, "{what}: total");
    all
}

fn concat<T: Clone>(parts: &[Vec<T>]) -> Vec<T> {
    parts.concat()
}

/// The whole column on one GPU, for the single-GPU results.
fn one_gpu<T: TestElement>(stream: &Arc<CudaStream>, data: &[T]) -> lookback::cudarc::driver::CudaSlice<T> {
    stream.clone_htod(data).unwrap()
}

// ---------------------------------------------------------------------------------------------- scans

fn check_scans<T: TestElement, X: Exchange>(
    group: &mut ShardGroup<X>,
    stream: &Arc<CudaStream>,
    parts: &[Vec<T>],
    op: ScanOp,
    init: T,
    what: &str,
) {
    let data = concat(parts);
    let input = column(group, parts);
    let mut out = poisoned::<T, T, X>(group, parts);
    group.inclusive_scan_into(&input, &mut out, op).unwrap();
    let got: Vec<T> = download(group, &out).into_iter().flat_map(|s| s[..s.len() - GUARD].to_vec()).collect();
    let guards_ok = download(group, &out).iter().all(|s| s[s.len() - GUARD..].iter().all(|x| *x == T::poison()));
    assert!(guards_ok, "{what}: inclusive wrote past a shard");
    let want = host::inclusive_scan(&data, op).unwrap();
    common::check_scan(&data, &got, &want, op, false).unwrap_or_else(|e| panic!("{what} inclusive {op:?}: {e}"));
    if T::ACC_EPS == 0.0 && !data.is_empty() {
        let single = lookback::inclusive_scan(&one_gpu(stream, &data), op).unwrap();
        same(&got, &stream.clone_dtoh(&single).unwrap(), &format!("{what}: inclusive vs one GPU"));
    }

    let mut out = poisoned::<T, T, X>(group, parts);
    group.exclusive_scan_into(&input, &mut out, init, op).unwrap();
    let got: Vec<T> = download(group, &out).into_iter().flat_map(|s| s[..s.len() - GUARD].to_vec()).collect();
    let want = host::exclusive_scan(&data, init, op).unwrap();
    common::check_scan(&data, &got, &want, op, true).unwrap_or_else(|e| panic!("{what} exclusive {op:?}: {e}"));
    if T::ACC_EPS == 0.0 && !data.is_empty() {
        let single = lookback::exclusive_scan(&one_gpu(stream, &data), init, op).unwrap();
        same(&got, &stream.clone_dtoh(&single).unwrap(), &format!("{what}: exclusive vs one GPU"));
    }
}

#[test]
fn scans_over_local_ranks() {
    let Some(stream) = gpu() else { return };
    for (k, sizes) in size_lists(t_scan()).into_iter().enumerate() {
        let mut group = local_group(&stream, sizes.len());
        let n: usize = sizes.iter().sum();
        let what = format!("sizes {:?}", sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let ints: Vec<i32> = random_vec(n, k as u64, 0.0);
        for op in [ScanOp::Sum, ScanOp::Max, ScanOp::BitXor] {
            check_scans(&mut group, &stream, &split(&ints, &sizes), op, 17, &what);
        }
        // Wrapping sums of bytes, and a 64-bit minimum.
        check_scans(
            &mut group,
            &stream,
            &split(&random_vec::<u8>(n, 7 + k as u64, 0.0), &sizes),
            ScanOp::Sum,
            3,
            &what,
        );
        check_scans(
            &mut group,
            &stream,
            &split(&random_vec::<i64>(n, 9 + k as u64, 0.0), &sizes),
            ScanOp::Min,
            5,
            &what,
        );
        // Float sums within rounding; NaN-ignoring max exactly.
        // (NaN-free for the sum, which a NaN would turn into NaN from there on.)
        let floats: Vec<f32> = random_vec(n, 11 + k as u64, 0.0);
        check_scans(&mut group, &stream, &split(&floats, &sizes), ScanOp::Sum, 0.5, &what);
        let floats: Vec<f32> = random_vec(n, 13 + k as u64, 0.01);
        check_scans(&mut group, &stream, &split(&floats, &sizes), ScanOp::Max, f32::NAN, &what);
    }
}

/// `Workspace::inclusive_scan_seeded_into` of `data` against the host: a seeded inclusive scan is the
/// host's exclusive scan seeded the same way, one item later.
fn check_seeded<T: TestElement>(
    ws: &mut lookback::Workspace,
    stream: &Arc<CudaStream>,
    data: &[T],
    seed: T,
    op: ScanOp,
    what: &str,
) {
    let input = stream.clone_htod(data).unwrap();
    let mut out = upload_poisoned::<T>(stream, data.len());
    ws.inclusive_scan_seeded_into(&input, &mut out, seed, op).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let mut longer = data.to_vec();
    longer.push(T::small(1));
    let want = host::exclusive_scan(&longer, seed, op).unwrap();
    common::check_scan(data, &got[..data.len()], &want[1..], op, false).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(got[data.len()..].iter().all(|x| *x == T::poison()), "{what}: wrote past the output");
}

#[test]
fn seeded_inclusive_scan_on_both_engines() {
    let Some(stream) = gpu() else { return };
    // The persistent engine takes calls of 32 MB and more on sm_90+: force each engine at tile sizes.
    for engine in [lookback::Engine::Classic, lookback::Engine::Persistent] {
        let mut ws = lookback::Workspace::new(&stream);
        ws.set_engine(engine);
        for n in [1, t_scan() - 1, t_scan() + 1, 3 * t_scan() + 7, 1 << 20] {
            let what = format!("{engine:?} seeded n={n}");
            check_seeded(&mut ws, &stream, &random_vec::<i32>(n, n as u64, 0.0), 1000, ScanOp::Sum, &what);
            check_seeded(&mut ws, &stream, &random_vec::<i64>(n, 1 + n as u64, 0.0), i64::MAX - 5, ScanOp::Max, &what);
            check_seeded(&mut ws, &stream, &random_vec::<u16>(n, 2 + n as u64, 0.0), 0b1010, ScanOp::BitXor, &what);
            check_seeded(&mut ws, &stream, &random_vec::<f32>(n, 3 + n as u64, 0.0), 2.5, ScanOp::Sum, &what);
            let halves: Vec<lookback::half::f16> = random_vec(n, 4 + n as u64, 0.0);
            check_seeded(&mut ws, &stream, &halves, lookback::half::f16::from_f32(-3.0), ScanOp::Min, &what);
        }
    }
}

// ---------------------------------------------------------------------------------------- compaction

fn check_compaction<T: TestElement, X: Exchange>(
    group: &mut ShardGroup<X>,
    stream: &Arc<CudaStream>,
    parts: &[Vec<T>],
    what: &str,
) {
    let data = concat(parts);
    let input = column(group, parts);
    let pred = Pred::lt(T::small(50));

    let mut out = poisoned::<T, T, X>(group, parts);
    let res = group.select_if_into(&input, &pred, &mut out).unwrap();
    let got = gather(&download(group, &out), &res, true, what);
    same(&got, &host::select_if(&data, &pred), &format!("{what}: select_if"));
    if !data.is_empty() {
        let single = lookback::select_if(&one_gpu(stream, &data), &pred).unwrap().to_vec().unwrap();
        same(&got, &single, &format!("{what}: select_if vs one GPU"));
    }

    let flags: Vec<u8> = data.iter().map(|x| u8::from(x.as_f64() >= 50.0)).collect();
    let flag_parts = split(&flags, &parts.iter().map(Vec::len).collect::<Vec<_>>());
    let flags_col = {
        let bufs = flag_parts.iter().enumerate().map(|(r, p)| group.stream(r).clone_htod(p).unwrap()).collect();
        group.column(bufs).unwrap()
    };
    let mut out = poisoned::<T, T, X>(group, parts);
    let res = group.select_flagged_into(&input, &flags_col, &mut out).unwrap();
    let got = gather(&download(group, &out), &res, true, what);
    same(&got, &host::select_flagged(&data, &flags).unwrap(), &format!("{what}: select_flagged"));

    let mut out = poisoned::<T, T, X>(group, parts);
    let res = group.unique_into(&input, &mut out).unwrap();
    let got = gather(&download(group, &out), &res, true, what);
    same(&got, &host::unique(&data), &format!("{what}: unique"));
    if !data.is_empty() {
        let single = lookback::unique(&one_gpu(stream, &data)).unwrap().to_vec().unwrap();
        same(&got, &single, &format!("{what}: unique vs one GPU"));
    }

    let counts = group.partition_counts(&input, &pred).unwrap();
    let selected: Vec<u64> = parts.iter().map(|p| host::count_if(p, &pred) as u64).collect();
    let total_selected: u64 = selected.iter().sum();
    let (mut sel_off, mut rej_off) = (0, total_selected);
    for (r, p) in parts.iter().enumerate() {
        let (s, j) = (counts.selected.parts[r], counts.rejected.parts[r]);
        assert_eq!((s.len, s.offset), (selected[r], sel_off), "{what}: partition selected of rank {r}");
        assert_eq!(
            (j.len, j.offset),
            (p.len() as u64 - selected[r], rej_off),
            "{what}: partition rejected of rank {r}"
        );
        sel_off += s.len;
        rej_off += j.len;
    }
    assert_eq!((counts.selected.total, counts.rejected.total), (total_selected, data.len() as u64 - total_selected));
}

/// Values in runs (so that `unique` has duplicates to drop) that cross shards: a constant stretch over
/// the middle of the column, which covers whole shards of the size lists.
fn runs_data<T: TestElement>(n: usize, seed: u64) -> Vec<T> {
    let mut v: Vec<T> = common::runs(n, 9.0, seed);
    if n > 8 {
        let (a, b) = (n / 5, n - n / 5);
        v[a..b].fill(T::small(42));
    }
    v
}

#[test]
fn compaction_over_local_ranks() {
    let Some(stream) = gpu() else { return };
    for (k, sizes) in size_lists(t_select()).into_iter().enumerate() {
        let mut group = local_group(&stream, sizes.len());
        let n: usize = sizes.iter().sum();
        let what = format!("sizes {sizes:?}");
        check_compaction(&mut group, &stream, &split(&runs_data::<i32>(n, k as u64), &sizes), &what);
        check_compaction(&mut group, &stream, &split(&runs_data::<u8>(n, 3 + k as u64), &sizes), &what);
        check_compaction(&mut group, &stream, &split(&runs_data::<f64>(n, 5 + k as u64), &sizes), &what);
    }
}

#[test]
fn unique_compares_across_empty_shards_and_ieee() {
    let Some(stream) = gpu() else { return };
    // -0.0 continues 0.0 across two empty shards; NaN never continues; 1.0 spans three shards.
    let parts: Vec<Vec<f32>> =
        vec![vec![1.0, 0.0], vec![], vec![], vec![-0.0, f32::NAN], vec![f32::NAN, 1.0], vec![1.0], vec![1.0, 2.0]];
    let mut group = local_group(&stream, parts.len());
    let input = column(&mut group, &parts);
    let mut out = poisoned::<f32, f32, _>(&mut group, &parts);
    let res = group.unique_into(&input, &mut out).unwrap();
    let got = gather(&download(&group, &out), &res, true, "ieee unique");
    same(&got, &host::unique(&concat(&parts)), "ieee unique");
    let skips: Vec<u64> = res.parts.iter().map(|p| p.skip).collect();
    assert_eq!(skips, [0, 0, 0, 1, 0, 1, 1]);
}

// ---------------------------------------------------------------------------------------- runs

fn check_runs<K: TestElement, V: TestElement, X: Exchange>(
    group: &mut ShardGroup<X>,
    stream: &Arc<CudaStream>,
    keys: &[Vec<K>],
    values: &[Vec<V>],
    what: &str,
) {
    let (all_keys, all_values) = (concat(keys), concat(values));
    let (k_col, v_col) = (column(group, keys), column(group, values));
    for op in [ScanOp::Sum, ScanOp::Max] {
        let mut ko = poisoned::<K, K, X>(group, keys);
        let mut vo = poisoned::<V, K, X>(group, keys);
        let res = group.reduce_by_key_into(&k_col, &v_col, &mut ko, &mut vo, op).unwrap();
        let got_k = gather(&download(group, &ko), &res, false, what);
        let got_v = gather(&download(group, &vo), &res, false, what);
        let (want_k, want_v) = host::reduce_by_key(&all_keys, &all_values, op).unwrap();
        same(&got_k, &want_k, &format!("{what}: reduce_by_key {op:?} keys"));
        same(&got_v, &want_v, &format!("{what}: reduce_by_key {op:?} values"));
        if !all_keys.is_empty() {
            let single =
                lookback::reduce_by_key(&one_gpu(stream, &all_keys), &one_gpu(stream, &all_values), op).unwrap();
            let (sk, sv) = single.to_vecs().unwrap();
            same(&got_k, &sk, &format!("{what}: reduce_by_key keys vs one GPU"));
            same(&got_v, &sv, &format!("{what}: reduce_by_key values vs one GPU"));
        }
    }
    check_rle::<K, u32, X>(group, &k_col, keys, &all_keys, what);
    check_rle::<K, u64, X>(group, &k_col, keys, &all_keys, what);
}

fn check_rle<K: TestElement, L: RunLength + TestElement, X: Exchange>(
    group: &mut ShardGroup<X>,
    k_col: &ShardedColumn<K>,
    keys: &[Vec<K>],
    all_keys: &[K],
    what: &str,
) {
    let mut vo = poisoned::<K, K, X>(group, keys);
    let mut lo = poisoned::<L, K, X>(group, keys);
    let res = group.run_length_encode_into(k_col, &mut vo, &mut lo).unwrap();
    let got_v = gather(&download(group, &vo), &res, false, what);
    let got_l: Vec<u64> = gather(&download(group, &lo), &res, false, what).into_iter().map(Into::into).collect();
    let (want_v, want_l) = host::run_length_encode(all_keys);
    same(&got_v, &want_v, &format!("{what}: run_length_encode values"));
    assert_eq!(got_l, want_l, "{what}: run_length_encode lengths ({})", std::any::type_name::<L>());
}

#[test]
fn runs_over_local_ranks() {
    let Some(stream) = gpu() else { return };
    for (k, sizes) in size_lists(t_runs()).into_iter().enumerate() {
        let mut group = local_group(&stream, sizes.len());
        let n: usize = sizes.iter().sum();
        let what = format!("sizes {sizes:?}");
        let keys = split(&runs_data::<u32>(n, k as u64), &sizes);
        check_runs(&mut group, &stream, &keys, &split(&random_vec::<i64>(n, 1 + k as u64, 0.0), &sizes), &what);
        check_runs(&mut group, &stream, &keys, &split(&random_vec::<i32>(n, 2 + k as u64, 0.0), &sizes), &what);
        let keys = split(&runs_data::<u8>(n, 4 + k as u64), &sizes);
        check_runs(&mut group, &stream, &keys, &split(&random_vec::<u16>(n, 5 + k as u64, 0.0), &sizes), &what);
    }
}

#[test]
fn runs_with_float_keys_across_boundaries() {
    let Some(stream) = gpu() else { return };
    // 0.0 / -0.0 is one run across a boundary; NaN keys never merge; a run of 3.0 spans three shards.
    let keys: Vec<Vec<f32>> =
        vec![vec![0.0], vec![-0.0, f32::NAN], vec![f32::NAN], vec![3.0, 3.0], vec![3.0], vec![], vec![3.0, 4.0]];
    let values: Vec<Vec<i32>> =
        keys.iter().enumerate().map(|(r, k)| (0..k.len()).map(|i| (10 * r + i) as i32 + 1).collect()).collect();
    let mut group = local_group(&stream, keys.len());
    check_runs(&mut group, &stream, &keys, &values, "float keys");
}

// ---------------------------------------------------------------------------------------- errors

#[test]
fn bad_arguments_are_errors_and_write_nothing() {
    let Some(stream) = gpu() else { return };
    let parts = vec![vec![1i32, 2, 3], vec![4, 5]];
    let mut group = local_group(&stream, 2);
    let input = column(&mut group, &parts);
    // Rank 1's output is one item short: nothing may be written, rank 0's included.
    let bufs = vec![
        group.stream(0).clone_htod(&[i32::poison(); 3]).unwrap(),
        group.stream(1).clone_htod(&[i32::poison()]).unwrap(),
    ];
    let mut out = group.column(bufs).unwrap();
    let err = group.inclusive_scan_into(&input, &mut out, ScanOp::Sum).unwrap_err();
    assert!(matches!(err, Error::OutputTooSmall { .. }), "{err}");
    let err = group.select_if_into(&input, &Pred::gt(0), &mut out).unwrap_err();
    assert!(matches!(err, Error::OutputTooSmall { .. }), "{err}");
    for shard in download(&group, &out) {
        assert!(shard.iter().all(|x| *x == i32::poison()), "an output was written");
    }
    // A bitwise scan of floats.
    let floats = column(&mut group, &[vec![1.0f32], vec![2.0]]);
    let mut out = poisoned::<f32, f32, _>(&mut group, &[vec![0.0f32], vec![0.0]]);
    assert!(matches!(group.inclusive_scan_into(&floats, &mut out, ScanOp::BitOr), Err(Error::Unsupported { .. })));
    // A bitwise reduce_by_key.
    let mut ko = poisoned::<f32, f32, _>(&mut group, &[vec![0.0f32], vec![0.0]]);
    let mut vo = poisoned::<f32, f32, _>(&mut group, &[vec![0.0f32], vec![0.0]]);
    let err = group.reduce_by_key_into(&floats, &floats, &mut ko, &mut vo, ScanOp::BitAnd).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    // Another number of shards than ranks, and a shard on another stream.
    let err = group.column(vec![stream.clone_htod(&[1i32]).unwrap()]).unwrap_err();
    assert!(matches!(err, Error::ShardMismatch { .. }), "{err}");
    let other = stream.context().new_stream().unwrap();
    let err = group.column(vec![other.clone_htod(&[1i32]).unwrap(), other.clone_htod(&[2i32]).unwrap()]).unwrap_err();
    assert!(matches!(err, Error::ShardMismatch { .. }), "{err}");
}

#[test]
fn column_offsets() {
    let Some(stream) = gpu() else { return };
    let mut group = local_group(&stream, 4);
    let col = column(&mut group, &[vec![1u8; 3], vec![], vec![2; 5], vec![3; 1]]);
    assert_eq!(col.len(), 9);
    let offsets: Vec<u64> = col.shards().iter().map(|s| s.offset()).collect();
    assert_eq!(offsets, [0, 3, 3, 8]);
    let ranks: Vec<usize> = col.shards().iter().map(|s| s.rank()).collect();
    assert_eq!(ranks, [0, 1, 2, 3]);
}

/// What compute-sanitizer runs (`sanitizer_cases` filter): each sharded call once over uneven shards
/// with a run across three of them.
#[test]
fn sanitizer_cases() {
    let Some(stream) = gpu() else { return };
    let t = t_scan();
    let sizes = [t - 1, 0, t + 1, 7];
    let n: usize = sizes.iter().sum();
    let mut group = local_group(&stream, sizes.len());
    let ints: Vec<i32> = runs_data(n, 77);
    check_scans(&mut group, &stream, &split(&ints, &sizes), ScanOp::Sum, 1, "sanitize");
    check_compaction(&mut group, &stream, &split(&ints, &sizes), "sanitize");
    let keys = split(&runs_data::<u32>(n, 78), &sizes);
    check_runs(&mut group, &stream, &keys, &split(&random_vec::<i64>(n, 79, 0.0), &sizes), "sanitize");
}

// ---------------------------------------------------------------------------------------- NCCL

#[cfg(feature = "nccl")]
mod nccl {
    use super::*;
    use lookback::shard::{NcclExchange, NcclId, nccl_available};

    /// The GPU and libnccl, or `None` after a visible skip line.
    fn setup() -> Option<Arc<CudaStream>> {
        let stream = gpu()?;
        if !nccl_available() {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIPPED NCCL tests: libnccl could not be loaded");
            return None;
        }
        Some(stream)
    }

    /// Every sharded call over a one-rank communicator, both constructors.
    #[test]
    fn one_rank_world() {
        let Some(stream) = setup() else { return };
        let id = NcclId::new().unwrap();
        for by_rank in [false, true] {
            let exchange = if by_rank {
                NcclExchange::one_rank(stream.clone(), 0, 1, NcclId::from_bytes(id.to_bytes())).unwrap()
            } else {
                NcclExchange::all_ranks(vec![stream.clone()]).unwrap()
            };
            let mut group = ShardGroup::new(exchange).unwrap();
            assert_eq!((group.world_size(), group.local_ranks()), (1, 1));
            for n in [0, 1, t_scan() + 1, 12345] {
                let what = format!("nccl n={n} by_rank={by_rank}");
                let ints: Vec<i32> = runs_data(n, n as u64);
                check_scans(&mut group, &stream, std::slice::from_ref(&ints), ScanOp::Sum, 3, &what);
                check_compaction(&mut group, &stream, std::slice::from_ref(&ints), &what);
                let values: Vec<i64> = random_vec(n, 5, 0.0);
                check_runs(&mut group, &stream, &[runs_data::<u32>(n, 6)], &[values], &what);
            }
        }
    }

    /// With libnccl (no GPU needed): an id, through its bytes and back.
    #[test]
    fn nccl_id_round_trip() {
        if !nccl_available() {
            return;
        }
        let id = NcclId::new().unwrap();
        let bytes = id.to_bytes();
        assert!(bytes.iter().any(|&b| b != 0));
        assert_eq!(NcclId::from_bytes(bytes).to_bytes(), bytes);
        assert!(NcclId::new().unwrap().to_bytes() != bytes, "two ids are different");
    }

    /// A missing libnccl is an error, never a panic.
    #[test]
    fn missing_nccl_is_an_error() {
        if nccl_available() {
            return;
        }
        assert!(matches!(NcclId::new(), Err(Error::NcclNotFound)));
        if let Some(stream) = gpu() {
            assert!(matches!(NcclExchange::all_ranks(vec![stream]), Err(Error::NcclNotFound)));
        }
    }
}

// ---------------------------------------------------------------------------------------- host only

/// The host-side summaries of `shards` for a run-based call: run counts, ends, first-run values.
fn host_summaries(keys: &[Vec<u32>], values: &[Vec<i64>]) -> Vec<Summary> {
    keys.iter()
        .zip(values)
        .map(|(k, v)| {
            let (_, sums) = host::reduce_by_key(k, v, ScanOp::Sum).unwrap();
            Summary {
                items: k.len() as u64,
                count: sums.len() as u64,
                first: k.first().map_or(0, |x| x.to_bits()),
                last: k.last().map_or(0, |x| x.to_bits()),
                first_value: sums.first().map_or(0, |x| x.to_bits()),
            }
        })
        .collect()
}

/// The runs plan applied to per-shard host results equals reduce_by_key of the concatenation, for random
/// shard sizes (many empty and one-item shards) and runs that cross many shards.
#[test]
fn runs_plan_merges_like_one_column() {
    let mut rng = Rng::new(5);
    for case in 0..300 {
        let shards = 1 + (rng.next_u64() % 9) as usize;
        let sizes: Vec<usize> = (0..shards).map(|_| [0, 1, 2, 5, 40][(rng.next_u64() % 5) as usize]).collect();
        let n: usize = sizes.iter().sum();
        let mean = [1.0, 3.0, 100.0][case % 3];
        let keys: Vec<u32> = common::runs(n, mean, case as u64);
        let values: Vec<i64> = random_vec(n, case as u64 + 1, 0.0);
        let (kp, vp) = (split(&keys, &sizes), split(&values, &sizes));
        let plan = runs_plan(&host_summaries(&kp, &vp), |a, b| a == b);
        let (mut got_k, mut got_v) = (Vec::new(), Vec::new());
        for r in 0..shards {
            let (mut k, mut v) = host::reduce_by_key(&kp[r], &vp[r], ScanOp::Sum).unwrap();
            if let Some(last) = v.last_mut() {
                *last = plan.tails[r].iter().fold(*last, |acc, &t| acc.wrapping_add(t as i64));
            }
            let p = plan.parts[r];
            assert_eq!(p.offset, got_k.len() as u64, "case {case}: offset of {r}");
            got_k.extend_from_slice(&k.drain(..).skip(p.skip as usize).take(p.len as usize).collect::<Vec<_>>());
            got_v.extend_from_slice(&v[p.skip as usize..(p.skip + p.len) as usize]);
        }
        let (want_k, want_v) = host::reduce_by_key(&keys, &values, ScanOp::Sum).unwrap();
        assert_eq!((got_k, got_v), (want_k, want_v), "case {case}: sizes {sizes:?}");
        assert_eq!(plan.total, host::run_length_encode(&keys).0.len() as u64);
    }
}

#[test]
fn scan_seeds_and_selection_offsets() {
    // Sums of the earlier non-empty shards; empty shards carry the prefix through.
    let seeds = scan_seeds(&[0, 3, 0, 2, 1], &[7, 10, 99, 5, 1], |a, b| a + b);
    assert_eq!(seeds, [None, None, Some(10), Some(10), Some(15)]);
    // An operator that does not commute shows the order: earlier ⊕ later.
    let seeds = scan_seeds(&[1, 1, 1], &[1, 2, 3], |a, b| a * 10 + b);
    assert_eq!(seeds, [None, Some(1), Some(12)]);
    let s = |count| Summary { items: 9, count, ..Summary::default() };
    let parts = selection_parts(&[s(0), s(4), s(0), s(2)]);
    let got: Vec<(u64, u64)> = parts.iter().map(|p| (p.len, p.offset)).collect();
    assert_eq!(got, [(0, 0), (4, 0), (0, 4), (2, 4)]);
}

#[test]
fn runs_plan_single_run_everywhere() {
    // One key over every shard (and empty shards between): rank 0 owns the only run, every other
    // non-empty rank hands it its whole value.
    let sizes = [3usize, 0, 1, 4, 0, 2];
    let summaries: Vec<Summary> = sizes
        .iter()
        .map(|&n| Summary { items: n as u64, count: u64::from(n > 0), first: 8, last: 8, first_value: n as u64 })
        .collect();
    let plan = runs_plan(&summaries, |a, b| a == b);
    assert_eq!(plan.total, 1);
    assert_eq!(plan.tails[0], [1, 4, 2]);
    assert!(plan.parts[1..].iter().all(|p| p.len == 0 && p.offset == 1));
    // Keys never equal (NaN-like): no merges at all.
    let plan = runs_plan(&summaries, |_, _| false);
    assert_eq!(plan.total, 4);
    assert!(plan.tails.iter().all(Vec::is_empty));
}
