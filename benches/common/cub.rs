//! The CUB baseline (feature `cub-baseline`): the one place that names the shim's C functions
//! (`cub/*.cu`, linked by build.rs), a table of them per element type, and typed calls that check
//! buffer lengths and turn CUDA error codes into errors.
//!
//! Every algorithm `<name>_<type>` of the shim is a size query `lookback_cub_<name>_<type>_temp_bytes`
//! and a run `lookback_cub_<name>_<type>` that only enqueues work on the stream; a [`Runner`] queries
//! and allocates the temporary storage once, outside any timed interval, then runs as often as asked.

use super::BoxResult;
use lookback::cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop, sys};
use lookback::half::f16;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Arc;

type Stream = sys::CUstream;
type In = *const c_void;
type Out = *mut c_void;

/// `lookback_cub_<name>_temp_bytes(n, &bytes)`: the temporary storage the algorithm needs for `n` items.
pub type TempBytesFn = unsafe extern "C" fn(n: i64, bytes: *mut usize) -> c_int;
/// Scans: `(input, output)`; `input == output` is the in-place scan.
pub type ScanFn =
    unsafe extern "C" fn(temp: Out, temp_bytes: usize, input: In, output: Out, n: i64, s: Stream) -> c_int;
/// Selection and one-output partition by `x < *threshold`: `(input, output, count, threshold)`.
pub type SelectIfFn = unsafe extern "C" fn(
    temp: Out,
    temp_bytes: usize,
    input: In,
    output: Out,
    count: Out,
    threshold: In,
    n: i64,
    s: Stream,
) -> c_int;
/// In-place selection: `(data, count, threshold)`.
pub type InPlaceFn = unsafe extern "C" fn(
    temp: Out,
    temp_bytes: usize,
    data: Out,
    count: Out,
    threshold: In,
    n: i64,
    s: Stream,
) -> c_int;
/// Selection by `u8` flags: `(input, flags, output, count)`.
pub type FlaggedFn = unsafe extern "C" fn(
    temp: Out,
    temp_bytes: usize,
    input: In,
    flags: In,
    output: Out,
    count: Out,
    n: i64,
    s: Stream,
) -> c_int;
/// `(input, output, count)`.
pub type UniqueFn =
    unsafe extern "C" fn(temp: Out, temp_bytes: usize, input: In, output: Out, count: Out, n: i64, s: Stream) -> c_int;
/// `(keys_in, keys_out, values_in, sums_out, count)`.
pub type ReduceByKeyFn = unsafe extern "C" fn(
    temp: Out,
    temp_bytes: usize,
    keys_in: In,
    keys_out: Out,
    values_in: In,
    sums_out: Out,
    count: Out,
    n: i64,
    s: Stream,
) -> c_int;
/// `(keys_in, values_in, keys_out, values_out, count)`.
pub type UniqueByKeyFn = unsafe extern "C" fn(
    temp: Out,
    temp_bytes: usize,
    keys_in: In,
    values_in: In,
    keys_out: Out,
    values_out: Out,
    count: Out,
    n: i64,
    s: Stream,
) -> c_int;
/// Run-length encoding `(input, values, u32 lengths, count)` and non-trivial runs `(input, u32 offsets,
/// u32 lengths, count)`.
pub type EncodeFn = unsafe extern "C" fn(
    temp: Out,
    temp_bytes: usize,
    input: In,
    first: Out,
    second: Out,
    count: Out,
    n: i64,
    s: Stream,
) -> c_int;
/// Inclusive sum by key: `(keys, values_in, values_out)`.
pub type ScanByKeyFn = unsafe extern "C" fn(
    temp: Out,
    temp_bytes: usize,
    keys: In,
    values_in: In,
    values_out: Out,
    n: i64,
    s: Stream,
) -> c_int;
/// Exclusive sum by key from `*init`: `(keys, values_in, values_out, init)`.
pub type ExclusiveScanByKeyFn = unsafe extern "C" fn(
    temp: Out,
    temp_bytes: usize,
    keys: In,
    values_in: In,
    values_out: Out,
    init: In,
    n: i64,
    s: Stream,
) -> c_int;

