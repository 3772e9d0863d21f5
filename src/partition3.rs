//! Three-way partition: the items for which a first predicate holds, then the others for which a second
//! one holds, then the rest — into three buffers, each part in input order, in one pass (see
//! `cuda/classic/partition3.cuh`). CUB's `DevicePartition::If` with two predicates, with the third part in
//! order rather than reversed.
use crate::element::Element;
use crate::error::Result;
use crate::launch::{Partition3Params, Span, Workspace, check_disjoint, check_room, same_context, zero_counts};
use crate::plan::{Buffers, Elem, Primitive};
use crate::pred::predicate::DevicePred;
use crate::pred::{PredProgram, Predicate};
use crate::rtc;
use cudarc::driver::{CudaSlice, CudaView, DevicePtr, DevicePtrMut};

/// The result of [`partition_three_way`]: three buffers of the input's length, the parts at their fronts.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::Pred;
/// let input = stream.clone_htod(&[-5i32, 3, 120, -1, 7, 300])?;
/// let parts = lookback::partition_three_way(&input, &Pred::lt(0), &Pred::le(100))?;
/// assert_eq!(parts.counts(), [2, 2, 2]);
/// assert_eq!(stream.clone_dtoh(&parts.first())?, [-5, -1]);
/// assert_eq!(stream.clone_dtoh(&parts.second())?, [3, 7]);
/// assert_eq!(stream.clone_dtoh(&parts.rest())?, [120, 300]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ThreeWay<T> {
    first: CudaSlice<T>,
    second: CudaSlice<T>,
    rest: CudaSlice<T>,
    counts: [usize; 3],
}

impl<T> ThreeWay<T> {
    /// Sizes of the three parts (they add up to the input's length).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Pred;
    /// let input = stream.clone_htod(&[1u8, 2, 3, 4, 5])?;
    /// let parts = lookback::partition_three_way(&input, &Pred::eq(1), &Pred::ge(4))?;
    /// assert_eq!(parts.counts(), [1, 2, 2]);
    /// # Ok(()) }
    /// ```
    pub fn counts(&self) -> [usize; 3] {
        self.counts
    }
    /// The items for which the first predicate holds.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Pred;
    /// let input = stream.clone_htod(&[3i64, -4, 8, -1])?;
    /// let parts = lookback::partition_three_way(&input, &Pred::lt(0), &Pred::gt(5))?;
    /// assert_eq!(stream.clone_dtoh(&parts.first())?, [-4, -1]);
    /// # Ok(()) }
    /// ```
    pub fn first(&self) -> CudaView<'_, T> {
        self.first.slice(..self.counts[0])
    }
    /// The items for which only the second predicate holds (an item for which both hold is in the first
    /// part).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Pred;
    /// let input = stream.clone_htod(&[3i64, -4, 8, -1])?;
    /// let parts = lookback::partition_three_way(&input, &Pred::lt(0), &Pred::lt(5))?;
    /// assert_eq!(stream.clone_dtoh(&parts.second())?, [3]);
    /// # Ok(()) }
    /// ```
    pub fn second(&self) -> CudaView<'_, T> {
        self.second.slice(..self.counts[1])
    }
    /// The items for which neither holds.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Pred;
    /// let input = stream.clone_htod(&[3i64, -4, 8, -1])?;
    /// let parts = lookback::partition_three_way(&input, &Pred::lt(0), &Pred::lt(5))?;
    /// assert_eq!(stream.clone_dtoh(&parts.rest())?, [8]);
    /// # Ok(()) }
    /// ```
    pub fn rest(&self) -> CudaView<'_, T> {
        self.rest.slice(..self.counts[2])
    }
    /// The three whole buffers and the sizes of the parts at their fronts.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Pred;
    /// let input = stream.clone_htod(&[0.5f32, -2.0, 9.0])?;
    /// let (first, _second, rest, counts) = lookback::partition_three_way(&input, &Pred::lt(0.0), &Pred::gt(5.0))?.into_parts();
    /// assert_eq!((first.len(), counts), (3, [1, 1, 1]));
    /// assert_eq!(stream.clone_dtoh(&rest.slice(..1))?, [0.5]);
    /// # Ok(()) }
    /// ```
    pub fn into_parts(self) -> (CudaSlice<T>, CudaSlice<T>, CudaSlice<T>, [usize; 3]) {
        (self.first, self.second, self.rest, self.counts)
    }
}

