//! Table-filter benchmark: one `Workspace::filter_columns_into` of four columns by a mask, against four
//! `select_flagged_into` calls (one per column, the same mask) and against a device-to-device memcpy of
//! the bytes the filter must read (the four columns and the mask), each timed with CUDA events in the
//! same process.
//!
//! Run `cargo bench --bench table -- --help` for the flags; `benches/README.md` (Table filter) explains the
//! output. Without a GPU, kernels or NVRTC it prints one line and exits 0.
mod common;

use common::{BoxResult, Step, Timer, check_failed, finish, gbps, gpu_or_skip, open_gpu, parse_flags};
use lookback::Workspace;
use lookback::cudarc::driver::{CudaSlice, CudaStream};
use lookback::table::{ColumnMut, ColumnRef, FilterBy};
use std::io::Write;
use std::sync::Arc;

const USAGE: &str = "\
usage: cargo bench --bench table -- [OPTIONS]
  --reps N            timed runs per row, median reported (default 30, at least 20)
  --sizes A,B,...     log2 of the row count (default 24,28)
  --layouts L,...     the four columns: i32x4 (i32, f32, u32, i32: 4-byte rows of 16 bytes) or mixed
                      (u8, i16, f32, f64: 15 bytes); default both
  --selectivity P,... percent of rows the mask keeps (default 1,50,100)
  --help              this text
The other benches' --types, --algos, --engine, --backoff and --csv are accepted and ignored.";

/// The four columns of a layout, as device buffers.
enum Cols {
    I32x4([CudaSlice<u32>; 4]),
    Mixed(CudaSlice<u8>, CudaSlice<i16>, CudaSlice<f32>, CudaSlice<f64>),
}

impl Cols {
    fn new(stream: &Arc<CudaStream>, layout: &str, n: usize, seed: u64) -> BoxResult<Cols> {
        let v = |k: u64| -> Vec<u64> {
            (0..n as u64).map(|i| (i ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15 + k)).collect()
        };
        Ok(match layout {
            "i32x4" => Cols::I32x4([0, 1, 2, 3].map(|k| {
                let host: Vec<u32> = v(k).into_iter().map(|x| x as u32).collect();
                stream.clone_htod(&host).expect("upload")
            })),
            _ => Cols::Mixed(
                stream.clone_htod(&v(0).into_iter().map(|x| x as u8).collect::<Vec<_>>())?,
                stream.clone_htod(&v(1).into_iter().map(|x| x as i16).collect::<Vec<_>>())?,
                stream.clone_htod(&v(2).into_iter().map(|x| (x >> 40) as f32).collect::<Vec<_>>())?,
                stream.clone_htod(&v(3).into_iter().map(|x| (x >> 11) as f64).collect::<Vec<_>>())?,
            ),
        })
    }