unsafe extern "C" {
    fn lookback_cub_version() -> c_int;
    fn lookback_cub_deterministic_scan() -> c_int;
    fn lookback_cub_error_string(code: c_int) -> *const c_char;
}

/// One algorithm of the shim for one element type.
#[derive(Clone, Copy)]
pub struct Algo<F> {
    /// `<name>_<type>`, for messages.
    pub name: &'static str,
    pub temp_bytes: TempBytesFn,
    pub run: F,
}

/// Declares the shim's two functions of `<name>_<type>` (`run` takes the buffer parameters `params`) and
/// makes their [`Algo`]; a parameter list that does not match the type `$f` does not compile, and a
/// name the shim does not export does not link.
macro_rules! algo {
    ($name:literal, $ty:literal, $f:ty, ($($p:ident: $pt:ty),*)) => {{
        unsafe extern "C" {
            #[link_name = concat!("lookback_cub_", $name, "_", $ty, "_temp_bytes")]
            fn temp_bytes(n: i64, bytes: *mut usize) -> c_int;
            #[link_name = concat!("lookback_cub_", $name, "_", $ty)]
            fn run(temp: Out, temp_bytes: usize, $($p: $pt,)* n: i64, s: Stream) -> c_int;
        }
        Algo::<$f> { name: concat!($name, "_", $ty), temp_bytes, run }
    }};
}

/// The scans and reductions of one element type (`cub/scan.cu` and `cub/reduce.cu`, and `cub/scan_det.cu`
/// for the deterministic sums).
#[derive(Clone, Copy)]
pub struct ScanFns {
    pub inclusive_sum: Algo<ScanFn>,
    pub exclusive_sum: Algo<ScanFn>,
    pub inclusive_max: Algo<ScanFn>,
    /// DeviceReduce's sum (`cub/reduce.cu`): one T out.
    pub reduce_sum: Algo<ScanFn>,
    /// DeviceReduce::ArgMin: `lookback::ArgItem<T>`'s layout out.
    pub arg_min: Algo<ScanFn>,
    /// The run-to-run deterministic sums, for the float types the shim exports them for; whether the CUB
    /// built in runs them is only known at run time: [`ScanFns::deterministic`].
    inclusive_sum_det: Option<Algo<ScanFn>>,
    exclusive_sum_det: Option<Algo<ScanFn>>,
}

impl ScanFns {
    /// CUB's run-to-run deterministic inclusive (or exclusive) sum of this type, where it has one: CUB
    /// 3.5.0 on, float types.
    pub fn deterministic(&self, exclusive: bool) -> Option<Algo<ScanFn>> {
        // SAFETY: `int lookback_cub_deterministic_scan(void)` returns a constant.
        let built = unsafe { lookback_cub_deterministic_scan() } != 0;
        let algo = if exclusive { self.exclusive_sum_det } else { self.inclusive_sum_det };
        algo.filter(|_| built)
    }
}

macro_rules! scan_fns {
    ($ty:literal) => {
        scan_fns!($ty, None, None)
    };
    ($ty:literal, det) => {
        scan_fns!(
            $ty,
            Some(algo!("inclusive_sum_det", $ty, ScanFn, (input: In, output: Out))),
            Some(algo!("exclusive_sum_det", $ty, ScanFn, (input: In, output: Out)))
        )
    };
    ($ty:literal, $inclusive_det:expr, $exclusive_det:expr) => {
        Some(ScanFns {
            inclusive_sum: algo!("inclusive_sum", $ty, ScanFn, (input: In, output: Out)),
            exclusive_sum: algo!("exclusive_sum", $ty, ScanFn, (input: In, output: Out)),
            inclusive_max: algo!("inclusive_max", $ty, ScanFn, (input: In, output: Out)),
            reduce_sum: algo!("reduce_sum", $ty, ScanFn, (input: In, output: Out)),
            arg_min: algo!("arg_min", $ty, ScanFn, (input: In, output: Out)),
            inclusive_sum_det: $inclusive_det,
            exclusive_sum_det: $exclusive_det,
        })
    };
}

/// The selections, partition and unique of one element type (`cub/select.cu`).
#[derive(Clone, Copy)]
pub struct SelectFns {
    pub select_if: Algo<SelectIfFn>,
    pub select_if_in_place: Algo<InPlaceFn>,
    pub select_flagged: Algo<FlaggedFn>,
    /// CUB's `DevicePartition::If`: lookback's `partition_if_reversed` layout.
    pub partition_if: Algo<SelectIfFn>,
    pub unique: Algo<UniqueFn>,
}

