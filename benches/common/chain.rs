//! The `chain5` rows of `benches/select.rs`: five calls in a pipeline, each sized by the count
//! the call before it left on the device (`Workspace::with_count`), timed three ways in one process:
//!
//! * `chain5_eager_sync`: the calls enqueued one by one with a host sync (`stream.synchronize()`) after
//!   each, as a pipeline that reads each count back to the host would run (the base of the other two);
//! * `chain5_eager`: the same calls with one sync at the end, which device-resident counts allow;
//! * `chain5_graph`: the same calls captured once in a CUDA graph (`lookback::graph::capture`), replayed
//!   with one `graph.launch()` and one sync at the end.
//!
//! The data: sensor ids (i32) in bursts, runs of uniform length 1..=7 (mean 4) of ids in `0..16`, each
//! burst's id differing from the one before; then 1/8 of the readings are made invalid (-1), which
//! splits bursts. The stages:
//!
//! 1. `select_if(keys, ge(0))` → `clean`, c1: the valid readings; the bursts they split join again.
//! 2. `unique(clean)` sized by c1 → `bursts`, c2: one id per burst.
//! 3. `select_if(bursts, lt(8))` sized by c2 → `wanted`, c3: the bursts of sensors `0..8`; consecutive
//!    bursts of one sensor now meet.
//! 4. `run_length_encode(wanted)` sized by c3 → `sensors`, `visits` (u32), c4: those grouped.
//! 5. `exclusive_scan(visits, 0)` sized by c4 → `first`: where each group starts in `wanted`.
//!
//! Every output holds `n` items (a call sized on the device checks its buffers against its input's
//! length, its capacity). One set of buffers, no rotation: a pipeline's stages find their inputs in the
//! L2, as they would in use.

use crate::common::{
    BoxResult, MemcpyBaseline, Report, Row, Step, Timer, Versus, XorShift, check_failed, gbps, poison,
};
use lookback::cudarc::driver::{CudaSlice, CudaStream};
use lookback::{Backoff, Engine, Pred, ScanOp, Workspace, host};
use std::fmt::Debug;
use std::sync::Arc;

/// The `--algos` name.
pub const NAME: &str = "chain5";
/// Timed chains per row, at least (`--reps` if larger): a chain takes tens of microseconds at 2^16.
const MIN_REPS: usize = 500;
/// Sensor ids are `0..SENSORS`; an invalid reading is `INVALID`; stage 3 keeps the ids below `WANTED`.
const SENSORS: u64 = 16;
const INVALID: i32 = -1;
const WANTED: i32 = 8;

/// What the chain takes from the bench: the size, `--reps`, `--backoff` and `--engine`.
pub struct Setup {
    pub log2n: u32,
    pub reps: usize,
    pub backoff: Option<Backoff>,
    pub engine: Engine,
}

/// The keys: bursts of ids, then 1/8 of the readings invalid.
fn make_keys(n: usize, seed: u64) -> Vec<i32> {
    let mut rng = XorShift(seed | 1);
    let mut keys = Vec::with_capacity(n);
    let mut id = 0u64;
    while keys.len() < n {
        id = (id + 1 + rng.next() % (SENSORS - 1)) % SENSORS;
        let run = (1 + rng.next() % 7) as usize;
        keys.extend(std::iter::repeat_n(id as i32, run.min(n - keys.len())));
    }
    for k in &mut keys {
        if rng.next().is_multiple_of(8) {
            *k = INVALID;
        }
    }
    keys
}

/// The chain on the host (`lookback::host`): the four counts and the outputs of the last two stages.
struct Want {
    counts: [usize; 4],
    sensors: Vec<i32>,
    visits: Vec<u32>,
    first: Vec<u32>,
}

impl Want {
    fn new(keys: &[i32], preds: &Preds) -> BoxResult<Want> {
        let clean = host::select_if(keys, &preds.valid);
        let bursts = host::unique(&clean);
        let wanted = host::select_if(&bursts, &preds.wanted);
        let (sensors, visits) = host::run_length_encode(&wanted);
        let visits = visits.into_iter().map(u32::try_from).collect::<Result<Vec<u32>, _>>()?;
        let first = host::exclusive_scan(&visits, 0, ScanOp::Sum)?;
        Ok(Want { counts: [clean.len(), bursts.len(), wanted.len(), sensors.len()], sensors, visits, first })
    }

