//! Device-wide inclusive and exclusive scans.
use crate::element::Element;
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::launch::{
    SCAN_EXCLUSIVE, SCAN_INCLUSIVE, SCAN_INCLUSIVE_SEEDED, ScanParams, Workspace, check_room, same_context,
};
use crate::op::ScanOp;
use crate::plan::{Buffers, Elem, Primitive};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

/// What a scan launch computes: `ScanParams::exclusive` (`SCAN_*` of `cuda/core/params.cuh`) and its seed.
#[derive(Clone, Copy)]
enum Seed<T> {
    /// Inclusive, from the operator's identity.
    None,
    /// Exclusive, from this initial value.
    Exclusive(T),
    /// Inclusive, from this seed.
    Inclusive(T),
}

impl Workspace {
    /// Inclusive scan: `output[i] = input[0] op … op input[i]`. Writes the first `input.len()` items of
    /// `output` and leaves the rest alone. Runs on `input`'s stream and does not block the host.
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`] if `output` is shorter than `input`; [`Error::Unsupported`] for a
    /// bitwise operator on floats; [`Error::ContextMismatch`], [`Error::KernelsNotBuilt`],
    /// [`Error::Driver`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{ScanOp, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[3i32, 1, 4, 1, 5])?;
    /// // Longer than the input: the items past it are left alone.
    /// let mut output = stream.clone_htod(&[-1i32; 7])?;
    /// ws.inclusive_scan_into(&input, &mut output, ScanOp::Sum)?;
    /// assert_eq!(stream.clone_dtoh(&output)?, [3, 4, 8, 9, 14, -1, -1]);
    /// ws.inclusive_scan_into(&input, &mut output, ScanOp::Max)?;
    /// assert_eq!(stream.clone_dtoh(&output)?, [3, 3, 4, 4, 5, -1, -1]);
    /// # Ok(()) }
    /// ```
    pub fn inclusive_scan_into<T, I, O>(&mut self, input: &I, output: &mut O, op: ScanOp) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<T>,
    {
        self.scan_into(input, output, Seed::None, op)
    }

    /// Exclusive scan seeded with `init`: `output[0] = init`, `output[i] = init op input[0] op … op
    /// input[i-1]`. Otherwise as [`Workspace::inclusive_scan_into`].
    ///
    /// # Errors
    /// As [`Workspace::inclusive_scan_into`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{ScanOp, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let sizes = stream.clone_htod(&[2u64, 0, 3, 5])?;
    /// let mut offsets = stream.alloc_zeros::<u64>(4)?;
    /// ws.exclusive_scan_into(&sizes, &mut offsets, 100, ScanOp::Sum)?;
    /// assert_eq!(stream.clone_dtoh(&offsets)?, [100, 102, 102, 105]);
    /// # Ok(()) }
    /// ```
    pub fn exclusive_scan_into<T, I, O>(&mut self, input: &I, output: &mut O, init: T, op: ScanOp) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<T>,
    {
        self.scan_into(input, output, Seed::Exclusive(init), op)
    }

    /// Inclusive scan seeded with `seed`: `output[i] = seed op input[0] op … op input[i]`, in the same
    /// one pass as [`Workspace::inclusive_scan_into`]. This is how a scan continues one that covered the
    /// items before `input` (the seed is their total): the sharded scans of [`crate::shard`] run it on
    /// every shard after the first.
    ///
    /// # Errors
    /// As [`Workspace::inclusive_scan_into`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{ScanOp, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// // The second half of [3, 1, 4, 1, 5, 9], continuing from the first half's total, 8.
    /// let input = stream.clone_htod(&[1i32, 5, 9])?;
    /// let mut output = stream.clone_htod(&[-1i32; 3])?;
    /// ws.inclusive_scan_seeded_into(&input, &mut output, 8, ScanOp::Sum)?;
    /// assert_eq!(stream.clone_dtoh(&output)?, [9, 14, 23]);
    /// # Ok(()) }
    /// ```
    pub fn inclusive_scan_seeded_into<T, I, O>(&mut self, input: &I, output: &mut O, seed: T, op: ScanOp) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<T>,
    {
        self.scan_into(input, output, Seed::Inclusive(seed), op)
    }

    /// Inclusive scan of `buf` in place.
    ///
    /// # Errors
    /// As [`Workspace::inclusive_scan_into`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{ScanOp, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let mut bits = stream.clone_htod(&[0b0001u8, 0b0010, 0b0000, 0b1000])?;
    /// ws.inclusive_scan_in_place(&mut bits, ScanOp::BitOr)?;
    /// assert_eq!(stream.clone_dtoh(&bits)?, [0b0001, 0b0011, 0b0011, 0b1011]);
    /// # Ok(()) }
    /// ```
    pub fn inclusive_scan_in_place<T: Element, B: DevicePtrMut<T>>(&mut self, buf: &mut B, op: ScanOp) -> Result<()> {
        self.scan_in_place(buf, Seed::None, op)
    }

