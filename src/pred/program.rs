//! Compiling a predicate to the device program. The terms are already in the device's postfix order, so
//! this checks the limits and copies; the size and depth are known before anything is copied, so a
//! predicate of a million terms is rejected at the cost of folding it (fold.rs: one loop), not of
//! walking it as a tree.
use super::{MAX_DEPTH, MAX_INSTRUCTIONS, Term, fold};
use crate::element::Element;
use crate::error::{Error, Result};
use std::collections::VecDeque;

/// The compiled form: mirrors `PredProgram` of `cuda/core/predicate.cuh`, field for field.
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
    // A conjunction of range tests that is one interval compiles to one leaf (fold.rs); the host's `eval`
    // keeps the terms as written.
    let folded = fold::fold(terms);
    let (len, depth) = if folded.is_some() { (1, 1) } else { (terms.len(), depth) };
    if len > MAX_INSTRUCTIONS || depth > MAX_DEPTH {
        return Err(Error::PredicateTooComplex { instructions: len, depth });
    }
    let mut p = PredProgram { len: len as u32, ..PredProgram::default() };
    match &folded {
        Some(leaf) => put(&mut p, 0, leaf),
        None => terms.iter().enumerate().for_each(|(i, t)| put(&mut p, i, t)),
    }
    Ok(p)
}

/// Instruction `i`; combinators carry zero operands, which is what the device expects of them.
fn put<T: Element>(p: &mut PredProgram, i: usize, t: &Term<T>) {
    p.op[i] = t.op as u8;
    p.a[i] = t.a.to_bits();
    p.b[i] = t.b.to_bits();
}
