//! Folding a predicate of comparisons into the set of values it selects, before it goes to the device.
//!
//! The device interprets a program of several instructions one instruction at a time, each with its
//! opcode dispatch, operand loads and stack moves, and that costs a memory-bound kernel real speed: a
//! three-leaf conjunction made select_if 30 % slower on the H200 (2026-11-30 in the bench log,
//! `benches/log/2026-11-30-to-2026-12-02-notes.md`), and `lt(500) & (ne(-1) | eq(0))` ran at 0.70 of
//! memcpy against 0.96 for one leaf (2026-12-04, `benches/STATUS.md`). But every leaf except the bit tests
//! selects an interval of the item type's values, and NaN or not, so a predicate of such leaves, of any
//! shape, selects a set of intervals (intervals.rs). This walks the postfix terms once with a stack of
//! sets and sends the device the result:
//! - one interval: one leaf (`between`, or `ge`/`le` when it reaches an end of the type, or `always`),
//!   which the device tests without its interpreter loop; NaN alone: `is_nan`;
//! - otherwise up to [`MAX_RANGES`] intervals, tested item by item against each (`eval_ranges` in
//!   `cuda/core/predicate.cuh`), or the intervals of the complement with the result inverted when they
//!   are fewer (`ne(a) & ne(b)` is two points, inverted), and NaN tested on its own only when needed.
//!
//! A bit test, more intervals, or an intermediate set of more than [`CAP`] intervals keeps the program as
//! written (the interpreter runs it): folding changes speed, never a result. A single leaf is already
//! its own cheapest form. The walk is one loop (a predicate may have millions of terms) and each step
//! costs at most O(CAP).
use super::intervals::{Order, Set};
use super::{Opcode, Term};
use crate::element::Element;
use std::collections::VecDeque;

/// Intervals a folded program may hold (`PRED_MAX_RANGES` in `cuda/core/predicate.cuh`).
pub(super) const MAX_RANGES: usize = 8;
/// Intervals an intermediate set may hold before folding gives up.
const CAP: usize = 64;

/// What a foldable predicate becomes.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Folded<T> {
    /// One leaf.
    Leaf(Term<T>),
    /// A set of intervals.
    Ranges(Ranges<T>),
}

/// Closed intervals `[lo, hi]` of the item type; an item is selected when it lies in one (`!invert`) or
/// in none (`invert`). A NaN item lies in none; `nan` is `Some(selected)` when that is not what the
/// intervals already decide for it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Ranges<T> {
    pub(super) bounds: Vec<(T, T)>,
    pub(super) invert: bool,
    pub(super) nan: Option<bool>,
}

/// The folded form of the postfix `terms`, if they have at least two and fold (see the module docs).
pub(super) fn fold<T: Element>(terms: &VecDeque<Term<T>>) -> Option<Folded<T>> {
    if terms.len() < 2 || terms.iter().any(|t| matches!(t.op, Opcode::AnyBits | Opcode::AllBits)) {
        return None;
    }
    let o = Order::of::<T>();
    let mut stack: Vec<Set> = Vec::new();
    for t in terms {
        let set = match t.op {
            Opcode::And | Opcode::Or => {
                let (r, l) = (stack.pop()?, stack.pop()?);
                if t.op == Opcode::And { l.and(&r) } else { l.or(&r) }
            }
            Opcode::Not => stack.pop()?.not(&o),
            op => Set::of_leaf(&o, op, t.a, t.b)?,
        };
        if set.ranges.len() > CAP {
            return None;
        }
        stack.push(set);
    }
    let set = stack.pop()?;
    if !stack.is_empty() {
        return None;
    }
    encode(&o, &set)
}

