//! Predicates as data: `Pred<T>` expressions, evaluated on the device inside the tile load.
//!
//! A `Pred` is stored flat, in the postfix order the device runs (`terms`), never as a tree of boxes:
//! users build predicates of any size, and every walk over a flat list (evaluating, folding, compiling,
//! cloning, comparing, formatting, dropping) is a loop, so none of them can overflow the stack.
use crate::element::{Element, FloatElement, IntElement};
use crate::error::Result;
use std::collections::VecDeque;

mod debug;
mod eval;
mod fold;
mod intervals;
pub(crate) mod predicate;
mod program;

pub use predicate::Predicate;
pub(crate) use program::PredProgram;

/// Instructions a predicate may compile to (`PRED_MAX_INSTRUCTIONS` in `cuda/core/predicate.cuh`).
///
/// The limit binds only predicates that keep their instructions: one with a bit test
/// ([`any_bits`](Pred::any_bits), [`all_bits`](Pred::all_bits)), or whose comparisons select more than 8
/// separate intervals. Any other predicate, of any size, compiles to the intervals it selects.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::{Error, Pred};
/// let input = stream.clone_htod(&[0u32, 3, 7, 9])?;
/// // Comparisons fold into the values they select: `0 <= x <= 8`, one comparison pair.
/// let mut digits = Pred::eq(0u32);
/// for k in 1..=8 {
///     digits = digits | Pred::eq(k);
/// }
/// assert_eq!(lookback::count_if(&input, &digits)?, 3);
/// // Bit tests do not: eight leaves and seven `|` are 15 instructions.
/// let mut bits = Pred::any_bits(1u32);
/// for k in 1..8 {
///     bits = bits | Pred::any_bits(1 << k);
/// }
/// assert_eq!(lookback::count_if(&input, &bits)?, 3);
/// // A leaf and an `|` more: 17.
/// let too_big = bits | Pred::any_bits(1 << 8);
/// let err = lookback::count_if(&input, &too_big);
/// assert!(matches!(err, Err(Error::PredicateTooComplex { instructions: 17, depth: 2 })));
/// # Ok(()) }
/// ```
pub const MAX_INSTRUCTIONS: usize = 16;
/// Deepest operand stack a predicate may need (`PRED_MAX_DEPTH` in `cuda/core/predicate.cuh`).
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::{Error, Pred};
/// let input = stream.clone_htod(&[0u32, 3, 8, 9])?;
/// // Right-nested, every leaf waits on the stack for the ones after it: depth 8 (and 15 instructions,
/// // kept as written because of the bit test).
/// let mut deep = Pred::any_bits(u32::MAX);
/// for k in 1..8 {
///     deep = Pred::ne(k) & deep;
/// }
/// assert_eq!(lookback::count_if(&input, &deep)?, 2);
/// let deeper = Pred::ne(8) & deep;
/// let err = lookback::count_if(&input, &deeper);
/// assert!(matches!(err, Err(Error::PredicateTooComplex { depth: 9, .. })));
/// # Ok(()) }
/// ```
pub const MAX_DEPTH: usize = 8;

/// Opcodes; must match the `PRED_*` enum of `cuda/core/predicate.cuh`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Opcode {
    True = 0,
    Lt = 1,
    Le = 2,
    Gt = 3,
    Ge = 4,
    Eq = 5,
    Ne = 6,
    Between = 7,
    IsNan = 8,
    IsFinite = 9,
    AnyBits = 10,
    AllBits = 11,
    And = 12,
    Or = 13,
    Not = 14,
}

/// One instruction of the postfix form: a test of the item against `a` (and `b`), or a combinator of the
/// results before it (`and`/`or` take two, `not` one; their operands are zero). The same triple the
/// device program holds.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Term<T> {
    op: Opcode,
    a: T,
    b: T,
}