macro_rules! select_fns {
    ($ty:literal) => {
        Some(SelectFns {
            select_if: algo!("select_if", $ty, SelectIfFn, (input: In, output: Out, count: Out, threshold: In)),
            select_if_in_place: algo!("select_if_in_place", $ty, InPlaceFn, (data: Out, count: Out, threshold: In)),
            select_flagged: algo!("select_flagged", $ty, FlaggedFn, (input: In, flags: In, output: Out, count: Out)),
            partition_if: algo!("partition_if", $ty, SelectIfFn, (input: In, output: Out, count: Out, threshold: In)),
            unique: algo!("unique", $ty, UniqueFn, (input: In, output: Out, count: Out)),
        })
    };
}

/// The run-based algorithms of one key type, values of the key's type (`cub/runs.cu`).
#[derive(Clone, Copy)]
pub struct RunsFns {
    pub reduce_by_key_sum: Algo<ReduceByKeyFn>,
    pub unique_by_key: Algo<UniqueByKeyFn>,
    pub run_length_encode: Algo<EncodeFn>,
    pub non_trivial_runs: Algo<EncodeFn>,
    pub inclusive_sum_by_key: Algo<ScanByKeyFn>,
    pub exclusive_scan_by_key: Algo<ExclusiveScanByKeyFn>,
}

macro_rules! runs_fns {
    ($ty:literal) => {
        Some(RunsFns {
            reduce_by_key_sum: algo!(
                "reduce_by_key_sum",
                $ty,
                ReduceByKeyFn,
                (keys_in: In, keys_out: Out, values_in: In, sums_out: Out, count: Out)
            ),
            unique_by_key: algo!(
                "unique_by_key",
                $ty,
                UniqueByKeyFn,
                (keys_in: In, values_in: In, keys_out: Out, values_out: Out, count: Out)
            ),
            run_length_encode: algo!(
                "run_length_encode",
                $ty,
                EncodeFn,
                (input: In, values: Out, lengths: Out, count: Out)
            ),
            non_trivial_runs: algo!("non_trivial_runs", $ty, EncodeFn, (input: In, offsets: Out, lengths: Out, count: Out)),
            inclusive_sum_by_key: algo!(
                "inclusive_sum_by_key",
                $ty,
                ScanByKeyFn,
                (keys: In, values_in: In, values_out: Out)
            ),
            exclusive_scan_by_key: algo!(
                "exclusive_scan_by_key",
                $ty,
                ExclusiveScanByKeyFn,
                (keys: In, values_in: In, values_out: Out, init: In)
            ),
        })
    };
}

/// The shim's algorithms of an element type, per bench (`None`: that bench does not offer the type, and
/// the shim does not compile it).
pub trait Element {
    const SCAN: Option<ScanFns>;
    const SELECT: Option<SelectFns>;
    const RUNS: Option<RunsFns>;
}

/// The type lists of `cub/scan.cu`, `cub/select.cu` and `cub/runs.cu` (`scan det`: also those of
/// `cub/scan_det.cu`).
macro_rules! element {
    ($($t:ty: $name:literal, scan $scan:tt, select $select:tt, runs $runs:tt;)*) => {$(
        impl Element for $t {
            const SCAN: Option<ScanFns> = element!(@ $scan scan_fns $name);
            const SELECT: Option<SelectFns> = element!(@ $select select_fns $name);
            const RUNS: Option<RunsFns> = element!(@ $runs runs_fns $name);
        }
    )*};
    (@ yes $fns:ident $name:literal) => { $fns!($name) };
    (@ det $fns:ident $name:literal) => { $fns!($name, det) };
    (@ no $fns:ident $name:literal) => { None };
}
element! {
    i32: "i32", scan yes, select yes, runs yes;
    u8: "u8", scan yes, select yes, runs yes;
    i64: "i64", scan yes, select yes, runs no;
    f16: "f16", scan yes, select yes, runs yes;
    f32: "f32", scan det, select yes, runs yes;
    f64: "f64", scan det, select no, runs yes;
    // Run lengths in benches/runs.rs: never a key type.
    u32: "u32", scan no, select no, runs no;
}

