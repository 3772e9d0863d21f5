//! [`FilterBy`]: what decides the rows of a table filter.
use super::checks::{Call, check};
use super::column::{ColumnRef, Shape};
use crate::element::{Element, Flag};
use crate::error::Result;
use crate::pred::PredProgram;
use crate::pred::predicate::{DevicePred, Predicate};
use crate::rtc::{Decision, DeviceType, TableSignature, UserPred2};
use cudarc::driver::DevicePtr;
use std::fmt;

/// What decides which rows a table filter keeps: a mask column, a predicate over one column (a built-in
/// [`Pred`](crate::Pred) or a [`UserPred`](crate::rtc::UserPred)), or a [`UserPred2`] over two columns.
/// Each row is decided once per call, whatever the number of columns moved; only the columns named here
/// are read for the decision (a predicate column that should also be moved is listed among the inputs
/// as well, and then read once more).
///
/// Every decision runs in the table filter's kernel, which is compiled at run time by NVRTC for the
/// call's column sizes ([`crate::table`]): built-in masks and `Pred`s need NVRTC here too.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// use lookback::Pred;
/// use lookback::rtc::UserPred2;
/// use lookback::table::FilterBy;
/// let mask = stream.clone_htod(&[true, false, true])?;
/// let by_mask = FilterBy::mask(&mask);
/// assert_eq!(by_mask.rows(), 3);
/// let price = stream.clone_htod(&[9.5f32, 12.0, 30.0])?;
/// let cheap = Pred::lt(10.0f32);
/// assert_eq!(FilterBy::pred(&price, &cheap)?.rows(), 3);
/// let limit = stream.clone_htod(&[10.0f32, 10.0, 40.0])?;
/// // SAFETY: a pure expression of a and b.
/// let below = unsafe { UserPred2::new("a < b", |a: f32, b: f32| a < b)? };
/// assert_eq!(FilterBy::pred2(&price, &limit, &below).rows(), 3);
/// # Ok(()) }
/// ```
pub struct FilterBy<'a> {
    pub(crate) kind: By<'a>,
}