/// A predicate on items of type `T`, built from comparisons with constants and combined with
/// [`and`](Pred::and), [`or`](Pred::or) and [`not`](Pred::not) (or `&`, `|`, `!`).
///
/// Comparisons follow IEEE rules for floats: every comparison with NaN is false except `ne`, and
/// `-0.0 == 0.0`. `f16`/`bf16` compare exactly (as their `f32` widening).
///
/// On the device, a predicate made of comparisons (every leaf but the bit tests), of any shape and size,
/// compiles to the set of values it selects: one interval is a single comparison pair, as fast as one
/// comparison (`between(a, b) & ne(c) & !is_nan()` with `c` outside it, `ge(a) & lt(b)`, `eq(1) | eq(2)`,
/// …), and up to 8 intervals are tested together without the instruction-by-instruction interpreter
/// (`lt(500) & (ne(-1) | eq(0))` is `[i32::MIN, -2] ∪ [0, 499]`; a set with fewer holes than intervals,
/// such as `ne(a) & ne(b)`, is tested as its holes). Any other predicate runs as written: at most
/// [`MAX_INSTRUCTIONS`] instructions (one per leaf and per `and`/`or`/`not`) with an operand stack of at
/// most [`MAX_DEPTH`]; a larger one is rejected with
/// [`Error::PredicateTooComplex`](crate::Error::PredicateTooComplex) when used. On the host
/// ([`eval`](Pred::eval), the `host` functions) any size and nesting works, in time proportional to the
/// size and with a fixed amount of stack; so do cloning, comparing, formatting and dropping.
///
/// # Example
/// ```
/// use lookback::Pred;
/// // A plausible temperature that is not the -9999 sentinel.
/// let valid = Pred::between(-50.0f32, 60.0) & Pred::ne(-9999.0) & !Pred::is_nan();
/// assert!(valid.eval(21.5));
/// assert!(!valid.eval(f32::NAN));
/// assert!(!valid.eval(75.0));
/// ```
// `Debug` is written by hand (debug.rs): it prints the tree without recursing.
#[derive(Clone, PartialEq)]
pub struct Pred<T> {
    /// Postfix order, never empty. A deque so that `a & b` can put the smaller operand's terms in front of
    /// or behind the larger one's: building costs O(n log n) whichever side the user nests on.
    terms: VecDeque<Term<T>>,
    /// The operand stack the postfix form needs (what the device calls depth); a function of `terms`.
    depth: usize,
}

impl<T: Element> Pred<T> {
    fn leaf(op: Opcode, a: T, b: T) -> Self {
        Pred { terms: VecDeque::from([Term { op, a, b }]), depth: 1 }
    }