    /// Exclusive scan of `buf` in place, seeded with `init`.
    ///
    /// # Errors
    /// As [`Workspace::inclusive_scan_into`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::half::f16;
    /// use lookback::{ScanOp, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// // f16 is accumulated in f32 and rounded once per output item.
    /// let mut buf = stream.clone_htod(&[1.0f32, 2.0, 0.5, 4.0].map(f16::from_f32))?;
    /// ws.exclusive_scan_in_place(&mut buf, f16::from_f32(10.0), ScanOp::Sum)?;
    /// assert_eq!(stream.clone_dtoh(&buf)?, [10.0f32, 11.0, 13.0, 13.5].map(f16::from_f32));
    /// # Ok(()) }
    /// ```
    pub fn exclusive_scan_in_place<T: Element, B: DevicePtrMut<T>>(
        &mut self,
        buf: &mut B,
        init: T,
        op: ScanOp,
    ) -> Result<()> {
        self.scan_in_place(buf, Seed::Exclusive(init), op)
    }

    fn scan_into<T: Element, I: DevicePtr<T>, O: DevicePtrMut<T>>(
        &mut self,
        input: &I,
        output: &mut O,
        seed: Seed<T>,
        op: ScanOp,
    ) -> Result<()> {
        let n = input.len();
        check_room("output", n, output.len())?;
        let stream = input.stream().clone();
        same_context(&stream, output.stream())?;
        op.check(T::DTYPE)?;
        if n == 0 {
            return Ok(());
        }
        self.enter(&stream)?;
        let (src, _read) = input.device_ptr(&stream);
        let (dst, _write) = output.device_ptr_mut(&stream);
        self.scan_raw::<T>(&stream, src, dst, n, seed, op)
    }

    fn scan_in_place<T: Element, B: DevicePtrMut<T>>(&mut self, buf: &mut B, seed: Seed<T>, op: ScanOp) -> Result<()> {
        let n = buf.len();
        op.check(T::DTYPE)?;
        if n == 0 {
            return Ok(());
        }
        let stream = buf.stream().clone();
        self.enter(&stream)?;
        let (ptr, _write) = buf.device_ptr_mut(&stream);
        self.scan_raw::<T>(&stream, ptr, ptr, n, seed, op)
    }

    /// The scan launch. `src` and `dst` are valid for `n` items (they may be equal) and stay borrowed
    /// by the caller until this returns.
    fn scan_raw<T: Element>(
        &mut self,
        stream: &Arc<CudaStream>,
        src: u64,
        dst: u64,
        n: usize,
        seed: Seed<T>,
        op: ScanOp,
    ) -> Result<()> {
        let (exclusive, seed) = match seed {
            Seed::None => (SCAN_INCLUSIVE, [0; 4]),
            Seed::Exclusive(init) => (SCAN_EXCLUSIVE, [init.to_bits(), 0, 0, 0]),
            Seed::Inclusive(seed) => (SCAN_INCLUSIVE_SEEDED, [seed.to_bits(), 0, 0, 0]),
        };
        let primitive = Primitive::Scan { op, ty: Elem::of::<T>() };
        let launch =
            self.plan_launch(stream, primitive, n, Buffers { input: src, output: dst, ..Buffers::default() })?;
        self.launch(stream, launch, |lb, _| ScanParams {
            input: src,
            output: dst,
            n: n as u64,
            seed,
            exclusive,
            reduce: 0,
            lb,
        })
    }
}

/// Inclusive scan into a new buffer on `input`'s stream: `out[i] = input[0] op … op input[i]`.
///
/// Allocates the output and a look-back workspace; use a [`Workspace`] for repeated calls.
///
/// # Errors
/// As [`Workspace::inclusive_scan_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::ScanOp;
/// let input = stream.clone_htod(&[3i32, 1, 4, 1, 5])?;
/// let sums = lookback::inclusive_scan(&input, ScanOp::Sum)?;
/// assert_eq!(stream.clone_dtoh(&sums)?, [3, 4, 8, 9, 14]);
/// # Ok(()) }
/// ```
pub fn inclusive_scan<T: Element, I: DevicePtr<T>>(input: &I, op: ScanOp) -> Result<CudaSlice<T>> {
    let stream = input.stream().clone();
    op.check(T::DTYPE)?;
    // SAFETY: the scan writes every one of the `len` items before anything reads them.
    let mut out = unsafe { stream.alloc::<T>(input.len()) }?;
    Workspace::new(&stream).inclusive_scan_into(input, &mut out, op)?;
    Ok(out)
}

