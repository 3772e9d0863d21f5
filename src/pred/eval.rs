//! Evaluating a predicate on the host: one loop over its postfix terms with a stack of booleans, so a
//! predicate of any size and nesting costs time in proportion to its size and no call stack.
//!
//! The host reference paths call this once per item (up to 2^28 of them), so the usual predicate, whose
//! operand stack needs at most 64 entries, keeps its stack in the bits of one register; only a deeper one
//! allocates a stack, once per call.
use super::{Opcode, Term};
use crate::element::Element;
use std::collections::VecDeque;

/// Whether `x` satisfies the postfix program `terms`, whose operand stack needs `depth` entries.
#[inline]
pub(super) fn eval<T: Element>(terms: &VecDeque<Term<T>>, depth: usize, x: T) -> bool {
    let (front, back) = terms.as_slices();
    if depth <= Bits::CAPACITY { run(front, back, x, Bits(0)) } else { run(front, back, x, Vec::with_capacity(depth)) }
}

#[inline]
fn run<T: Element, S: Stack>(front: &[Term<T>], back: &[Term<T>], x: T, mut stack: S) -> bool {
    // The item is widened once, not once per test.
    let (v, bits) = (x.to_acc(), x.to_bits());
    for t in front.iter().chain(back) {
        match t.op {
            Opcode::And => {
                let r = stack.pop();
                let l = stack.pop();
                stack.push(l & r);
            }
            Opcode::Or => {
                let r = stack.pop();
                let l = stack.pop();
                stack.push(l | r);
            }
            Opcode::Not => {
                let r = stack.pop();
                stack.push(!r);
            }
            op => stack.push(test(op, v, bits, t.a, t.b)),
        }
    }
    stack.pop()
}

/// One leaf: `v` and `bits` are the item widened and as bits.
#[inline]
pub(super) fn test<T: Element>(op: Opcode, v: T::Acc, bits: u64, a: T, b: T) -> bool {
    match op {
        Opcode::True => true,
        Opcode::Lt => v < a.to_acc(),
        Opcode::Le => v <= a.to_acc(),
        Opcode::Gt => v > a.to_acc(),
        Opcode::Ge => v >= a.to_acc(),
        Opcode::Eq => v == a.to_acc(),
        Opcode::Ne => v != a.to_acc(),
        Opcode::Between => a.to_acc() <= v && v <= b.to_acc(),
        // `v != v` is NaN; finite means not NaN and not ±inf (only floats build these leaves).
        Opcode::IsNan => v.partial_cmp(&v).is_none(),
        Opcode::IsFinite => T::is_finite_acc(v),
        Opcode::AnyBits => bits & a.to_bits() != 0,
        Opcode::AllBits => bits & a.to_bits() == a.to_bits(),
        // Combinators are handled by the caller; a leaf never carries one.
        Opcode::And | Opcode::Or | Opcode::Not => false,
    }
}

/// The operand stack. Postfix terms built by `Pred` never pop an empty stack.
trait Stack {
    fn push(&mut self, v: bool);
    fn pop(&mut self) -> bool;
}

/// Up to 64 entries in one word, the top in the lowest bit.
struct Bits(u64);

impl Bits {
    const CAPACITY: usize = 64;
}

impl Stack for Bits {
    #[inline]
    fn push(&mut self, v: bool) {
        self.0 = self.0 << 1 | v as u64;
    }
    #[inline]
    fn pop(&mut self) -> bool {
        let v = self.0 & 1 != 0;
        self.0 >>= 1;
        v
    }
}

impl Stack for Vec<bool> {
    #[inline]
    fn push(&mut self, v: bool) {
        Vec::push(self, v);
    }
    #[inline]
    fn pop(&mut self) -> bool {
        Vec::pop(self).unwrap_or(false)
    }
}