/// CUB's version, as `major.minor.subminor`.
pub fn version() -> String {
    // SAFETY: `int lookback_cub_version(void)` returns a constant.
    let v = unsafe { lookback_cub_version() };
    format!("{}.{}.{}", v / 100_000, v / 100 % 1000, v % 100)
}

/// `Ok` for cudaSuccess; else an error naming the algorithm and CUDA's text for the code.
fn status(code: c_int, name: &str) -> BoxResult<()> {
    if code == 0 {
        return Ok(());
    }
    // SAFETY: `const char* lookback_cub_error_string(int)` returns cudaGetErrorString's static,
    // NUL-terminated text (never freed), or null, checked here.
    let text = unsafe { lookback_cub_error_string(code) };
    let text = if text.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: as above.
        unsafe { CStr::from_ptr(text) }.to_string_lossy()
    };
    Err(format!("CUB {name}: {text} (cudaError_t {code})").into())
}

/// A device address as the shim takes it.
fn addr(p: sys::CUdeviceptr) -> Out {
    p as usize as Out
}

/// The device addresses of one call's buffers, each checked to hold what the call needs, and the guards
/// that keep them borrowed until the call is enqueued.
struct Args<'a> {
    name: &'static str,
    n: usize,
    stream: &'a CudaStream,
    guards: Vec<SyncOnDrop<'a>>,
}

impl<'a> Args<'a> {
    fn holds(&self, len: usize, need: usize, what: &str) -> BoxResult<()> {
        if len < need {
            let name = self.name;
            return Err(format!("CUB {name}: the {what} buffer holds {len} items, the call needs {need}").into());
        }
        Ok(())
    }

    /// A buffer of `n` items the call reads.
    fn input<T>(&mut self, buf: &'a impl DevicePtr<T>, what: &str) -> BoxResult<In> {
        self.holds(buf.len(), self.n, what)?;
        let (p, guard) = buf.device_ptr(self.stream);
        self.guards.push(guard);
        Ok(addr(p))
    }

    /// A buffer of `n` items the call writes.
    fn output<T>(&mut self, buf: &'a mut impl DevicePtrMut<T>, what: &str) -> BoxResult<Out> {
        self.holds(buf.len(), self.n, what)?;
        let (p, guard) = buf.device_ptr_mut(self.stream);
        self.guards.push(guard);
        Ok(addr(p))
    }

    /// A buffer of which the call writes one item (a reduction's result).
    fn single<T>(&mut self, buf: &'a mut impl DevicePtrMut<T>, what: &str) -> BoxResult<Out> {
        self.holds(buf.len(), 1, what)?;
        let (p, guard) = buf.device_ptr_mut(self.stream);
        self.guards.push(guard);
        Ok(addr(p))
    }

    /// The `u64` the call writes its count to.
    fn count(&mut self, buf: &'a mut impl DevicePtrMut<u64>) -> BoxResult<Out> {
        self.holds(buf.len(), 1, "count")?;
        let (p, guard) = buf.device_ptr_mut(self.stream);
        self.guards.push(guard);
        Ok(addr(p))
    }
}

/// One algorithm with its temporary storage, sized for `n` items, on the bench's stream.
pub struct Runner<F> {
    algo: Algo<F>,
    n: usize,
    temp: CudaSlice<u8>,
    stream: Arc<CudaStream>,
}

impl<F> Runner<F> {
    /// Asks CUB how much temporary storage `n` items take and allocates it (never inside a timed
    /// interval: this allocates and waits).
    pub fn new(algo: Algo<F>, stream: &Arc<CudaStream>, n: usize) -> BoxResult<Runner<F>> {
        // The static CUDA runtime works in the thread's current context: make it the bench's.
        stream.context().bind_to_thread()?;
        let items = i64::try_from(n)?;
        let mut bytes = 0usize;
        // SAFETY: `int <name>_temp_bytes(int64_t n, size_t* bytes)` writes one size_t through `bytes`.
        status(unsafe { (algo.temp_bytes)(items, &mut bytes) }, algo.name)?;
        let temp = stream.alloc_zeros::<u8>(bytes.max(1))?;
        Ok(Runner { algo, n, temp, stream: stream.clone() })
    }

