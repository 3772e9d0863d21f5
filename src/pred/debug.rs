//! `Debug` for `Pred`: the expression tree, printed from the postfix terms with a loop and an explicit
//! stack (a derived `Debug` over a tree recurses once per level, and users nest predicates millions deep).
//!
//! The text is what `#[derive(Debug)]` printed for the tree this crate used to store,
//! `Pred { node: And(Leaf(Lt, 5, 5), Not(Leaf(IsNan, 0.0, 0.0))) }`, so printed predicates read as before.
//! `{:#?}` prints the same single line: derive's indented form grows with the square of the depth.
use super::{Opcode, Pred, Term};
use std::fmt::{self, Debug, Formatter};

impl<T: Debug> Debug for Pred<T> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("Pred { node: ")?;
        let terms = &self.terms;
        let starts = subtree_starts(terms.iter());
        let mut todo = vec![Todo::Term(terms.len() - 1)];
        while let Some(next) = todo.pop() {
            let i = match next {
                Todo::Text(s) => {
                    f.write_str(s)?;
                    continue;
                }
                Todo::Term(i) => i,
            };
            let Term { op, a, b } = &terms[i];
            match op {
                Opcode::And | Opcode::Or => {
                    f.write_str(if *op == Opcode::And { "And(" } else { "Or(" })?;
                    // The right operand ends just before `i`, the left one just before the right one starts.
                    let right = i - 1;
                    let left = starts[right] - 1;
                    todo.extend([Todo::Text(")"), Todo::Term(right), Todo::Text(", "), Todo::Term(left)]);
                }
                Opcode::Not => {
                    f.write_str("Not(")?;
                    todo.extend([Todo::Text(")"), Todo::Term(i - 1)]);
                }
                _ => {
                    // The item type's own formatting, with the caller's flags (precision, …).
                    f.write_str("Leaf(")?;
                    op.fmt(f)?;
                    f.write_str(", ")?;
                    a.fmt(f)?;
                    f.write_str(", ")?;
                    b.fmt(f)?;
                    f.write_str(")")?;
                }
            }
        }
        f.write_str(" }")
    }
}

/// What is left to print, last first.
enum Todo {
    Term(usize),
    Text(&'static str),
}

/// For each term, where the subexpression it ends begins.
fn subtree_starts<'a, T: 'a>(terms: impl Iterator<Item = &'a Term<T>>) -> Vec<usize> {
    let mut starts: Vec<usize> = Vec::new();
    for (i, t) in terms.enumerate() {
        let start = match t.op {
            Opcode::And | Opcode::Or => starts[starts[i - 1] - 1],
            Opcode::Not => starts[i - 1],
            _ => i,
        };
        starts.push(start);
    }
    starts
}
