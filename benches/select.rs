//! Stream-compaction benchmark: times `lookback`'s selections, partitions, `unique` and `count_if`
//! with CUDA events and compares their bandwidth with a device-to-device memcpy of the input's byte
//! count, measured in the same process.
//!
//! Run `cargo bench --bench select -- --help` for the flags; `benches/README.md` explains the output.
//! Without a GPU (or without kernels) it prints one line and exits 0, so `cargo bench` passes anywhere.

#[path = "common/chain.rs"]
mod chain;
mod common;

use common::{
    BenchElement, BoxResult, ElemType, Measured, MemcpyBaseline, Report, Row, Step, Timer, XorShift, alloc_copies,
    check, check_failed, copies_for, gbps, poison, upload_copies,
};
use lookback::cudarc::driver::{CudaSlice, CudaStream, DriverError};
use lookback::half::f16;
use lookback::rtc::UserPred;
use lookback::{Backoff, Pred, Workspace, host};
use std::sync::Arc;

const CSV_NAME: &str = "bench-select.csv";
/// The element types this bench supports.
const TYPES: [ElemType; 5] = [ElemType::I32, ElemType::U8, ElemType::I64, ElemType::F32, ElemType::F16];
/// Outputs of inputs shorter than this are compared with the host in full; longer ones at both ends.
const FULL_CHECK_BELOW: usize = 1 << 26;

const USAGE: &str = "\
usage: cargo bench --bench select -- [OPTIONS]
  --reps N          timed runs per row, median reported (default 30, at least 20)
  --sizes A,B,...   log2 of the item count (default 16,18,20,22,24,26,28,30)
  --types T,...     element types among i32,u8,i64,f32,f16 (default i32)
  --algos A,...     among select_if_50,select_if_in_place_50,compound_50,compound_or_50,count_if_50,
                    select_if_1,select_flagged_50,partition_reversed_50,partition_stable_50,
                    partition_split_50,unique_run4 (default: these eleven), and the opt-in rows
                    select_if_50_devsize (select_if_50 sized by a count on the device:
                    Workspace::with_count; runs right after select_if_50, which it brings in),
                    select_if_50_user (select_if_50's `x < t` as a run-time compiled user predicate,
                    lookback::rtc::UserPred; after select_if_50, which it brings in; its compile is
                    reported first) and chain5 (five calls chained by device counts, eager vs CUDA
                    graph; i32 only)
  --csv PATH        CSV output (default bench-select.csv; also $OUT/bench-select.csv if OUT is set)
  --backoff F:P     look-back back-off for every row, in ns (default: the tuned one)
  --engine E        auto (default), classic or persistent (sm_90+; compaction and counting only):
                    rows are labelled name[classic] / name[persistent] unless auto
  --help            this text";

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Algo {
    SelectIf50,
    SelectIfInPlace50,
    Compound50,
    CompoundOr50,
    CountIf50,
    SelectIf1,
    SelectFlagged50,
    PartitionReversed50,
    PartitionStable50,
    PartitionSplit50,
    UniqueRun4,
    SelectIf50DevSize,
    SelectIf50User,
    Chain5,
}

impl Algo {
    /// The default rows, in an order where rows checked against the same host result are adjacent.
    const DEFAULT: [Algo; 11] = [
        Algo::SelectIf50,
        Algo::SelectIfInPlace50,
        Algo::Compound50,
        Algo::CompoundOr50,
        Algo::CountIf50,
        Algo::SelectIf1,
        Algo::SelectFlagged50,
        Algo::PartitionReversed50,
        Algo::PartitionStable50,
        Algo::PartitionSplit50,
        Algo::UniqueRun4,
    ];
    /// The opt-in rows `--algos` also takes.
    const OPT_IN: [Algo; 3] = [Algo::SelectIf50DevSize, Algo::SelectIf50User, Algo::Chain5];

