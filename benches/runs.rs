//! Run-based benchmark: times `lookback`'s reduce/unique/scan by key, run-length and run-end encoding and
//! non-trivial runs with CUDA events and compares their bandwidth with a device-to-device memcpy of the
//! keys' byte count, measured in the same process.
//!
//! Run `cargo bench --bench runs -- --help` for the flags; `benches/README.md` explains the output.
//! Without a GPU (or without kernels) it prints one line and exits 0, so `cargo bench` passes anywhere.

mod common;

use common::{
    BenchElement, BoxResult, ElemType, Measured, MemcpyBaseline, Report, Row, Step, Timer, XorShift, alloc_copies,
    check, check_failed, copies_for, gbps, poison, upload_copies,
};
use lookback::cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DriverError};
use lookback::half::f16;
use lookback::rtc::UserScanOp;
use lookback::{ScanOp, Workspace, host};
use std::sync::Arc;

const CSV_NAME: &str = "bench-runs.csv";
/// The key types this bench supports (values have the key's type).
const TYPES: [ElemType; 5] = [ElemType::I32, ElemType::U8, ElemType::F32, ElemType::F64, ElemType::F16];
/// Outputs of inputs shorter than this are compared with the host in full; longer ones at both ends.
const FULL_CHECK_BELOW: usize = 1 << 26;
/// Bytes of the run count every counting row writes.
const COUNT_BYTES: usize = size_of::<u64>();

const USAGE: &str = "\
usage: cargo bench --bench runs -- [OPTIONS]
  --reps N          timed runs per row, median reported (default 30, at least 20)
  --sizes A,B,...   log2 of the item count (default 16,18,20,22,24,26,28,30)
  --types T,...     key (and value) types among i32,u8,f32,f64,f16 (default i32)
  --algos A,...     among reduce_by_key_sum_run4,unique_by_key_run4,rle_run4,run_ends_run4,
                    non_trivial_runs_run4,scan_by_key_incl_sum_run4,scan_by_key_excl_sum_run4,
                    rle_run1000 (default: these eight), and reduce_by_key_sum_run4_devsize
                    (reduce_by_key_sum_run4 sized by a count on the device: Workspace::with_count;
                    runs right after reduce_by_key_sum_run4, which it brings in),
                    reduce_by_key_sum_run4_det (Workspace::set_deterministic) and
                    reduce_by_key_sum_run4_user (the sum as a run-time compiled user operator,
                    lookback::rtc::UserScanOp; i32, f32, f64; both after reduce_by_key_sum_run4)
  --csv PATH        CSV output (default bench-runs.csv; also $OUT/bench-runs.csv if OUT is set)
  --backoff F:P     look-back back-off for every row, in ns (default: the tuned one)
  --engine E        auto (default), classic or persistent (sm_90+); labels get [classic] or
                    [persistent] unless auto
  --help            this text";

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Algo {
    ReduceByKeySum,
    UniqueByKey,
    Rle,
    RunEnds,
    NonTrivialRuns,
    ScanByKeyInclSum,
    ScanByKeyExclSum,
    RleLong,
    ReduceByKeySumDevSize,
    ReduceByKeySumDet,
    ReduceByKeySumUser,
}

impl Algo {
    /// The default rows.
    const DEFAULT: [Algo; 8] = [
        Algo::ReduceByKeySum,
        Algo::UniqueByKey,
        Algo::Rle,
        Algo::RunEnds,
        Algo::NonTrivialRuns,
        Algo::ScanByKeyInclSum,
        Algo::ScanByKeyExclSum,
        Algo::RleLong,
    ];
    /// The opt-in rows `--algos` also takes.
    const OPT_IN: [Algo; 3] = [Algo::ReduceByKeySumDevSize, Algo::ReduceByKeySumDet, Algo::ReduceByKeySumUser];