/// The cheapest device form of `set`.
fn encode<T: Element>(o: &Order, set: &Set) -> Option<Folded<T>> {
    let leaf = |op, a: i128, b: i128| Some(Folded::Leaf(Term { op, a: o.value::<T>(a), b: o.value::<T>(b) }));
    match (set.ranges.as_slice(), set.nan) {
        (&[(lo, hi)], nan) if (lo, hi) == (o.min, o.max) && nan == o.float => leaf(Opcode::True, lo, lo),
        ([], true) => leaf(Opcode::IsNan, 0, 0),
        // A comparison with a bound excludes NaN, as the set does.
        (&[(lo, hi)], false) if lo == o.min => leaf(Opcode::Le, hi, hi),
        (&[(lo, hi)], false) if hi == o.max => leaf(Opcode::Ge, lo, lo),
        (&[(lo, hi)], false) => leaf(Opcode::Between, lo, hi),
        _ => {
            let outside = set.not(o);
            let invert = outside.ranges.len() < set.ranges.len();
            let ranges = if invert { &outside.ranges } else { &set.ranges };
            if ranges.len() > MAX_RANGES {
                return None;
            }
            // NaN is in no interval, so the intervals select it exactly when inverted.
            let nan = (o.float && set.nan != invert).then_some(set.nan);
            let bounds = ranges.iter().map(|&(lo, hi)| (o.value(lo), o.value(hi))).collect();
            Some(Folded::Ranges(Ranges { bounds, invert, nan }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Pred;
    use super::*;
    use half::{bf16, f16};

    /// Values around each constant: the constant and its neighbours in the type's order.
    fn around<T: Element>(consts: &[T]) -> Vec<T> {
        let o = Order::of::<T>();
        let mut v: Vec<T> = consts.to_vec();
        for &c in consts {
            if let Some(k) = o.key(c) {
                v.extend([k - 1, k + 1].into_iter().filter(|&k| o.min <= k && k <= o.max).map(|k| o.value::<T>(k)));
            }
        }
        v
    }

    /// Leaves over `consts`, then every `a op b` and `!(a op b)` of two of them and every `(a op b) op' c`:
    /// each compiled program (folded or not) must agree with the predicate as written on every value
    /// around the constants, as the device would evaluate it (`PredProgram::eval_as_device`).
    fn agrees<T: Element>(consts: &[T], leaves: Vec<Pred<T>>) {
        let values = around(consts);
        let mut checked = [0usize; 2];
        let check = |p: &Pred<T>, checked: &mut [usize; 2]| {
            let Ok(prog) = p.program() else { return };
            checked[fold(&p.terms).is_some() as usize] += 1;
            for &x in &values {
                assert_eq!(prog.eval_as_device(x), p.eval(x), "{p:?} → {prog:?} disagrees at {x:?}");
            }
        };
        for (i, a) in leaves.iter().enumerate() {
            for (j, b) in leaves.iter().enumerate().skip(i) {
                for p in [a.clone() & b.clone(), a.clone() | b.clone(), !(a.clone() | b.clone())] {
                    check(&p, &mut checked);
                    let c = &leaves[(i * 7 + j * 3) % leaves.len()];
                    check(&(p.clone() | c.clone()), &mut checked);
                    check(&(p & !c.clone()), &mut checked);
                }
            }
        }
        assert!(checked[1] > 0, "nothing folded");
    }

    fn comparisons<T: Element>(consts: &[T]) -> Vec<Pred<T>> {
        let mut leaves = vec![Pred::always()];
        for &c in consts {
            leaves.extend([Pred::lt(c), Pred::le(c), Pred::gt(c), Pred::ge(c), Pred::eq(c), Pred::ne(c)]);
        }
        for (i, &a) in consts.iter().enumerate() {
            for &b in &consts[i..] {
                leaves.push(Pred::between(a, b));
                leaves.push(Pred::between(b, a));
            }
        }
        leaves
    }

    fn float_leaves<T: crate::element::FloatElement>(consts: &[T]) -> Vec<Pred<T>> {
        let mut leaves = comparisons(consts);
        leaves.extend([Pred::is_nan(), Pred::is_finite()]);
        leaves
    }

    #[test]
    fn folds_agree_with_the_original_for_every_kind_of_type() {
        agrees::<i8>(&[i8::MIN, -1, 0, 50, i8::MAX], comparisons(&[i8::MIN, -1, 0, 50, i8::MAX]));
        agrees::<u8>(&[0, 1, 50, u8::MAX], comparisons(&[0, 1, 50, u8::MAX]));
        let i32s = [i32::MIN, -7, 0, 7, i32::MAX];
        let mut leaves = comparisons(&i32s);
        leaves.push(Pred::any_bits(6));
        agrees::<i32>(&i32s, leaves);
        agrees::<u64>(&[0, 3, u64::MAX - 1, u64::MAX], comparisons(&[0, 3, u64::MAX - 1, u64::MAX]));
        agrees::<i64>(&[i64::MIN, -1, 1, i64::MAX], comparisons(&[i64::MIN, -1, 1, i64::MAX]));
        let f32s =
            [f32::NEG_INFINITY, -f32::MAX, -1.5, -0.0, 0.0, f32::MIN_POSITIVE, f32::MAX, f32::INFINITY, f32::NAN];
        agrees::<f32>(&f32s, float_leaves(&f32s));
        let f64s = [f64::NEG_INFINITY, -0.0, 0.0, 1e300, f64::INFINITY, f64::NAN];
        agrees::<f64>(&f64s, float_leaves(&f64s));
        let f16s =
            [f16::NEG_INFINITY, f16::from_f32(-2.0), f16::NEG_ZERO, f16::ZERO, f16::MAX, f16::INFINITY, f16::NAN];
        agrees::<f16>(&f16s, float_leaves(&f16s));
        let bf16s = [bf16::NEG_INFINITY, bf16::NEG_ZERO, bf16::from_f32(3.0), bf16::INFINITY, bf16::NAN];
        agrees::<bf16>(&bf16s, float_leaves(&bf16s));
    }

    fn folded<T: Element>(p: &Pred<T>) -> Option<Folded<T>> {
        fold(&p.terms)
    }

    fn leaf<T: Element>(p: Option<Folded<T>>) -> Option<(Opcode, T, T)> {
        match p {
            Some(Folded::Leaf(t)) => Some((t.op, t.a, t.b)),
            _ => None,
        }
    }

    fn ranges<T: Element>(p: Option<Folded<T>>) -> Option<Ranges<T>> {
        match p {
            Some(Folded::Ranges(r)) => Some(r),
            _ => None,
        }
    }

    #[test]
    fn common_filters_become_one_leaf() {
        let valid = Pred::between(-50.0f32, 60.0) & Pred::ne(-9999.0) & !Pred::is_nan();
        assert_eq!(leaf(folded(&valid)), Some((Opcode::Between, -50.0, 60.0)));
        let half = Pred::ge(0i32) & Pred::lt(1 << 30) & Pred::ne(-1);
        assert_eq!(leaf(folded(&half)), Some((Opcode::Between, 0, (1 << 30) - 1)));
        let range = Pred::gt(1.0f64) & Pred::le(2.0) & Pred::is_finite();
        assert_eq!(leaf(folded(&range)), Some((Opcode::Between, 1.0 + f64::EPSILON, 2.0)));
        // Small sets of integers are intervals.
        let digits = Pred::eq(3u8) | Pred::eq(4) | Pred::eq(5) | Pred::eq(2);
        assert_eq!(leaf(folded(&digits)), Some((Opcode::Between, 2, 5)));
        // Not NaN, with an infinite bound: every non-NaN value.
        assert_eq!(leaf(folded(&(Pred::ge(f32::NEG_INFINITY) & Pred::le(f32::INFINITY)))).unwrap().0, Opcode::Le);
        assert_eq!(leaf(folded(&(Pred::lt(0i16) | Pred::ge(0)))).unwrap().0, Opcode::True);
        assert_eq!(leaf(folded(&(Pred::gt(1.0f32) & Pred::is_nan()))), None, "empty: a ranges program");
        // A single leaf stays as written; a bit test keeps the program.
        assert_eq!(folded(&Pred::lt(3i32)), None);
        assert_eq!(folded(&(Pred::any_bits(1u32) & Pred::lt(9))), None);
    }

    #[test]
    fn unions_become_ranges() {
        // The compound row of the select bench: [MIN, -2] ∪ [0, 499].
        let row = Pred::lt(500i32) & (Pred::ne(-1) | Pred::eq(0));
        let want = Ranges { bounds: vec![(i32::MIN, -2), (0, 499)], invert: false, nan: None };
        assert_eq!(ranges(folded(&row)), Some(want));
        // Two excluded points: the points, inverted.
        let sentinels = Pred::ne(-1i64) & Pred::ne(-9999);
        let want = Ranges { bounds: vec![(-9999, -9999), (-1, -1)], invert: true, nan: None };
        assert_eq!(ranges(folded(&sentinels)), Some(want));
        // Floats: excluding two points selects NaN, which the inverted points already do.
        let r = ranges(folded(&(Pred::ne(1.0f32) & Pred::ne(2.0)))).unwrap();
        assert_eq!((r.invert, r.nan), (true, None));
        // ... unless NaN is excluded too: its own test.
        let r = ranges(folded(&(Pred::ne(1.0f32) & Pred::ne(2.0) & !Pred::is_nan()))).unwrap();
        assert_eq!((r.invert, r.nan), (true, Some(false)));
        let r = ranges(folded(&(Pred::lt(0.0f64) | Pred::is_nan()))).unwrap();
        assert_eq!((r.bounds.len(), r.invert, r.nan), (1, false, Some(true)));
        // More intervals than the device takes: as written.
        let mut many = Pred::eq(0u32);
        for k in 1..=MAX_RANGES as u32 {
            many = many | Pred::eq(2 * k);
        }
        assert_eq!(folded(&many), None);
    }

    #[test]
    fn a_million_terms_fold_in_one_loop() {
        // Right-nested: the stack of sets is as deep as the predicate.
        let mut p = Pred::lt(0i32);
        for k in 0..500_000 {
            p = Pred::ne(k) & p;
        }
        assert_eq!(folded(&p).map(|f| matches!(f, Folded::Leaf(_))), Some(true));
    }
}