    fn name(self) -> &'static str {
        match self {
            Algo::SelectIf50 => "select_if_50",
            Algo::SelectIfInPlace50 => "select_if_in_place_50",
            Algo::Compound50 => "compound_50",
            Algo::CompoundOr50 => "compound_or_50",
            Algo::CountIf50 => "count_if_50",
            Algo::SelectIf1 => "select_if_1",
            Algo::SelectFlagged50 => "select_flagged_50",
            Algo::PartitionReversed50 => "partition_reversed_50",
            Algo::PartitionStable50 => "partition_stable_50",
            Algo::PartitionSplit50 => "partition_split_50",
            Algo::UniqueRun4 => "unique_run4",
            Algo::SelectIf50DevSize => "select_if_50_devsize",
            Algo::SelectIf50User => "select_if_50_user",
            Algo::Chain5 => chain::NAME,
        }
    }

    fn parse(s: &str) -> Result<Algo, String> {
        let mut all = Algo::DEFAULT.into_iter().chain(Algo::OPT_IN);
        all.find(|a| a.name() == s).ok_or_else(|| format!("unknown algorithm `{s}`"))
    }

    /// The row a paired row is compared with: a `_devsize` row's host-size call, a `_user` row's
    /// built-in predicate.
    fn base(self) -> Option<Algo> {
        match self {
            Algo::SelectIf50DevSize | Algo::SelectIf50User => Some(Algo::SelectIf50),
            _ => None,
        }
    }

    fn in_place(self) -> bool {
        self == Algo::SelectIfInPlace50
    }

    /// The input it runs on (`None`: the chain, which has its own, in `chain.rs`).
    fn data(self) -> Option<Data> {
        match self {
            Algo::UniqueRun4 => Some(Data::Runs),
            Algo::Chain5 => None,
            _ => Some(Data::Random),
        }
    }

    /// The host result it is checked against (`None`: only the count is checked).
    fn reference(self) -> Option<Reference> {
        match self {
            // The compound predicate selects exactly the items `lt(half)` does: checking it
            // against that result also shows it.
            Algo::SelectIf50
            | Algo::SelectIfInPlace50
            | Algo::Compound50
            | Algo::CompoundOr50
            | Algo::SelectIf50DevSize
            | Algo::SelectIf50User => Some(Reference::Lt50),
            Algo::CountIf50 => None,
            Algo::SelectIf1 => Some(Reference::Lt1),
            Algo::SelectFlagged50 => Some(Reference::Flagged),
            Algo::PartitionReversed50 => Some(Reference::Reversed),
            Algo::PartitionStable50 | Algo::PartitionSplit50 => Some(Reference::Stable),
            Algo::UniqueRun4 => Some(Reference::Unique),
            Algo::Chain5 => unreachable!("chain5 checks itself (chain.rs)"),
        }
    }

    /// The least traffic the call needs, in bytes, for `n` items of `size` bytes, `k` selected.
    fn bytes(self, n: usize, size: usize, k: usize) -> usize {
        match self {
            Algo::SelectIf50
            | Algo::SelectIfInPlace50
            | Algo::Compound50
            | Algo::CompoundOr50
            | Algo::SelectIf1
            | Algo::UniqueRun4
            | Algo::SelectIf50DevSize
            | Algo::SelectIf50User => n * size + k * size,
            Algo::SelectFlagged50 => n * size + n + k * size,
            Algo::PartitionReversed50 | Algo::PartitionStable50 | Algo::PartitionSplit50 => 2 * n * size,
            Algo::CountIf50 => n * size,
            Algo::Chain5 => unreachable!("chain5 counts its own bytes (chain.rs)"),
        }
    }
}

type Args = common::Args<Algo>;

/// The common flags (`--backoff` takes one value here).
fn parse_args(argv: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let args = common::parse_args(argv, CSV_NAME, &TYPES, &Algo::DEFAULT, Algo::parse)?;
    if let Some(a) = &args {
        a.single_backoff()?;
    }
    Ok(args)
}

// ---------------------------------------------------------------------------------------------
// Element types and inputs
// ---------------------------------------------------------------------------------------------