    /// `self op other` in postfix: both operands, then `op`. The right operand waits on the stack while
    /// nothing else does, hence its depth plus one.
    fn combine(self, op: Opcode, other: Pred<T>) -> Self {
        let depth = self.depth.max(other.depth + 1);
        let mut terms = if self.terms.len() >= other.terms.len() {
            let mut terms = self.terms;
            terms.extend(other.terms);
            terms
        } else {
            let mut terms = other.terms;
            for t in self.terms.into_iter().rev() {
                terms.push_front(t);
            }
            terms
        };
        terms.push_back(Term { op, a: T::zeroed(), b: T::zeroed() });
        Pred { terms, depth }
    }
    /// Selects every item.
    ///
    /// # Example
    /// ```
    /// use lookback::Pred;
    /// assert!(Pred::<i32>::always().eval(i32::MIN));
    /// assert!(Pred::<f32>::always().eval(f32::NAN));
    /// ```
    pub fn always() -> Self {
        Self::leaf(Opcode::True, T::zeroed(), T::zeroed())
    }
    /// `x < c`.
    ///
    /// # Example
    /// ```
    /// use lookback::Pred;
    /// let p = Pred::lt(2.5f32);
    /// assert!(p.eval(1.0) && p.eval(f32::NEG_INFINITY));
    /// assert!(!p.eval(2.5));
    /// assert!(!p.eval(f32::NAN)); // every comparison with NaN is false, except `ne`
    /// ```
    pub fn lt(c: T) -> Self {
        Self::leaf(Opcode::Lt, c, c)
    }
    /// `x <= c`.
    ///
    /// # Example
    /// ```
    /// use lookback::Pred;
    /// let p = Pred::le(10u16);
    /// assert!(p.eval(10) && p.eval(0));
    /// assert!(!p.eval(11));
    /// assert!(!Pred::le(0.0f64).eval(f64::NAN));
    /// ```
    pub fn le(c: T) -> Self {
        Self::leaf(Opcode::Le, c, c)
    }
    /// `x > c`.
    ///
    /// # Example
    /// ```
    /// use lookback::Pred;
    /// let p = Pred::gt(0i8);
    /// assert!(p.eval(1) && p.eval(i8::MAX));
    /// assert!(!p.eval(0) && !p.eval(-5));
    /// assert!(!Pred::gt(0.0f32).eval(f32::NAN));
    /// ```
    pub fn gt(c: T) -> Self {
        Self::leaf(Opcode::Gt, c, c)
    }
    /// `x >= c`.
    ///
    /// # Example
    /// ```
    /// use lookback::Pred;
    /// let p = Pred::ge(5i64);
    /// assert!(p.eval(5) && p.eval(12));
    /// assert!(!p.eval(4));
    /// assert!(!Pred::ge(f64::NEG_INFINITY).eval(f64::NAN));
    /// ```
    pub fn ge(c: T) -> Self {
        Self::leaf(Opcode::Ge, c, c)
    }
    /// `x == c` (IEEE equality for floats).
    ///
    /// # Example
    /// ```
    /// use lookback::Pred;
    /// assert!(Pred::eq(3u32).eval(3) && !Pred::eq(3u32).eval(4));
    /// assert!(Pred::eq(0.0f64).eval(-0.0)); // -0.0 == 0.0
    /// assert!(!Pred::eq(f64::NAN).eval(f64::NAN)); // NaN equals nothing
    /// ```
    pub fn eq(c: T) -> Self {
        Self::leaf(Opcode::Eq, c, c)
    }
    /// `x != c` (true for NaN).
    ///
    /// # Example
    /// ```
    /// use lookback::Pred;
    /// let p = Pred::ne(-9999.0f32);
    /// assert!(p.eval(21.5));
    /// assert!(!p.eval(-9999.0));
    /// assert!(p.eval(f32::NAN)); // the one comparison that is true for NaN
    /// ```
    pub fn ne(c: T) -> Self {
        Self::leaf(Opcode::Ne, c, c)
    }
    /// `lo <= x && x <= hi` (both ends included).
    ///
    /// # Example
    /// ```
    /// use lookback::Pred;
    /// let p = Pred::between(1u8, 3);
    /// assert!(p.eval(1) && p.eval(2) && p.eval(3));
    /// assert!(!p.eval(0) && !p.eval(4));
    /// assert!(!Pred::between(-1.0f32, 1.0).eval(f32::NAN));
    /// ```
    pub fn between(lo: T, hi: T) -> Self {
        Self::leaf(Opcode::Between, lo, hi)
    }
    /// Both predicates hold.
    ///
    /// # Example
    /// ```
    /// use lookback::Pred;
    /// let digit = Pred::ge(0i32).and(Pred::le(9));
    /// assert!(digit.eval(0) && digit.eval(9));
    /// assert!(!digit.eval(10) && !digit.eval(-1));
    /// assert_eq!(digit, Pred::ge(0) & Pred::le(9)); // `&` is the same
    /// ```
    #[allow(clippy::should_implement_trait)]
    pub fn and(self, other: Pred<T>) -> Self {
        self.combine(Opcode::And, other)
    }
    /// Either predicate holds.
    ///
    /// # Example
    /// ```
    /// use lookback::Pred;
    /// let outside = Pred::lt(0i32).or(Pred::gt(9));
    /// assert!(outside.eval(-1) && outside.eval(10));
    /// assert!(!outside.eval(5));
    /// assert_eq!(outside, Pred::lt(0) | Pred::gt(9)); // `|` is the same
    /// ```
    pub fn or(self, other: Pred<T>) -> Self {
        self.combine(Opcode::Or, other)
    }
    /// The predicate does not hold.
    ///
    /// # Example
    /// ```
    /// use lookback::Pred;
    /// let p = Pred::lt(1.0f32).not();
    /// assert!(p.eval(2.0) && !p.eval(0.5));
    /// // Not the same as `ge` for NaN: `lt` is false there, so its negation is true.
    /// assert!(p.eval(f32::NAN) && !Pred::ge(1.0f32).eval(f32::NAN));
    /// assert_eq!(p, !Pred::lt(1.0)); // `!` is the same
    /// ```
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Self {
        let mut terms = self.terms;
        terms.push_back(Term { op: Opcode::Not, a: T::zeroed(), b: T::zeroed() });
        Pred { terms, depth: self.depth }
    }