    fn name(self) -> &'static str {
        match self {
            Algo::ReduceByKeySum => "reduce_by_key_sum_run4",
            Algo::UniqueByKey => "unique_by_key_run4",
            Algo::Rle => "rle_run4",
            Algo::RunEnds => "run_ends_run4",
            Algo::NonTrivialRuns => "non_trivial_runs_run4",
            Algo::ScanByKeyInclSum => "scan_by_key_incl_sum_run4",
            Algo::ScanByKeyExclSum => "scan_by_key_excl_sum_run4",
            Algo::RleLong => "rle_run1000",
            Algo::ReduceByKeySumDevSize => "reduce_by_key_sum_run4_devsize",
            Algo::ReduceByKeySumDet => "reduce_by_key_sum_run4_det",
            Algo::ReduceByKeySumUser => "reduce_by_key_sum_run4_user",
        }
    }

    fn parse(s: &str) -> Result<Algo, String> {
        let mut all = Algo::DEFAULT.into_iter().chain(Algo::OPT_IN);
        all.find(|a| a.name() == s).ok_or_else(|| format!("unknown algorithm `{s}`"))
    }

    /// The row a paired row is compared with: a `_devsize` row's host-size call, a `_det` row's default
    /// (not deterministic) call, a `_user` row's built-in operator.
    fn base(self) -> Option<Algo> {
        match self {
            Algo::ReduceByKeySumDevSize | Algo::ReduceByKeySumDet | Algo::ReduceByKeySumUser => {
                Some(Algo::ReduceByKeySum)
            }
            _ => None,
        }
    }

    /// The row whose host result and byte count this one has: its base if it has one, else itself.
    fn host_twin(self) -> Algo {
        self.base().unwrap_or(self)
    }

    /// The keys it runs on.
    fn data(self) -> Data {
        match self {
            Algo::RleLong => Data::Run1000,
            _ => Data::Run4,
        }
    }

    /// Whether it reads a value per key.
    fn keyed(self) -> bool {
        matches!(
            self.host_twin(),
            Algo::ReduceByKeySum | Algo::UniqueByKey | Algo::ScanByKeyInclSum | Algo::ScanByKeyExclSum
        )
    }

    /// The least traffic the call needs, in bytes, for `n` keys of `size` bytes (and as many values
    /// of the same size when it reads values) and `runs` runs written (the count it returns).
    fn bytes(self, n: usize, size: usize, runs: usize) -> usize {
        let length = size_of::<u32>();
        match self.host_twin() {
            // Keys and values in, a key and a value per run out, and the count.
            Algo::ReduceByKeySum | Algo::UniqueByKey => 2 * n * size + runs * 2 * size + COUNT_BYTES,
            // Keys in, a value and a u32 length (or end) per run out, and the count.
            Algo::Rle | Algo::RunEnds | Algo::RleLong => n * size + runs * (size + length) + COUNT_BYTES,
            // Keys in, a u32 offset and a u32 length per non-trivial run out, and the count.
            Algo::NonTrivialRuns => n * size + runs * 2 * length + COUNT_BYTES,
            // Keys and values in, a value per item out.
            Algo::ScanByKeyInclSum | Algo::ScanByKeyExclSum => 3 * n * size,
            Algo::ReduceByKeySumDevSize | Algo::ReduceByKeySumDet | Algo::ReduceByKeySumUser => {
                unreachable!("a paired row counts its base's bytes")
            }
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

/// Run lengths, run ends and offsets are written as `u32` and compared with the host's (as `u64`,
/// converted) exactly.
impl BenchElement for u32 {
    const NAME: &'static str = "u32";
    fn matches(got: Self, want: Self) -> bool {
        got == want
    }
}

/// What the run benchmark needs of a key type beyond [`BenchElement`]; values have the same type.
trait Value: BenchElement + lookback::rtc::DeviceType {
    /// Keys are whole numbers in `0..KEY_RANGE`.
    const KEY_RANGE: u32;
    /// Values are whole numbers in `0..VALUE_RANGE`: small enough for float sums of a run to stay
    /// exact whatever the combining order.
    const VALUE_RANGE: u32;
    /// `v` as an item (exact for `v < KEY_RANGE` and for every sum the rows make).
    fn from_u32(v: u32) -> Self;
}

/// The sum of `T` as a run-time compiled user operator, for the `_user` row: the types whose built-in
/// keyed sum accumulates in `T` itself (u8 and f16 accumulate wider: no row). Integers add as unsigned,
/// so that they wrap as the built-in sum does rather than overflow signed (undefined in C++).
fn user_sum<T: Value>() -> Option<lookback::Result<UserScanOp<T, T>>> {
    let expr = match T::DTYPE {
        lookback::DType::I32 => "(int32_t)((uint32_t)a + (uint32_t)b)",
        lookback::DType::F32 | lookback::DType::F64 => "a + b",
        _ => return None,
    };
    // The host closure is never called: the row is checked against the built-in sum's host result.
    // SAFETY: a pure expression of a and b.
    Some(unsafe { UserScanOp::new(expr, "0", |a: T, _: T| a, T::from_u32(0)) })
}

macro_rules! value {
    ($($t:ty: $keys:expr, $values:expr, $from:expr);*) => {$(
        impl Value for $t {
            const KEY_RANGE: u32 = $keys;
            const VALUE_RANGE: u32 = $values;
            fn from_u32(v: u32) -> Self {
                $from(v)
            }
        }
    )*};
}
value! {
    // Integer sums wrap identically on the device and the host.
    i32: 1000, 1000, |v| v as i32;
    u8: 256, 256, |v| v as u8;
    // Whole-number float values: the sums of a run stay exact (below 2^24 for f32).
    f32: 1000, 1000, |v| v as f32;
    f64: 1000, 1000, f64::from;
    // f16 holds whole numbers up to 2048 exactly; runs of mean length 4 stay below ~100 items even
    // at 2^31, so sums (and scans) of values below 8 stay exact.
    f16: 1000, 8, |v| f16::from_f32(v as f32)
}

/// The keys a row runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Data {
    /// Runs of geometrically distributed length, mean 4.
    Run4,
    /// Runs of geometrically distributed length, mean 1000.
    Run1000,
}

impl Data {
    fn mean_run(self) -> u64 {
        match self {
            Data::Run4 => 4,
            Data::Run1000 => 1000,
        }
    }
}

/// Keys in runs of geometric length (mean `mean_run`): every item after the first starts a new run
/// with probability `1 / mean_run`, and each run's key differs from the previous run's.
fn make_keys<T: Value>(n: usize, mean_run: u64, seed: u64) -> Vec<T> {
    let mut rng = XorShift(seed | 1);
    let range = u64::from(T::KEY_RANGE);
    let mut v = 0u64;
    let mut key = T::from_u32(0);
    (0..n)
        .map(|i| {
            if i == 0 || (rng.next() >> 32).is_multiple_of(mean_run) {
                v = (v + 1 + (rng.next() >> 32) % (range - 1)) % range;
                key = T::from_u32(v as u32);
            }
            key
        })
        .collect()
}

/// Independent uniform values in `0..VALUE_RANGE`.
fn make_values<T: Value>(n: usize, seed: u64) -> Vec<T> {
    let mut rng = XorShift(seed | 1);
    (0..n).map(|_| T::from_u32(((rng.next() >> 32) % u64::from(T::VALUE_RANGE)) as u32)).collect()
}

/// The seed of exclusive scans by key.
fn scan_init<T: Value>() -> T {
    T::from_u32(1)
}

// ---------------------------------------------------------------------------------------------
// Buffers of one (type, size, keys)
// ---------------------------------------------------------------------------------------------

/// The keys (and values) on the host and `copies` identical device copies, each with two outputs
/// and a count.
///
/// Each output holds `n` items of the key type or `n` `u32`s, whichever is larger (`n · max(s, 4)`
/// bytes): rows view it as what they write (keys or values, lengths, ends or offsets). So a copy
/// takes at most `2 · n · s + 2 · n · max(s, 4)` bytes: 16 GiB for i32 at 2^30.
struct Buffers<T> {
    n: usize,
    host_keys: Vec<T>,
    host_values: Vec<T>,
    keys: Vec<CudaSlice<T>>,
    values: Vec<CudaSlice<T>>,
    first: Vec<CudaSlice<T>>,
    second: Vec<CudaSlice<T>>,
    counts: Vec<CudaSlice<u64>>,
    reference: ReferenceCache<T>,
}

impl<T: Value> Buffers<T> {
    /// Makes the keys (and values, if a row reads them) once, uploads them once, then copies them on
    /// the device.
    fn new(stream: &Arc<CudaStream>, data: Data, n: usize, seed: u64, rows: &[Algo]) -> BoxResult<Self> {
        let need_values = rows.iter().any(|a| a.keyed());
        let s = size_of::<T>();
        let bytes = n * s;
        // Items of T per output: room for n items of T or n u32s (s and 4 are powers of two).
        let out_items = n * s.max(size_of::<u32>()) / s;
        let per_copy = bytes * (1 + usize::from(need_values)) + 2 * out_items * s + COUNT_BYTES;
        let copies = copies_for(bytes, per_copy);

        let host_keys = make_keys::<T>(n, data.mean_run(), seed);
        let host_values = if need_values { make_values::<T>(n, seed.rotate_left(32)) } else { Vec::new() };
        let values = if need_values { upload_copies(stream, &host_values, copies)? } else { Vec::new() };
        Ok(Buffers {
            n,
            keys: upload_copies(stream, &host_keys, copies)?,
            values,
            first: alloc_copies(stream, out_items, copies)?,
            second: alloc_copies(stream, out_items, copies)?,
            counts: alloc_copies(stream, 1, copies)?,
            host_keys,
            host_values,
            reference: ReferenceCache(None),
        })
    }

    fn copies(&self) -> usize {
        self.keys.len()
    }

    /// The buffers of the calls on copy `j`.
    fn slot(&mut self, j: usize) -> Slot<'_, T> {
        Slot {
            keys: &self.keys[j],
            values: self.values.get(j),
            first: &mut self.first[j],
            second: &mut self.second[j],
            count: &mut self.counts[j],
        }
    }

    /// Before a row: poisoned outputs and counts, so a kernel that writes nothing cannot pass the
    /// check.
    fn prepare(&mut self, stream: &Arc<CudaStream>) -> Result<(), DriverError> {
        for buf in self.first.iter_mut().chain(&mut self.second) {
            poison(stream, buf)?;
        }
        for count in &mut self.counts {
            poison(stream, count)?;
        }
        Ok(())
    }
}

