//! Scans with a user operator ([`UserScanOp`]): the workspace methods and one-shot functions.
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::launch::{ScanParams, Workspace, check_room, same_context};
use crate::plan::{Buffers, Primitive};
use crate::rtc::{DeviceType, UserScanOp};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

impl Workspace {
    /// Inclusive scan with a user operator: `output[i] = store(load(input[0]) ⊕ … ⊕ load(input[i]))`.
    /// Writes the first `input.len()` items of `output` and leaves the rest alone. Runs on `input`'s
    /// stream and does not block the host; the first call with an operator compiles it (or finds it in
    /// the caches): call [`UserScanOp::compile`] first to do that ahead, and before capturing the call
    /// into a CUDA graph.
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`] if `output` is shorter than `input` (nothing compiled or written);
    /// [`Error::ContextMismatch`]; the errors of [`UserScanOp::compile`]; [`Error::KernelsNotBuilt`],
    /// [`Error::Driver`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::UserScanOp};
    /// // Sum of squares of f32 readings, in f64.
    /// // SAFETY: pure expressions.
    /// let op = unsafe {
    ///     UserScanOp::new("a + b", "0.0", |a: f64, b: f64| a + b, 0.0)?
    ///         .with_load("(double)x * x", |x: f32| f64::from(x) * f64::from(x))?
    /// };
    /// let input = stream.clone_htod(&[1.0f32, 2.0, 3.0])?;
    /// let mut out = stream.alloc_zeros::<f64>(3)?;
    /// Workspace::new(&stream).inclusive_scan_user_into(&input, &mut out, &op)?;
    /// assert_eq!(stream.clone_dtoh(&out)?, [1.0, 5.0, 14.0]);
    /// # Ok(()) }
    /// ```
    pub fn inclusive_scan_user_into<In, A, Out, I, O>(
        &mut self,
        input: &I,
        output: &mut O,
        op: &UserScanOp<In, A, Out>,
    ) -> Result<()>
    where
        In: DeviceType,
        A: DeviceType,
        Out: DeviceType,
        I: DevicePtr<In>,
        O: DevicePtrMut<Out>,
    {
        self.user_scan_into(input, output, None, op)
    }

    /// Exclusive scan with a user operator, seeded with `init`: `output[0] = store(init)`, `output[i] =
    /// store(init ⊕ load(input[0]) ⊕ … ⊕ load(input[i-1]))`. Otherwise as
    /// [`Workspace::inclusive_scan_user_into`].
    ///
    /// # Errors
    /// As [`Workspace::inclusive_scan_user_into`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::UserScanOp};
    /// // Byte flags into 64-bit offsets.
    /// // SAFETY: pure expressions.
    /// let offsets = unsafe {
    ///     UserScanOp::new("a + b", "0", |a: u64, b: u64| a.wrapping_add(b), 0)?
    ///         .with_load("(uint64_t)x", |x: u8| u64::from(x))?
    /// };
    /// let flags = stream.clone_htod(&[1u8, 0, 1, 1])?;
    /// let mut out = stream.alloc_zeros::<u64>(4)?;
    /// Workspace::new(&stream).exclusive_scan_user_into(&flags, &mut out, 0, &offsets)?;
    /// assert_eq!(stream.clone_dtoh(&out)?, [0, 1, 1, 2]);
    /// # Ok(()) }
    /// ```
    pub fn exclusive_scan_user_into<In, A, Out, I, O>(
        &mut self,
        input: &I,
        output: &mut O,
        init: A,
        op: &UserScanOp<In, A, Out>,
    ) -> Result<()>
    where
        In: DeviceType,
        A: DeviceType,
        Out: DeviceType,
        I: DevicePtr<In>,
        O: DevicePtrMut<Out>,
    {
        self.user_scan_into(input, output, Some(init), op)
    }

