//! Sharded scan and select_if of N × 2^28 i32 over NCCL against one GPU, timed with CUDA events, and
//! checked item by item.
//!
//! One process, every visible GPU (N = the GPU count, 1 included):
//! ```text
//! NCCL_NVLS_ENABLE=0 cargo run --release --features nccl --example shard_bench
//! ```
//! One process per GPU (the caller starts them; rank 0 writes the NCCL id to the file, the others wait
//! for it):
//! ```text
//! cargo run --release --features nccl --example shard_bench -- --rank 0 --world 2 --id-file /tmp/id &
//! cargo run --release --features nccl --example shard_bench -- --rank 1 --world 2 --id-file /tmp/id
//! ```
//! cudarc loads `libnccl.so`: NVIDIA's wheel (`nvidia-nccl-cu13`) ships `libnccl.so.2`, so link
//! `libnccl.so -> libnccl.so.2` in a folder on `LD_LIBRARY_PATH`.
//!
//! Prints, per primitive, the sharded time (the slowest rank), the whole column's throughput, one GPU's
//! on one shard's items, and the speedup; for the scan also the reduction each shard runs first (the 1n
//! of the 3n a sharded scan moves: see `lookback::shard`). NVLink multicast stays off
//! (`NCCL_NVLS_ENABLE=0` unless the environment sets it).
use clap::Parser;
use lookback::cudarc::driver::{CudaContext, CudaEvent, CudaSlice, CudaStream};
use lookback::shard::{Exchange, NcclExchange, NcclId, ShardGroup, ShardedColumn};
use lookback::{Pred, ScanOp, Workspace};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser)]
struct Args {
    /// Items per rank: 2^log2.
    #[arg(long, default_value_t = 28)]
    log2: u32,
    /// Timed repetitions (after one warm-up).
    #[arg(long, default_value_t = 10)]
    iters: usize,
    /// Multi-process mode: this process's rank.
    #[arg(long, requires_all = ["world", "id_file"])]
    rank: Option<usize>,
    /// Multi-process mode: the number of processes (ranks).
    #[arg(long)]
    world: Option<usize>,
    /// Multi-process mode: where rank 0 writes the NCCL id and the others read it.
    #[arg(long)]
    id_file: Option<PathBuf>,
}

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    let args = Args::parse();
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        // SAFETY: no other thread runs yet.
        unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
    }
    if !lookback::driver_available() {
        return Err(lookback::Error::NoCudaDriver.into());
    }
    let devices = CudaContext::device_count()? as usize;
    let n = 1usize << args.log2;
    let (exchange, single) = match args.rank {
        None => {
            let streams: Vec<_> = (0..devices).map(|d| CudaContext::new(d)?.new_stream()).collect::<Result<_, _>>()?;
            (NcclExchange::all_ranks(streams.clone())?, streams[0].clone())
        }
        Some(rank) => {
            let world = args.world.expect("clap requires it");
            let id = exchange_id(rank, args.id_file.as_ref().expect("clap requires it"))?;
            let stream = CudaContext::new(rank % devices)?.new_stream()?;
            (NcclExchange::one_rank(stream.clone(), rank, world, id)?, stream)
        }
    };
    let mut group = ShardGroup::new(exchange)?;
    let (world, first_rank) = (group.world_size(), group.exchange().rank(0));
    let report = first_rank == 0;
    if report {
        println!(
            "{world} ranks, {} in this process, 2^{} i32 per rank, NCCL_NVLS_ENABLE={:?}",
            group.local_ranks(),
            args.log2,
            std::env::var("NCCL_NVLS_ENABLE").ok()
        );
    }

    // Input item g of the whole column: 1 + g % 3, so every result has a closed form to check.
    let input = upload(&mut group, n, |g| 1 + (g % 3) as i32)?;
    let mut output = upload(&mut group, n, |_| -7)?;

    let scan = time(&mut group, args.iters, |g| Ok(g.inclusive_scan_into(&input, &mut output, ScanOp::Sum)?))?;
    check_scan(&group, &output)?;
    let pred = Pred::gt(1);
    let mut parts = None;
    let select = time(&mut group, args.iters, |g| {
        parts = Some(g.select_if_into(&input, &pred, &mut output)?);
        Ok(())
    })?;
    check_select(&group, &output, parts.as_ref().expect("ran"))?;

    // One GPU on one shard's items: the same calls, on the first local rank's GPU.
    let mut ws = Workspace::new(&single);
    let one_in = single.clone_htod(&(0..n).map(|g| 1 + (g % 3) as i32).collect::<Vec<_>>())?;
    let mut one_out = single.alloc_zeros::<i32>(n)?;
    let mut count = single.alloc_zeros::<u64>(1)?;
    let mut total = single.alloc_zeros::<i32>(1)?;
    let one_scan = time_one(&single, args.iters, || Ok(ws.inclusive_scan_into(&one_in, &mut one_out, ScanOp::Sum)?))?;
    let one_select =
        time_one(&single, args.iters, || Ok(ws.select_if_into(&one_in, &pred, &mut one_out, &mut count)?))?;
    let one_reduce = time_one(&single, args.iters, || Ok(ws.reduce_into(&one_in, &mut total, ScanOp::Sum)?))?;

    if report {
        let whole = (world * n) as f64;
        let line = |name: &str, sharded: f64, one: f64, bytes_per_item: f64| {
            println!(
                "{name:<9} sharded {:8.3} ms {:8.1} GB/s | one GPU {:8.3} ms {:8.1} GB/s | speedup {:.2}x (of {world})",
                sharded * 1e3,
                whole * bytes_per_item / sharded / 1e9,
                one * 1e3,
                n as f64 * bytes_per_item / one / 1e9,
                (whole / sharded) / (n as f64 / one)
            )
        };
        line("scan", scan, one_scan, 8.0);
        // Two thirds of the items are selected: read 4 bytes, write 8/3.
        line("select_if", select, one_select, 4.0 + 8.0 / 3.0);
        if world > 1 {
            println!(
                "bound     a sharded scan moves 3n per rank against 2n: at most {:.2}x on {world} GPUs (lookback::shard docs)",
                2.0 * world as f64 / 3.0
            );
        }
        println!(
            "reduce    one GPU {:8.3} ms ({:.0} % of a scan): the pass a sharded scan adds; a fix-up pass instead would cost about a scan",
            one_reduce * 1e3,
            100.0 * one_reduce / one_scan
        );
    }
    Ok(())
}

