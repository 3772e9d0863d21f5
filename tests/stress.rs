//! In-place compaction under stress: 1,000 `select_if_in_place` calls on 2^24 items with random
//! predicates, while two other streams run scans and selections of their own. The in-place result relies
//! on the look-back's ordering (a tile writes only after every earlier tile finished loading); a race
//! shows up as a wrong item now and then, so every result is compared in full.
mod common;

use common::{Rng, gpu, random_vec};
use lookback::{Pred, ScanOp, Workspace, host};
use std::sync::atomic::{AtomicBool, Ordering};

const N: usize = 1 << 24;
const CALLS: usize = 1000;
const PREDICATES: usize = 12;

fn predicate(k: usize) -> Pred<u32> {
    let t = (k as u32 + 1) * (u32::MAX / (PREDICATES as u32 + 1));
    match k % 3 {
        0 => Pred::lt(t),
        1 => Pred::ge(t / 2) & Pred::lt(t),
        _ => Pred::any_bits(1 << (k % 31)) | Pred::gt(u32::MAX - t / 4),
    }
}

#[test]
fn select_if_in_place_under_concurrent_load() {
    let Some(stream) = gpu() else { return };
    let ctx = stream.context().clone();
    let input: Vec<u32> = random_vec(N, 2024, 0.0);
    let wanted: Vec<Vec<u32>> = (0..PREDICATES).map(|k| host::select_if(&input, &predicate(k))).collect();
    let pristine = stream.clone_htod(&input).unwrap();
    let mut buf = stream.alloc_zeros::<u32>(N).unwrap();
    let stop = AtomicBool::new(false);
    let mut host_buf = vec![0u32; N];
    std::thread::scope(|scope| {
        // Background traffic: scans and out-of-place selections on two other streams.
        for b in 0..2u64 {
            let ctx = ctx.clone();
            let stop = &stop;
            scope.spawn(move || {
                let s = ctx.new_stream().unwrap();
                let data: Vec<i32> = random_vec(N / 2, 77 + b, 0.0);
                let d = s.clone_htod(&data).unwrap();
                let mut out = s.alloc_zeros::<i32>(N / 2).unwrap();
                let mut count = s.alloc_zeros::<u64>(1).unwrap();
                let mut ws = Workspace::new(&s);
                while !stop.load(Ordering::Relaxed) {
                    ws.inclusive_scan_into(&d, &mut out, ScanOp::Sum).unwrap();
                    ws.select_if_into(&d, &Pred::lt(0), &mut out, &mut count).unwrap();
                    s.synchronize().unwrap();
                }
            });
        }
        let mut ws = Workspace::new(&stream);
        let mut rng = Rng::new(5);
        let mut wrong = Vec::new();
        for call in 0..CALLS {
            let k = (rng.next_u64() % PREDICATES as u64) as usize;
            stream.memcpy_dtod(&pristine, &mut buf).unwrap();
            let kept = ws.select_if_in_place(&mut buf, &predicate(k)).unwrap();
            stream.memcpy_dtoh(&buf, &mut host_buf).unwrap();
            if kept != wanted[k].len() || host_buf[..kept] != wanted[k][..] {
                wrong.push((call, k, kept));
            }
        }
        stop.store(true, Ordering::Relaxed);
        assert!(
            wrong.is_empty(),
            "{} of {CALLS} in-place selections were wrong: {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(10)]
        );
    });
}
