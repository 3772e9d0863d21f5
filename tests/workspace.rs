//! The look-back workspace and launch plumbing: reuse across many calls (past the epoch wrap, with stale
//! status words from larger earlier calls), unaligned views, back-off overrides, independent streams.
mod common;

use common::{check_scan, gpu, random_vec, runs, same};
use lookback::{Backoff, Engine, Pred, ScanOp, Workspace, host};

/// 600 calls through one workspace cross the 255-epoch wrap twice. Sizes alternate between many and few
/// tiles, so most status words a small call could read were left by earlier, larger calls: a stale word
/// mistaken for a fresh one would corrupt the result.
#[test]
fn reused_workspace_survives_epoch_wrap_and_stale_words() {
    let Some(stream) = gpu() else { return };
    let tile = lookback::__private::scan_tile_items(4);
    let mut ws = Workspace::new(&stream);
    let big = 80 * tile + 11;
    let input: Vec<u32> = random_vec(big, 42, 0.0);
    let d_in = stream.clone_htod(&input).unwrap();
    let mut d_out = stream.alloc_zeros::<u32>(big).unwrap();
    for call in 0..600usize {
        let n = if call % 3 == 0 { big - call } else { 3 * tile + call % 17 };
        let view = d_in.slice(..n);
        ws.inclusive_scan_into(&view, &mut d_out, ScanOp::Sum).unwrap();
        if call % 7 == 0 || (250..=260).contains(&call) || (505..=515).contains(&call) {
            let got = stream.clone_dtoh(&d_out.slice(..n)).unwrap();
            let want = host::inclusive_scan(&input[..n], ScanOp::Sum).unwrap();
            assert!(
                got == want,
                "call {call}, n={n}: first difference at {:?}",
                got.iter().zip(&want).position(|(a, b)| a != b)
            );
        }
    }
}

/// One workspace serving two status formats: a 4-byte scan leaves words `tag << 32 | value`; an 8-byte scan
/// reads 16-byte entries of two such words (sm_90+, `WideState`) or tag-only words (flag word + value
/// slots, older GPUs), and leaves its own for the next 4-byte scan. Tile k's inclusive prefix in the 4-byte
/// scan is k, so the stale low halves spell every tag `4·epoch + 1` (A) and `4·epoch + 2` (P) the 8-byte
/// launches use across the epoch cycle; a reader that took the low half alone would see a published status
/// with a stale value (from the previous 8-byte launch, on the other input) whenever it looked back at such
/// a tile before the tile published. Only a tag of the reader's own launch may read as published
/// (tile_state.cuh); both scans are checked.
#[test]
fn stale_words_of_another_status_format_read_as_not_ready() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    ws.set_engine(Engine::Classic); // one status word per tile, each tile's prefix published as P
    let tiles = 1100;
    let tile4 = lookback::__private::scan_tile_items(4);
    let ones: Vec<u32> = (0..tiles * tile4).map(|i| u32::from(i % tile4 == 0 && i > 0)).collect();
    let d_ones = stream.clone_htod(&ones).unwrap();
    let mut out4 = stream.alloc_zeros::<u32>(ones.len()).unwrap();
    let tile8 = lookback::__private::scan_tile_items(8);
    let inputs: Vec<Vec<u64>> = (0..2).map(|k| random_vec(tiles * tile8, 70 + k, 0.0)).collect();
    let wants: Vec<Vec<u64>> = inputs.iter().map(|v| host::inclusive_scan(v, ScanOp::Sum).unwrap()).collect();
    let d_inputs: Vec<_> = inputs.iter().map(|v| stream.clone_htod(v).unwrap()).collect();
    let mut out8 = stream.alloc_zeros::<u64>(tiles * tile8).unwrap();
    // 600 launches: the 8-byte scans meet every epoch (255 is odd, so their parity alternates per cycle).
    for round in 0..300 {
        ws.inclusive_scan_into(&d_ones, &mut out4, ScanOp::Sum).unwrap();
        ws.inclusive_scan_into(&d_inputs[round % 2], &mut out8, ScanOp::Sum).unwrap();
        let got = stream.clone_dtoh(&out8).unwrap();
        let want = &wants[round % 2];
        assert!(
            got == *want,
            "round {round}: 8-byte scan after a 4-byte one differs first at {:?}",
            got.iter().zip(want).position(|(a, b)| a != b)
        );
        if round % 10 == 1 {
            // The 4-byte scan ran after an 8-byte one: item i's prefix is the number of tile starts
            // (i > 0) up to i.
            let got4 = stream.clone_dtoh(&out4).unwrap();
            if let Some(i) = got4.iter().enumerate().position(|(i, &v)| v as usize != i / tile4) {
                panic!("round {round}: 4-byte scan after an 8-byte one differs first at {i}");
            }
        }
    }
}