    /// Collects the addresses of a call's buffers on `stream` (the runner's, cloned by the caller so
    /// that the guards do not borrow the runner).
    fn args<'a>(&self, stream: &'a CudaStream) -> Args<'a> {
        Args { name: self.algo.name, n: self.n, stream, guards: Vec::new() }
    }

    /// Calls `run(&f, temp, temp_bytes, n, stream)` with the shim's function `f`, then turns its code into
    /// a result.
    ///
    /// # Safety
    /// `run` must pass `f` buffers that hold what the C function reads and writes for `n` items of its
    /// type (the [`Args`] they come from checked their lengths).
    unsafe fn call(&mut self, run: impl FnOnce(&F, Out, usize, i64, Stream) -> c_int) -> BoxResult<()> {
        let n = i64::try_from(self.n)?;
        let bytes = self.temp.len();
        let (temp, _temp) = self.temp.device_ptr_mut(&self.stream);
        let code = run(&self.algo.run, addr(temp), bytes, n, self.stream.cu_stream());
        status(code, self.algo.name)
    }
}

// Each call below: the buffers' addresses from `Args` (lengths checked), then the shim's function. The
// SAFETY comments name the C signature; every buffer holds n items of the table's type (counts one u64),
// and host values (thresholds, seeds) are read during the call.

impl Runner<ScanFn> {
    /// Scans `input` into `output`.
    pub fn scan<T>(&mut self, input: &impl DevicePtr<T>, output: &mut impl DevicePtrMut<T>) -> BoxResult<()> {
        let stream = self.stream.clone();
        let mut a = self.args(&stream);
        let (i, o) = (a.input(input, "input")?, a.output(output, "output")?);
        // SAFETY: `int <scan>(void*, size_t, const void* in, void* out, int64_t, cudaStream_t)`.
        unsafe { self.call(|f, t, b, n, s| f(t, b, i, o, n, s)) }
    }

    /// Reduces `input` into `output[0]` (a reduction of the table: `reduce_sum`'s T, `arg_min`'s
    /// 16-byte (index, value) pair).
    pub fn reduce<T, R>(&mut self, input: &impl DevicePtr<T>, output: &mut impl DevicePtrMut<R>) -> BoxResult<()> {
        let stream = self.stream.clone();
        let mut a = self.args(&stream);
        let (i, o) = (a.input(input, "input")?, a.single(output, "output")?);
        // SAFETY: `int <reduction>(void*, size_t, const void* in, void* out, int64_t, cudaStream_t)`, which
        // writes one result of R's layout to `out`.
        unsafe { self.call(|f, t, b, n, s| f(t, b, i, o, n, s)) }
    }

    /// Scans `data` in place (CUB allows `in == out` exactly).
    pub fn scan_in_place<T>(&mut self, data: &mut impl DevicePtrMut<T>) -> BoxResult<()> {
        let stream = self.stream.clone();
        let mut a = self.args(&stream);
        let d = a.output(data, "data")?;
        // SAFETY: as in `scan`, with one buffer as both.
        unsafe { self.call(|f, t, b, n, s| f(t, b, d, d, n, s)) }
    }
}

impl Runner<SelectIfFn> {
    /// The items `x < threshold` of `input` into `output` (the partition: all of them, the rejected ones
    /// reversed at the end), their count into `count[0]`.
    pub fn select<T>(
        &mut self,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
        count: &mut impl DevicePtrMut<u64>,
        threshold: &T,
    ) -> BoxResult<()> {
        let stream = self.stream.clone();
        let mut a = self.args(&stream);
        let (i, o, c) = (a.input(input, "input")?, a.output(output, "output")?, a.count(count)?);
        let th = std::ptr::from_ref(threshold).cast::<c_void>();
        // SAFETY: `int <select>(void*, size_t, const void* in, void* out, void* count, const void*
        // threshold, int64_t, cudaStream_t)`.
        unsafe { self.call(|f, t, b, n, s| f(t, b, i, o, c, th, n, s)) }
    }
}