    fn refs(&self) -> Vec<ColumnRef<'_>> {
        match self {
            Cols::I32x4(c) => c.iter().map(ColumnRef::new).collect(),
            Cols::Mixed(a, b, c, d) => vec![ColumnRef::new(a), ColumnRef::new(b), ColumnRef::new(c), ColumnRef::new(d)],
        }
    }

    fn muts(&mut self) -> Vec<ColumnMut<'_>> {
        match self {
            Cols::I32x4(c) => c.iter_mut().map(ColumnMut::new).collect(),
            Cols::Mixed(a, b, c, d) => {
                vec![ColumnMut::new(a), ColumnMut::new(b), ColumnMut::new(c), ColumnMut::new(d)]
            }
        }
    }

    /// Bytes of one row.
    fn row_bytes(&self) -> usize {
        match self {
            Cols::I32x4(_) => 16,
            Cols::Mixed(..) => 15,
        }
    }

    /// One select_flagged_into per column, `out` receiving column c's rows.
    fn flagged(
        &self,
        ws: &mut Workspace,
        mask: &CudaSlice<u8>,
        out: &mut Cols,
        counts: &mut [CudaSlice<u64>; 4],
    ) -> lookback::Result<()> {
        let [c0, c1, c2, c3] = counts;
        match (self, out) {
            (Cols::I32x4(i), Cols::I32x4(o)) => {
                for ((input, output), count) in i.iter().zip(o.iter_mut()).zip([c0, c1, c2, c3]) {
                    ws.select_flagged_into(input, mask, output, count)?;
                }
            }
            (Cols::Mixed(a, b, c, d), Cols::Mixed(oa, ob, oc, od)) => {
                ws.select_flagged_into(a, mask, oa, c0)?;
                ws.select_flagged_into(b, mask, ob, c1)?;
                ws.select_flagged_into(c, mask, oc, c2)?;
                ws.select_flagged_into(d, mask, od, c3)?;
            }
            _ => unreachable!("outputs of the inputs' layout"),
        }
        Ok(())
    }

    /// Each column's first `k` items, as bytes.
    fn prefix_bytes(&self, stream: &Arc<CudaStream>, k: usize) -> BoxResult<Vec<Vec<u8>>> {
        fn bytes<T: lookback::Element>(stream: &Arc<CudaStream>, s: &CudaSlice<T>, k: usize) -> BoxResult<Vec<u8>> {
            let v = stream.clone_dtoh(&s.slice(..k))?;
            // SAFETY: plain numbers viewed as their bytes.
            Ok(unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), size_of_val(&v[..])) }.to_vec())
        }
        Ok(match self {
            Cols::I32x4(c) => c.iter().map(|s| bytes(stream, s, k)).collect::<BoxResult<_>>()?,
            Cols::Mixed(a, b, c, d) => {
                vec![bytes(stream, a, k)?, bytes(stream, b, k)?, bytes(stream, c, k)?, bytes(stream, d, k)?]
            }
        })
    }
}

struct Args {
    reps: usize,
    sizes: Vec<u32>,
    layouts: Vec<String>,
    selectivity: Vec<u32>,
}

fn parse() -> Result<Option<Args>, String> {
    let mut a = Args {
        reps: common::DEFAULT_REPS,
        sizes: vec![24, 28],
        layouts: vec!["i32x4".into(), "mixed".into()],
        selectivity: vec![1, 50, 100],
    };
    let go = parse_flags(std::env::args().skip(1), |flag, value| {
        match flag {
            "--reps" => a.reps = common::parse_reps(&value)?,
            "--sizes" => a.sizes = common::parse_list(&value, common::parse_log2n)?,
            "--layouts" => {
                a.layouts = common::parse_list(&value, |s| match s {
                    "i32x4" | "mixed" => Ok(s.to_string()),
                    _ => Err(format!("unknown layout {s} (i32x4 or mixed)")),
                })?
            }
            "--selectivity" => {
                a.selectivity = common::parse_list(&value, |s| {
                    s.parse().ok().filter(|&p: &u32| p <= 100).ok_or(format!("bad percentage {s}"))
                })?
            }
            // The other benches' flags, which `run.sh bench ARGS` passes to every bench binary: not
            // this bench's rows, so they are noted and ignored rather than failing the whole run.
            "--types" | "--algos" | "--engine" | "--backoff" | "--csv" => {
                println!("bench table: {flag} {value} ignored (see --help)")
            }
            _ => return Err(common::unknown_flag(flag)),
        }
        Ok(())
    })?;
    Ok(go.then_some(a))
}

