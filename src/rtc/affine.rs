//! First-order linear recurrences, `h[t] = a[t]·h[t-1] + b[t]`, as a ready-made scan operator:
//! [`Affine`] steps and [`linear_recurrence`].
//!
//! Each step is the affine map `h ↦ a·h + b`. Maps compose associatively (not commutatively), so the
//! whole series is one inclusive scan of maps: the `t`-th prefix is the map from `h[-1]` to `h[t]`, and
//! its `b` is `h[t]` for `h[-1] = 0`. Exponential smoothing, IIR filters of first order and the diagonal
//! state-space layers of sequence models are all this scan.
use super::{DeviceType, UserScanOp};
use crate::error::Result;
use cudarc::driver::DeviceRepr;
use std::ops::{Add, Mul};

/// One step of a linear recurrence: the affine map `h ↦ a·h + b`, over `f32` (8 bytes) or `f64` (16
/// bytes). A `#[repr(C)]` pair, usable wherever a [`DeviceType`] is: device buffers of it, and the input
/// and accumulator of [`linear_recurrence`]'s operator. In CUDA C++ (the expression of a
/// [`UserScanOp::with_load`] that makes steps) they are `lookback_affine_f32` and `lookback_affine_f64`,
/// with the same fields: `lookback_affine_f32{0.99f, 0.01f * x}`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Affine<F> {
    /// The factor applied to the previous value.
    pub a: F,
    /// The term added.
    pub b: F,
}

impl<F: RecurrenceFloat> Affine<F> {
    /// The map `h ↦ a·h + b`.
    pub fn new(a: F, b: F) -> Self {
        Affine { a, b }
    }

    /// The identity map `h ↦ h`.
    pub fn identity() -> Self {
        Affine { a: F::ONE, b: F::ZERO }
    }

    /// The map applied to `h`: `a·h + b`.
    pub fn apply(self, h: F) -> F {
        self.a * h + self.b
    }

    /// `self` first, then `next`: `h ↦ next.a·(self.a·h + self.b) + next.b`. The scan's combine.
    #[must_use]
    pub fn then(self, next: Self) -> Self {
        Affine { a: self.a * next.a, b: next.a * self.b + next.b }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The float types of [`Affine`] and [`linear_recurrence`]: `f32` and `f64`.
pub trait RecurrenceFloat: sealed::Sealed + DeviceType + Add<Output = Self> + Mul<Output = Self> {
    /// 1 of the type.
    const ONE: Self;
    /// 0 of the type.
    const ZERO: Self;
    /// The CUDA C++ suffix of the type's literals (`f` for `float`).
    #[doc(hidden)]
    const SUFFIX: &'static str;
}

impl RecurrenceFloat for f32 {
    const ONE: Self = 1.0;
    const ZERO: Self = 0.0;
    const SUFFIX: &'static str = "f";
}

impl RecurrenceFloat for f64 {
    const ONE: Self = 1.0;
    const ZERO: Self = 0.0;
    const SUFFIX: &'static str = "";
}

// SAFETY: #[repr(C)] of two floats of one type, no padding, every bit pattern a valid value.
unsafe impl DeviceRepr for Affine<f32> {}
// SAFETY: as for Affine<f32>.
unsafe impl DeviceRepr for Affine<f64> {}
// SAFETY: the CUDA structs have the same fields in the same order (8 bytes 4-aligned, 16 bytes 8-aligned);
// the names are the crate's own, apart from any a user declares.
unsafe impl DeviceType for Affine<f32> {
    const CUDA_NAME: &'static str = "lookback_affine_f32";
    const CUDA_DECL: &'static str = "struct lookback_affine_f32 { float a; float b; };";
}
// SAFETY: as for Affine<f32>.
unsafe impl DeviceType for Affine<f64> {
    const CUDA_NAME: &'static str = "lookback_affine_f64";
    const CUDA_DECL: &'static str = "struct lookback_affine_f64 { double a; double b; };";
}

/// The scan operator of the recurrence `h[t] = a[t]·h[t-1] + b[t]`, `h[-1] = 0`: [`Affine`] steps in,
/// composed in order ([`Affine::then`]), each prefix's `b` out. The inclusive scans
/// ([`Workspace::inclusive_scan_user_into`](crate::Workspace::inclusive_scan_user_into), …) then write
/// `h`; an exclusive scan seeded with `Affine::new(0, h0)` (the constant map to `h0`) writes `h[t-1]`
/// from `h[-1] = h0`. Steps built from other inputs (a reading `x` into `Affine::new(1 - α, α·x)` for
/// exponential smoothing) come through [`UserScanOp::with_load`].
///
/// The operator is the crate's own code, so this is safe. The accumulator is the pair: 8 bytes for
/// `f32`, 16 for `f64` (two status units between tiles). Float results differ from a sequential loop by
/// rounding, since the scan groups the steps differently; the difference grows with how far the products
/// of `a` stray from 1. [`Workspace::set_deterministic`](crate::Workspace::set_deterministic) makes the
/// bits repeat from run to run.
///
/// # Errors
/// None today: the operator's code is fixed. Compile errors would surface at the first use.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::rtc::{Affine, linear_recurrence};
/// let steps = [Affine::new(0.5f32, 1.0), Affine::new(0.5, 1.0), Affine::new(2.0, 0.0)];
/// // h0 = 1, h1 = 0.5·1 + 1, h2 = 2·1.5
/// assert_eq!(lookback::host::inclusive_scan_user(&steps, &linear_recurrence()?), [1.0, 1.5, 3.0]);
/// # Ok(()) }
/// ```
pub fn linear_recurrence<F>() -> Result<UserScanOp<Affine<F>, Affine<F>, F>>
where
    F: RecurrenceFloat,
    Affine<F>: DeviceType,
{
    let name = <Affine<F> as DeviceType>::CUDA_NAME;
    let s = F::SUFFIX;
    // SAFETY: pure expressions of `a` and `b` that return; the closures compute the same.
    unsafe {
        UserScanOp::new(
            &format!("{name}{{a.a * b.a, b.a * a.b + b.b}}"),
            &format!("{name}{{1.0{s}, 0.0{s}}}"),
            Affine::then,
            Affine::identity(),
        )?
        .with_store("a.b", |h: Affine<F>| h.b)
    }
}