    /// The least traffic of the five calls, counted as the select and runs benches count each: a
    /// selection `n·s + k·s`, run-length encoding `n·s + r·(s + 4) + 8`, a scan `2·n·s`.
    fn bytes(&self, n: usize) -> usize {
        let s = size_of::<i32>();
        let [c1, c2, c3, c4] = self.counts;
        (n + c1) * s + (c1 + c2) * s + (c2 + c3) * s + (c3 * s + c4 * (s + 4) + 8) + 2 * c4 * 4
    }
}

struct Preds {
    valid: Pred<i32>,
    wanted: Pred<i32>,
}

/// The input, every stage's output and count (`c1`..`c4`), on the chain's stream.
struct Buffers {
    keys: CudaSlice<i32>,
    clean: CudaSlice<i32>,
    bursts: CudaSlice<i32>,
    wanted: CudaSlice<i32>,
    sensors: CudaSlice<i32>,
    visits: CudaSlice<u32>,
    first: CudaSlice<u32>,
    c1: CudaSlice<u64>,
    c2: CudaSlice<u64>,
    c3: CudaSlice<u64>,
    c4: CudaSlice<u64>,
}

impl Buffers {
    fn new(stream: &Arc<CudaStream>, keys: &[i32]) -> BoxResult<Buffers> {
        let n = keys.len();
        Ok(Buffers {
            keys: stream.clone_htod(keys)?,
            clean: stream.alloc_zeros(n)?,
            bursts: stream.alloc_zeros(n)?,
            wanted: stream.alloc_zeros(n)?,
            sensors: stream.alloc_zeros(n)?,
            visits: stream.alloc_zeros(n)?,
            first: stream.alloc_zeros(n)?,
            c1: stream.alloc_zeros(1)?,
            c2: stream.alloc_zeros(1)?,
            c3: stream.alloc_zeros(1)?,
            c4: stream.alloc_zeros(1)?,
        })
    }

    /// Before a check: every output and count poisoned, so a stage that writes nothing cannot pass.
    fn poison(&mut self, stream: &Arc<CudaStream>) -> BoxResult<()> {
        for buf in [&mut self.clean, &mut self.bursts, &mut self.wanted, &mut self.sensors] {
            poison(stream, buf)?;
        }
        poison(stream, &mut self.visits)?;
        poison(stream, &mut self.first)?;
        for count in [&mut self.c1, &mut self.c2, &mut self.c3, &mut self.c4] {
            poison(stream, count)?;
        }
        Ok(())
    }

    /// Compares the four counts and the last two stages' outputs, in full, with the host's.
    fn check(&self, stream: &Arc<CudaStream>, want: &Want, label: &str) -> BoxResult<()> {
        let n = self.keys.len();
        for (stage, (count, &w)) in [&self.c1, &self.c2, &self.c3, &self.c4].into_iter().zip(&want.counts).enumerate() {
            let got = stream.clone_dtoh(count)?[0];
            if got != w as u64 {
                return check_failed(format!("{label} i32 n={n}: stage {} count is {got}, host says {w}", stage + 1));
            }
        }
        let r = want.counts[3];
        same(label, "sensors", &stream.clone_dtoh(&self.sensors.slice(..r))?, &want.sensors)?;
        same(label, "visits", &stream.clone_dtoh(&self.visits.slice(..r))?, &want.visits)?;
        same(label, "first", &stream.clone_dtoh(&self.first.slice(..r))?, &want.first)
    }
}

fn same<T: PartialEq + Debug>(label: &str, what: &str, got: &[T], want: &[T]) -> BoxResult<()> {
    match got.iter().zip(want).position(|(g, w)| g != w) {
        Some(i) => check_failed(format!("{label} {what}: item {i} is {:?}, host says {:?}", got[i], want[i])),
        None => Ok(()),
    }
}