/// Exclusive scan into a new buffer: `out[0] = init`, `out[i] = init op input[0] op … op input[i-1]`.
///
/// # Errors
/// As [`Workspace::inclusive_scan_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::ScanOp;
/// let input = stream.clone_htod(&[3u8, 1, 4, 1, 5])?;
/// let offsets = lookback::exclusive_scan(&input, 10, ScanOp::Sum)?;
/// assert_eq!(stream.clone_dtoh(&offsets)?, [10, 13, 14, 18, 19]);
/// # Ok(()) }
/// ```
pub fn exclusive_scan<T: Element, I: DevicePtr<T>>(input: &I, init: T, op: ScanOp) -> Result<CudaSlice<T>> {
    let stream = input.stream().clone();
    op.check(T::DTYPE)?;
    // SAFETY: the scan writes every one of the `len` items before anything reads them.
    let mut out = unsafe { stream.alloc::<T>(input.len()) }?;
    Workspace::new(&stream).exclusive_scan_into(input, &mut out, init, op)?;
    Ok(out)
}

/// Inclusive scan into a caller buffer. See [`Workspace::inclusive_scan_into`].
///
/// # Errors
/// As [`Workspace::inclusive_scan_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::ScanOp;
/// // Integer sums wrap around: 200 + 100 = 44 in u8.
/// let input = stream.clone_htod(&[200u8, 100, 1])?;
/// let mut output = stream.alloc_zeros::<u8>(3)?;
/// lookback::inclusive_scan_into(&input, &mut output, ScanOp::Sum)?;
/// assert_eq!(stream.clone_dtoh(&output)?, [200, 44, 45]);
/// # Ok(()) }
/// ```
pub fn inclusive_scan_into<T: Element, I: DevicePtr<T>, O: DevicePtrMut<T>>(
    input: &I,
    output: &mut O,
    op: ScanOp,
) -> Result<()> {
    Workspace::new(input.stream()).inclusive_scan_into(input, output, op)
}

/// Exclusive scan into a caller buffer. See [`Workspace::exclusive_scan_into`].
///
/// # Errors
/// As [`Workspace::inclusive_scan_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::ScanOp;
/// let input = stream.clone_htod(&[0.5f64, 1.5, 2.0])?;
/// let mut output = stream.alloc_zeros::<f64>(3)?;
/// lookback::exclusive_scan_into(&input, &mut output, 1.0, ScanOp::Sum)?;
/// assert_eq!(stream.clone_dtoh(&output)?, [1.0, 1.5, 3.0]);
/// # Ok(()) }
/// ```
pub fn exclusive_scan_into<T: Element, I: DevicePtr<T>, O: DevicePtrMut<T>>(
    input: &I,
    output: &mut O,
    init: T,
    op: ScanOp,
) -> Result<()> {
    Workspace::new(input.stream()).exclusive_scan_into(input, output, init, op)
}

/// Inclusive scan of `buf` in place.
///
/// # Errors
/// As [`Workspace::inclusive_scan_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::ScanOp;
/// let mut buf = stream.clone_htod(&[5i64, 2, 7, 1])?;
/// lookback::inclusive_scan_in_place(&mut buf, ScanOp::Max)?;
/// assert_eq!(stream.clone_dtoh(&buf)?, [5, 5, 7, 7]);
/// # Ok(()) }
/// ```
pub fn inclusive_scan_in_place<T: Element, B: DevicePtrMut<T>>(buf: &mut B, op: ScanOp) -> Result<()> {
    let stream = buf.stream().clone();
    Workspace::new(&stream).inclusive_scan_in_place(buf, op)
}

/// Exclusive scan of `buf` in place, seeded with `init`.
///
/// # Errors
/// As [`Workspace::inclusive_scan_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::ScanOp;
/// let mut buf = stream.clone_htod(&[3i64, 9, 2, 5])?;
/// lookback::exclusive_scan_in_place(&mut buf, 0, ScanOp::Max)?;
/// assert_eq!(stream.clone_dtoh(&buf)?, [0, 3, 9, 9]);
/// # Ok(()) }
/// ```
pub fn exclusive_scan_in_place<T: Element, B: DevicePtrMut<T>>(buf: &mut B, init: T, op: ScanOp) -> Result<()> {
    let stream = buf.stream().clone();
    Workspace::new(&stream).exclusive_scan_in_place(buf, init, op)
}
