//! Predicates as data: `Pred<T>` expressions, evaluated on the device inside the tile load.
use crate::element::{Element, FloatElement, IntElement};
use crate::error::{Error, Result};

/// Instructions a predicate may compile to (`PRED_MAX_INSTRUCTIONS` in `cuda/predicate.cuh`).
pub const MAX_INSTRUCTIONS: usize = 16;
/// Deepest operand stack a predicate may need (`PRED_MAX_DEPTH` in `cuda/predicate.cuh`).
pub const MAX_DEPTH: usize = 8;

/// Opcodes; must match the `PRED_*` enum of `cuda/predicate.cuh`.
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

/// The compiled form: mirrors `PredProgram` of `cuda/predicate.cuh`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct PredProgram {
    len: u32,
    op: [u8; MAX_INSTRUCTIONS],
    _pad: u32,
    a: [u64; MAX_INSTRUCTIONS],
    b: [u64; MAX_INSTRUCTIONS],
}
const _: () = assert!(size_of::<PredProgram>() == 280);

impl Default for PredProgram {
    fn default() -> Self {
        PredProgram { len: 0, op: [0; MAX_INSTRUCTIONS], _pad: 0, a: [0; MAX_INSTRUCTIONS], b: [0; MAX_INSTRUCTIONS] }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Node<T> {
    Leaf(Opcode, T, T),
    And(Box<Node<T>>, Box<Node<T>>),
    Or(Box<Node<T>>, Box<Node<T>>),
    Not(Box<Node<T>>),
}

/// A predicate on items of type `T`, built from comparisons with constants and combined with
/// [`and`](Pred::and), [`or`](Pred::or) and [`not`](Pred::not) (or `&`, `|`, `!`).
///
/// Comparisons follow IEEE rules for floats: every comparison with NaN is false except `ne`, and
/// `-0.0 == 0.0`. `f16`/`bf16` compare exactly (as their `f32` widening). A predicate compiles to at most
/// [`MAX_INSTRUCTIONS`] instructions (one per leaf and per `and`/`or`/`not`) with an operand stack of at
/// most [`MAX_DEPTH`]; a larger one is rejected with [`Error::PredicateTooComplex`] when used.
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
#[derive(Clone, Debug, PartialEq)]
pub struct Pred<T> {
    node: Node<T>,
}

impl<T: Element> Pred<T> {
    fn leaf(op: Opcode, a: T, b: T) -> Self {
        Pred { node: Node::Leaf(op, a, b) }
    }
    /// Selects every item.
    pub fn always() -> Self {
        Self::leaf(Opcode::True, T::zeroed(), T::zeroed())
    }
    /// `x < c`.
    pub fn lt(c: T) -> Self {
        Self::leaf(Opcode::Lt, c, c)
    }
    /// `x <= c`.
    pub fn le(c: T) -> Self {
        Self::leaf(Opcode::Le, c, c)
    }
    /// `x > c`.
    pub fn gt(c: T) -> Self {
        Self::leaf(Opcode::Gt, c, c)
    }
    /// `x >= c`.
    pub fn ge(c: T) -> Self {
        Self::leaf(Opcode::Ge, c, c)
    }
    /// `x == c` (IEEE equality for floats).
    pub fn eq(c: T) -> Self {
        Self::leaf(Opcode::Eq, c, c)
    }
    /// `x != c` (true for NaN).
    pub fn ne(c: T) -> Self {
        Self::leaf(Opcode::Ne, c, c)
    }
    /// `lo <= x && x <= hi` (both ends included).
    pub fn between(lo: T, hi: T) -> Self {
        Self::leaf(Opcode::Between, lo, hi)
    }
    /// Both predicates hold.
    #[allow(clippy::should_implement_trait)]
    pub fn and(self, other: Pred<T>) -> Self {
        Pred { node: Node::And(Box::new(self.node), Box::new(other.node)) }
    }
    /// Either predicate holds.
    pub fn or(self, other: Pred<T>) -> Self {
        Pred { node: Node::Or(Box::new(self.node), Box::new(other.node)) }
    }
    /// The predicate does not hold.
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Self {
        Pred { node: Node::Not(Box::new(self.node)) }
    }

    /// Evaluates the predicate on the host, with the device's semantics.
    pub fn eval(&self, x: T) -> bool {
        eval_node(&self.node, x)
    }

    /// Compiles to the device program.
    ///
    /// # Errors
    /// [`Error::PredicateTooComplex`] past [`MAX_INSTRUCTIONS`] or [`MAX_DEPTH`].
    pub(crate) fn program(&self) -> Result<PredProgram> {
        let mut p = PredProgram::default();
        let depth = emit(&self.node, &mut p, 0);
        let len = p.len as usize;
        if len > MAX_INSTRUCTIONS || depth > MAX_DEPTH {
            return Err(Error::PredicateTooComplex { instructions: len, depth });
        }
        Ok(p)
    }
}

impl<T: FloatElement> Pred<T> {
    /// `x` is NaN.
    pub fn is_nan() -> Self {
        Self::leaf(Opcode::IsNan, T::zeroed(), T::zeroed())
    }
    /// `x` is neither infinite nor NaN.
    pub fn is_finite() -> Self {
        Self::leaf(Opcode::IsFinite, T::zeroed(), T::zeroed())
    }
}

impl<T: IntElement> Pred<T> {
    /// `x & mask != 0`.
    pub fn any_bits(mask: T) -> Self {
        Self::leaf(Opcode::AnyBits, mask, mask)
    }
    /// `x & mask == mask`.
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

/// Appends one instruction (past the limit only the length grows, so the caller can report it).
fn push(p: &mut PredProgram, op: Opcode, a: u64, b: u64) {
    let i = p.len as usize;
    if i < MAX_INSTRUCTIONS {
        p.op[i] = op as u8;
        p.a[i] = a;
        p.b[i] = b;
    }
    p.len += 1;
}

/// Appends `n` in postfix order and returns the stack depth reached, `base` entries being on the stack
/// before it.
fn emit<T: Element>(n: &Node<T>, p: &mut PredProgram, base: usize) -> usize {
    match n {
        Node::Leaf(op, a, b) => {
            push(p, *op, a.to_bits(), b.to_bits());
            base + 1
        }
        Node::And(l, r) | Node::Or(l, r) => {
            let dl = emit(l, p, base);
            let dr = emit(r, p, base + 1);
            push(p, if matches!(n, Node::And(..)) { Opcode::And } else { Opcode::Or }, 0, 0);
            dl.max(dr)
        }
        Node::Not(x) => {
            let d = emit(x, p, base);
            push(p, Opcode::Not, 0, 0);
            d
        }
    }
}

fn eval_node<T: Element>(n: &Node<T>, x: T) -> bool {
    match n {
        Node::Leaf(op, a, b) => {
            let (v, ca, cb) = (x.to_acc(), a.to_acc(), b.to_acc());
            match op {
                Opcode::True => true,
                Opcode::Lt => v < ca,
                Opcode::Le => v <= ca,
                Opcode::Gt => v > ca,
                Opcode::Ge => v >= ca,
                Opcode::Eq => v == ca,
                Opcode::Ne => v != ca,
                Opcode::Between => ca <= v && v <= cb,
                // `v != v` is NaN; finite means not NaN and not ±inf (only floats build these leaves).
                Opcode::IsNan => v.partial_cmp(&v).is_none(),
                Opcode::IsFinite => T::is_finite_acc(v),
                Opcode::AnyBits => x.to_bits() & a.to_bits() != 0,
                Opcode::AllBits => x.to_bits() & a.to_bits() == a.to_bits(),
                Opcode::And | Opcode::Or | Opcode::Not => unreachable!("combinators are not leaves"),
            }
        }
        Node::And(l, r) => eval_node(l, x) && eval_node(r, x),
        Node::Or(l, r) => eval_node(l, x) || eval_node(r, x),
        Node::Not(inner) => !eval_node(inner, x),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_to_postfix() {
        let p = (Pred::lt(5i32) & Pred::gt(1)) | !Pred::eq(3);
        let prog = p.program().unwrap();
        let ops: Vec<u8> = prog.op[..prog.len as usize].to_vec();
        let want = [Opcode::Lt, Opcode::Gt, Opcode::And, Opcode::Eq, Opcode::Not, Opcode::Or];
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
        let mut left = Pred::lt(0u32);
        for k in 0..7 {
            left = left & Pred::ne(k);
        }
        assert_eq!(left.program().unwrap().len, 15);
        // Right-nested chains need one slot per level.
        let mut right = Pred::lt(0u32);
        for k in 0..7 {
            right = Pred::ne(k) & right;
        }
        assert!(right.program().is_ok(), "depth 8 fits");
        let deeper = Pred::eq(9) & right;
        assert!(matches!(deeper.program(), Err(Error::PredicateTooComplex { depth: 9, .. })));
    }

    #[test]
    fn too_many_instructions_is_an_error() {
        let mut p = Pred::lt(0u16);
        for k in 0..8 {
            p = p | Pred::eq(k);
        }
        assert!(matches!(p.program(), Err(Error::PredicateTooComplex { instructions: 17, .. })));
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
