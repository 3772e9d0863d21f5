//! Folding a conjunction of range tests into one leaf before it goes to the device.
//!
//! The device evaluates a one-leaf program without its interpreter loop (`eval_predicate` in
//! `cuda/core/predicate.cuh`), and every further leaf costs a comparison per item plus the loop's dispatch
//! (a three-leaf conjunction made select_if 30 % slower on the H200: 2026-11-30 in the bench log,
//! `benches/log/2026-11-30-to-2026-12-02-notes.md`). A conjunction such as
//! `between(-50, 60) & ne(-9999) & !is_nan()` or `ge(0) & lt(100)` selects exactly the items of one
//! closed interval, so it compiles to one `between` leaf: `x < c` becomes `x <= (the value just
//! below c)`, `x > c` becomes `x >= (the value just above c)` (the next representable value of the item
//! type, which is also what the device compares: f16/bf16 widen exactly), and `ne(c)`, `!is_nan()` and
//! `is_finite()` are dropped when the interval already excludes what they exclude. Anything else, or a
//! case this does not prove (an empty interval, a bound at NaN or past the type's range, `ne` inside
//! the interval), keeps the predicate as written: folding only ever changes speed, never a result.
//!
//! The terms come in postfix order and are read in one loop (a predicate may have millions of them).
use super::{Opcode, Term};
use crate::element::Element;
use crate::kernels::DType;
use std::cmp::Ordering;

/// The one-leaf form of `terms` (postfix), if they are a foldable conjunction of at least two tests.
pub(super) fn fold<'a, T: Element>(terms: impl IntoIterator<Item = &'a Term<T>>) -> Option<Term<T>> {
    let (mut lo, mut hi) = (None::<T>, None::<T>);
    let (mut excluded, mut finite_only) = (Vec::new(), false);
    let mut tests = 0;
    // In postfix, a tree made of `and`s over tests has only tests and `and`s, and `not` only right after
    // the test it negates. Each test is a conjunct, in the order written.
    let mut terms = terms.into_iter().peekable();
    while let Some(&Term { op, a, b }) = terms.next() {
        match op {
            Opcode::And => continue,
            Opcode::Ge => lo = Some(tighter(lo, a, Ordering::Greater)?),
            Opcode::Gt => lo = Some(tighter(lo, step(a, true)?, Ordering::Greater)?),
            Opcode::Le => hi = Some(tighter(hi, a, Ordering::Less)?),
            Opcode::Lt => hi = Some(tighter(hi, step(a, false)?, Ordering::Less)?),
            Opcode::Between | Opcode::Eq => {
                let b = if op == Opcode::Eq { a } else { b };
                lo = Some(tighter(lo, a, Ordering::Greater)?);
                hi = Some(tighter(hi, b, Ordering::Less)?);
            }
            Opcode::Ne => excluded.push(a),
            Opcode::IsFinite => finite_only = true,
            // `!is_nan()` (negated once): every bound already excludes NaN (checked below: at least one
            // bound). `is_nan()` itself, or negated twice, is not a range test.
            Opcode::IsNan => {
                if terms.next().map(|t| t.op) != Some(Opcode::Not) || terms.peek().is_some_and(|t| t.op == Opcode::Not)
                {
                    return None;
                }
            }
            _ => return None,
        }
        tests += 1;
    }
    if tests < 2 {
        return None;
    }
    if lo.is_none() && hi.is_none() {
        return None;
    }
    // An empty interval is rare and not worth a special program.
    if let (Some(l), Some(h)) = (lo, hi)
        && cmp(l, h)? == Ordering::Greater
    {
        return None;
    }
    // is_finite() is implied only by two finite bounds.
    if finite_only
        && !(lo.is_some_and(|l| T::is_finite_acc(l.to_acc())) && hi.is_some_and(|h| T::is_finite_acc(h.to_acc())))
    {
        return None;
    }
    // ne(c) is implied when c is NaN or outside the interval (-0 and +0 compare equal, so ne(-0) inside
    // [+0, …] stays).
    for c in excluded {
        let nan = c.to_acc().partial_cmp(&c.to_acc()).is_none();
        let below = lo.is_some_and(|l| cmp(c, l) == Some(Ordering::Less));
        let above = hi.is_some_and(|h| cmp(c, h) == Some(Ordering::Greater));
        if !(nan || below || above) {
            return None;
        }
    }
    Some(match (lo, hi) {
        (Some(l), Some(h)) => Term { op: Opcode::Between, a: l, b: h },
        (Some(l), None) => Term { op: Opcode::Ge, a: l, b: l },
        (None, Some(h)) => Term { op: Opcode::Le, a: h, b: h },
        (None, None) => unreachable!("checked above"),
    })
}

fn cmp<T: Element>(a: T, b: T) -> Option<Ordering> {
    a.to_acc().partial_cmp(&b.to_acc())
}

/// The tighter of a bound and a new one (`keep`: Greater for lower bounds, Less for upper ones); None
/// for a NaN bound (a comparison with NaN selects nothing: not folded).
fn tighter<T: Element>(current: Option<T>, new: T, keep: Ordering) -> Option<T> {
    cmp(new, new)?;
    Some(match current {
        Some(c) if cmp(new, c)? != keep => c,
        _ => new,
    })
}