/// One workspace shared by four status formats in turn, past the 255-epoch wrap: run-length encoding
/// (classic agent: 16-byte entries of two `tag << 54 | 54 bits` halves, A then P per tile), count_if
/// (`tag << 54 | count` words), an 8-byte scan (16-byte entries of two `tag << 32 | 32 bits` halves) and
/// an 8-byte reduce_by_key (16-byte entries of `tag << 54 | count << 10 | 10 value bits` and
/// `tag << 54 | 54 value bits`; full-range i64 values, ~95,000 runs so counts pass 10 bits).
/// Each reads words the others left; only its own launch's tag may read as published.
#[test]
fn run_encodings_counts_and_wide_scans_share_a_workspace() {
    let Some(stream) = gpu() else { return };
    let mut ws = Workspace::new(&stream);
    ws.set_engine(Engine::Classic);
    let n = 70 * lookback::__private::runs_tile_items(4) + 13;
    let keys: Vec<i32> = runs(n, 3.0, 5);
    let (want_values, want_lengths) = host::run_length_encode(&keys);
    let d_keys = stream.clone_htod(&keys).unwrap();
    let values64: Vec<i64> = random_vec(n, 6, 0.0);
    let want_scan = host::inclusive_scan(&values64, ScanOp::Sum).unwrap();
    let (want_keys, want_sums) = host::reduce_by_key(&keys, &values64, ScanOp::Sum).unwrap();
    let d_values64 = stream.clone_htod(&values64).unwrap();
    let want_count = keys.iter().filter(|&&k| k < 50).count();
    let mut vals = stream.clone_htod(&vec![-1i32; n]).unwrap();
    let mut lens = stream.clone_htod(&vec![u64::MAX; n]).unwrap();
    let mut count = stream.alloc_zeros::<u64>(1).unwrap();
    let mut scanned = stream.clone_htod(&vec![-1i64; n]).unwrap();
    let mut run_keys = stream.clone_htod(&vec![-7i32; n]).unwrap();
    let mut run_sums = stream.clone_htod(&vec![-7i64; n]).unwrap();
    let mut sum_count = stream.clone_htod(&[u64::MAX]).unwrap();
    for round in 0..90 {
        ws.run_length_encode_into(&d_keys, &mut vals, &mut lens, &mut count).unwrap();
        let counted = ws.count_if(&d_keys, &Pred::lt(50)).unwrap();
        ws.inclusive_scan_into(&d_values64, &mut scanned, ScanOp::Sum).unwrap();
        ws.reduce_by_key_into(&d_keys, &d_values64, &mut run_keys, &mut run_sums, &mut sum_count, ScanOp::Sum).unwrap();
        assert_eq!(counted, want_count, "round {round}: count_if");
        if round % 9 == 0 || (83..=86).contains(&round) {
            let runs = stream.clone_dtoh(&count).unwrap()[0] as usize;
            assert_eq!(runs, want_values.len(), "round {round}: number of runs");
            same(&stream.clone_dtoh(&vals).unwrap()[..runs], &want_values, "run values");
            same(&stream.clone_dtoh(&lens).unwrap()[..runs], &want_lengths, "run lengths");
            same(&stream.clone_dtoh(&scanned).unwrap(), &want_scan, "8-byte scan");
            let sums = stream.clone_dtoh(&sum_count).unwrap()[0] as usize;
            assert_eq!(sums, want_keys.len(), "round {round}: number of runs of reduce_by_key");
            same(&stream.clone_dtoh(&run_keys).unwrap()[..sums], &want_keys, "reduce_by_key keys");
            same(&stream.clone_dtoh(&run_sums).unwrap()[..sums], &want_sums, "reduce_by_key sums");
        }
    }
}