/// What the selection benchmark needs of an element type beyond [`BenchElement`].
trait Value: BenchElement {
    /// Inputs are whole numbers in `0..RANGE`, so `lt(RANGE / 2)` selects 50 % and
    /// `lt(RANGE / 100)` 1 %.
    const RANGE: u32;
    /// `v` as an item (exact for `v < RANGE`).
    fn from_u32(v: u32) -> Self;
    /// A value no input has.
    fn never() -> Self;
    /// `x < t` in CUDA C++, for the user-predicate row (`t` a whole number below `RANGE`).
    fn cuda_lt(t: u32) -> String;
}

macro_rules! value {
    ($($t:ty: $range:expr, $from:expr, $never:expr, $lt:literal);*) => {$(
        impl Value for $t {
            const RANGE: u32 = $range;
            fn from_u32(v: u32) -> Self {
                $from(v)
            }
            fn never() -> Self {
                $never
            }
            fn cuda_lt(t: u32) -> String {
                format!($lt, t = t)
            }
        }
    )*};
}
value! {
    i32: 1000, |v| v as i32, -1, "x < {t}";
    i64: 1000, i64::from, -1, "x < {t}";
    // 0..1000 does not fit a u8: 0..200, with thresholds 100 and 2.
    u8: 200, |v| v as u8, u8::MAX, "x < {t}";
    f32: 1000, |v| v as f32, -1.0, "x < {t}.0f";
    f16: 1000, |v| f16::from_f32(v as f32), f16::from_f32(-1.0), "x < __float2half({t}.0f)"
}

/// Which input a row runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Data {
    /// Independent uniform values in `0..RANGE`.
    Random,
    /// Runs of equal values, of uniform length 1..=7 (mean 4), each run differing from the last.
    Runs,
}

fn make_input<T: Value>(data: Data, n: usize, seed: u64) -> Vec<T> {
    let mut rng = XorShift(seed | 1);
    match data {
        Data::Random => (0..n).map(|_| T::from_u32((rng.next() % u64::from(T::RANGE)) as u32)).collect(),
        Data::Runs => {
            let mut out = Vec::with_capacity(n);
            let mut v = 0u64;
            while out.len() < n {
                v = (v + 1 + rng.next() % u64::from(T::RANGE - 1)) % u64::from(T::RANGE);
                let run = (1 + rng.next() % 7) as usize;
                let item = T::from_u32(v as u32);
                out.extend(std::iter::repeat_n(item, run.min(n - out.len())));
            }
            out
        }
    }
}

/// One flag byte per item, each set (1) with probability 1/2.
fn make_flags(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = XorShift(seed | 1);
    (0..n).map(|_| (rng.next() >> 40) as u8 & 1).collect()
}

/// The predicates of the rows.
struct Preds<T> {
    /// `x < RANGE / 2`: 50 %.
    half: Pred<T>,
    /// `x < RANGE / 100`: 1 %.
    one: Pred<T>,
    /// `x >= 0 && x < RANGE / 2 && x != never`: the same 50 %, one interval (compiles to one leaf).
    compound: Pred<T>,
    /// `x < RANGE / 2 && (x != never || x == 0)`: the same 50 % in five instructions (no folding).
    compound_or: Pred<T>,
    /// `x < RANGE / 2` as user code compiled at run time (the `_user` row).
    user: UserPred<T>,
}

/// The threshold of the 50 % rows: `RANGE / 2`.
fn half<T: Value>() -> T {
    T::from_u32(T::RANGE / 2)
}

/// The threshold of the 1 % row: `RANGE / 100`.
fn one_percent<T: Value>() -> T {
    T::from_u32(T::RANGE / 100)
}

