//! Device-wide reductions: the total of a built-in or user operator, and the index of the least or
//! greatest item. Each is one launch that reads its input once and writes one value, sized on the host
//! or on the device ([`Workspace::with_count`]) and capturable in a CUDA graph.
//!
//! - Built-in operators and arg_min / arg_max need no order between tiles: a fixed number of blocks
//!   (at most `plan::MAX_SHARES`, set by the item count alone) each fold a share of the tiles, and the
//!   last block to finish folds the shares (`cuda/classic/reduce.cuh`). No look-back, and float sums
//!   that are the same bits on every run and every GPU.
//! - User operators need not commute: they run the scan agents in reduce mode (`ScanParams::reduce`),
//!   every tile publishing its aggregate and resolving its prefix as a scan's does, and the tile that
//!   holds the last item writing the total. They keep the scans' two engines and their run-to-run
//!   identical float results under [`Workspace::set_deterministic`].
use crate::element::Element;
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::launch::{FINISHED_WORD, PARTIALS_WORD, ReduceParams, ScanParams, Workspace, check_room, same_context};
use crate::op::ScanOp;
use crate::plan::{Buffers, Elem, Primitive};
use crate::rtc::{DeviceType, UserScanOp};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits};
use std::sync::Arc;

/// An item and its index: what [`Workspace::arg_min_into`] and [`Workspace::arg_max_into`] write. An
/// empty input gives `index == u64::MAX` (and an unspecified value).
///
/// The layout is the kernels' (`ArgTotal` in `cuda/core/arg_policy.cuh`): the index, then the item,
/// padded to 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ArgItem<T> {
    /// The item's index in the input, or `u64::MAX` for an empty input.
    pub index: u64,
    /// The item.
    pub value: T,
}

impl<T: Element> ArgItem<T> {
    /// `(index, value)`, or `None` for the result of an empty input.
    ///
    /// # Example
    /// ```
    /// use lookback::ArgItem;
    /// assert_eq!(ArgItem { index: 2, value: 7i32 }.get(), Some((2, 7)));
    /// assert_eq!(ArgItem { index: u64::MAX, value: 0i32 }.get(), None);
    /// ```
    pub fn get(self) -> Option<(usize, T)> {
        (self.index != u64::MAX).then_some((self.index as usize, self.value))
    }
}

// SAFETY: a #[repr(C)] struct of a u64 and an element (itself DeviceRepr), the layout the kernels write.
unsafe impl<T: Element> DeviceRepr for ArgItem<T> {}
// SAFETY: all-zero bits are a valid u64 and a valid element (Element: ValidAsZeroBits); padding may hold
// anything.
unsafe impl<T: Element> ValidAsZeroBits for ArgItem<T> {}

impl Workspace {
    /// Reduction: `output[0] = input[0] op … op input[n-1]`; an empty input gives the operator's identity
    /// (see [`host::reduce`](crate::host::reduce)). Writes only `output[0]`. Runs on `input`'s stream and
    /// does not block the host.
    ///
    /// Float sums are grouped by tiles, so they match a sequential sum only within rounding. The grouping
    /// depends on nothing but the item count and the element type, so the result is the same bits on
    /// every run, on every GPU, whatever the input's alignment ([`Workspace::set_deterministic`] is not
    /// needed).
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`] if `output` is empty; [`Error::Unsupported`] for a bitwise operator on
    /// floats; [`Error::ContextMismatch`], [`Error::KernelsNotBuilt`], [`Error::Driver`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{ScanOp, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[3i64, -1, 4, 1, 5])?;
    /// let mut total = stream.alloc_zeros::<i64>(1)?;
    /// ws.reduce_into(&input, &mut total, ScanOp::Sum)?;
    /// assert_eq!(stream.clone_dtoh(&total)?, [12]);
    /// ws.reduce_into(&input, &mut total, ScanOp::Min)?;
    /// assert_eq!(stream.clone_dtoh(&total)?, [-1]);
    /// # Ok(()) }
    /// ```
    pub fn reduce_into<T, I, O>(&mut self, input: &I, output: &mut O, op: ScanOp) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<T>,
    {
        op.check(T::DTYPE)?;
        self.reduce_raw(input, output, Primitive::Reduce { op, ty: Elem::of::<T>() })
    }

