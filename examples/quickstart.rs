//! Quick start: `cargo run --release --example quickstart`. Scans on GPU 0; without a usable GPU (or
//! when the crate was built without nvcc) it says why in one line and uses the host reference instead.
use lookback::cudarc::driver::CudaStream;
use lookback::{Element, ScanOp, Workspace, host};
use std::sync::Arc;
use std::time::Instant;

fn main() -> lookback::Result<()> {
    println!("lookback quickstart: single-pass decoupled look-back scans, one kernel launch each");
    // Opening the GPU never panics: no driver or no GPU is an `Err`, which we turn into the host path.
    let gpu = match lookback::default_stream(0) {
        Ok(stream) if lookback::kernels_built() => {
            println!("running on GPU 0");
            Some(stream)
        }
        Ok(_) => host_path(lookback::Error::KernelsNotBuilt),
        Err(e) => host_path(e),
    };

    // Inclusive sum: out[i] = x[0] + … + x[i].
    let one_to_ten: Vec<i32> = (1..=10).collect();
    let sums = scan(&gpu, &one_to_ten, None, ScanOp::Sum)?;
    assert_eq!(sums, [1, 3, 6, 10, 15, 21, 28, 36, 45, 55]);
    println!("inclusive sum of 1..=10:   {sums:?}");

    // Exclusive sum seeded with 100: out[0] = 100, out[i] = 100 + x[0] + … + x[i-1] (e.g. write offsets).
    let sizes = [3u64, 1, 4, 1, 5];
    let offsets = scan(&gpu, &sizes, Some(100), ScanOp::Sum)?;
    assert_eq!(offsets, [100, 103, 104, 108, 109]);
    println!("exclusive sum from 100:    {offsets:?}");

    // In-place running maximum: the scan overwrites its input buffer.
    let mut levels = vec![2i16, 7, 1, 8, 2, 8, 1, 8, 2, 8];
    match &gpu {
        Some(stream) => {
            let mut buf = stream.clone_htod(&levels)?;
            lookback::inclusive_scan_in_place(&mut buf, ScanOp::Max)?;
            levels = stream.clone_dtoh(&buf)?;
        }
        None => levels = host::inclusive_scan(&levels, ScanOp::Max)?,
    }
    assert_eq!(levels, [2, 7, 7, 8, 8, 8, 8, 8, 8, 8]);
    println!("in-place running max:      {levels:?}");

    // A large scan, checked against the host reference. Integer sums wrap, on the GPU and the host alike.
    let n = 10_000_000;
    let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 20).collect();
    let want = host::inclusive_scan(&data, ScanOp::Sum)?;
    let (got, seconds) = match &gpu {
        Some(stream) => {
            let input = stream.clone_htod(&data)?;
            let mut output = stream.alloc_zeros::<u32>(n)?;
            // A Workspace keeps the look-back state, so repeated scans allocate nothing. The first call
            // also loads the kernel module, so time the second one.
            let mut ws = Workspace::new(stream);
            ws.inclusive_scan_into(&input, &mut output, ScanOp::Sum)?;
            stream.synchronize()?;
            let start = Instant::now();
            ws.inclusive_scan_into(&input, &mut output, ScanOp::Sum)?;
            stream.synchronize()?;
            let seconds = start.elapsed().as_secs_f64();
            (stream.clone_dtoh(&output)?, seconds)
        }
        None => {
            let start = Instant::now();
            let got = host::inclusive_scan(&data, ScanOp::Sum)?;
            (got, start.elapsed().as_secs_f64())
        }
    };
    assert_eq!(got, want);
    let total = data.iter().fold(0u32, |a, &x| a.wrapping_add(x));
    assert_eq!(got[n - 1], total);
    let gbps = (2 * n * size_of::<u32>()) as f64 / seconds / 1e9;
    println!("{n} u32 inclusive sum:  {:.3} ms ({gbps:.1} GB/s read + write), matches host", seconds * 1e3);
    Ok(())
}

/// Says (in one line) why the example falls back to the host reference path.
fn host_path(why: lookback::Error) -> Option<Arc<CudaStream>> {
    println!("running on the host reference path (lookback::host), because: {why}");
    None
}

/// Inclusive scan (`init: None`) or exclusive scan seeded with `init`, on the GPU or on the host.
fn scan<T: Element>(
    gpu: &Option<Arc<CudaStream>>,
    data: &[T],
    init: Option<T>,
    op: ScanOp,
) -> lookback::Result<Vec<T>> {
    let Some(stream) = gpu else {
        return match init {
            Some(init) => host::exclusive_scan(data, init, op),
            None => host::inclusive_scan(data, op),
        };
    };
    let input = stream.clone_htod(data)?;
    let output = match init {
        Some(init) => lookback::exclusive_scan(&input, init, op)?,
        None => lookback::inclusive_scan(&input, op)?,
    };
    Ok(stream.clone_dtoh(&output)?)
}