/// The first `len` items of an output buffer as `u32`s.
fn as_u32<T: Value>(buf: &CudaSlice<T>, len: usize) -> CudaView<'_, u32> {
    // SAFETY: every bit pattern is a valid u32; the allocation is aligned for any element type; and
    // `transmute` checks that `len` u32s fit in the buffer (outputs hold `n` of them).
    unsafe { buf.transmute::<u32>(len) }.expect("outputs hold n u32s")
}

/// The first `len` items of an output buffer as mutable `u32`s.
fn as_u32_mut<T: Value>(buf: &mut CudaSlice<T>, len: usize) -> CudaViewMut<'_, u32> {
    // SAFETY: as in `as_u32`.
    unsafe { buf.transmute_mut::<u32>(len) }.expect("outputs hold n u32s")
}

/// The buffers of one call.
struct Slot<'a, T> {
    keys: &'a CudaSlice<T>,
    values: Option<&'a CudaSlice<T>>,
    first: &'a mut CudaSlice<T>,
    second: &'a mut CudaSlice<T>,
    count: &'a mut CudaSlice<u64>,
}

/// One timed call of `algo` on `n` keys. Nothing waits for the GPU. `device_n` holds `n` on the device,
/// for the `_devsize` row.
fn call<T: Value>(
    ws: &mut Workspace,
    algo: Algo,
    n: usize,
    device_n: &CudaSlice<u64>,
    user: Option<&UserScanOp<T, T>>,
    s: Slot<'_, T>,
) -> lookback::Result<()> {
    let (keys, first, second, count) = (s.keys, s.first, s.second, s.count);
    let values = || s.values.expect("values are made for keyed rows");
    match algo {
        Algo::ReduceByKeySum => ws.reduce_by_key_into(keys, values(), first, second, count, ScanOp::Sum),
        Algo::ReduceByKeySumDevSize => {
            ws.with_count(device_n, |ws| ws.reduce_by_key_into(keys, values(), first, second, count, ScanOp::Sum))
        }
        Algo::ReduceByKeySumDet => {
            common::deterministic(ws, |ws| ws.reduce_by_key_into(keys, values(), first, second, count, ScanOp::Sum))
        }
        Algo::ReduceByKeySumUser => match user {
            Some(op) => ws.reduce_by_key_user_into(keys, values(), first, second, count, op),
            None => Err(lookback::Error::InvalidSource { reason: "the user sum row needs its operator" }),
        },
        Algo::UniqueByKey => ws.unique_by_key_into(keys, values(), first, second, count),
        Algo::Rle | Algo::RleLong => {
            ws.run_length_encode_into::<T, u32, _, _, _, _>(keys, first, &mut as_u32_mut(second, n), count)
        }
        Algo::RunEnds => ws.run_end_encode_into::<T, u32, _, _, _, _>(keys, first, &mut as_u32_mut(second, n), count),
        Algo::NonTrivialRuns => ws.non_trivial_runs_into::<T, u32, _, _, _, _>(
            keys,
            &mut as_u32_mut(first, n),
            &mut as_u32_mut(second, n),
            count,
        ),
        Algo::ScanByKeyInclSum => ws.inclusive_scan_by_key_into(keys, values(), first, ScanOp::Sum),
        Algo::ScanByKeyExclSum => ws.exclusive_scan_by_key_into(keys, values(), first, scan_init::<T>(), ScanOp::Sum),
    }
}