impl Runner<InPlaceFn> {
    /// Compacts the items `x < threshold` of `data` to its front, their count into `count[0]`.
    pub fn select_in_place<T>(
        &mut self,
        data: &mut impl DevicePtrMut<T>,
        count: &mut impl DevicePtrMut<u64>,
        threshold: &T,
    ) -> BoxResult<()> {
        let stream = self.stream.clone();
        let mut a = self.args(&stream);
        let (d, c) = (a.output(data, "data")?, a.count(count)?);
        let th = std::ptr::from_ref(threshold).cast::<c_void>();
        // SAFETY: `int <select_if_in_place>(void*, size_t, void* data, void* count, const void* threshold,
        // int64_t, cudaStream_t)`.
        unsafe { self.call(|f, t, b, n, s| f(t, b, d, c, th, n, s)) }
    }
}

impl Runner<FlaggedFn> {
    /// The items of `input` whose flag is non-zero into `output`, their count into `count[0]`.
    pub fn select_flagged<T>(
        &mut self,
        input: &impl DevicePtr<T>,
        flags: &impl DevicePtr<u8>,
        output: &mut impl DevicePtrMut<T>,
        count: &mut impl DevicePtrMut<u64>,
    ) -> BoxResult<()> {
        let stream = self.stream.clone();
        let mut a = self.args(&stream);
        let (i, g) = (a.input(input, "input")?, a.input(flags, "flags")?);
        let (o, c) = (a.output(output, "output")?, a.count(count)?);
        // SAFETY: `int <select_flagged>(void*, size_t, const void* in, const void* flags, void* out, void*
        // count, int64_t, cudaStream_t)`; the flags are n bytes.
        unsafe { self.call(|f, t, b, n, s| f(t, b, i, g, o, c, n, s)) }
    }
}

impl Runner<UniqueFn> {
    /// The first item of every run of equal items of `input` into `output`, their count into `count[0]`.
    pub fn unique<T>(
        &mut self,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
        count: &mut impl DevicePtrMut<u64>,
    ) -> BoxResult<()> {
        let stream = self.stream.clone();
        let mut a = self.args(&stream);
        let (i, o, c) = (a.input(input, "input")?, a.output(output, "output")?, a.count(count)?);
        // SAFETY: `int <unique>(void*, size_t, const void* in, void* out, void* count, int64_t,
        // cudaStream_t)`.
        unsafe { self.call(|f, t, b, n, s| f(t, b, i, o, c, n, s)) }
    }
}

impl Runner<ReduceByKeyFn> {
    /// A key and the sum of its values per run of equal keys, the run count into `count[0]`.
    pub fn reduce_by_key<T>(
        &mut self,
        keys_in: &impl DevicePtr<T>,
        keys_out: &mut impl DevicePtrMut<T>,
        values_in: &impl DevicePtr<T>,
        sums_out: &mut impl DevicePtrMut<T>,
        count: &mut impl DevicePtrMut<u64>,
    ) -> BoxResult<()> {
        let stream = self.stream.clone();
        let mut a = self.args(&stream);
        let (ki, ko) = (a.input(keys_in, "keys")?, a.output(keys_out, "keys output")?);
        let (vi, so, c) = (a.input(values_in, "values")?, a.output(sums_out, "sums output")?, a.count(count)?);
        // SAFETY: `int <reduce_by_key_sum>(void*, size_t, const void* keys_in, void* keys_out, const void*
        // values_in, void* sums_out, void* count, int64_t, cudaStream_t)`.
        unsafe { self.call(|f, t, b, n, s| f(t, b, ki, ko, vi, so, c, n, s)) }
    }
}

impl Runner<UniqueByKeyFn> {
    /// The first key and value of every run of equal keys, the run count into `count[0]`.
    pub fn unique_by_key<T>(
        &mut self,
        keys_in: &impl DevicePtr<T>,
        values_in: &impl DevicePtr<T>,
        keys_out: &mut impl DevicePtrMut<T>,
        values_out: &mut impl DevicePtrMut<T>,
        count: &mut impl DevicePtrMut<u64>,
    ) -> BoxResult<()> {
        let stream = self.stream.clone();
        let mut a = self.args(&stream);
        let (ki, vi) = (a.input(keys_in, "keys")?, a.input(values_in, "values")?);
        let (ko, vo, c) = (a.output(keys_out, "keys output")?, a.output(values_out, "values output")?, a.count(count)?);
        // SAFETY: `int <unique_by_key>(void*, size_t, const void* keys_in, const void* values_in, void*
        // keys_out, void* values_out, void* count, int64_t, cudaStream_t)`.
        unsafe { self.call(|f, t, b, n, s| f(t, b, ki, vi, ko, vo, c, n, s)) }
    }
}

