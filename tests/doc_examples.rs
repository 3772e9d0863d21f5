//! Every doc example of `src/` as a test of this binary, so that the GPU bundle (prebuilt test binaries,
//! no cargo) runs them on the GPU machine too. build.rs writes the tests from the doc comments
//! (`build/doc_examples.rs` says how it follows rustdoc's rules); this file only includes them.
//!
//! One test per example, named after its file and the line of its opening fence:
//! `cargo test --test doc_examples scan_rs_line_22`. Examples that open a GPU stream ask `common::gpu()`
//! first: without a GPU they print the one SKIPPED line and run anyway (each returns early by itself, or
//! takes its host path); under `LOOKBACK_REQUIRE_GPU=1` they fail instead.
mod common;

mod doc_support {
    /// What an example's `main` returned: `()`, or a `Result` whose error fails the test, as rustdoc
    /// treats a `main` that returns one.
    pub trait Outcome {
        fn check(self);
    }
    impl Outcome for () {
        fn check(self) {}
    }
    impl<E: std::fmt::Debug> Outcome for Result<(), E> {
        fn check(self) {
            if let Err(e) = self {
                panic!("the doc example returned Err({e:?})");
            }
        }
    }
    pub fn finish(outcome: impl Outcome) {
        outcome.check();
    }
}

mod examples {
    include!(concat!(env!("OUT_DIR"), "/doc_examples.rs"));
}

/// Every fenced block is a test here or skipped with a reason; prints the counts (on the raw stderr
/// handle, which libtest does not capture). Where the sources are at hand, a plain count of the fences
/// in `src/` checks that the extractor missed none.
#[test]
fn every_doc_example_is_run_or_counted() {
    use examples::{COMPILE_ONLY, FENCES, RUN, SKIPPED};
    use std::io::Write;
    let mut reasons: Vec<&str> = SKIPPED.iter().map(|(_, why)| *why).collect();
    reasons.sort_unstable();
    reasons.dedup();
    let by_reason: Vec<String> =
        reasons.iter().map(|r| format!("{} {r}", SKIPPED.iter().filter(|(_, why)| why == r).count())).collect();
    let _ = writeln!(
        std::io::stderr(),
        "doc examples: {FENCES} fenced blocks in src/: {RUN} run, {COMPILE_ONLY} compiled only (no_run), {} skipped{}",
        SKIPPED.len(),
        if by_reason.is_empty() { String::new() } else { format!(" ({})", by_reason.join(", ")) }
    );
    for (at, why) in SKIPPED {
        let _ = writeln!(std::io::stderr(), "  skipped {at}: {why}");
    }
    assert_eq!(RUN + COMPILE_ONLY + SKIPPED.len(), FENCES);
    const { assert!(RUN > 0, "no doc example found in src/: is build/doc_examples.rs reading the right directory?") };
    assert!(SKIPPED.iter().all(|(_, why)| *why != "unterminated fence"), "a doc comment has an unclosed fence");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    if src.is_dir() {
        assert_eq!(fence_lines(&src) / 2, FENCES, "build/doc_examples.rs missed fenced blocks in src/");
    }
}

/// Doc comment lines of files under `dir` that start with a backtick or tilde fence.
fn fence_lines(dir: &std::path::Path) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("src/ is readable").flatten() {
        let p = entry.path();
        if p.is_dir() {
            n += fence_lines(&p);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).expect("a source file is readable");
            n += text
                .lines()
                .filter_map(|l| l.trim_start().strip_prefix("///").or_else(|| l.trim_start().strip_prefix("//!")))
                .filter(|l| l.trim_start().starts_with("```") || l.trim_start().starts_with("~~~"))
                .count();
        }
    }
    n
}