// ---------------------------------------------------------------------------------------------
// Host references
// ---------------------------------------------------------------------------------------------

/// The host result of a row, as the device writes it.
enum Want<T> {
    /// Reduce and unique by key: a key and a value per run.
    Pairs(Vec<T>, Vec<T>),
    /// Run-length and run-end encoding: a value and a length (or end) per run.
    Encoded(Vec<T>, Vec<u32>),
    /// Non-trivial runs: an offset and a length per run longer than one item.
    Positions(Vec<u32>, Vec<u32>),
    /// Scans by key: an item per key.
    Scan(Vec<T>),
}

impl<T> Want<T> {
    /// The run count the device must report (`None` for scans, which write none).
    fn runs(&self) -> Option<usize> {
        match self {
            Want::Pairs(a, _) | Want::Encoded(a, _) => Some(a.len()),
            Want::Positions(a, _) => Some(a.len()),
            Want::Scan(_) => None,
        }
    }
}

/// The last host result computed, with its row: a row's lookback and CUB timings share it, and at
/// 2^30 items one takes seconds.
struct ReferenceCache<T>(Option<(Algo, Want<T>)>);

impl<T: Value> ReferenceCache<T> {
    fn get(&mut self, algo: Algo, keys: &[T], values: &[T]) -> BoxResult<&Want<T>> {
        let algo = algo.host_twin();
        if self.0.as_ref().is_none_or(|(a, _)| *a != algo) {
            self.0 = None; // free the old one before making the next
            self.0 = Some((algo, reference(algo, keys, values)?));
        }
        Ok(&self.0.as_ref().expect("set above").1)
    }
}