impl Runner<EncodeFn> {
    /// Run-length encoding: a value and a `u32` length per run, the run count into `count[0]`.
    pub fn run_length_encode<T>(
        &mut self,
        input: &impl DevicePtr<T>,
        values: &mut impl DevicePtrMut<T>,
        lengths: &mut impl DevicePtrMut<u32>,
        count: &mut impl DevicePtrMut<u64>,
    ) -> BoxResult<()> {
        let stream = self.stream.clone();
        let mut a = self.args(&stream);
        let (i, v) = (a.input(input, "input")?, a.output(values, "values output")?);
        let (l, c) = (a.output(lengths, "lengths output")?, a.count(count)?);
        // SAFETY: `int <run_length_encode>(void*, size_t, const void* in, void* values, void* lengths,
        // void* count, int64_t, cudaStream_t)`; the lengths are n u32s.
        unsafe { self.call(|f, t, b, n, s| f(t, b, i, v, l, c, n, s)) }
    }

    /// Non-trivial runs: a `u32` offset and length per run longer than one item, their count into
    /// `count[0]`.
    pub fn non_trivial_runs<T>(
        &mut self,
        input: &impl DevicePtr<T>,
        offsets: &mut impl DevicePtrMut<u32>,
        lengths: &mut impl DevicePtrMut<u32>,
        count: &mut impl DevicePtrMut<u64>,
    ) -> BoxResult<()> {
        let stream = self.stream.clone();
        let mut a = self.args(&stream);
        let (i, o) = (a.input(input, "input")?, a.output(offsets, "offsets output")?);
        let (l, c) = (a.output(lengths, "lengths output")?, a.count(count)?);
        // SAFETY: `int <non_trivial_runs>(void*, size_t, const void* in, void* offsets, void* lengths,
        // void* count, int64_t, cudaStream_t)`; offsets and lengths are n u32s.
        unsafe { self.call(|f, t, b, n, s| f(t, b, i, o, l, c, n, s)) }
    }
}

impl Runner<ScanByKeyFn> {
    /// Inclusive sum of `values_in` within each run of equal keys into `values_out`.
    pub fn scan_by_key<T>(
        &mut self,
        keys: &impl DevicePtr<T>,
        values_in: &impl DevicePtr<T>,
        values_out: &mut impl DevicePtrMut<T>,
    ) -> BoxResult<()> {
        let stream = self.stream.clone();
        let mut a = self.args(&stream);
        let (k, vi, vo) = (a.input(keys, "keys")?, a.input(values_in, "values")?, a.output(values_out, "output")?);
        // SAFETY: `int <inclusive_sum_by_key>(void*, size_t, const void* keys, const void* values_in, void*
        // values_out, int64_t, cudaStream_t)`.
        unsafe { self.call(|f, t, b, n, s| f(t, b, k, vi, vo, n, s)) }
    }
}

impl Runner<ExclusiveScanByKeyFn> {
    /// Exclusive sum of `values_in` from `init` within each run of equal keys into `values_out`.
    pub fn scan_by_key<T>(
        &mut self,
        keys: &impl DevicePtr<T>,
        values_in: &impl DevicePtr<T>,
        values_out: &mut impl DevicePtrMut<T>,
        init: &T,
    ) -> BoxResult<()> {
        let stream = self.stream.clone();
        let mut a = self.args(&stream);
        let (k, vi, vo) = (a.input(keys, "keys")?, a.input(values_in, "values")?, a.output(values_out, "output")?);
        let init = std::ptr::from_ref(init).cast::<c_void>();
        // SAFETY: `int <exclusive_scan_by_key>(void*, size_t, const void* keys, const void* values_in, void*
        // values_out, const void* init, int64_t, cudaStream_t)`.
        unsafe { self.call(|f, t, b, n, s| f(t, b, k, vi, vo, init, n, s)) }
    }
}