/// The representable value just above (`up`) or just below `x` in the item type; None past the ends
/// (the integer extremes, +inf up, -inf down) and for NaN.
fn step<T: Element>(x: T, up: bool) -> Option<T> {
    let width = 8 * size_of::<T>() as u32;
    let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
    let sign = 1u64 << (width - 1);
    let b = x.to_bits();
    if T::DTYPE.is_integer() {
        let signed = matches!(T::DTYPE, DType::I8 | DType::I16 | DType::I32 | DType::I64);
        let (min, max) = if signed { (sign, sign - 1) } else { (0, mask) };
        if b == if up { max } else { min } {
            return None;
        }
        // Two's complement: the bit pattern steps as the value does, except at the extremes.
        return Some(T::from_bits((if up { b.wrapping_add(1) } else { b.wrapping_sub(1) }) & mask));
    }
    cmp(x, x)?;
    let negative = b & sign != 0;
    if !T::is_finite_acc(x.to_acc()) && up != negative {
        return None; // above +inf or below -inf
    }
    // IEEE bit patterns order magnitudes: away from zero is +1, towards zero is -1; ±0 steps to the
    // smallest subnormal of the direction's sign.
    let bits = if b & !sign == 0 {
        if up { 1 } else { sign | 1 }
    } else if negative != up {
        b + 1
    } else {
        b - 1
    };
    Some(T::from_bits(bits))
}

#[cfg(test)]
mod tests {
    use super::super::Pred;
    use super::*;
    use half::{bf16, f16};

    /// Edge values of a type and their neighbours, as item values and as constants.
    fn edges<T: Element>(extra: &[T]) -> Vec<T> {
        let mut v: Vec<T> = extra.to_vec();
        for &x in extra {
            v.extend(step(x, true));
            v.extend(step(x, false));
        }
        v
    }

    /// Every conjunction of two and three tests drawn from `leaves` folds to something that agrees with
    /// the original on every value of `values`.
    fn agrees<T: Element>(consts: &[T]) {
        let values = edges(consts);
        let mut leaves: Vec<Pred<T>> = Vec::new();
        for &c in &values {
            leaves.extend([Pred::lt(c), Pred::le(c), Pred::gt(c), Pred::ge(c), Pred::eq(c), Pred::ne(c)]);
        }
        for (i, &a) in consts.iter().enumerate() {
            for &b in &consts[i..] {
                leaves.push(Pred::between(a, b));
            }
        }
        let mut folded = 0;
        for (i, a) in leaves.iter().enumerate() {
            for b in leaves.iter().skip(i) {
                for c in [None, Some(&leaves[(i * 7) % leaves.len()])] {
                    let p = match c {
                        Some(c) => a.clone() & b.clone() & c.clone(),
                        None => a.clone() & b.clone(),
                    };
                    if let Some(f) = fold(&p.terms) {
                        folded += 1;
                        let q = Pred::leaf(f.op, f.a, f.b);
                        for &x in &values {
                            assert_eq!(q.eval(x), p.eval(x), "{p:?} folded to {q:?} disagrees at {x:?}");
                        }
                    }
                }
            }
        }
        assert!(folded > 0, "nothing folded");
    }

    #[test]
    fn folds_agree_with_the_original_for_every_kind_of_type() {
        agrees::<i8>(&[i8::MIN, -1, 0, 1, 50, i8::MAX]);
        agrees::<u8>(&[0, 1, 49, 50, u8::MAX]);
        agrees::<i32>(&[i32::MIN, -7, 0, 7, i32::MAX]);
        agrees::<u64>(&[0, 3, u64::MAX - 1, u64::MAX]);
        agrees::<f32>(&[
            f32::NEG_INFINITY,
            -f32::MAX,
            -1.5,
            -0.0,
            0.0,
            f32::MIN_POSITIVE,
            2.5,
            f32::MAX,
            f32::INFINITY,
            f32::NAN,
        ]);
        agrees::<f64>(&[f64::NEG_INFINITY, -0.0, 0.0, 1e300, f64::INFINITY, f64::NAN]);
        agrees::<f16>(&[
            f16::NEG_INFINITY,
            f16::from_f32(-2.0),
            f16::NEG_ZERO,
            f16::ZERO,
            f16::from_f32(0.1),
            f16::MAX,
            f16::INFINITY,
            f16::NAN,
        ]);
        agrees::<bf16>(&[
            bf16::NEG_INFINITY,
            bf16::NEG_ZERO,
            bf16::ZERO,
            bf16::from_f32(3.0),
            bf16::INFINITY,
            bf16::NAN,
        ]);
    }

    #[test]
    fn common_filters_become_one_leaf() {
        let valid = Pred::between(-50.0f32, 60.0) & Pred::ne(-9999.0) & !Pred::is_nan();
        assert_eq!(valid.program().unwrap().len, 1);
        let half = Pred::ge(0i32) & Pred::lt(1 << 30) & Pred::ne(-1);
        assert_eq!(half.program().unwrap().len, 1);
        let range = Pred::gt(1.0f64) & Pred::le(2.0) & Pred::is_finite();
        assert_eq!(range.program().unwrap().len, 1);
        let values = [f64::NAN, f64::NEG_INFINITY, 1.0, 1.0 + f64::EPSILON, 2.0, 2.5, f64::INFINITY, -0.0];
        for p in [Pred::gt(1.0f64) & Pred::le(2.0) & Pred::is_finite(), Pred::ge(1.0f64) & !Pred::is_nan()] {
            let f = fold(&p.terms).expect("folds");
            let q = Pred::leaf(f.op, f.a, f.b);
            for x in values {
                assert_eq!(q.eval(x), p.eval(x), "{p:?} folded to {q:?} disagrees at {x:?}");
            }
        }
        // is_finite() with an infinite bound is not implied: kept.
        assert_eq!((Pred::ge(f32::NEG_INFINITY) & Pred::is_finite()).program().unwrap().len, 3);
        // Not provably one interval: kept as written.
        let hole = Pred::between(0u32, 10) & Pred::ne(5);
        assert_eq!(hole.program().unwrap().len, 3);
        let either = Pred::lt(0i64) | Pred::gt(10);
        assert_eq!(either.program().unwrap().len, 3);
    }
}