    fn user_scan_into<In, A, Out, I, O>(
        &mut self,
        input: &I,
        output: &mut O,
        init: Option<A>,
        op: &UserScanOp<In, A, Out>,
    ) -> Result<()>
    where
        In: DeviceType,
        A: DeviceType,
        Out: DeviceType,
        I: DevicePtr<In>,
        O: DevicePtrMut<Out>,
    {
        let n = input.len();
        check_room("output", n, output.len())?;
        let stream = input.stream().clone();
        same_context(&stream, output.stream())?;
        op.code.check_sizes()?;
        if n == 0 {
            return Ok(());
        }
        self.enter(&stream)?;
        let (kernels, _) = crate::rtc::scan_kernels(stream.context(), &op.code)?;
        let (src, _read) = input.device_ptr(&stream);
        let (dst, _write) = output.device_ptr_mut(&stream);
        let primitive = Primitive::UserScan {
            kernels,
            input_bytes: size_of::<In>(),
            output_bytes: size_of::<Out>(),
            acc_bytes: size_of::<A>(),
        };
        let launch =
            self.plan_launch(&stream, primitive, n, Buffers { input: src, output: dst, ..Buffers::default() })?;
        let seed = init.map_or([0; 4], seed_words);
        self.launch(&stream, launch, |lb, _| ScanParams {
            input: src,
            output: dst,
            n: n as u64,
            seed,
            exclusive: init.is_some() as u32,
            reduce: 0,
            lb,
        })
    }
}

/// The bytes of an accumulator value (at most 32: `check_sizes`), zero-extended to four little-endian
/// words, as the scan kernels read an exclusive scan's seed (`ScanParams::seed`: its low bytes).
pub(crate) fn seed_words<A: DeviceType>(value: A) -> [u64; 4] {
    let mut bytes = [0u8; 32];
    let size = size_of::<A>().min(32);
    // SAFETY: `value` is a live `A` of `size_of::<A>()` bytes, none of them padding (a promise of
    // DeviceType), so all `size` bytes read are initialized; `bytes` has room for them.
    unsafe { std::ptr::copy_nonoverlapping((&raw const value).cast::<u8>(), bytes.as_mut_ptr(), size) };
    std::array::from_fn(|w| u64::from_le_bytes(bytes[8 * w..8 * w + 8].try_into().expect("8 bytes")))
}

/// Inclusive scan with a user operator into a new buffer on `input`'s stream. Allocates the output and a
/// look-back workspace; use a [`Workspace`] for repeated calls.
///
/// # Errors
/// As [`Workspace::inclusive_scan_user_into`].
pub fn inclusive_scan_user<In, A, Out, I>(input: &I, op: &UserScanOp<In, A, Out>) -> Result<CudaSlice<Out>>
where
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType,
    I: DevicePtr<In>,
{
    let stream = input.stream().clone();
    op.code.check_sizes()?;
    // SAFETY: the scan writes every one of the `len` items before anything reads them.
    let mut out = unsafe { stream.alloc::<Out>(input.len()) }?;
    Workspace::new(&stream).inclusive_scan_user_into(input, &mut out, op)?;
    Ok(out)
}

/// Exclusive scan with a user operator into a new buffer, seeded with `init`.
///
/// # Errors
/// As [`Workspace::inclusive_scan_user_into`].
pub fn exclusive_scan_user<In, A, Out, I>(input: &I, init: A, op: &UserScanOp<In, A, Out>) -> Result<CudaSlice<Out>>
where
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType,
    I: DevicePtr<In>,
{
    let stream = input.stream().clone();
    op.code.check_sizes()?;
    // SAFETY: the scan writes every one of the `len` items before anything reads them.
    let mut out = unsafe { stream.alloc::<Out>(input.len()) }?;
    Workspace::new(&stream).exclusive_scan_user_into(input, &mut out, init, op)?;
    Ok(out)
}

/// Inclusive scan with a user operator into a caller buffer. See
/// [`Workspace::inclusive_scan_user_into`].
///
/// # Errors
/// As [`Workspace::inclusive_scan_user_into`].
pub fn inclusive_scan_user_into<In, A, Out, I, O>(input: &I, output: &mut O, op: &UserScanOp<In, A, Out>) -> Result<()>
where
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType,
    I: DevicePtr<In>,
    O: DevicePtrMut<Out>,
{
    Workspace::new(input.stream()).inclusive_scan_user_into(input, output, op)
}

/// Exclusive scan with a user operator into a caller buffer. See
/// [`Workspace::exclusive_scan_user_into`].
///
/// # Errors
/// As [`Workspace::inclusive_scan_user_into`].
pub fn exclusive_scan_user_into<In, A, Out, I, O>(
    input: &I,
    output: &mut O,
    init: A,
    op: &UserScanOp<In, A, Out>,
) -> Result<()>
where
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType,
    I: DevicePtr<In>,
    O: DevicePtrMut<Out>,
{
    Workspace::new(input.stream()).exclusive_scan_user_into(input, output, init, op)
}