fn main() -> BoxResult<()> {
    let args = match parse() {
        Ok(Some(a)) => a,
        Ok(None) => {
            println!("{USAGE}");
            return Ok(());
        }
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let Some(stream) = gpu_or_skip("table") else { return Ok(()) };
    if !lookback::rtc::nvrtc_available() {
        println!("bench table: skipped, NVRTC could not be loaded (the table filter compiles at run time)");
        return Ok(());
    }
    open_gpu(&stream, args.reps)?;
    finish(run(&stream, &args))
}

fn run(stream: &Arc<CudaStream>, args: &Args) -> BoxResult<()> {
    let mut timer = Timer::new(stream, args.reps)?;
    let mut ws = Workspace::new(stream);
    println!(
        "{:<22} {:<6} {:>6} {:>4}  {:>10}  {:>8}  {:>10}",
        "row", "layout", "log2n", "sel", "t (us)", "GB/s", "t_memcpy/t"
    );
    for &log2n in &args.sizes {
        let n = 1usize << log2n;
        for layout in &args.layouts {
            // Inputs, two sets of outputs, the memcpy's source and destination and the mask.
            let s = if layout == "i32x4" { 16 } else { 15 };
            let needed = n * (3 * s + 2 * (s + 1) + 1);
            let (free, _) = stream.context().mem_get_info()?;
            if needed > free / 10 * 9 {
                println!(
                    "{layout} 2^{log2n}: skipped, needs {} MiB of device memory, {} MiB free",
                    needed >> 20,
                    free >> 20
                );
                continue;
            }
            let cols = Cols::new(stream, layout, n, 7)?;
            let mut out_table = Cols::new(stream, layout, n, 8)?;
            let mut out_flagged = Cols::new(stream, layout, n, 9)?;
            debug_assert_eq!(s, cols.row_bytes());
            // memcpy of the bytes the filter must read: the four columns and the mask.
            let src = stream.alloc_zeros::<u8>(n * (s + 1))?;
            let mut dst = stream.alloc_zeros::<u8>(n * (s + 1))?;
            let memcpy_us = timer.median_us(|step| {
                if let Step::Run(_) = step {
                    stream.memcpy_dtod(&src, &mut dst)?;
                }
                Ok(())
            })?;
            println!(
                "{:<22} {layout:<6} {log2n:>6} {:>4}  {memcpy_us:>10.1}  {:>8.1}  {:>10.3}",
                "memcpy",
                "-",
                gbps(2 * n * (s + 1), memcpy_us),
                1.0
            );
            for &percent in &args.selectivity {
                let mask: Vec<u8> = (0..n as u64)
                    .map(|i| u8::from((i.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) % 100 < percent as u64))
                    .collect();
                let k = mask.iter().filter(|&&m| m != 0).count();
                let dmask = stream.clone_htod(&mask)?;
                let bytes = n * (s + 1) + k * s;
                let by = FilterBy::mask(&dmask);
                let report = by.compile(&cols.refs())?;
                if log2n == args.sizes[0] && percent == args.selectivity[0] {
                    println!("  (table kernel for {layout}: {:?} in {:.3} s)", report.hit, report.seconds);
                }
                let mut count = stream.alloc_zeros::<u64>(1)?;
                let refs = cols.refs();
                let table_us = timer.median_us(|step| {
                    if let Step::Run(_) = step {
                        ws.filter_columns_into(&refs, &mut out_table.muts(), &by, &mut count)?;
                    }
                    Ok(())
                })?;
                let mut counts = [0; 4].map(|_| stream.alloc_zeros::<u64>(1).expect("count"));
                let flagged_us = timer.median_us(|step| {
                    if let Step::Run(_) = step {
                        cols.flagged(&mut ws, &dmask, &mut out_flagged, &mut counts)?;
                    }
                    Ok(())
                })?;
                for (row, us) in [("table_filter_mask", table_us), ("select_flagged_x4", flagged_us)] {
                    println!(
                        "{row:<22} {layout:<6} {log2n:>6} {percent:>3}%  {us:>10.1}  {:>8.1}  {:>10.3}",
                        gbps(bytes, us),
                        memcpy_us / us
                    );
                }
                println!(
                    "{:<22} {layout:<6} {log2n:>6} {percent:>3}%  table / flagged_x4 = {:.3}",
                    "",
                    table_us / flagged_us
                );
                // The two must agree: the count and every column's kept rows, bit for bit.
                let got = stream.clone_dtoh(&count)?[0] as usize;
                if got != k || counts.iter().any(|c| stream.clone_dtoh(c).map(|v| v[0] as usize) != Ok(k)) {
                    return check_failed(format!("{layout} 2^{log2n} {percent}%: counts differ from {k}"));
                }
                if out_table.prefix_bytes(stream, k)? != out_flagged.prefix_bytes(stream, k)? {
                    return check_failed(format!("{layout} 2^{log2n} {percent}%: the table filter's rows differ"));
                }
                let _ = std::io::stdout().flush();
            }
        }
    }
    Ok(())
}