    /// Evaluates the predicate on the host, with the device's semantics.
    ///
    /// Any predicate works here, however large or deeply nested (the device's limits do not apply): it
    /// takes time proportional to its size, and a fixed amount of stack.
    ///
    /// # Example
    /// ```
    /// use lookback::half::f16;
    /// use lookback::Pred;
    /// let p = Pred::gt(f16::from_f32(0.5)) & !Pred::is_nan();
    /// assert!(p.eval(f16::ONE));
    /// assert!(!p.eval(f16::from_f32(0.25)));
    /// assert!(!p.eval(f16::NAN));
    /// ```
    #[inline]
    pub fn eval(&self, x: T) -> bool {
        eval::eval(&self.terms, self.depth, x)
    }

    /// Compiles to the device program.
    ///
    /// # Errors
    /// [`Error::PredicateTooComplex`](crate::Error::PredicateTooComplex) past [`MAX_INSTRUCTIONS`] or
    /// [`MAX_DEPTH`].
    pub(crate) fn program(&self) -> Result<PredProgram> {
        program::compile(&self.terms, self.depth)
    }
}

impl<T: FloatElement> Pred<T> {
    /// `x` is NaN.
    ///
    /// # Example
    /// ```
    /// use lookback::half::f16;
    /// use lookback::Pred;
    /// assert!(Pred::<f32>::is_nan().eval(f32::NAN));
    /// assert!(!Pred::<f32>::is_nan().eval(f32::INFINITY));
    /// assert!(Pred::<f16>::is_nan().eval(f16::NAN));
    /// assert!(!Pred::<f16>::is_nan().eval(f16::ONE));
    /// ```
    pub fn is_nan() -> Self {
        Self::leaf(Opcode::IsNan, T::zeroed(), T::zeroed())
    }
    /// `x` is neither infinite nor NaN.
    ///
    /// # Example
    /// ```
    /// use lookback::half::f16;
    /// use lookback::Pred;
    /// let finite = Pred::<f64>::is_finite();
    /// assert!(finite.eval(1.0) && finite.eval(f64::MAX));
    /// assert!(!finite.eval(f64::INFINITY) && !finite.eval(f64::NEG_INFINITY) && !finite.eval(f64::NAN));
    /// assert!(Pred::<f16>::is_finite().eval(f16::MAX));
    /// assert!(!Pred::<f16>::is_finite().eval(f16::INFINITY) && !Pred::<f16>::is_finite().eval(f16::NAN));
    /// ```
    pub fn is_finite() -> Self {
        Self::leaf(Opcode::IsFinite, T::zeroed(), T::zeroed())
    }
}

impl<T: IntElement> Pred<T> {
    /// `x & mask != 0`.
    ///
    /// # Example
    /// ```
    /// use lookback::Pred;
    /// let p = Pred::any_bits(0b1010u8);
    /// assert!(p.eval(0b0010) && p.eval(0b1111));
    /// assert!(!p.eval(0b0101) && !p.eval(0));
    /// ```
    pub fn any_bits(mask: T) -> Self {
        Self::leaf(Opcode::AnyBits, mask, mask)
    }
    /// `x & mask == mask`.
    ///
    /// # Example
    /// ```
    /// use lookback::Pred;
    /// let p = Pred::all_bits(0b1010u8);
    /// assert!(p.eval(0b1010) && p.eval(0b1110));
    /// assert!(!p.eval(0b0010) && !p.eval(0b0101));
    /// ```
    pub fn all_bits(mask: T) -> Self {
        Self::leaf(Opcode::AllBits, mask, mask)
    }
}