    /// The index and value of the least item: `output[0] = ArgItem { index, value }`. Ties, -0.0 against
    /// 0.0 included, go to the first; NaNs are ignored unless every item is NaN (then the first NaN); an
    /// empty input gives `index == u64::MAX`. f16 and bf16 compare as their f32 values. Writes only
    /// `output[0]`; runs on `input`'s stream and does not block the host. The result does not depend on
    /// timing.
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`] if `output` is empty; [`Error::ContextMismatch`],
    /// [`Error::KernelsNotBuilt`], [`Error::Driver`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{ArgItem, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[2.5f32, f32::NAN, -1.0, 7.0, -1.0])?;
    /// let mut out = stream.alloc_zeros::<ArgItem<f32>>(1)?;
    /// ws.arg_min_into(&input, &mut out)?;
    /// assert_eq!(stream.clone_dtoh(&out)?[0].get(), Some((2, -1.0)));
    /// ws.arg_max_into(&input, &mut out)?;
    /// assert_eq!(stream.clone_dtoh(&out)?[0].get(), Some((3, 7.0)));
    /// # Ok(()) }
    /// ```
    pub fn arg_min_into<T, I, O>(&mut self, input: &I, output: &mut O) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<ArgItem<T>>,
    {
        self.arg_into(input, output, false)
    }

    /// The index and value of the greatest item; otherwise as [`Workspace::arg_min_into`].
    ///
    /// # Errors
    /// As [`Workspace::arg_min_into`].
    pub fn arg_max_into<T, I, O>(&mut self, input: &I, output: &mut O) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<ArgItem<T>>,
    {
        self.arg_into(input, output, true)
    }

    fn arg_into<T, I, O>(&mut self, input: &I, output: &mut O, max: bool) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        O: DevicePtrMut<ArgItem<T>>,
    {
        self.reduce_raw(input, output, Primitive::ArgReduce { max, ty: Elem::of::<T>() })
    }

    /// Reduction with a user operator: `output[0] = store(load(input[0]) ⊕ … ⊕ load(input[n-1]))`, and
    /// `store(identity)` for an empty input. The operator need not commute: items are combined in order
    /// (grouped by tiles). Runs on `input`'s stream and does not block the host; the first call with an
    /// operator compiles it (or finds it in the caches), as [`Workspace::inclusive_scan_user_into`] does,
    /// and the reduction shares those kernels.
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`] if `output` is empty (nothing compiled or written);
    /// [`Error::ContextMismatch`]; the errors of [`UserScanOp::compile`]; [`Error::KernelsNotBuilt`],
    /// [`Error::Driver`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::UserScanOp};
    /// // The sum of squares of f32 readings, in f64.
    /// // SAFETY: pure expressions.
    /// let op = unsafe {
    ///     UserScanOp::new("a + b", "0.0", |a: f64, b: f64| a + b, 0.0)?
    ///         .with_load("(double)x * x", |x: f32| f64::from(x) * f64::from(x))?
    /// };
    /// let input = stream.clone_htod(&[1.0f32, 2.0, 3.0])?;
    /// let mut total = stream.alloc_zeros::<f64>(1)?;
    /// Workspace::new(&stream).reduce_user_into(&input, &mut total, &op)?;
    /// assert_eq!(stream.clone_dtoh(&total)?, [14.0]);
    /// # Ok(()) }
    /// ```
    pub fn reduce_user_into<In, A, Out, I, O>(
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
        check_room("output", 1, output.len())?;
        same_context(input.stream(), output.stream())?;
        op.code.check_sizes()?;
        let stream = input.stream().clone();
        self.enter(&stream)?;
        let (kernels, _) = crate::rtc::scan_kernels(stream.context(), &op.code)?;
        let primitive = Primitive::UserReduce {
            kernels,
            input_bytes: size_of::<In>(),
            output_bytes: size_of::<Out>(),
            acc_bytes: size_of::<A>(),
        };
        self.reduce_raw(input, output, primitive)
    }

