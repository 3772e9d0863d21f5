//! Run-length and run-end encoding, and the non-trivial runs of a sequence: one launch each, no second
//! pass (see `cuda/classic/runs.cuh`).
use crate::element::Element;
use crate::error::Result;
use crate::launch::{Span, Workspace, check_disjoint, check_room, same_context};
use crate::plan::Primitive;
use crate::runs::{KeyedCall, RunLength, Runs, RunsMode, check_length_type};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr};
use std::sync::Arc;

impl Workspace {
    /// One encoding launch: `first`/`second` get (run value, length or end) or (offset, length).
    fn encode_into<T, L, FT, I, F, S, N>(
        &mut self,
        input: &I,
        first: &mut F,
        second: &mut S,
        num_runs: &mut N,
        mode: RunsMode,
    ) -> Result<()>
    where
        T: Element,
        L: RunLength,
        I: DevicePtr<T>,
        F: DevicePtrMut<FT>,
        S: DevicePtrMut<L>,
        N: DevicePtrMut<u64>,
    {
        self.encode_call::<T, L, FT, I, F, S, N>(input, first, second, num_runs, mode, |ws, stream, call| {
            let primitive = Primitive::Encode { mode, key_bytes: size_of::<T>() };
            ws.runs_raw::<T>(stream, call.job(primitive, mode, 0, size_of::<L>() as u32))
        })
    }

