//! What the selection primitives accept as a predicate: a built-in [`Pred`], interpreted by the kernels
//! nvcc built, or a [`UserPred`](crate::rtc::UserPred), the user's own CUDA C++ compiled at run time into
//! the same kernels.
use super::{Pred, PredProgram};
use crate::element::Element;
use crate::error::Result;
use crate::rtc::UserCode;

/// A predicate over items of type `T`: [`Pred`] or [`UserPred`](crate::rtc::UserPred). Every function that
/// selects by a predicate (select_if and its in-place and `_into` forms, count_if, mask_if, the
/// partitions, the three-way partition, and their [`host`](crate::host) references) takes either.
///
/// Sealed: the kernels know these two kinds only.
///
/// # Example
/// ```
/// use lookback::{Pred, Predicate};
/// fn positives<P: Predicate<i32>>(p: &P, xs: &[i32]) -> usize {
///     xs.iter().filter(|&&x| p.holds(x)).count()
/// }
/// assert_eq!(positives(&Pred::gt(0), &[-1, 2, 3]), 2);
/// ```
pub trait Predicate<T: Element>: sealed::Sealed<T> {
    /// Whether the predicate holds for `x`, on the host.
    fn holds(&self, x: T) -> bool;
}

pub(crate) use sealed::DevicePred;

pub(crate) mod sealed {
    use super::*;

    /// How a predicate reaches the device. (`pub` in a private module: reachable through the sealed
    /// trait's signature, not nameable outside the crate.) Lives on the stack for one call, so the size
    /// difference between the variants does not matter.
    #[allow(clippy::large_enum_variant)]
    pub enum DevicePred<'a> {
        /// A program for the built-in kernels' interpreter.
        Program(PredProgram),
        /// User code, compiled into kernels of its own.
        Code(&'a UserCode),
    }

    /// The device side of [`Predicate`], for this crate only.
    pub trait Sealed<T: Element> {
        /// The program or the user code.
        ///
        /// # Errors
        /// [`crate::Error::PredicateTooComplex`] for a `Pred` past the device's limits.
        fn device(&self) -> Result<DevicePred<'_>>;
    }
}

impl<T: Element> Predicate<T> for Pred<T> {
    fn holds(&self, x: T) -> bool {
        self.eval(x)
    }
}

impl<T: Element> sealed::Sealed<T> for Pred<T> {
    fn device(&self) -> Result<DevicePred<'_>> {
        Ok(DevicePred::Program(self.program()?))
    }
}