fn narrow(v: Vec<u64>) -> BoxResult<Vec<u32>> {
    Ok(v.into_iter().map(u32::try_from).collect::<Result<Vec<u32>, _>>()?)
}

/// What `lookback::host` computes for `algo` on `keys` and `values`.
fn reference<T: Value>(algo: Algo, keys: &[T], values: &[T]) -> BoxResult<Want<T>> {
    Ok(match algo {
        Algo::ReduceByKeySum => {
            let (k, v) = host::reduce_by_key(keys, values, ScanOp::Sum)?;
            Want::Pairs(k, v)
        }
        Algo::UniqueByKey => {
            let (k, v) = host::unique_by_key(keys, values)?;
            Want::Pairs(k, v)
        }
        Algo::Rle | Algo::RleLong => {
            let (v, l) = host::run_length_encode(keys);
            Want::Encoded(v, narrow(l)?)
        }
        Algo::RunEnds => {
            let (v, e) = host::run_end_encode(keys);
            Want::Encoded(v, narrow(e)?)
        }
        Algo::NonTrivialRuns => {
            let (o, l) = host::non_trivial_runs(keys);
            Want::Positions(narrow(o)?, narrow(l)?)
        }
        Algo::ScanByKeyInclSum => Want::Scan(host::inclusive_scan_by_key(keys, values, ScanOp::Sum)?),
        Algo::ScanByKeyExclSum => Want::Scan(host::exclusive_scan_by_key(keys, values, scan_init::<T>(), ScanOp::Sum)?),
        Algo::ReduceByKeySumDevSize | Algo::ReduceByKeySumDet | Algo::ReduceByKeySumUser => {
            unreachable!("a paired row has its base's host result")
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Timing and checking a row
// ---------------------------------------------------------------------------------------------

/// What timing a row gave: its label and its median time.
struct Timed {
    label: String,
    us: f64,
}

/// Times `call` on the row's buffers, each run on the next copy, outputs and counts poisoned first.
/// Nothing waits for the GPU.
fn time_row<T: Value>(
    timer: &mut Timer,
    bufs: &mut Buffers<T>,
    mut call: impl FnMut(Slot<'_, T>) -> BoxResult<()>,
) -> BoxResult<f64> {
    let k = bufs.copies();
    bufs.prepare(&timer.stream.clone())?;
    timer.median_us(|step| {
        if let Step::Run(i) = step {
            call(bufs.slot(i % k))?;
        }
        Ok(())
    })
}

/// Checks the run count and outputs of the last timed call against the host, and makes the row.
fn checked_row<T: Value>(
    timer: &Timer,
    timed: Timed,
    algo: Algo,
    log2n: u32,
    bufs: &mut Buffers<T>,
    memcpy_gbps: f64,
) -> BoxResult<Row> {
    let stream = &timer.stream;
    let (k, n) = (bufs.copies(), bufs.n);
    let last = timer.last_buffer(k);
    let label = algo.name();
    let want = bufs.reference.get(algo, &bufs.host_keys, &bufs.host_values)?;
    let runs = match want.runs() {
        Some(runs) => {
            let c = stream.clone_dtoh(&bufs.counts[last])?[0];
            let got = usize::try_from(c).unwrap_or(usize::MAX);
            if got != runs {
                return check_failed(format!("{label} {} n={n}: run count is {got}, host says {runs}", T::NAME));
            }
            runs
        }
        None => n,
    };
    let full = n < FULL_CHECK_BELOW;
    let (a, b) = (&bufs.first[last], &bufs.second[last]);
    let (a_label, b_label) = match want {
        Want::Pairs(..) => ("keys", "values"),
        Want::Encoded(..) if algo == Algo::RunEnds => ("values", "ends"),
        Want::Encoded(..) => ("values", "lengths"),
        Want::Positions(..) => ("offsets", "lengths"),
        Want::Scan(..) => ("output", ""),
    };
    let (a_label, b_label) = (format!("{label} {a_label}"), format!("{label} {b_label}"));
    match want {
        Want::Pairs(wa, wb) => {
            check(stream, &a_label, n, &a.slice(..runs), wa, full)?;
            check(stream, &b_label, n, &b.slice(..runs), wb, full)?;
        }
        Want::Encoded(wa, wb) => {
            check(stream, &a_label, n, &a.slice(..runs), wa, full)?;
            check(stream, &b_label, n, &as_u32(b, runs), wb, full)?;
        }
        Want::Positions(wa, wb) => {
            check(stream, &a_label, n, &as_u32(a, runs), wa, full)?;
            check(stream, &b_label, n, &as_u32(b, runs), wb, full)?;
        }
        Want::Scan(wa) => check(stream, &a_label, n, &a.slice(..n), wa, full)?,
    }
    Ok(Row {
        label: timed.label,
        ty: T::NAME,
        log2n,
        copies: k,
        median_us: timed.us,
        gbps: gbps(algo.bytes(n, size_of::<T>(), runs), timed.us),
        memcpy_gbps,
    })
}

/// One timed call of CUB on a slot.
#[cfg(feature = "cub-baseline")]
type CubCall<T> = Box<dyn FnMut(Slot<'_, T>) -> BoxResult<()>>;

/// CUB's call for a row on `n` keys, with its temporary storage: `None` where CUB has no counterpart
/// (run-end encoding). Outputs are the lookback row's: keys or values in `first`, values or `u32`
/// lengths in `second`, offsets as `u32`s in `first`; the exclusive scan starts from `scan_init`.
#[cfg(feature = "cub-baseline")]
fn cub_call<T: Value>(algo: Algo, stream: &Arc<CudaStream>, n: usize) -> Option<BoxResult<CubCall<T>>> {
    use common::cub::Runner;
    const NO_VALUES: &str = "values are made for keyed rows";
    let fns = T::RUNS?;
    Some(match algo {
        Algo::ReduceByKeySum => Runner::new(fns.reduce_by_key_sum, stream, n).map(|mut r| -> CubCall<T> {
            Box::new(move |s| r.reduce_by_key(s.keys, s.first, s.values.ok_or(NO_VALUES)?, s.second, s.count))
        }),
        Algo::UniqueByKey => Runner::new(fns.unique_by_key, stream, n).map(|mut r| -> CubCall<T> {
            Box::new(move |s| r.unique_by_key(s.keys, s.values.ok_or(NO_VALUES)?, s.first, s.second, s.count))
        }),
        Algo::Rle | Algo::RleLong => Runner::new(fns.run_length_encode, stream, n).map(|mut r| -> CubCall<T> {
            Box::new(move |s| r.run_length_encode(s.keys, s.first, &mut as_u32_mut(s.second, n), s.count))
        }),
        Algo::NonTrivialRuns => Runner::new(fns.non_trivial_runs, stream, n).map(|mut r| -> CubCall<T> {
            Box::new(move |s| {
                r.non_trivial_runs(s.keys, &mut as_u32_mut(s.first, n), &mut as_u32_mut(s.second, n), s.count)
            })
        }),
        Algo::ScanByKeyInclSum => Runner::new(fns.inclusive_sum_by_key, stream, n).map(|mut r| -> CubCall<T> {
            Box::new(move |s| r.scan_by_key(s.keys, s.values.ok_or(NO_VALUES)?, s.first))
        }),
        Algo::ScanByKeyExclSum => Runner::new(fns.exclusive_scan_by_key, stream, n).map(|mut r| -> CubCall<T> {
            Box::new(move |s| r.scan_by_key(s.keys, s.values.ok_or(NO_VALUES)?, s.first, &scan_init::<T>()))
        }),
        Algo::RunEnds | Algo::ReduceByKeySumDevSize | Algo::ReduceByKeySumDet | Algo::ReduceByKeySumUser => {
            return None;
        }
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
}

impl Bench {
    fn stream(&self) -> Arc<CudaStream> {
        self.timer.stream.clone()
    }

    /// Every row of one key type at one size: first those on runs of mean length 4, then the one on
    /// runs of mean length 1000, each set sharing one set of buffers.
    fn run_size<T: Value>(&mut self, log2n: u32, algos: &[Algo], report: &mut Report) -> BoxResult<()> {
        for data in [Data::Run4, Data::Run1000] {
            let rows: Vec<Algo> = algos.iter().copied().filter(|a| a.data() == data).collect();
            if rows.is_empty() {
                continue;
            }
            let seed = 0x9E37_79B9_7F4A_7C15 ^ u64::from(log2n) ^ ((data as u64) << 40);
            let mut bufs = Buffers::<T>::new(&self.stream(), data, 1 << log2n, seed, &rows)?;
            let memcpy_gbps = self.memcpy.gbps(&mut self.timer, log2n, &bufs.keys, &mut bufs.first, report)?;
            let mut measured = Measured::default();
            for &algo in &rows {
                if algo == Algo::ReduceByKeySumUser && user_sum::<T>().is_none() {
                    continue;
                }
                let row = self.run_row(algo, log2n, &mut bufs, memcpy_gbps)?;
                let versus = measured.versus(algo.base());
                measured.record(algo, &row);
                if versus.is_some() {
                    report.push_versus(row, versus)?;
                    continue;
                }
                #[cfg(feature = "cub-baseline")]
                {
                    let cub = self.run_cub_row(algo, log2n, &mut bufs, memcpy_gbps);
                    report.push_with_cub(row, cub)?;
                }
                #[cfg(not(feature = "cub-baseline"))]
                report.push(row)?;
            }
        }
        Ok(())
    }

    /// Times one row, then checks the count and outputs of its last run against the host.
    fn run_row<T: Value>(&mut self, algo: Algo, log2n: u32, bufs: &mut Buffers<T>, memcpy_gbps: f64) -> BoxResult<Row> {
        let n = bufs.n;
        let device_n = self.stream().clone_htod(&[n as u64])?;
        let user = match algo {
            Algo::ReduceByKeySumUser => {
                let op = user_sum::<T>().ok_or("no user sum for this type")??;
                // The compile (or the cache lookup) of the operator's kernel, before anything is timed.
                let report = op.compile_by_key::<T>(&self.stream())?;
                println!(
                    "compile {} {} n=2^{log2n}: {:?} in {:.1} ms",
                    algo.name(),
                    T::NAME,
                    report.hit,
                    report.seconds * 1e3
                );
                Some(op)
            }
            _ => None,
        };
        let ws = &mut self.ws;
        let us = time_row(&mut self.timer, bufs, |slot| Ok(call(ws, algo, n, &device_n, user.as_ref(), slot)?))?;
        let timed = Timed { label: common::engine_label(algo.name(), self.engine), us };
        checked_row(&self.timer, timed, algo, log2n, bufs, memcpy_gbps)
    }

    /// CUB's counterpart of a row (`None`: CUB has none), on the same buffers, timed and checked the
    /// same way.
    #[cfg(feature = "cub-baseline")]
    fn run_cub_row<T: Value>(
        &mut self,
        algo: Algo,
        log2n: u32,
        bufs: &mut Buffers<T>,
        memcpy_gbps: f64,
    ) -> Option<BoxResult<Row>> {
        let call = cub_call::<T>(algo, &self.stream(), bufs.n)?;
        Some(call.and_then(|mut call| {
            // One untimed call first: the runtime loads each CUB kernel at its first launch, and
            // open_gpu preloaded lookback's.
            call(bufs.slot(0))?;
            self.stream().synchronize()?;
            let us = time_row(&mut self.timer, bufs, call)?;
            let timed = Timed { label: format!("cub:{}", algo.name()), us };
            checked_row(&self.timer, timed, algo, log2n, bufs, memcpy_gbps)
        }))
    }

    fn run_type(&mut self, ty: ElemType, log2n: u32, algos: &[Algo], report: &mut Report) -> BoxResult<()> {
        match ty {
            ElemType::I32 => self.run_size::<i32>(log2n, algos, report),
            ElemType::U8 => self.run_size::<u8>(log2n, algos, report),
            ElemType::F32 => self.run_size::<f32>(log2n, algos, report),
            ElemType::F64 => self.run_size::<f64>(log2n, algos, report),
            ElemType::F16 => self.run_size::<f16>(log2n, algos, report),
            ElemType::I64 => Err(format!("{} is not among this bench's types", ty.name()).into()),
        }
    }
}

fn run(args: &Args, stream: &Arc<CudaStream>) -> BoxResult<()> {
    common::open_gpu(stream, args.reps)?;
    let mut bench = Bench {
        timer: Timer::new(stream, args.reps)?,
        ws: Workspace::new(stream),
        memcpy: MemcpyBaseline::default(),
        engine: args.engine,
    };
    bench.ws.set_backoff(args.single_backoff()?);
    bench.ws.set_engine(args.engine);
    let algos = common::paired(&args.algos, Algo::base);
    let paired = algos.iter().any(|a| a.base().is_some());
    let mut report = Report::create_with(&common::csv_paths(&args.csv, CSV_NAME), paired)?;
    for &ty in &args.types {
        for &log2n in &args.sizes {
            bench.run_type(ty, log2n, &algos, &mut report)?;
        }
    }
    report.summary();
    Ok(())
}

fn main() -> BoxResult<()> {
    common::bench_main("runs", USAGE, parse_args, run)
}
