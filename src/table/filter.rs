//! The `Workspace` methods of the table filter: the checks, the kernel for the call's signature, and the
//! one launch.
use super::by::FilterBy;
use super::checks::{self, Call};
use super::column::{ColumnMut, ColumnRef, Shape};
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::launch::{Span, TableParams, Workspace, check_disjoint, same_context, zero_counts};
use crate::plan::{Buffers, Primitive};
use crate::rtc::{self, DeviceType};
use cudarc::driver::{DevicePtrMut, SyncOnDrop};

/// The types of row indices [`Workspace::filter_indices_into`] writes: `u32` (for at most 2^32 rows) and
/// `u64`. Sealed.
pub trait RowIndex: DeviceType + sealed::Sealed {}
impl RowIndex for u32 {}
impl RowIndex for u64 {}
mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

impl Workspace {
    /// Copies the rows of `inputs` that `by` keeps to the front of the output in the same place of
    /// `outputs`, in row order (stable, as [`select_flagged_into`](Workspace::select_flagged_into)), and
    /// writes their number to `num_selected[0]` — on the device: nothing blocks the host, and the call can
    /// be captured in a CUDA graph ([`crate::graph`]) or sized by a device count
    /// ([`Workspace::with_count`]).
    ///
    /// One launch for every column: each row is decided once (the mask or the predicate's columns read
    /// once), the tile's selected rows are counted and looked back on once, and each column is read once
    /// and its selected rows written out coalesced. Columns may differ in type and size (1, 2, 4 or 8
    /// bytes per item); at most eight. Each output needs its input's item size and room for every row;
    /// rows past the count are left alone. The kernel is compiled by NVRTC for the call's column sizes
    /// and decision at the first call of each (then cached: [`crate::rtc`]).
    ///
    /// # Errors
    /// [`Error::TooManyColumns`]; [`Error::LengthMismatch`] when `outputs` is not one per input, or an
    /// input column (`what: "column"`) or the second predicate column has another length than the
    /// decision's column (the mask, or the predicate's first column), which gives the rows;
    /// [`Error::UnsupportedSize`] for items of another size than 1, 2, 4 or 8 bytes, or an output
    /// whose items differ in size from its input's; [`Error::OutputTooSmall`] for an output column or an
    /// empty `num_selected`; [`Error::Overlap`] when an output overlaps an input, the decision's columns
    /// or another output (the filter does not work in place); [`Error::ContextMismatch`];
    /// [`Error::NvrtcNotFound`] without NVRTC, [`Error::Compile`] for user code that does not compile;
    /// [`Error::Driver`]. On error nothing is written.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::Workspace;
    /// use lookback::table::{ColumnMut, ColumnRef, FilterBy};
    /// let mut ws = Workspace::new(&stream);
    /// let id = stream.clone_htod(&[10u32, 11, 12, 13])?;
    /// let price = stream.clone_htod(&[1.5f64, 2.5, 3.5, 4.5])?;
    /// let code = stream.clone_htod(&[7u8, 8, 9, 10])?;
    /// let keep = stream.clone_htod(&[true, false, true, true])?;
    /// let (mut id_out, mut price_out) = (stream.alloc_zeros::<u32>(4)?, stream.alloc_zeros::<f64>(4)?);
    /// let mut code_out = stream.alloc_zeros::<u8>(4)?;
    /// let mut num_selected = stream.alloc_zeros::<u64>(1)?;
    /// ws.filter_columns_into(
    ///     &[ColumnRef::new(&id), ColumnRef::new(&price), ColumnRef::new(&code)],
    ///     &mut [ColumnMut::new(&mut id_out), ColumnMut::new(&mut price_out), ColumnMut::new(&mut code_out)],
    ///     &FilterBy::mask(&keep),
    ///     &mut num_selected,
    /// )?;
    /// let n = stream.clone_dtoh(&num_selected)?[0] as usize;
    /// assert_eq!(n, 3);
    /// assert_eq!(stream.clone_dtoh(&id_out.slice(..n))?, [10, 12, 13]);
    /// assert_eq!(stream.clone_dtoh(&price_out.slice(..n))?, [1.5, 3.5, 4.5]);
    /// assert_eq!(stream.clone_dtoh(&code_out.slice(..n))?, [7, 9, 10]);
    /// # Ok(()) }
    /// ```
    pub fn filter_columns_into<N: DevicePtrMut<u64>>(
        &mut self,
        inputs: &[ColumnRef<'_>],
        outputs: &mut [ColumnMut<'_>],
        by: &FilterBy<'_>,
        num_selected: &mut N,
    ) -> Result<()> {
        self.filter_raw(inputs, outputs, None, by, num_selected)
    }

    /// Writes the indices of the rows `by` keeps to the front of `indices`, in order, and their number to
    /// `num_selected[0]` on the device: a selection by two columns (`a[i] > b[i]` with
    /// [`FilterBy::pred2`]) whose result indexes any other column, or the positions a mask selects.
    /// `indices` needs room for every row; `u32` indices take at most 2^32 rows.
    ///
    /// # Errors
    /// As [`Workspace::filter_columns_into`] ([`Error::OutputTooSmall`] for `indices`);
    /// [`Error::Unsupported`] for `u32` indices of more than 2^32 rows.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::Workspace;
    /// use lookback::rtc::UserPred2;
    /// use lookback::table::FilterBy;
    /// let mut ws = Workspace::new(&stream);
    /// let bid = stream.clone_htod(&[10.0f32, 12.0, 9.0, 15.0])?;
    /// let ask = stream.clone_htod(&[11.0f32, 11.5, 9.5, 14.0])?;
    /// // SAFETY: a pure expression of a and b.
    /// let crossed = unsafe { UserPred2::new("a > b", |a: f32, b: f32| a > b)? };
    /// let mut rows = stream.alloc_zeros::<u32>(4)?;
    /// let mut num_selected = stream.alloc_zeros::<u64>(1)?;
    /// ws.filter_indices_into(&FilterBy::pred2(&bid, &ask, &crossed), &mut rows, &mut num_selected)?;
    /// let n = stream.clone_dtoh(&num_selected)?[0] as usize;
    /// assert_eq!(stream.clone_dtoh(&rows.slice(..n))?, [1, 3]);
    /// # Ok(()) }
    /// ```
    pub fn filter_indices_into<I, O, N>(
        &mut self,
        by: &FilterBy<'_>,
        indices: &mut O,
        num_selected: &mut N,
    ) -> Result<()>
    where
        I: RowIndex,
        O: DevicePtrMut<I>,
        N: DevicePtrMut<u64>,
    {
        let mut indices = ColumnMut::new(indices);
        self.filter_raw(&[], &mut [], Some(&mut indices), by, num_selected)
    }

    /// Counts the rows `by` keeps into `count[0]` on the device (a count of rows where `a[i] > b[i]`, say,
    /// with [`FilterBy::pred2`]): the table filter with no column to move, so no payload is read.
    ///
    /// # Errors
    /// As [`Workspace::filter_columns_into`] ([`Error::OutputTooSmall`] for an empty `count`).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::Workspace;
    /// use lookback::rtc::UserPred2;
    /// use lookback::table::FilterBy;
    /// let mut ws = Workspace::new(&stream);
    /// let a = stream.clone_htod(&[1i64, 5, 3, 8])?;
    /// let b = stream.clone_htod(&[2i32, 4, 3, 1])?;
    /// // SAFETY: a pure expression of a and b.
    /// let greater = unsafe { UserPred2::new("a > b", |a: i64, b: i32| a > b as i64)? };
    /// let mut count = stream.alloc_zeros::<u64>(1)?;
    /// ws.count_filtered_into(&FilterBy::pred2(&a, &b, &greater), &mut count)?;
    /// assert_eq!(stream.clone_dtoh(&count)?, [2]);
    /// # Ok(()) }
    /// ```
    pub fn count_filtered_into<N: DevicePtrMut<u64>>(&mut self, by: &FilterBy<'_>, count: &mut N) -> Result<()> {
        self.filter_raw(&[], &mut [], None, by, count)
    }

    /// [`Workspace::count_filtered_into`] that returns the count (blocks until it is known).
    ///
    /// # Errors
    /// As [`Workspace::count_filtered_into`]; [`Error::NotCapturable`] inside a stream capture.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::{Pred, Workspace};
    /// use lookback::table::FilterBy;
    /// let mut ws = Workspace::new(&stream);
    /// let x = stream.clone_htod(&[-3i16, 4, 0, 9])?;
    /// let positive = Pred::gt(0i16);
    /// assert_eq!(ws.count_filtered(&FilterBy::pred(&x, &positive)?)?, 2);
    /// # Ok(()) }
    /// ```
    pub fn count_filtered(&mut self, by: &FilterBy<'_>) -> Result<usize> {
        let stream = by.columns()[0].stream().clone();
        self.count_on_host(&stream, |ws, count| ws.count_filtered_into(by, count))
    }

    /// The one path of every table filter: `inputs` into `outputs`, then the row indices if asked for.
    fn filter_raw<N: DevicePtrMut<u64>>(
        &mut self,
        inputs: &[ColumnRef<'_>],
        outputs: &mut [ColumnMut<'_>],
        indices: Option<&mut ColumnMut<'_>>,
        by: &FilterBy<'_>,
        num_selected: &mut N,
    ) -> Result<()> {
        let decide = by.shapes();
        let in_shapes: Vec<Shape> = inputs.iter().map(ColumnRef::shape).collect();
        let out_shapes: Vec<Shape> = outputs.iter().map(ColumnMut::shape).collect();
        let index_shape = indices.as_ref().map(|c| c.shape());
        let n = checks::check(&Call {
            decide: &decide,
            inputs: &in_shapes,
            outputs: &out_shapes,
            indices: index_shape,
            count_len: num_selected.len(),
        })?;
        let decide_columns = by.columns();
        let stream = decide_columns[0].stream().clone();
        for c in decide_columns.iter().copied().chain(inputs) {
            same_context(&stream, c.stream())?;
        }
        for c in outputs.iter().chain(indices.as_deref()) {
            same_context(&stream, c.stream())?;
        }
        same_context(&stream, num_selected.stream())?;
        self.enter(&stream)?;

        // Addresses, with the guards that record each buffer's use on the stream, held to the launch.
        let decide_ptrs: Vec<(u64, SyncOnDrop<'_>)> = decide_columns.iter().map(|c| c.ptr(&stream)).collect();
        let in_ptrs: Vec<(u64, SyncOnDrop<'_>)> = inputs.iter().map(|c| c.ptr(&stream)).collect();
        let out_ptrs: Vec<(u64, SyncOnDrop<'_>)> = outputs.iter_mut().map(|c| c.ptr_mut(&stream)).collect();
        let index_ptr = indices.map(|c| c.ptr_mut(&stream));
        let (count, _count) = num_selected.device_ptr_mut(&stream);

        // Outputs may overlap no input (a tile writes while later tiles still read) and no other output.
        let span = |what, addr: u64, s: Shape| Span { what, addr, bytes: s.len * s.bytes };
        let mut read: Vec<Span> = decide.iter().zip(&decide_ptrs).map(|(&(what, s), p)| span(what, p.0, s)).collect();
        read.extend(in_shapes.iter().zip(&in_ptrs).map(|(&s, p)| span("column", p.0, s)));
        let mut written: Vec<Span> =
            out_shapes.iter().zip(&out_ptrs).map(|(&s, p)| span("output column", p.0, s)).collect();
        if let (Some(s), Some(p)) = (index_shape, &index_ptr) {
            written.push(span("indices", p.0, s));
        }
        written.push(Span::new::<u64>("num_selected", count, 1));
        check_disjoint(&read, &written)?;

        if n == 0 {
            // Invariant 6: an empty table writes a count of 0 and launches nothing (nor compiles).
            return zero_counts(&stream, count, 1);
        }
        let signature = by.signature(&in_shapes, index_shape);
        let (kernel, _) = rtc::table_kernel(stream.context(), &signature)?;
        let primitive = Primitive::Table { kernel, bytes: signature.bytes() };
        let launch = self.plan_launch(&stream, primitive, n, Buffers::default())?;
        let mut params = TableParams { n: n as u64, num_selected: count, pred: by.program(), ..Default::default() };
        for (slot, p) in params.decide.iter_mut().zip(&decide_ptrs) {
            *slot = p.0;
        }
        for (i, (src, dst)) in in_ptrs.iter().zip(&out_ptrs).enumerate() {
            params.input[i] = src.0;
            params.output[i] = dst.0;
        }
        if let Some(p) = &index_ptr {
            params.output[inputs.len()] = p.0;
        }
        self.launch(&stream, launch, move |lb, _| {
            params.lb = lb;
            params
        })
    }
}