impl<T: Value> Preds<T> {
    fn new() -> Preds<T> {
        let half = half::<T>();
        Preds {
            half: Pred::lt(half),
            one: Pred::lt(one_percent::<T>()),
            compound: Pred::ge(T::from_u32(0)) & Pred::lt(half) & Pred::ne(T::never()),
            compound_or: Pred::lt(half) & (Pred::ne(T::never()) | Pred::eq(T::from_u32(0))),
            user: {
                let host = Pred::lt(half);
                // SAFETY: a pure comparison of x with a constant.
                unsafe { UserPred::new(&T::cuda_lt(T::RANGE / 2), move |x| host.eval(x)) }.expect("a valid expression")
            },
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Buffers of one (type, size, input)
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reference {
    Lt50,
    Lt1,
    Flagged,
    Reversed,
    Stable,
    Unique,
}

/// The last host reference computed, with its count of selected items: rows of one kind are
/// adjacent, and at 2^30 items one takes seconds and gigabytes.
struct ReferenceCache<T>(Option<(Reference, Vec<T>, usize)>);

impl<T: Value> ReferenceCache<T> {
    /// The host result of `kind` on `input` (and `flags`), computed with `lookback::host`, and how
    /// many items it selected.
    fn get(&mut self, kind: Reference, input: &[T], flags: &[u8], preds: &Preds<T>) -> lookback::Result<(&[T], usize)> {
        if self.0.as_ref().is_none_or(|(k, _, _)| *k != kind) {
            self.0 = None; // free the old one before making the next
            let (want, k) = match kind {
                Reference::Lt50 => counted(host::select_if(input, &preds.half)),
                Reference::Lt1 => counted(host::select_if(input, &preds.one)),
                Reference::Flagged => counted(host::select_flagged(input, flags)?),
                Reference::Reversed => host::partition_if_reversed(input, &preds.half),
                Reference::Stable => host::partition_if(input, &preds.half),
                Reference::Unique => counted(host::unique(input)),
            };
            self.0 = Some((kind, want, k));
        }
        let (_, want, k) = self.0.as_ref().expect("set above");
        Ok((want, *k))
    }
}

fn counted<T>(v: Vec<T>) -> (Vec<T>, usize) {
    let k = v.len();
    (v, k)
}

/// The input on the host and `copies` identical device inputs, each with its own outputs and count;
/// flags and second outputs only where a row needs them.
struct Buffers<T> {
    host: Vec<T>,
    host_flags: Vec<u8>,
    inputs: Vec<CudaSlice<T>>,
    flags: Vec<CudaSlice<u8>>,
    outputs: Vec<CudaSlice<T>>,
    rejected: Vec<CudaSlice<T>>,
    counts: Vec<CudaSlice<u64>>,
    reference: ReferenceCache<T>,
}

impl<T: Value> Buffers<T> {
    /// Makes the input (and flags) once, uploads them once, then copies them on the device.
    fn new(stream: &Arc<CudaStream>, data: Data, n: usize, seed: u64, rows: &[Algo]) -> BoxResult<Self> {
        let need_flags = rows.contains(&Algo::SelectFlagged50);
        let need_rejected = rows.contains(&Algo::PartitionSplit50);
        let bytes = n * size_of::<T>();
        let per_copy = bytes * (2 + usize::from(need_rejected)) + usize::from(need_flags) * n;
        let copies = copies_for(bytes, per_copy);

        let host = make_input::<T>(data, n, seed);
        let host_flags = if need_flags { make_flags(n, seed.rotate_left(32)) } else { Vec::new() };
        let flags = if need_flags { upload_copies(stream, &host_flags, copies)? } else { Vec::new() };
        let rejected = if need_rejected { alloc_copies(stream, n, copies)? } else { Vec::new() };
        Ok(Buffers {
            inputs: upload_copies(stream, &host, copies)?,
            outputs: alloc_copies(stream, n, copies)?,
            counts: alloc_copies(stream, 1, copies)?,
            host,
            host_flags,
            flags,
            rejected,
            reference: ReferenceCache(None),
        })
    }

    fn copies(&self) -> usize {
        self.inputs.len()
    }

    /// The buffers of the calls on copy `j`.
    fn slot(&mut self, j: usize) -> Slot<'_, T> {
        Slot {
            input: &self.inputs[j],
            flags: self.flags.get(j),
            output: &mut self.outputs[j],
            rejected: self.rejected.get_mut(j),
            count: &mut self.counts[j],
        }
    }

    /// Before a row: the in-place row starts from copies of the input, the others from poisoned
    /// outputs and counts, so a kernel that writes nothing cannot pass the check.
    fn prepare(&mut self, stream: &Arc<CudaStream>, algo: Algo) -> Result<(), DriverError> {
        for (input, output) in self.inputs.iter().zip(&mut self.outputs) {
            if algo.in_place() {
                stream.memcpy_dtod(input, output)?;
            } else {
                poison(stream, output)?;
            }
        }
        for buf in &mut self.rejected {
            poison(stream, buf)?;
        }
        for count in &mut self.counts {
            poison(stream, count)?;
        }
        Ok(())
    }
}

/// The buffers of one call.
struct Slot<'a, T> {
    input: &'a CudaSlice<T>,
    flags: Option<&'a CudaSlice<u8>>,
    output: &'a mut CudaSlice<T>,
    rejected: Option<&'a mut CudaSlice<T>>,
    count: &'a mut CudaSlice<u64>,
}

/// One timed call of `algo`. Returns the count where the call returns it (and so waits for it).
/// `device_n` holds the item count on the device, for the `_devsize` row.
fn call<T: Value>(
    ws: &mut Workspace,
    algo: Algo,
    preds: &Preds<T>,
    device_n: &CudaSlice<u64>,
    s: Slot<'_, T>,
) -> lookback::Result<Option<usize>> {
    let (input, output, count) = (s.input, s.output, s.count);
    match algo {
        Algo::SelectIf50 => ws.select_if_into(input, &preds.half, output, count)?,
        Algo::SelectIf50DevSize => {
            ws.with_count(device_n, |ws| ws.select_if_into(input, &preds.half, output, count))?
        }
        Algo::SelectIf1 => ws.select_if_into(input, &preds.one, output, count)?,
        Algo::SelectIf50User => ws.select_if_into(input, &preds.user, output, count)?,
        Algo::Compound50 => ws.select_if_into(input, &preds.compound, output, count)?,
        Algo::CompoundOr50 => ws.select_if_into(input, &preds.compound_or, output, count)?,
        Algo::SelectFlagged50 => {
            let flags = s.flags.expect("flags are made for select_flagged rows");
            ws.select_flagged_into(input, flags, output, count)?
        }
        Algo::SelectIfInPlace50 => ws.select_if_in_place_into(output, &preds.half, count)?,
        Algo::CountIf50 => ws.count_if_into(input, &preds.half, count)?,
        Algo::PartitionReversed50 => ws.partition_if_reversed_into(input, &preds.half, output, count)?,
        Algo::PartitionStable50 => ws.partition_if_stable_into(input, &preds.half, output, count)?,
        Algo::PartitionSplit50 => {
            let rejected = s.rejected.expect("second outputs are made for split rows");
            ws.partition_if_split_into(input, &preds.half, output, rejected, count)?
        }
        Algo::UniqueRun4 => ws.unique_into(input, output, count)?,
        Algo::Chain5 => unreachable!("chain5 has its own calls (chain.rs)"),
    }
    Ok(None)
}

/// What timing a row gave: its label, its median time and the count its last call returned (`None`
/// when the count stayed on the device).
struct Timed {
    label: String,
    us: f64,
    returned: Option<usize>,
}

/// Times `call` on the row's buffers, each run on the next copy: outputs and counts prepared first,
/// and the in-place row's buffer restored, untimed, after each call. Returns the median and the count
/// the last call returned.
fn time_row<T: Value>(
    timer: &mut Timer,
    algo: Algo,
    bufs: &mut Buffers<T>,
    mut call: impl FnMut(Slot<'_, T>) -> BoxResult<Option<usize>>,
) -> BoxResult<(f64, Option<usize>)> {
    let stream = timer.stream.clone();
    let k = bufs.copies();
    bufs.prepare(&stream, algo)?;
    let mut returned = None;
    let us = timer.median_us(|step| {
        match step {
            Step::Run(i) => returned = call(bufs.slot(i % k))?,
            // The in-place call consumed its input: restore it, untimed, for the call that
            // next uses this buffer (k runs later, so the copy is out of the L2 by then).
            Step::Reset(i) if algo.in_place() => stream.memcpy_dtod(&bufs.inputs[i % k], &mut bufs.outputs[i % k])?,
            Step::Reset(_) => {}
        }
        Ok(())
    })?;
    Ok((us, returned))
}

/// Checks the count and output of the last timed call against the host, and makes the row.
fn checked_row<T: Value>(
    timer: &Timer,
    timed: Timed,
    algo: Algo,
    log2n: u32,
    preds: &Preds<T>,
    bufs: &mut Buffers<T>,
    memcpy_gbps: f64,
) -> BoxResult<Row> {
    let stream = &timer.stream;
    let k = bufs.copies();
    let last = timer.last_buffer(k);
    let label = algo.name();
    let n = bufs.host.len();
    let got = match timed.returned {
        Some(c) => c,
        None => {
            let c = stream.clone_dtoh(&bufs.counts[last])?[0];
            usize::try_from(c).unwrap_or(usize::MAX)
        }
    };
    let selected = match algo.reference() {
        None => host::count_if(&bufs.host, &preds.half),
        Some(kind) => bufs.reference.get(kind, &bufs.host, &bufs.host_flags, preds)?.1,
    };
    if got != selected {
        return check_failed(format!("{label} {} n={n}: count is {got}, host says {selected}", T::NAME));
    }
    if let Some(kind) = algo.reference() {
        let (want, _) = bufs.reference.get(kind, &bufs.host, &bufs.host_flags, preds)?;
        let full = n < FULL_CHECK_BELOW;
        let out = &bufs.outputs[last];
        match algo {
            Algo::PartitionReversed50 | Algo::PartitionStable50 => check(stream, label, n, &out.as_view(), want, full)?,
            Algo::PartitionSplit50 => {
                let (sel, rej) = want.split_at(selected);
                let rejected = &bufs.rejected[last];
                let (sel_label, rej_label) = (format!("{label} selected"), format!("{label} rejected"));
                check(stream, &sel_label, n, &out.slice(..selected), sel, full)?;
                check(stream, &rej_label, n, &rejected.slice(..n - selected), rej, full)?;
            }
            _ => check(stream, label, n, &out.slice(..selected), want, full)?,
        }
    }
    Ok(Row {
        label: timed.label,
        ty: T::NAME,
        log2n,
        copies: k,
        median_us: timed.us,
        gbps: gbps(algo.bytes(n, size_of::<T>(), selected), timed.us),
        memcpy_gbps,
    })
}

/// One timed call of CUB on a slot; it returns no count (CUB leaves it on the device).
#[cfg(feature = "cub-baseline")]
type CubCall<T> = Box<dyn FnMut(Slot<'_, T>) -> BoxResult<Option<usize>>>;

/// CUB's call for a row on `n` items, with its temporary storage: `None` where CUB has no counterpart.
/// CUB compiles its predicate, so the compound rows would time its `select_if_50` again; it has no
/// count_if and no stable partition. Thresholds are the rows' own (`half`, `one_percent`).
#[cfg(feature = "cub-baseline")]
fn cub_call<T: Value>(algo: Algo, stream: &Arc<CudaStream>, n: usize) -> Option<BoxResult<CubCall<T>>> {
    use common::cub::Runner;
    let fns = T::SELECT?;
    Some(match algo {
        Algo::SelectIf50 | Algo::SelectIf1 => {
            let threshold = if algo == Algo::SelectIf50 { half::<T>() } else { one_percent::<T>() };
            Runner::new(fns.select_if, stream, n).map(|mut r| -> CubCall<T> {
                Box::new(move |s| r.select(s.input, s.output, s.count, &threshold).map(|()| None))
            })
        }
        Algo::SelectIfInPlace50 => Runner::new(fns.select_if_in_place, stream, n).map(|mut r| -> CubCall<T> {
            Box::new(move |s| r.select_in_place(s.output, s.count, &half::<T>()).map(|()| None))
        }),
        Algo::SelectFlagged50 => Runner::new(fns.select_flagged, stream, n).map(|mut r| -> CubCall<T> {
            Box::new(move |s| {
                let flags = s.flags.ok_or("flags are made for select_flagged rows")?;
                r.select_flagged(s.input, flags, s.output, s.count).map(|()| None)
            })
        }),
        // CUB's DevicePartition::If writes the rejected items reversed: the reversed layout.
        Algo::PartitionReversed50 => Runner::new(fns.partition_if, stream, n).map(|mut r| -> CubCall<T> {
            Box::new(move |s| r.select(s.input, s.output, s.count, &half::<T>()).map(|()| None))
        }),
        Algo::UniqueRun4 => Runner::new(fns.unique, stream, n)
            .map(|mut r| -> CubCall<T> { Box::new(move |s| r.unique(s.input, s.output, s.count).map(|()| None)) }),
        Algo::Compound50
        | Algo::CompoundOr50
        | Algo::CountIf50
        | Algo::PartitionStable50
        | Algo::PartitionSplit50
        | Algo::SelectIf50DevSize
        | Algo::SelectIf50User
        | Algo::Chain5 => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// The benchmark
// ---------------------------------------------------------------------------------------------

struct Bench {
    timer: Timer,
    ws: Workspace,
    memcpy: MemcpyBaseline,
    engine: lookback::Engine,
    /// `--reps` and `--backoff`, for the chain's own workspace and timer.
    reps: usize,
    backoff: Option<Backoff>,
}

impl Bench {
    fn stream(&self) -> Arc<CudaStream> {
        self.timer.stream.clone()
    }

    /// Every row of one element type at one size: first those on random input, then those on
    /// runs, each set sharing one set of buffers.
    fn run_size<T: Value>(&mut self, log2n: u32, algos: &[Algo], report: &mut Report) -> BoxResult<()> {
        let preds = Preds::<T>::new();
        if algos.contains(&Algo::SelectIf50User) {
            // The compile (or the cache lookup) of the user predicate's kernels, before anything is timed.
            let r = preds.user.compile(&self.stream())?;
            println!(
                "compile select_if_50_user {} n=2^{log2n}: {:?} in {:.1} ms ({}, {} bytes)",
                std::any::type_name::<T>(),
                r.hit,
                r.seconds * 1e3,
                r.arch,
                r.cubin_bytes
            );
        }
        for data in [Data::Random, Data::Runs] {
            let rows: Vec<Algo> = algos.iter().copied().filter(|a| a.data() == Some(data)).collect();
            if rows.is_empty() {
                continue;
            }
            let seed = 0x9E37_79B9_7F4A_7C15 ^ u64::from(log2n) ^ ((data as u64) << 40);
            let mut bufs = Buffers::<T>::new(&self.stream(), data, 1 << log2n, seed, &rows)?;
            let memcpy_gbps = self.memcpy.gbps(&mut self.timer, log2n, &bufs.inputs, &mut bufs.outputs, report)?;
            let mut measured = Measured::default();
            for &algo in &rows {
                let row = self.run_row(algo, log2n, &preds, &mut bufs, memcpy_gbps)?;
                let versus = measured.versus(algo.base());
                measured.record(algo, &row);
                if versus.is_some() {
                    report.push_versus(row, versus)?;
                    continue;
                }
                #[cfg(feature = "cub-baseline")]
                {
                    let cub = self.run_cub_row(algo, log2n, &preds, &mut bufs, memcpy_gbps);
                    report.push_with_cub(row, cub)?;
                }
                #[cfg(not(feature = "cub-baseline"))]
                report.push(row)?;
            }
        }
        Ok(())
    }

    /// Times one row, then checks the count and output of its last run against the host.
    fn run_row<T: Value>(
        &mut self,
        algo: Algo,
        log2n: u32,
        preds: &Preds<T>,
        bufs: &mut Buffers<T>,
        memcpy_gbps: f64,
    ) -> BoxResult<Row> {
        let device_n = self.stream().clone_htod(&[bufs.host.len() as u64])?;
        let ws = &mut self.ws;
        let (us, returned) = time_row(&mut self.timer, algo, bufs, |slot| Ok(call(ws, algo, preds, &device_n, slot)?))?;
        let timed = Timed { label: common::engine_label(algo.name(), self.engine), us, returned };
        checked_row(&self.timer, timed, algo, log2n, preds, bufs, memcpy_gbps)
    }

    /// CUB's counterpart of a row (`None`: CUB has none), on the same buffers, timed and checked the
    /// same way.
    #[cfg(feature = "cub-baseline")]
    fn run_cub_row<T: Value>(
        &mut self,
        algo: Algo,
        log2n: u32,
        preds: &Preds<T>,
        bufs: &mut Buffers<T>,
        memcpy_gbps: f64,
    ) -> Option<BoxResult<Row>> {
        let call = cub_call::<T>(algo, &self.stream(), bufs.host.len())?;
        Some(call.and_then(|mut call| {
            // One untimed call first: the runtime loads each CUB kernel at its first launch, and
            // open_gpu preloaded lookback's.
            call(bufs.slot(0))?;
            self.stream().synchronize()?;
            let (us, returned) = time_row(&mut self.timer, algo, bufs, call)?;
            let timed = Timed { label: format!("cub:{}", algo.name()), us, returned };
            checked_row(&self.timer, timed, algo, log2n, preds, bufs, memcpy_gbps)
        }))
    }

    fn run_type(&mut self, ty: ElemType, log2n: u32, algos: &[Algo], report: &mut Report) -> BoxResult<()> {
        match ty {
            ElemType::I32 => self.run_size::<i32>(log2n, algos, report),
            ElemType::U8 => self.run_size::<u8>(log2n, algos, report),
            ElemType::I64 => self.run_size::<i64>(log2n, algos, report),
            ElemType::F32 => self.run_size::<f32>(log2n, algos, report),
            ElemType::F16 => self.run_size::<f16>(log2n, algos, report),
            ElemType::F64 => Err(format!("{} is not among this bench's types", ty.name()).into()),
        }
    }

    /// The `chain5` rows at one size (i32, its own stream, workspace and buffers).
    fn run_chain(&mut self, log2n: u32, report: &mut Report) -> BoxResult<()> {
        let setup = chain::Setup { log2n, reps: self.reps, backoff: self.backoff, engine: self.engine };
        chain::run(&self.stream(), &setup, &mut self.memcpy, report)
    }
}

fn run(args: &Args, stream: &Arc<CudaStream>) -> BoxResult<()> {
    common::open_gpu(stream, args.reps)?;
    let mut bench = Bench {
        timer: Timer::new(stream, args.reps)?,
        ws: Workspace::new(stream),
        memcpy: MemcpyBaseline::default(),
        engine: args.engine,
        reps: args.reps,
        backoff: args.single_backoff()?,
    };
    bench.ws.set_backoff(bench.backoff);
    bench.ws.set_engine(args.engine);
    let algos = common::paired(&args.algos, Algo::base);
    let chain = algos.contains(&Algo::Chain5);
    let paired = chain || algos.iter().any(|a| a.base().is_some());
    let mut report = Report::create_with(&common::csv_paths(&args.csv, CSV_NAME), paired)?;
    for &ty in &args.types {
        for &log2n in &args.sizes {
            bench.run_type(ty, log2n, &algos, &mut report)?;
            if chain && ty == ElemType::I32 {
                bench.run_chain(log2n, &mut report)?;
            }
        }
    }
    // The chain is i32 only, and brings i32 in if `--types` left it out.
    if chain && !args.types.contains(&ElemType::I32) {
        for &log2n in &args.sizes {
            bench.run_chain(log2n, &mut report)?;
        }
    }
    report.summary();
    Ok(())
}

fn main() -> BoxResult<()> {
    common::bench_main("select", USAGE, parse_args, run)
}