/// The decision with its columns. Lives for one call, so the size difference between the variants (a
/// built-in predicate's program is 280 bytes) does not matter.
#[allow(clippy::large_enum_variant)]
pub(crate) enum By<'a> {
    Mask(ColumnRef<'a>),
    Program { column: ColumnRef<'a>, program: PredProgram, decision: Decision<'a> },
    User { column: ColumnRef<'a>, decision: Decision<'a> },
    User2 { a: ColumnRef<'a>, b: ColumnRef<'a>, decision: Decision<'a> },
}

impl<'a> FilterBy<'a> {
    /// Keeps row `i` where `mask[i]` is set (a nonzero `u8`, or `true`), as
    /// [`select_flagged`](crate::select_flagged) does.
    pub fn mask<F: Flag, M: DevicePtr<F>>(mask: &'a M) -> Self {
        FilterBy { kind: By::Mask(ColumnRef::erase::<F, M>(mask, "uint8_t")) }
    }

    /// Keeps row `i` where `pred(column[i])` holds; `pred` is a built-in [`Pred`](crate::Pred) or a
    /// [`UserPred`](crate::rtc::UserPred).
    ///
    /// # Errors
    /// [`Error::PredicateTooComplex`](crate::Error::PredicateTooComplex) for a `Pred` past the device's
    /// limits.
    pub fn pred<T: Element, D: DevicePtr<T>, P: Predicate<T>>(column: &'a D, pred: &'a P) -> Result<Self> {
        let column = ColumnRef::erase::<T, D>(column, T::DTYPE.c_type());
        let bytes = size_of::<T>();
        Ok(FilterBy {
            kind: match pred.device()? {
                DevicePred::Program(program) => {
                    By::Program { column, program, decision: Decision::Program(T::DTYPE, bytes) }
                }
                DevicePred::Code(code) => By::User { column, decision: Decision::User(code, bytes) },
            },
        })
    }

    /// Keeps row `i` where `pred(a[i], b[i])` holds.
    pub fn pred2<A, B, DA, DB>(a: &'a DA, b: &'a DB, pred: &'a UserPred2<A, B>) -> Self
    where
        A: DeviceType,
        B: DeviceType,
        DA: DevicePtr<A>,
        DB: DevicePtr<B>,
    {
        FilterBy {
            kind: By::User2 { a: ColumnRef::new(a), b: ColumnRef::new(b), decision: Decision::User2(&pred.code) },
        }
    }

    /// Rows of the decision's (first) column.
    pub fn rows(&self) -> usize {
        self.columns()[0].len()
    }

    /// The columns the decision reads, with their names in errors.
    pub(crate) fn columns(&self) -> Vec<&ColumnRef<'a>> {
        match &self.kind {
            By::Mask(m) => vec![m],
            By::Program { column, .. } | By::User { column, .. } => vec![column],
            By::User2 { a, b, .. } => vec![a, b],
        }
    }

    /// The decision columns' shapes with their names in errors.
    pub(crate) fn shapes(&self) -> Vec<(&'static str, Shape)> {
        match &self.kind {
            By::Mask(m) => vec![("mask", m.shape())],
            By::Program { column, .. } | By::User { column, .. } => vec![("predicate column", column.shape())],
            By::User2 { a, b, .. } => {
                vec![("first predicate column", a.shape()), ("second predicate column", b.shape())]
            }
        }
    }

    /// The decision as the kernel's program needs it.
    pub(crate) fn decision(&self) -> Decision<'a> {
        match &self.kind {
            By::Mask(_) => Decision::Flags,
            By::Program { decision, .. } | By::User { decision, .. } | By::User2 { decision, .. } => *decision,
        }
    }

    /// Compiles the table filter's kernel for this decision and the columns `inputs` (their item sizes, in
    /// order: the signature [`Workspace::filter_columns_into`](crate::Workspace::filter_columns_into) takes
    /// for them) for the GPU of the decision's columns, or finds it in the caches, and loads it into their
    /// context. Call it before capturing that call into a CUDA graph ([`crate::graph`]), so that nothing is
    /// compiled or loaded inside the capture (an eager call of the same signature does the same).
    ///
    /// # Errors
    /// [`Error::UnsupportedSize`](crate::Error::UnsupportedSize), [`Error::TooManyColumns`](crate::Error::TooManyColumns),
    /// [`Error::NvrtcNotFound`](crate::Error::NvrtcNotFound), [`Error::Compile`](crate::Error::Compile),
    /// [`Error::Driver`](crate::Error::Driver).
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::rtc::nvrtc_available() { return Ok(()) }
    /// use lookback::rtc::CacheHit;
    /// use lookback::table::{ColumnRef, FilterBy};
    /// let mask = stream.clone_htod(&[1u8, 0])?;
    /// let values = stream.clone_htod(&[1.0f32, 2.0])?;
    /// let by = FilterBy::mask(&mask);
    /// by.compile(&[ColumnRef::new(&values)])?;
    /// assert_eq!(by.compile(&[ColumnRef::new(&values)])?.hit, CacheHit::Memory);
    /// # Ok(()) }
    /// ```
    pub fn compile(&self, inputs: &[ColumnRef<'_>]) -> Result<crate::rtc::CompileReport> {
        let shapes: Vec<Shape> = inputs.iter().map(ColumnRef::shape).collect();
        self.check_inputs(&shapes)?;
        let ctx = self.columns()[0].stream().context().clone();
        let (kernel, report) = crate::rtc::table_kernel(&ctx, &self.signature(&shapes, None))?;
        crate::kernels::function(&ctx, kernel)?;
        Ok(report)
    }

    /// The checks of a call with input columns `inputs` and outputs of their shapes (`checks::check`);
    /// returns its rows.
    pub(crate) fn check_inputs(&self, inputs: &[Shape]) -> Result<usize> {
        let call = Call { decide: &self.shapes(), inputs, outputs: inputs, indices: None, count_len: 1 };
        check(&call)
    }

    /// The kernel signature of a call with input columns `inputs` and, if asked, row indices of `indices`.
    pub(crate) fn signature(&self, inputs: &[Shape], indices: Option<Shape>) -> TableSignature<'a> {
        let mut columns: Vec<i32> = inputs.iter().map(|s| s.bytes as i32).collect();
        columns.extend(indices.map(|s| -(s.bytes as i32)));
        TableSignature { decision: self.decision(), columns }
    }

    /// The built-in predicate's program (the empty program otherwise: the kernel does not read it).
    pub(crate) fn program(&self) -> PredProgram {
        match &self.kind {
            By::Program { program, .. } => *program,
            _ => PredProgram::default(),
        }
    }
}

impl fmt::Debug for FilterBy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.kind {
            By::Mask(_) => "mask",
            By::Program { .. } => "pred",
            By::User { .. } => "user pred",
            By::User2 { .. } => "user pred over two columns",
        };
        f.debug_struct("FilterBy").field("kind", &kind).field("rows", &self.rows()).finish()
    }
}