    /// The checks and device addresses of an encoding (`first`/`second` as in [`encode_into`](Self::encode_into)),
    /// then `launch` with them while the buffers stay borrowed: shared with the encodings by a user
    /// equality (`runs_by.rs`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn encode_call<T, L, FT, I, F, S, N>(
        &mut self,
        input: &I,
        first: &mut F,
        second: &mut S,
        num_runs: &mut N,
        mode: RunsMode,
        launch: impl FnOnce(&mut Self, &Arc<CudaStream>, KeyedCall) -> Result<()>,
    ) -> Result<()>
    where
        L: RunLength,
        I: DevicePtr<T>,
        F: DevicePtrMut<FT>,
        S: DevicePtrMut<L>,
        N: DevicePtrMut<u64>,
    {
        let n = input.len();
        let names = if mode == RunsMode::NonTrivial { ("offsets", "lengths") } else { ("values", names_second(mode)) };
        check_length_type::<L>(n)?;
        check_room(names.0, n, first.len())?;
        check_room(names.1, n, second.len())?;
        check_room("num_runs", 1, num_runs.len())?;
        let stream: Arc<CudaStream> = input.stream().clone();
        same_context(&stream, first.stream())?;
        same_context(&stream, second.stream())?;
        same_context(&stream, num_runs.stream())?;
        self.enter(&stream)?;
        let (src, _read) = input.device_ptr(&stream);
        let (first_len, second_len) = (first.len(), second.len());
        let (a, _a) = first.device_ptr_mut(&stream);
        let (b, _b) = second.device_ptr_mut(&stream);
        let (count, _count) = num_runs.device_ptr_mut(&stream);
        check_disjoint(
            &[Span::new::<T>("input", src, n)],
            &[
                Span::new::<FT>(names.0, a, first_len),
                Span::new::<L>(names.1, b, second_len),
                Span::new::<u64>("num_runs", count, 1),
            ],
        )?;
        launch(self, &stream, KeyedCall { keys: src, values: 0, out_keys: a, out_values: b, num_runs: count, n })
    }

    /// Run-length encoding: for each run of equal adjacent items (IEEE `==` for floats), its value into
    /// `values` and its length into `lengths`, in order, and the number of runs into `num_runs[0]` — on
    /// the device: nothing blocks the host. Both outputs must hold `input.len()` items (every item may be
    /// a run); items past the count are left alone.
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`](crate::Error::OutputTooSmall), [`Error::Overlap`](crate::Error::Overlap)
    /// if an output overlaps the input or another output, [`Error::Unsupported`](crate::Error::Unsupported)
    /// for `u32` lengths of an input of 2^32 items or more, [`Error::ContextMismatch`](crate::Error::ContextMismatch),
    /// [`Error::KernelsNotBuilt`](crate::Error::KernelsNotBuilt), [`Error::Driver`](crate::Error::Driver).
    /// On error nothing is written.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Workspace;
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[1.5f32, 1.5, -0.0, 0.0, f32::NAN, f32::NAN])?;
    /// let mut values = stream.alloc_zeros::<f32>(6)?;
    /// let mut lengths = stream.alloc_zeros::<u64>(6)?;
    /// let mut num_runs = stream.alloc_zeros::<u64>(1)?;
    /// ws.run_length_encode_into(&input, &mut values, &mut lengths, &mut num_runs)?;
    /// // -0.0 == 0.0, and each NaN is a run of its own.
    /// assert_eq!(stream.clone_dtoh(&num_runs)?, [4]);
    /// assert_eq!(stream.clone_dtoh(&lengths.slice(..4))?, [2, 2, 1, 1]);
    /// # Ok(()) }
    /// ```
    pub fn run_length_encode_into<T, L, I, O, C, N>(
        &mut self,
        input: &I,
        values: &mut O,
        lengths: &mut C,
        num_runs: &mut N,
    ) -> Result<()>
    where
        T: Element,
        L: RunLength,
        I: DevicePtr<T>,
        O: DevicePtrMut<T>,
        C: DevicePtrMut<L>,
        N: DevicePtrMut<u64>,
    {
        self.encode_into::<T, L, T, _, _, _, _>(input, values, lengths, num_runs, RunsMode::Encode)
    }

    /// Run-end encoding (Apache Arrow's): like [`run_length_encode_into`](Self::run_length_encode_into)
    /// but each run's *end* — the index one past its last item — instead of its length. The last end is
    /// `input.len()`.
    ///
    /// # Errors
    /// As [`run_length_encode_into`](Self::run_length_encode_into).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Workspace;
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[3i16, 3, 3, 8, 3])?;
    /// let mut values = stream.alloc_zeros::<i16>(5)?;
    /// let mut ends = stream.alloc_zeros::<u32>(5)?;
    /// let mut num_runs = stream.alloc_zeros::<u64>(1)?;
    /// ws.run_end_encode_into(&input, &mut values, &mut ends, &mut num_runs)?;
    /// assert_eq!(stream.clone_dtoh(&ends.slice(..3))?, [3, 4, 5]);
    /// assert_eq!(stream.clone_dtoh(&values.slice(..3))?, [3, 8, 3]);
    /// # Ok(()) }
    /// ```
    pub fn run_end_encode_into<T, L, I, O, E, N>(
        &mut self,
        input: &I,
        values: &mut O,
        ends: &mut E,
        num_runs: &mut N,
    ) -> Result<()>
    where
        T: Element,
        L: RunLength,
        I: DevicePtr<T>,
        O: DevicePtrMut<T>,
        E: DevicePtrMut<L>,
        N: DevicePtrMut<u64>,
    {
        self.encode_into::<T, L, T, _, _, _, _>(input, values, ends, num_runs, RunsMode::Ends)
    }

    /// The runs longer than one item: each one's offset (index of its first item) into `offsets` and its
    /// length into `lengths`, in order, and how many into `num_runs[0]` (on the device). Both outputs must
    /// hold `input.len()` items.
    ///
    /// # Errors
    /// As [`run_length_encode_into`](Self::run_length_encode_into).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Workspace;
    /// let mut ws = Workspace::new(&stream);
    /// let input = stream.clone_htod(&[1u64, 2, 2, 3, 4, 4, 4])?;
    /// let mut offsets = stream.alloc_zeros::<u32>(7)?;
    /// let mut lengths = stream.alloc_zeros::<u32>(7)?;
    /// let mut num_runs = stream.alloc_zeros::<u64>(1)?;
    /// ws.non_trivial_runs_into(&input, &mut offsets, &mut lengths, &mut num_runs)?;
    /// assert_eq!(stream.clone_dtoh(&num_runs)?, [2]);
    /// assert_eq!(stream.clone_dtoh(&offsets.slice(..2))?, [1, 4]);
    /// assert_eq!(stream.clone_dtoh(&lengths.slice(..2))?, [2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn non_trivial_runs_into<T, L, I, O, C, N>(
        &mut self,
        input: &I,
        offsets: &mut O,
        lengths: &mut C,
        num_runs: &mut N,
    ) -> Result<()>
    where
        T: Element,
        L: RunLength,
        I: DevicePtr<T>,
        O: DevicePtrMut<L>,
        C: DevicePtrMut<L>,
        N: DevicePtrMut<u64>,
    {
        self.encode_into::<T, L, L, _, _, _, _>(input, offsets, lengths, num_runs, RunsMode::NonTrivial)
    }
}

