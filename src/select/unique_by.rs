//! unique by a user equality ([`UserEq`]): the `Workspace` methods and the one-shot function. The kernels
//! are the selection agents of the unsigned type of the key's size, compiled at run time with the user's
//! equality deciding where runs start (`cuda/rtc/unique.cuh`), launched as the built-in unique of that type.
use super::one_shot::one_shot;
use super::{Mode, SelectJob, Selected, Source};
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::launch::Workspace;
use crate::plan::Elem;
use crate::rtc::{self, DeviceType, UserEq};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

impl Workspace {
    /// Copies the first item of every run to the front of `output`, in order, a run being a maximal
    /// stretch of items each of which `eq` says continues the one before it (`eq(a, b)`, `a` the earlier);
    /// the count goes to `num_selected[0]` on the device: nothing blocks the host. `output` must hold
    /// `input.len()` items; items past the count are left alone. In place:
    /// [`unique_by_in_place`](Self::unique_by_in_place).
    ///
    /// Keys are any [`DeviceType`] of 1, 2, 4 or 8 bytes, your `#[repr(C)]` structs included. Runs on the
    /// selection agents compiled at run time for the equality (the first call compiles them or finds them
    /// in the caches; [`UserEq::compile`] does that ahead, and must be called before capturing the call
    /// into a CUDA graph), on the engine the workspace's [`Engine`](crate::Engine) picks, as the built-in
    /// unique does.
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`] (for `output` or an empty `num_selected`), [`Error::ContextMismatch`],
    /// the errors of [`UserEq::compile`], [`Error::KernelsNotBuilt`], [`Error::Driver`]. On error nothing
    /// is written. An empty input writes a count of 0 and compiles nothing.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::UserEq};
    /// // Readings that moved less than 0.5 from the one before are one run (not transitive).
    /// // SAFETY: a pure expression.
    /// let near = unsafe { UserEq::new("fabsf(a - b) < 0.5f", |a: f32, b: f32| (a - b).abs() < 0.5)? };
    /// let input = stream.clone_htod(&[1.0f32, 1.25, 1.5, 1.75, 5.0, 5.1])?;
    /// let mut output = stream.alloc_zeros::<f32>(6)?;
    /// let mut count = stream.alloc_zeros::<u64>(1)?;
    /// Workspace::new(&stream).unique_by_into(&input, &mut output, &mut count, &near)?;
    /// assert_eq!(stream.clone_dtoh(&count)?, [2]);
    /// assert_eq!(stream.clone_dtoh(&output.slice(..2))?, [1.0, 5.0]);
    /// # Ok(()) }
    /// ```
    pub fn unique_by_into<K, I, O, N>(
        &mut self,
        input: &I,
        output: &mut O,
        num_selected: &mut N,
        eq: &UserEq<K>,
    ) -> Result<()>
    where
        K: DeviceType,
        I: DevicePtr<K>,
        O: DevicePtrMut<K>,
        N: DevicePtrMut<u64>,
    {
        self.compact_call(input, output, num_selected, |ws, stream, src, dst, count, n| {
            ws.unique_by_raw(stream, src, dst, count, n, eq)
        })
    }

    /// [`unique_by_into`](Self::unique_by_into) in place: drops the items of `buf` that continue a run and
    /// returns how many remain at its front (blocks until the count is known).
    ///
    /// # Errors
    /// As [`unique_by_into`](Self::unique_by_into); [`Error::NotCapturable`] inside a graph capture.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Workspace, rtc::UserEq};
    /// // Same hundreds.
    /// // SAFETY: a pure expression.
    /// let eq = unsafe { UserEq::new("a / 100 == b / 100", |a: u32, b: u32| a / 100 == b / 100)? };
    /// let mut buf = stream.clone_htod(&[101u32, 150, 199, 200, 7])?;
    /// let kept = Workspace::new(&stream).unique_by_in_place(&mut buf, &eq)?;
    /// assert_eq!(stream.clone_dtoh(&buf.slice(..kept))?, [101, 200, 7]);
    /// # Ok(()) }
    /// ```
    pub fn unique_by_in_place<K: DeviceType, B: DevicePtrMut<K>>(
        &mut self,
        buf: &mut B,
        eq: &UserEq<K>,
    ) -> Result<usize> {
        let stream = buf.stream().clone();
        self.count_on_host(&stream, |ws, count| {
            let n = buf.len();
            let (ptr, _write) = buf.device_ptr_mut(&stream);
            let (c, _c) = count.device_ptr_mut(&stream);
            ws.unique_by_raw(&stream, ptr, ptr, c, n, eq)
        })
    }

    /// Compiles (or finds) the unique kernels for `eq`, then launches them as the built-in unique of the
    /// key's size. An empty input compiles nothing.
    fn unique_by_raw<K: DeviceType>(
        &mut self,
        stream: &Arc<CudaStream>,
        src: u64,
        dst: u64,
        num_selected: u64,
        n: usize,
        eq: &UserEq<K>,
    ) -> Result<()> {
        let ty = Elem::bits(size_of::<K>()).expect("UserEq's constructors admit keys of 1, 2, 4 or 8 bytes");
        let source = if n == 0 {
            Source::Unique
        } else {
            Source::UserUnique(rtc::unique_kernels(stream.context(), &eq.code)?.0)
        };
        let job = SelectJob { input: src, output: dst, rejected: 0, num_selected, n, source, mode: Mode::Compact };
        self.select_raw_as(stream, job, ty)
    }
}

/// [`Workspace::unique_by_into`] into a new buffer (blocks until the count is known): the first item of
/// every run by `eq`.
///
/// # Errors
/// As [`Workspace::unique_by_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() || !lookback::rtc::nvrtc_available() { return Ok(()) }
/// use lookback::rtc::{DeviceType, UserEq};
/// /// A point; runs by its x alone.
/// #[repr(C)]
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// struct Pt { x: i16, y: i16 }
/// // SAFETY: #[repr(C)], no padding, every bit pattern valid, the same fields in CUDA.
/// unsafe impl lookback::cudarc::driver::DeviceRepr for Pt {}
/// unsafe impl DeviceType for Pt {
///     const CUDA_NAME: &'static str = "Pt";
///     const CUDA_DECL: &'static str = "struct Pt { int16_t x; int16_t y; };";
/// }
/// // SAFETY: a pure expression.
/// let same_x = unsafe { UserEq::new("a.x == b.x", |a: Pt, b: Pt| a.x == b.x)? };
/// let pts = [Pt { x: 1, y: 5 }, Pt { x: 1, y: 6 }, Pt { x: 2, y: 0 }];
/// let input = stream.clone_htod(&pts)?;
/// assert_eq!(lookback::unique_by(&input, &same_x)?.to_vec()?, [pts[0], pts[2]]);
/// # Ok(()) }
/// ```
pub fn unique_by<K: DeviceType, I: DevicePtr<K>>(input: &I, eq: &UserEq<K>) -> Result<Selected<K>> {
    one_shot(input.stream(), input.len(), |ws, out, count| ws.unique_by_into(input, out, count, eq))
}
