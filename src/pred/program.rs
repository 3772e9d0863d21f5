//! Compiling a predicate to the device program: the folded form when it folds (fold.rs), else the terms
//! as written, which are already in the device's postfix order, so this checks the limits and copies. The
//! size and depth are known before anything is copied, so a predicate of a million terms is rejected at
//! the cost of folding it (one loop), not of walking it as a tree.
#[cfg(test)]
use super::Opcode;
use super::fold::{self, Folded, Ranges};
use super::{MAX_DEPTH, MAX_INSTRUCTIONS, Term};
use crate::element::Element;
use crate::error::{Error, Result};
use std::collections::VecDeque;

/// The first opcode of a ranges program (`PRED_RANGES` in `cuda/core/predicate.cuh`); its second is
/// the flags below.
const RANGES: u8 = 15;
const INVERT: u8 = 1;
const NAN_TEST: u8 = 2;
const NAN_IN: u8 = 4;

/// The compiled form: mirrors `PredProgram` of `cuda/core/predicate.cuh`, field for field. Either postfix
/// instructions (`len` of them), or, when `op[0]` is `RANGES`, `len` intervals: `a[i]` the low bound and
/// `b[i]` the high one, or for integer types the interval's width `hi - lo` (the device tests
/// `(unsigned)(x - lo) <= width`, one compare).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PredProgram {
    pub(super) len: u32,
    pub(super) op: [u8; MAX_INSTRUCTIONS],
    _pad: u32,
    pub(super) a: [u64; MAX_INSTRUCTIONS],
    pub(super) b: [u64; MAX_INSTRUCTIONS],
}
const _: () = assert!(size_of::<PredProgram>() == 280);

impl Default for PredProgram {
    fn default() -> Self {
        PredProgram { len: 0, op: [0; MAX_INSTRUCTIONS], _pad: 0, a: [0; MAX_INSTRUCTIONS], b: [0; MAX_INSTRUCTIONS] }
    }
}

/// The program of the postfix `terms`, whose operand stack needs `depth` entries.
///
/// # Errors
/// [`Error::PredicateTooComplex`] past [`MAX_INSTRUCTIONS`] or [`MAX_DEPTH`].
pub(super) fn compile<T: Element>(terms: &VecDeque<Term<T>>, depth: usize) -> Result<PredProgram> {
    // The host's `eval` keeps the terms as written: it is the reference the folded form is tested against.
    match fold::fold(terms) {
        Some(Folded::Leaf(leaf)) => {
            let mut p = PredProgram { len: 1, ..PredProgram::default() };
            put(&mut p, 0, &leaf);
            Ok(p)
        }
        Some(Folded::Ranges(r)) => Ok(ranges(&r)),
        None => {
            if terms.len() > MAX_INSTRUCTIONS || depth > MAX_DEPTH {
                return Err(Error::PredicateTooComplex { instructions: terms.len(), depth });
            }
            let mut p = PredProgram { len: terms.len() as u32, ..PredProgram::default() };
            terms.iter().enumerate().for_each(|(i, t)| put(&mut p, i, t));
            Ok(p)
        }
    }
}

/// The ranges program of `r` (at most `fold::MAX_RANGES` ≤ `MAX_INSTRUCTIONS` intervals).
fn ranges<T: Element>(r: &Ranges<T>) -> PredProgram {
    let mut p = PredProgram { len: r.bounds.len() as u32, ..PredProgram::default() };
    p.op[0] = RANGES;
    p.op[1] =
        if r.invert { INVERT } else { 0 } | r.nan.map_or(0, |selected| NAN_TEST | if selected { NAN_IN } else { 0 });
    let mask = bits_mask::<T>();
    for (i, &(lo, hi)) in r.bounds.iter().enumerate() {
        p.a[i] = lo.to_bits();
        // Two's complement: the bit patterns' difference is the values' distance for signed types too.
        p.b[i] = if T::DTYPE.is_integer() { hi.to_bits().wrapping_sub(lo.to_bits()) & mask } else { hi.to_bits() };
    }
    p
}

/// The bits a value of `T` occupies in a zero-extended operand.
fn bits_mask<T>() -> u64 {
    u64::MAX >> (64 - 8 * size_of::<T>())
}

/// Instruction `i`; combinators carry zero operands, which is what the device expects of them.
fn put<T: Element>(p: &mut PredProgram, i: usize, t: &Term<T>) {
    p.op[i] = t.op as u8;
    p.a[i] = t.a.to_bits();
    p.b[i] = t.b.to_bits();
}

#[cfg(test)]
impl PredProgram {
    /// What the device's `eval_predicate` gives for `x`, written again here from its definition: the tests
    /// hold every compiled program to the predicate as written (`Pred::eval`).
    pub(super) fn eval_as_device<T: Element>(&self, x: T) -> bool {
        let v = x.to_acc();
        let nan = v.partial_cmp(&v).is_none();
        let value = |bits: u64| T::from_bits(bits);
        if self.op[0] == RANGES {
            // The device computes in the item type's unsigned type: every operand is cut to its width.
            let width = |v: u64| if size_of::<T>() == 8 { v } else { v & ((1u64 << (8 * size_of::<T>())) - 1) };
            let inside = (0..self.len as usize).any(|i| {
                if T::DTYPE.is_integer() {
                    width(x.to_bits().wrapping_sub(self.a[i])) <= width(self.b[i])
                } else {
                    value(self.a[i]).to_acc() <= v && v <= value(self.b[i]).to_acc()
                }
            });
            let flags = self.op[1];
            let selected = inside != (flags & INVERT != 0);
            return if flags & NAN_TEST != 0 && nan { flags & NAN_IN != 0 } else { selected };
        }
        let mut stack = Vec::new();
        for i in 0..self.len as usize {
            let op = OPCODES[self.op[i] as usize];
            let r = match op {
                Opcode::And | Opcode::Or => {
                    let (r, l): (bool, bool) = (stack.pop().unwrap(), stack.pop().unwrap());
                    if op == Opcode::And { l & r } else { l | r }
                }
                Opcode::Not => !stack.pop().unwrap(),
                _ => super::eval::test(op, v, x.to_bits(), value(self.a[i]), value(self.b[i])),
            };
            stack.push(r);
        }
        stack.pop().unwrap_or(false)
    }
}

#[cfg(test)]
const OPCODES: [Opcode; 15] = [
    Opcode::True,
    Opcode::Lt,
    Opcode::Le,
    Opcode::Gt,
    Opcode::Ge,
    Opcode::Eq,
    Opcode::Ne,
    Opcode::Between,
    Opcode::IsNan,
    Opcode::IsFinite,
    Opcode::AnyBits,
    Opcode::AllBits,
    Opcode::And,
    Opcode::Or,
    Opcode::Not,
];