/// Rank 0 creates the id and writes it (to a temporary name, then renamed: the others never read half
/// of it); the others wait for the file.
fn exchange_id(rank: usize, path: &PathBuf) -> Res<NcclId> {
    if rank == 0 {
        let id = NcclId::new()?;
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, id.to_bytes())?;
        std::fs::rename(&tmp, path)?;
        return Ok(id);
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(bytes) = std::fs::read(path)
            && let Ok(bytes) = <[u8; 128]>::try_from(bytes.as_slice())
        {
            return Ok(NcclId::from_bytes(bytes));
        }
        if Instant::now() > deadline {
            return Err(format!("no NCCL id in {} after 120 s", path.display()).into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A column of `n` items per local rank, item g of the whole column being `item(g)`.
fn upload<X: Exchange>(group: &mut ShardGroup<X>, n: usize, item: impl Fn(usize) -> i32) -> Res<ShardedColumn<i32>> {
    let bufs = (0..group.local_ranks())
        .map(|i| {
            let start = group.exchange().rank(i) * n;
            group.stream(i).clone_htod(&(start..start + n).map(&item).collect::<Vec<_>>())
        })
        .collect::<Result<Vec<CudaSlice<i32>>, _>>()?;
    Ok(group.column(bufs)?)
}

/// The median time of `iters` sharded calls after one warm-up: per call, the slowest local rank
/// between events recorded on its stream before and after.
fn time<X: Exchange>(
    group: &mut ShardGroup<X>,
    iters: usize,
    mut call: impl FnMut(&mut ShardGroup<X>) -> Res<()>,
) -> Res<f64> {
    let streams: Vec<Arc<CudaStream>> = (0..group.local_ranks()).map(|i| group.stream(i).clone()).collect();
    let mut times = Vec::new();
    for it in 0..=iters {
        streams.iter().try_for_each(|s| s.synchronize())?;
        let starts = record(&streams)?;
        call(group)?;
        let ends = record(&streams)?;
        let mut slowest = 0.0f64;
        for (s, e) in starts.iter().zip(&ends) {
            e.synchronize()?;
            slowest = slowest.max(f64::from(s.elapsed_ms(e)?) / 1e3);
        }
        if it > 0 {
            times.push(slowest);
        }
    }
    Ok(median(times))
}

fn time_one(stream: &Arc<CudaStream>, iters: usize, mut call: impl FnMut() -> Res<()>) -> Res<f64> {
    let mut times = Vec::new();
    for it in 0..=iters {
        let start = record(std::slice::from_ref(stream))?;
        call()?;
        let end = record(std::slice::from_ref(stream))?;
        end[0].synchronize()?;
        if it > 0 {
            times.push(f64::from(start[0].elapsed_ms(&end[0])?) / 1e3);
        }
    }
    Ok(median(times))
}

fn record(streams: &[Arc<CudaStream>]) -> Res<Vec<CudaEvent>> {
    let timing = Some(lookback::cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    Ok(streams.iter().map(|s| s.record_event(timing)).collect::<Result<_, _>>()?)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Every item of the sharded scan: the sum of 1 + k % 3 over k ≤ g, wrapped to i32.
fn check_scan<X: Exchange>(group: &ShardGroup<X>, output: &ShardedColumn<i32>) -> Res<()> {
    for (i, shard) in output.shards().iter().enumerate() {
        let got = group.stream(i).clone_dtoh(shard.data())?;
        let start = shard.offset();
        for (j, &x) in got.iter().enumerate() {
            let g = start + j as u64;
            let (q, r) = ((g + 1) / 3, (g + 1) % 3);
            let want = ((g + 1) + 3 * q + u64::from(r == 2)) as i64 as i32;
            if x != want {
                return Err(format!("scan item {g}: got {x}, want {want}").into());
            }
        }
    }
    Ok(())
}

/// The sharded selection: items 2, 3, 2, 3, … of the whole selection, at the parts' offsets.
fn check_select<X: Exchange>(
    group: &ShardGroup<X>,
    output: &ShardedColumn<i32>,
    parts: &lookback::shard::ShardedParts,
) -> Res<()> {
    let whole = (group.world_size() * output.shards()[0].len()) as u64;
    let want_total = whole - whole.div_ceil(3);
    if parts.total != want_total {
        return Err(format!("select_if: {} items, want {want_total}", parts.total).into());
    }
    for (i, (shard, part)) in output.shards().iter().zip(&parts.parts).enumerate() {
        let got = group.stream(i).clone_dtoh(&shard.data().slice(..part.len as usize))?;
        for (j, &x) in got.iter().enumerate() {
            let k = part.offset + j as u64;
            let want = 2 + (k % 2) as i32;
            if x != want {
                return Err(format!("select_if item {k}: got {x}, want {want}").into());
            }
        }
    }
    Ok(())
}