fn names_second(mode: RunsMode) -> &'static str {
    if mode == RunsMode::Ends { "ends" } else { "lengths" }
}

/// Allocates two outputs of `n` items and a count, runs `f`, reads the count back.
pub(crate) fn one_shot_runs<A: DeviceRepr, B: DeviceRepr>(
    stream: &Arc<CudaStream>,
    n: usize,
    f: impl FnOnce(&mut Workspace, &mut CudaSlice<A>, &mut CudaSlice<B>, &mut CudaSlice<u64>) -> Result<()>,
) -> Result<Runs<A, B>> {
    let mut ws = Workspace::new(stream);
    // SAFETY: only the first `count` items of each column are ever exposed (Runs::first/second), and the
    // kernel writes all of them.
    let mut first = unsafe { stream.alloc::<A>(n) }?;
    // SAFETY: as above.
    let mut second = unsafe { stream.alloc::<B>(n) }?;
    let len = ws.count_on_host(stream, |ws, count| f(ws, &mut first, &mut second, count))?;
    Ok(Runs::new(first, second, len))
}

/// Run-length encoding into new buffers: the value and the length of each run of equal adjacent items
/// (IEEE `==` for floats), in order (blocks until the number of runs is known). `L` is `u32` or `u64`.
///
/// # Errors
/// As [`Workspace::run_length_encode_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// let input = stream.clone_htod(&[7u8, 7, 7, 2, 7])?;
/// let runs = lookback::run_length_encode::<u8, u32, _>(&input)?;
/// assert_eq!(runs.to_vecs()?, (vec![7, 2, 7], vec![3, 1, 1]));
/// # Ok(()) }
/// ```
pub fn run_length_encode<T: Element, L: RunLength, I: DevicePtr<T>>(input: &I) -> Result<Runs<T, L>> {
    one_shot_runs(input.stream(), input.len(), |ws, values, lengths, count| {
        ws.run_length_encode_into(input, values, lengths, count)
    })
}

/// Run-end encoding into new buffers: the value of each run and the index one past its last item
/// (Apache Arrow's run-end encoding). `L` is `u32` or `u64`.
///
/// # Errors
/// As [`Workspace::run_length_encode_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// let input = stream.clone_htod(&[7u8, 7, 7, 2, 7])?;
/// let runs = lookback::run_end_encode::<u8, u64, _>(&input)?;
/// assert_eq!(runs.to_vecs()?, (vec![7, 2, 7], vec![3, 4, 5]));
/// # Ok(()) }
/// ```
pub fn run_end_encode<T: Element, L: RunLength, I: DevicePtr<T>>(input: &I) -> Result<Runs<T, L>> {
    one_shot_runs(input.stream(), input.len(), |ws, values, ends, count| {
        ws.run_end_encode_into(input, values, ends, count)
    })
}

/// The offset and length of every run longer than one item, in new buffers. `L` is `u32` or `u64`.
///
/// # Errors
/// As [`Workspace::run_length_encode_into`].
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// let input = stream.clone_htod(&[1i32, 2, 2, 3, 4, 4, 4])?;
/// let runs = lookback::non_trivial_runs::<i32, u32, _>(&input)?;
/// assert_eq!(runs.to_vecs()?, (vec![1, 4], vec![2, 3]));
/// # Ok(()) }
/// ```
pub fn non_trivial_runs<T: Element, L: RunLength, I: DevicePtr<T>>(input: &I) -> Result<Runs<L, L>> {
    one_shot_runs(input.stream(), input.len(), |ws, offsets, lengths, count| {
        ws.non_trivial_runs_into(input, offsets, lengths, count)
    })
}