impl Workspace {
    /// Three-way partition: items for which `first` holds into `out_first`, the others for which `second`
    /// holds into `out_second`, the rest into `out_rest` — each part in input order, in one pass. The sizes
    /// of the first two parts go to `num_selected[0]` and `num_selected[1]` on the device (the third is
    /// `n` minus both). Every output must hold `input.len()` items (any part may receive them all), and no
    /// output may overlap the input or another output.
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`](crate::Error::OutputTooSmall) (an output, or `num_selected` shorter than
    /// 2), [`Error::Overlap`](crate::Error::Overlap), [`Error::PredicateTooComplex`](crate::Error::PredicateTooComplex),
    /// [`Error::ContextMismatch`](crate::Error::ContextMismatch), [`Error::KernelsNotBuilt`](crate::Error::KernelsNotBuilt),
    /// [`Error::Driver`](crate::Error::Driver). On error nothing is written.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::{Pred, Workspace};
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[12u16, 400, 7, 90, 3000])?;
    /// let (mut small, mut medium, mut large) =
    ///     (stream.alloc_zeros::<u16>(5)?, stream.alloc_zeros::<u16>(5)?, stream.alloc_zeros::<u16>(5)?);
    /// let mut counts = stream.alloc_zeros::<u64>(2)?;
    /// ws.partition_three_way_into(&input, &Pred::lt(100), &Pred::lt(1000), &mut small, &mut medium, &mut large, &mut counts)?;
    /// assert_eq!(stream.clone_dtoh(&counts)?, [3, 1]);
    /// assert_eq!(stream.clone_dtoh(&small.slice(..3))?, [12, 7, 90]);
    /// assert_eq!(stream.clone_dtoh(&medium.slice(..1))?, [400]);
    /// assert_eq!(stream.clone_dtoh(&large.slice(..1))?, [3000]);
    /// # Ok(()) }
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn partition_three_way_into<T, I, A, B, C, N>(
        &mut self,
        input: &I,
        first: &impl Predicate<T>,
        second: &impl Predicate<T>,
        out_first: &mut A,
        out_second: &mut B,
        out_rest: &mut C,
        num_selected: &mut N,
    ) -> Result<()>
    where
        T: Element,
        I: DevicePtr<T>,
        A: DevicePtrMut<T>,
        B: DevicePtrMut<T>,
        C: DevicePtrMut<T>,
        N: DevicePtrMut<u64>,
    {
        let (d1, d2) = (first.device()?, second.device()?);
        let n = input.len();
        check_room("out_first", n, out_first.len())?;
        check_room("out_second", n, out_second.len())?;
        check_room("out_rest", n, out_rest.len())?;
        check_room("num_selected", 2, num_selected.len())?;
        let stream = input.stream().clone();
        for s in [out_first.stream(), out_second.stream(), out_rest.stream(), num_selected.stream()] {
            same_context(&stream, s)?;
        }
        let lens = (out_first.len(), out_second.len(), out_rest.len());
        self.enter(&stream)?;
        let (src, _read) = input.device_ptr(&stream);
        let (a, _a) = out_first.device_ptr_mut(&stream);
        let (b, _b) = out_second.device_ptr_mut(&stream);
        let (c, _c) = out_rest.device_ptr_mut(&stream);
        let (count, _count) = num_selected.device_ptr_mut(&stream);
        check_disjoint(
            &[Span::new::<T>("input", src, n)],
            &[
                Span::new::<T>("out_first", a, lens.0),
                Span::new::<T>("out_second", b, lens.1),
                Span::new::<T>("out_rest", c, lens.2),
                Span::new::<u64>("num_selected", count, 2),
            ],
        )?;
        if n == 0 {
            // Invariant 6: an empty input writes counts of 0 and launches no kernel.
            return zero_counts(&stream, count, 2);
        }
        // Built-in predicates travel as programs; user code (either or both) as a kernel of its own.
        let program = |d: &DevicePred| match d {
            DevicePred::Program(p) => *p,
            DevicePred::Code(_) => PredProgram::default(),
        };
        let code = |d| match d {
            DevicePred::Code(c) => Some(c),
            DevicePred::Program(_) => None,
        };
        let (p1, p2) = (program(&d1), program(&d2));
        let user = match (code(d1), code(d2)) {
            (None, None) => None,
            (c1, c2) => Some(rtc::partition3_kernel(stream.context(), T::DTYPE, c1, c2)?),
        };
        let primitive = Primitive::Partition3 { ty: Elem::of::<T>() };
        let launch = self.plan_launch_with(&stream, primitive, n, Buffers::default(), |l| user.unwrap_or(l.kernel))?;
        self.launch(&stream, launch, |lb, _| Partition3Params {
            input: src,
            out_first: a,
            out_second: b,
            out_rest: c,
            num_selected: count,
            n: n as u64,
            first: p1,
            second: p2,
            lb,
        })
    }
}

/// [`Workspace::partition_three_way_into`] into three new buffers (blocks until the sizes are known).
///
/// # Errors
/// As [`Workspace::partition_three_way_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::Pred;
/// // Readings: invalid (NaN), suspicious (above 50), fine.
/// let input = stream.clone_htod(&[21.0f64, f64::NAN, 75.0, 19.5])?;
/// let parts = lookback::partition_three_way(&input, &Pred::is_nan(), &Pred::gt(50.0))?;
/// assert_eq!(parts.counts(), [1, 1, 2]);
/// assert_eq!(stream.clone_dtoh(&parts.rest())?, [21.0, 19.5]);
/// # Ok(()) }
/// ```
pub fn partition_three_way<T: Element, I: DevicePtr<T>>(
    input: &I,
    first: &impl Predicate<T>,
    second: &impl Predicate<T>,
) -> Result<ThreeWay<T>> {
    let stream = input.stream();
    let n = input.len();
    let mut ws = Workspace::new(stream);
    // SAFETY: only the parts' items are ever exposed (ThreeWay::first/second/rest), and the kernel writes
    // all of them.
    let (mut a, mut b, mut c) = unsafe { (stream.alloc::<T>(n)?, stream.alloc::<T>(n)?, stream.alloc::<T>(n)?) };
    let mut counts = stream.alloc_zeros::<u64>(2)?;
    ws.partition_three_way_into(input, first, second, &mut a, &mut b, &mut c, &mut counts)?;
    let got = stream.clone_dtoh(&counts)?;
    let (k1, k2) = (got[0] as usize, got[1] as usize);
    Ok(ThreeWay { first: a, second: b, rest: c, counts: [k1, k2, n.saturating_sub(k1 + k2)] })
}
