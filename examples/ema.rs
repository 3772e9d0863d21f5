//! Exponential moving average of 10^8 sensor readings as one scan on the GPU:
//! `cargo run --release --example ema [-- N]`.
//!
//! The EMA h[t] = (1 - α)·h[t-1] + α·x[t] is the linear recurrence h[t] = a·h[t-1] + b[t] with a = 1 - α
//! and b[t] = α·x[t]. Each step is the affine map h ↦ a·h + b; composing maps in order is associative
//! (not commutative), so the whole series is one inclusive scan of maps, read out as the map's b (h[-1]
//! = 0). The readings (f32) become maps on load, so the scan reads 4 bytes and writes 4 bytes per item.
//!
//! Checked against a sequential f64 loop: the f32 scan groups the operations differently, and the
//! documented tolerance is |h_gpu - h| <= 1e-3 · (1 + |h|). Without a GPU (or kernels, or NVRTC) it says
//! why in one line and exits cleanly.
use lookback::cudarc::driver::sys;
use lookback::rtc::{Affine, linear_recurrence};
use lookback::{Workspace, host};
use std::time::Instant;

const ALPHA: f32 = 0.01;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(100_000_000), |s| s.parse())?;
    // The operator: the crate's linear recurrence (maps composed in order, the smoothed value read out
    // as b), with each reading turned into its map on load. In CUDA the map type is
    // `lookback_affine_f32`.
    // SAFETY: the load is a pure expression of the reading; the closure computes the same.
    let ema = unsafe {
        linear_recurrence::<f32>()?
            .with_load(&format!("lookback_affine_f32{{{:?}f, {ALPHA:?}f * x}}", 1.0 - ALPHA), |x: f32| {
                Affine::new(1.0 - ALPHA, ALPHA * x)
            })?
    };

    let stream = match lookback::default_stream(0) {
        Ok(s) if lookback::kernels_built() && lookback::rtc::nvrtc_available() => s,
        Ok(_) => return skip("the crate was built without kernels, or NVRTC could not be loaded"),
        Err(e) => return skip(&e.to_string()),
    };

    // Readings: a slow drift, a daily cycle and noise, like a temperature sensor.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let readings: Vec<f32> = (0..n)
        .map(|t| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let noise = (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            20.0 + 5.0 * (t as f32 * 1e-4).sin() + 2.0 * noise
        })
        .collect();

    // Compile (or find in the caches) before timing anything: cold, then cached.
    let cold = ema.compile(&stream)?;
    let warm = ema.compile(&stream)?;
    println!(
        "compile: {:?} in {:.1} ms, then {:?} in {:.3} ms ({} bytes of cubin for {})",
        cold.hit,
        cold.seconds * 1e3,
        warm.hit,
        warm.seconds * 1e3,
        cold.cubin_bytes,
        cold.arch
    );

    let input = stream.clone_htod(&readings)?;
    let mut smoothed = stream.alloc_zeros::<f32>(n)?;
    let mut ws = Workspace::new(&stream);
    ws.inclusive_scan_user_into(&input, &mut smoothed, &ema)?; // warm-up: the workspace grows once
    let ctx = stream.context();
    let (start, end) = (
        ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?,
        ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?,
    );
    start.record(&stream)?;
    ws.inclusive_scan_user_into(&input, &mut smoothed, &ema)?;
    end.record(&stream)?;
    end.synchronize()?;
    let ms = start.elapsed_ms(&end)?;
    let gbps = (8 * n) as f64 / (f64::from(ms) * 1e-3) / 1e9;
    println!("scan of {n} readings: {:.3} ms ({gbps:.0} GB/s of 4 bytes read + 4 written per item)", ms);

    let got = stream.clone_dtoh(&smoothed)?;
    let started = Instant::now();
    let (mut h, mut worst) = (0.0f64, 0.0f64);
    for (t, (&x, &g)) in readings.iter().zip(&got).enumerate() {
        h = f64::from(1.0 - ALPHA) * h + f64::from(ALPHA) * f64::from(x);
        let err = (f64::from(g) - h).abs() / (1.0 + h.abs());
        worst = worst.max(err);
        if err > 1e-3 {
            return Err(format!("item {t}: GPU {g}, sequential {h}").into());
        }
    }
    println!(
        "sequential f64 loop: {:.1} ms; largest error {worst:.2e} of 1 + |h| (tolerance 1e-3)",
        started.elapsed().as_secs_f64() * 1e3
    );
    // The host path of the same operator, on a prefix.
    let prefix = host::inclusive_scan_user(&readings[..1000], &ema);
    assert!(prefix.iter().zip(&got).all(|(&p, &g)| (p - g).abs() <= 1e-3 * (1.0 + p.abs())));
    Ok(())
}

fn skip(why: &str) -> Result<(), Box<dyn std::error::Error>> {
    println!("ema: skipped, no GPU scan here: {why}");
    Ok(())
}