    /// The reduction launch of `primitive`. An empty input still launches one block, which writes the
    /// identity: the result is written on the stream, as for any other size, and a call sized on the
    /// device behaves the same way.
    fn reduce_raw<In, R, I, O>(&mut self, input: &I, output: &mut O, primitive: Primitive) -> Result<()>
    where
        I: DevicePtr<In>,
        O: DevicePtrMut<R>,
    {
        check_room("output", 1, output.len())?;
        let n = input.len();
        let stream: Arc<CudaStream> = input.stream().clone();
        same_context(&stream, output.stream())?;
        self.enter(&stream)?;
        let (src, _read) = input.device_ptr(&stream);
        let (dst, _write) = output.device_ptr_mut(&stream);
        // Planned for at least one item, so that an empty input has its one block.
        let launch =
            self.plan_launch(&stream, primitive, n.max(1), Buffers { input: src, output: dst, ..Buffers::default() })?;
        if let Primitive::UserReduce { .. } = primitive {
            return self.launch(&stream, launch, |lb, _| ScanParams {
                input: src,
                output: dst,
                n: n as u64,
                seed: [0; 4],
                exclusive: 0,
                reduce: 1,
                lb,
            });
        }
        self.launch(&stream, launch, |lb, _| ReduceParams {
            input: src,
            output: dst,
            partials: lb.header + 8 * PARTIALS_WORD as u64,
            finished: lb.header + 8 * FINISHED_WORD as u64,
            items: lb.items,
            n: n as u64,
        })
    }
}

/// The total `input[0] op … op input[n-1]` (the operator's identity for an empty input), returned to the
/// host: allocates a one-item buffer and a look-back workspace, and waits for the result. Use
/// [`Workspace::reduce_into`] to keep the total on the device.
///
/// # Errors
/// As [`Workspace::reduce_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::ScanOp;
/// let input = stream.clone_htod(&[0b0110u8, 0b0011, 0b1000])?;
/// assert_eq!(lookback::reduce(&input, ScanOp::BitOr)?, 0b1111);
/// assert_eq!(lookback::reduce(&input, ScanOp::Sum)?, 17);
/// # Ok(()) }
/// ```
pub fn reduce<T: Element, I: DevicePtr<T>>(input: &I, op: ScanOp) -> Result<T> {
    let stream = input.stream().clone();
    op.check(T::DTYPE)?;
    let mut out = stream.alloc_zeros::<T>(1)?;
    Workspace::new(&stream).reduce_into(input, &mut out, op)?;
    Ok(stream.clone_dtoh(&out)?[0])
}

/// The index and value of the least item, `None` for an empty input (ties and NaNs as in
/// [`Workspace::arg_min_into`]), returned to the host.
///
/// # Errors
/// As [`Workspace::arg_min_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// let input = stream.clone_htod(&[4u16, 1, 9, 1])?;
/// assert_eq!(lookback::arg_min(&input)?, Some((1, 1)));
/// assert_eq!(lookback::arg_max(&input)?, Some((2, 9)));
/// # Ok(()) }
/// ```
pub fn arg_min<T: Element, I: DevicePtr<T>>(input: &I) -> Result<Option<(usize, T)>> {
    arg(input, false)
}

/// The index and value of the greatest item, `None` for an empty input, returned to the host.
///
/// # Errors
/// As [`Workspace::arg_min_into`].
pub fn arg_max<T: Element, I: DevicePtr<T>>(input: &I) -> Result<Option<(usize, T)>> {
    arg(input, true)
}

fn arg<T: Element, I: DevicePtr<T>>(input: &I, max: bool) -> Result<Option<(usize, T)>> {
    let stream = input.stream().clone();
    let mut out = stream.alloc_zeros::<ArgItem<T>>(1)?;
    Workspace::new(&stream).arg_into(input, &mut out, max)?;
    Ok(stream.clone_dtoh(&out)?[0].get())
}

/// The total of a user operator, returned to the host. See [`Workspace::reduce_user_into`].
///
/// # Errors
/// As [`Workspace::reduce_user_into`].
pub fn reduce_user<In, A, Out, I>(input: &I, op: &UserScanOp<In, A, Out>) -> Result<Out>
where
    In: DeviceType,
    A: DeviceType,
    Out: DeviceType,
    I: DevicePtr<In>,
{
    let stream = input.stream().clone();
    op.code.check_sizes()?;
    // SAFETY: the reduction writes the one item (an empty input's too) before anything reads it.
    let mut out = unsafe { stream.alloc::<Out>(1) }?;
    Workspace::new(&stream).reduce_user_into(input, &mut out, op)?;
    Ok(stream.clone_dtoh(&out)?[0])
}