/// Views at odd offsets cannot use 16-byte vector accesses; the kernels fall back to item-wide ones.
#[test]
fn unaligned_views_scan_correctly() {
    let Some(stream) = gpu() else { return };
    let tile = lookback::__private::scan_tile_items(2);
    let n = 5 * tile + 3;
    let input: Vec<i16> = random_vec(n + 1, 9, 0.0);
    let d_in = stream.clone_htod(&input).unwrap();
    let mut d_out = stream.clone_htod(&vec![77i16; n + 4]).unwrap();
    let src = d_in.slice(1..);
    let mut dst = d_out.slice_mut(3..3 + n);
    lookback::exclusive_scan_into(&src, &mut dst, -5, ScanOp::Sum).unwrap();
    let got = stream.clone_dtoh(&d_out).unwrap();
    let want = host::exclusive_scan(&input[1..], -5, ScanOp::Sum).unwrap();
    assert_eq!(&got[..3], &[77, 77, 77], "wrote before the view");
    assert_eq!(got[3 + n], 77, "wrote after the view");
    check_scan(&input[1..], &got[3..3 + n], &want, ScanOp::Sum, true).unwrap();
}

/// The back-off only changes timing, never results: no sleep at all, and long sleeps.
#[test]
fn backoff_overrides_keep_results_exact() {
    let Some(stream) = gpu() else { return };
    let n = 200 * lookback::__private::scan_tile_items(8) + 5;
    let input: Vec<i64> = random_vec(n, 3, 0.0);
    let want = host::inclusive_scan(&input, ScanOp::Sum).unwrap();
    let d_in = stream.clone_htod(&input).unwrap();
    for (first, poll) in [(0, 0), (0, 50), (5000, 2000)] {
        let mut ws = Workspace::new(&stream);
        ws.set_backoff(Some(Backoff { first_poll_ns: first, poll_ns: poll }));
        let mut d_out = stream.alloc_zeros::<i64>(n).unwrap();
        ws.inclusive_scan_into(&d_in, &mut d_out, ScanOp::Sum).unwrap();
        assert!(stream.clone_dtoh(&d_out).unwrap() == want, "back-off {first}/{poll} changed the result");
    }
}

/// Scans on several non-blocking streams at once, each with its own workspace, do not interfere.
#[test]
fn concurrent_streams_with_own_workspaces() {
    let Some(stream) = gpu() else { return };
    let ctx = stream.context().clone();
    let n = 300 * lookback::__private::scan_tile_items(4) + 1;
    let inputs: Vec<Vec<i32>> = (0..4).map(|k| random_vec(n, 100 + k, 0.0)).collect();
    let streams: Vec<_> = (0..4).map(|_| ctx.new_stream().unwrap()).collect();
    let mut work = Vec::new();
    for (s, input) in streams.iter().zip(&inputs) {
        let d_in = s.clone_htod(input).unwrap();
        let d_out = s.alloc_zeros::<i32>(n).unwrap();
        work.push((Workspace::new(s), d_in, d_out));
    }
    for _round in 0..20 {
        for (ws, d_in, d_out) in work.iter_mut() {
            ws.inclusive_scan_into(d_in, d_out, ScanOp::Max).unwrap();
        }
    }
    for ((s, input), (_, _, d_out)) in streams.iter().zip(&inputs).zip(&work) {
        assert!(s.clone_dtoh(d_out).unwrap() == host::inclusive_scan(input, ScanOp::Max).unwrap());
    }
}
