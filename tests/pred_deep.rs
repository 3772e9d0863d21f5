//! Predicates of any size and nesting are data, not recursion: a million nested terms, built either way,
//! evaluate, fold, compile (to one comparison, or to a typed error when a bit test keeps them as written),
//! clone, compare, print and drop on a thread with a small stack. A tree walked recursively overflowed it (until 2026-12-04, `host::count_if` aborted the
//! process on a `Pred` of 10^6 nested terms).
mod common;

use lookback::{Error, Pred, host};

/// Runs `f` on a thread with a 2 MiB stack (what a spawned thread gets by default): recursion once per
/// level of a million levels would need tens of megabytes, so any such walk crashes the test.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new().stack_size(2 << 20).spawn(f).unwrap().join().unwrap();
}

const TERMS: u32 = 1_000_000;

/// `x != 1 & (x != 2 & (… & x > 0))`: every leaf but the last waits for the ones after it.
fn right_nested() -> Pred<u32> {
    let mut p = Pred::gt(0u32);
    for k in 1..TERMS {
        p = Pred::ne(k) & p;
    }
    p
}

/// `((x > 0 & x != 1) & x != 2) & …`.
fn left_nested() -> Pred<u32> {
    let mut p = Pred::gt(0u32);
    for k in 1..TERMS {
        p = p & Pred::ne(k);
    }
    p
}

/// `!!!…!(x > 5)`.
fn negations() -> Pred<u32> {
    let mut p = Pred::gt(5u32);
    for _ in 0..TERMS {
        p = !p;
    }
    p
}

#[test]
fn a_million_nested_terms_evaluate_without_recursion() {
    on_small_stack(|| {
        let input: Vec<u32> = (0..2000).chain([TERMS, TERMS + 7]).collect();
        // Every value in 1..TERMS is excluded by one `ne`; 0 fails `> 0`.
        for p in [right_nested(), left_nested()] {
            assert_eq!(host::count_if(&input, &p), 2);
            assert!(p.eval(TERMS) && !p.eval(999_999) && !p.eval(0));
        }
        // An even number of negations: the leaf itself.
        let p = negations();
        assert_eq!(host::count_if(&input, &p), input.iter().filter(|&&x| x > 5).count());
    });
}

#[test]
fn a_million_nested_terms_clone_compare_print_and_drop() {
    on_small_stack(|| {
        let p = right_nested();
        let q = p.clone();
        assert_eq!(p, q);
        assert_ne!(p, left_nested());
        let text = format!("{p:?}");
        assert!(text.starts_with("Pred { node: And(Leaf(Ne, 999999, 999999), And(Leaf(Ne, 999998"), "{}", &text[..80]);
        assert_eq!(text.matches("Leaf(").count(), TERMS as usize);
        drop((p, q));
        drop(negations());
    });
}

/// Comparisons fold into the values they select, however many: each of these is one comparison on the
/// device (`x >= TERMS`, `x > 5`) and counts what the host counts.
#[test]
fn a_million_nested_comparisons_run_as_one_on_the_device() {
    on_small_stack(|| {
        let Some(stream) = common::gpu() else { return };
        let values: Vec<u32> = [1u32, 2, 3, 6, 999_999].into_iter().chain([TERMS, TERMS + 7, u32::MAX]).collect();
        let input = stream.clone_htod(&values).unwrap();
        for p in [right_nested(), left_nested(), negations()] {
            assert_eq!(lookback::count_if(&input, &p).unwrap(), host::count_if(&values, &p));
        }
    });
}

/// The device program of a predicate kept as written has fixed limits: a million terms with a bit test is
/// a typed error, reached without recursing, and nothing is launched.
#[test]
fn a_million_nested_terms_with_a_bit_test_are_too_complex_for_the_device() {
    on_small_stack(|| {
        let Some(stream) = common::gpu() else { return };
        let input = stream.clone_htod(&[1u32, 2, 3]).unwrap();
        let (mut right, mut left) = (Pred::any_bits(u32::MAX), Pred::any_bits(u32::MAX));
        for k in 1..TERMS {
            right = Pred::ne(k) & right;
            left = left & Pred::ne(k);
        }
        for p in [right, left] {
            let err = lookback::count_if(&input, &p).unwrap_err();
            assert!(matches!(err, Error::PredicateTooComplex { .. }), "{err}");
        }
    });
}