impl<T: Element> std::ops::BitAnd for Pred<T> {
    type Output = Pred<T>;
    fn bitand(self, rhs: Pred<T>) -> Pred<T> {
        self.and(rhs)
    }
}
impl<T: Element> std::ops::BitOr for Pred<T> {
    type Output = Pred<T>;
    fn bitor(self, rhs: Pred<T>) -> Pred<T> {
        self.or(rhs)
    }
}
impl<T: Element> std::ops::Not for Pred<T> {
    type Output = Pred<T>;
    fn not(self) -> Pred<T> {
        Pred::not(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn compiles_to_postfix() {
        // A bit test keeps the program as written (comparisons alone fold: fold.rs).
        let p = (Pred::lt(5i32) & Pred::gt(1)) | !Pred::any_bits(3);
        let prog = p.program().unwrap();
        let ops: Vec<u8> = prog.op[..prog.len as usize].to_vec();
        let want = [Opcode::Lt, Opcode::Gt, Opcode::And, Opcode::AnyBits, Opcode::Not, Opcode::Or];
        assert_eq!(ops, want.map(|o| o as u8));
        assert_eq!(prog.a[0], 5);
        assert_eq!(prog.a[3], 3);
    }

    #[test]
    fn operands_travel_as_zero_extended_bits() {
        let prog = Pred::between(-1i8, 7).program().unwrap();
        assert_eq!((prog.a[0], prog.b[0]), (0xff, 7));
        let prog = Pred::eq(1.5f32).program().unwrap();
        assert_eq!(prog.a[0], 1.5f32.to_bits() as u64);
    }

    #[test]
    fn depth_counts_only_what_is_pending() {
        // Left-nested chains need two stack slots however long they are.
        // (A bit test keeps them as written.)
        let mut left = Pred::any_bits(1u32);
        for k in 0..7 {
            left = left & Pred::ne(k);
        }
        assert_eq!(left.program().unwrap().len, 15);
        // Right-nested chains need one slot per level.
        let mut right = Pred::any_bits(1u32);
        for k in 0..7 {
            right = Pred::ne(k) & right;
        }
        assert!(right.program().is_ok(), "depth 8 fits");
        let deeper = Pred::eq(9) & right;
        assert!(matches!(deeper.program(), Err(Error::PredicateTooComplex { depth: 9, .. })));
    }

    #[test]
    fn too_many_instructions_is_an_error() {
        let mut p = Pred::all_bits(1u16);
        for k in 0..8 {
            p = p | Pred::eq(k);
        }
        assert!(matches!(p.program(), Err(Error::PredicateTooComplex { instructions: 17, .. })));
        // Without the bit test the same shape folds: [0, 7].
        let mut p = Pred::lt(0u16);
        for k in 0..8 {
            p = p | Pred::eq(k);
        }
        assert_eq!(p.program().unwrap().len, 1);
    }

    #[test]
    fn host_semantics_follow_ieee() {
        assert!(Pred::ne(1.0f64).eval(f64::NAN));
        assert!(!Pred::eq(f64::NAN).eval(f64::NAN));
        assert!(!Pred::lt(1.0f32).eval(f32::NAN) && !Pred::ge(1.0f32).eval(f32::NAN));
        assert!(Pred::eq(0.0f32).eval(-0.0));
        assert!(Pred::between(1u8, 3).eval(1) && Pred::between(1u8, 3).eval(3) && !Pred::between(1u8, 3).eval(4));
        assert!(Pred::<f32>::is_finite().eval(1.0) && !Pred::<f32>::is_finite().eval(f32::INFINITY));
        assert!(Pred::<half::f16>::is_nan().eval(half::f16::NAN));
        assert!(Pred::any_bits(0b1010u8).eval(0b0010) && !Pred::any_bits(0b1010u8).eval(0b0101));
        assert!(Pred::all_bits(0b1010u8).eval(0b1110) && !Pred::all_bits(0b1010u8).eval(0b0010));
        assert!(Pred::<i64>::always().eval(i64::MIN));
    }
}