/// The five calls; `after` runs after each one (a host sync, or nothing).
fn stages(
    ws: &mut Workspace,
    b: &mut Buffers,
    preds: &Preds,
    mut after: impl FnMut() -> lookback::Result<()>,
) -> lookback::Result<()> {
    ws.select_if_into(&b.keys, &preds.valid, &mut b.clean, &mut b.c1)?;
    after()?;
    ws.with_count(&b.c1, |ws| ws.unique_into(&b.clean, &mut b.bursts, &mut b.c2))?;
    after()?;
    ws.with_count(&b.c2, |ws| ws.select_if_into(&b.bursts, &preds.wanted, &mut b.wanted, &mut b.c3))?;
    after()?;
    ws.with_count(&b.c3, |ws| {
        ws.run_length_encode_into::<i32, u32, _, _, _, _>(&b.wanted, &mut b.sensors, &mut b.visits, &mut b.c4)
    })?;
    after()?;
    ws.with_count(&b.c4, |ws| ws.exclusive_scan_into(&b.visits, &mut b.first, 0, ScanOp::Sum))?;
    after()
}

/// Times `chain` (one whole chain per call, ending in a host sync) from poisoned outputs, then checks
/// what the last one left.
fn time_chain(
    timer: &mut Timer,
    b: &mut Buffers,
    want: &Want,
    label: &str,
    mut chain: impl FnMut(&mut Buffers) -> BoxResult<()>,
) -> BoxResult<f64> {
    let stream = timer.stream.clone();
    b.poison(&stream)?;
    let us = timer.median_us(|step| {
        if let Step::Run(_) = step {
            chain(b)?;
        }
        Ok(())
    })?;
    b.check(&stream, want, label)?;
    Ok(us)
}

/// The three `chain5` rows at one size, on a stream of their own (the legacy default stream, which the
/// other rows use, cannot capture), with their own workspace.
pub fn run(main: &Arc<CudaStream>, setup: &Setup, memcpy: &mut MemcpyBaseline, report: &mut Report) -> BoxResult<()> {
    main.synchronize()?;
    let stream = main.context().new_stream()?;
    let log2n = setup.log2n;
    let n = 1usize << log2n;
    let preds = Preds { valid: Pred::ge(0), wanted: Pred::lt(WANTED) };
    let keys = make_keys(n, 0x9E37_79B9_7F4A_7C15 ^ u64::from(log2n) ^ (3 << 40));
    let want = Want::new(&keys, &preds)?;
    let mut b = Buffers::new(&stream, &keys)?;
    let mut ws = Workspace::new(&stream);
    ws.set_backoff(setup.backoff);
    ws.set_engine(setup.engine);
    ws.reserve(n)?;
    let mut timer = Timer::new(&stream, setup.reps.max(MIN_REPS))?;
    let keys_in = std::slice::from_ref(&b.keys);
    let memcpy_gbps = memcpy.gbps(&mut timer, log2n, keys_in, std::slice::from_mut(&mut b.clean), report)?;
    let label = |name: &str| crate::common::engine_label(&format!("{NAME}_{name}"), setup.engine);
    let sync = || -> lookback::Result<()> { Ok(stream.synchronize()?) };

    // Once, before any timing: the eager chain, then its graph, each checked against the host.
    b.poison(&stream)?;
    stages(&mut ws, &mut b, &preds, || Ok(()))?;
    b.check(&stream, &want, &label("eager"))?;
    // SAFETY: this thread alone uses the context (and open_gpu turned event tracking off already).
    let graph = unsafe { lookback::graph::capture(&stream, |_| stages(&mut ws, &mut b, &preds, || Ok(()))) }?;
    b.poison(&stream)?;
    graph.launch()?;
    b.check(&stream, &want, &label("graph"))?;

    let eager_sync =
        time_chain(&mut timer, &mut b, &want, &label("eager_sync"), |b| Ok(stages(&mut ws, b, &preds, sync)?))?;
    let eager = time_chain(&mut timer, &mut b, &want, &label("eager"), |b| {
        stages(&mut ws, b, &preds, || Ok(()))?;
        Ok(sync()?)
    })?;
    let graphed = time_chain(&mut timer, &mut b, &want, &label("graph"), |_| {
        graph.launch()?;
        Ok(sync()?)
    })?;

    let bytes = want.bytes(n);
    let row = |name: String, us: f64| Row {
        label: name,
        ty: "i32",
        log2n,
        copies: 1,
        median_us: us,
        gbps: gbps(bytes, us),
        memcpy_gbps,
    };
    let base = row(label("eager_sync"), eager_sync);
    let versus = Versus { base: base.label.clone(), base_us: eager_sync };
    report.push(base)?;
    report.push_versus(row(label("eager"), eager), Some(versus.clone()))?;
    report.push_versus(row(label("graph"), graphed), Some(versus))
}
