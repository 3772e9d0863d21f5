//! The doc examples of `src/` as an integration test (`tests/doc_examples.rs` includes what this writes).
//!
//! The GPU machine runs prebuilt test binaries and has no cargo, so `cargo test --doc` never runs there;
//! compiled into a test binary, the examples travel in the bundle like every other test. The doc comments
//! stay the one source of truth: this reads every fenced block of the `///` and `//!` comments under
//! `src/` and follows rustdoc's rules closely enough for this crate:
//!
//! * a fence whose info string has a word rustdoc does not know (`text`, `sh`, `cuda`, …) is not Rust;
//!   `ignore`, `compile_fail` and `test_harness` blocks cannot be tests here: those are counted, not
//!   compiled. `no_run` compiles as an ignored test; `should_panic` becomes `#[should_panic]`;
//! * a line whose trimmed text starts with `# ` (or is `#`) is hidden in the docs but compiled; `##` is
//!   an escaped `#`;
//! * code without `fn main` is wrapped in one; when it ends in `(())` (`Ok::<(), lookback::Error>(())`),
//!   that `main` returns a `Result`, so `?` works as in rustdoc.
//!
//! Each example becomes a module named after its file and the line of its opening fence (e.g.
//! `scan_rs_line_22`) holding the example and one `#[test] fn doc_example`. Examples that open a GPU
//! stream first ask the test support for the GPU, so that they fail under `LOOKBACK_REQUIRE_GPU=1`
//! instead of returning early.
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// How one fenced block is used.
enum Kind {
    /// Compiled and run, optionally expected to panic.
    Run { should_panic: bool },
    /// Compiled, never run (`no_run`).
    CompileOnly,
    /// Not a test here, and why.
    Skip(String),
}

/// One fenced block of a doc comment.
struct Block {
    /// `src/`-relative path and 1-based line of the opening fence.
    file: String,
    line: usize,
    kind: Kind,
    /// The code as rustdoc compiles it (hidden lines included, their `# ` removed).
    code: String,
}

/// Writes `OUT_DIR/doc_examples.rs` from the doc comments of every `.rs` file under `src`.
pub(crate) fn generate(src: &Path, out_dir: &Path) {
    // A directory: cargo rescans all of it, so a new file under src/ reruns the script too.
    println!("cargo:rerun-if-changed={}", src.display());
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut blocks = Vec::new();
    for path in &files {
        // Never fail a build over the docs: an unreadable file is only missing from the test.
        let Ok(text) = fs::read_to_string(path) else { continue };
        let rel = path.strip_prefix(src).unwrap_or(path).to_string_lossy().replace('\\', "/");
        blocks.extend(doc_blocks(&rel, &text));
    }
    fs::write(out_dir.join("doc_examples.rs"), render(&blocks)).expect("write doc_examples.rs");
}

fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for p in entries.flatten().map(|e| e.path()) {
        if p.is_dir() {
            rust_files(&p, files);
        } else if p.extension().is_some_and(|x| x == "rs") {
            files.push(p);
        }
    }
}

/// The text of a doc comment line (`///` or `//!`, not `////`), without its marker.
fn doc_text(line: &str) -> Option<(&'static str, &str)> {
    let t = line.trim_start();
    if let Some(rest) = t.strip_prefix("///") {
        return (!rest.starts_with('/')).then_some(("///", rest));
    }
    t.strip_prefix("//!").map(|rest| ("//!", rest))
}

/// Every fenced block of a file's doc comments. A run of consecutive doc lines of one kind is one doc
/// comment; as rustdoc does, its common indentation is removed before Markdown sees it.
fn doc_blocks(file: &str, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((marker, _)) = doc_text(lines[i]) else {
            i += 1;
            continue;
        };
        let start = i;
        let mut body = Vec::new();
        while let Some((m, rest)) = lines.get(i).and_then(|l| doc_text(l)) {
            if m != marker {
                break;
            }
            body.push(rest);
            i += 1;
        }
        let indent = body.iter().filter(|l| !l.trim().is_empty()).map(|l| indent_of(l)).min().unwrap_or(0);
        let body: Vec<&str> = body.iter().map(|l| l.get(indent..).unwrap_or("")).collect();
        fenced_blocks(file, start, &body, &mut blocks);
    }
    blocks
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The fenced blocks of one doc comment whose first line is line `first` (0-based) of the file.
fn fenced_blocks(file: &str, first: usize, body: &[&str], blocks: &mut Vec<Block>) {
    let mut i = 0;
    while i < body.len() {
        let Some((fence, info)) = fence_open(body[i]) else {
            i += 1;
            continue;
        };
        let open = i;
        let mut code = Vec::new();
        i += 1;
        let mut closed = false;
        while i < body.len() {
            if fence_closes(body[i], &fence) {
                closed = true;
                break;
            }
            code.push(body[i]);
            i += 1;
        }
        i += 1;
        let kind = match (closed, missing_feature(file)) {
            (false, _) => Kind::Skip("unterminated fence".into()),
            (true, Some(feature)) => Kind::Skip(format!("needs the `{feature}` feature")),
            (true, None) => classify(info),
        };
        let code = code.iter().map(|l| compiled_line(l)).collect::<Vec<_>>().join("\n");
        blocks.push(Block { file: file.to_string(), line: first + open + 1, kind, code });
    }
}

/// Modules compiled only with a feature (`#[cfg(feature = ..)]` in `src/lib.rs` or `src/shard/mod.rs`), by their folder or file under
/// `src/`. Their examples need the feature; a build without it counts them as skipped.
const FEATURE_MODULES: [(&str, &str); 2] = [("arrow/", "arrow"), ("shard/nccl.rs", "nccl")];

/// The feature a file's examples need that this build does not have. Build scripts see the package's
/// enabled features as `CARGO_FEATURE_<NAME>`.
fn missing_feature(file: &str) -> Option<&'static str> {
    FEATURE_MODULES.iter().find_map(|(dir, feature)| {
        let var = format!("CARGO_FEATURE_{}", feature.to_uppercase().replace('-', "_"));
        (file.starts_with(dir) && std::env::var_os(var).is_none()).then_some(*feature)
    })
}

/// An opening fence (three or more backticks or tildes, indented less than four spaces) and its info
/// string.
fn fence_open(line: &str) -> Option<(String, &str)> {
    if indent_of(line) > 3 {
        return None;
    }
    let t = line.trim_start();
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|x| *x == c).count();
    (n >= 3).then(|| (c.to_string().repeat(n), t[n..].trim()))
}

fn fence_closes(line: &str, fence: &str) -> bool {
    let t = line.trim();
    let c = fence.chars().next().expect("a fence has characters");
    indent_of(line) <= 3 && t.len() >= fence.len() && t.chars().all(|x| x == c)
}

/// What rustdoc would do with a block of this info string.
fn classify(info: &str) -> Kind {
    let mut should_panic = false;
    let (mut no_run, mut rust_word, mut unknown) = (false, false, None);
    for word in info.split(|c: char| c == ',' || c.is_whitespace()).filter(|w| !w.is_empty()) {
        match word {
            "rust" => rust_word = true,
            "should_panic" => should_panic = true,
            "no_run" => no_run = true,
            "compile_fail" | "test_harness" => return Kind::Skip(word.to_string()),
            w if w == "ignore" || w.starts_with("ignore-") => return Kind::Skip("ignore".into()),
            w if w.starts_with("edition") || w == "standalone_crate" => {}
            // Error codes go with compile_fail, which is skipped anyway.
            w if w.len() == 5 && w.starts_with('E') && w[1..].bytes().all(|b| b.is_ascii_digit()) => {}
            w => unknown = unknown.or(Some(w)),
        }
    }
    match unknown {
        Some(lang) if !rust_word => Kind::Skip(format!("not Rust ({lang})")),
        _ if no_run => Kind::CompileOnly,
        _ => Kind::Run { should_panic },
    }
}

/// A code line as rustdoc compiles it (its `map_line`): `# x` is hidden but compiled as `x`, `##` is an
/// escaped `#`.
fn compiled_line(line: &str) -> String {
    let t = line.trim();
    if t.starts_with("##") {
        line.replacen("##", "#", 1)
    } else if let Some(hidden) = t.strip_prefix("# ") {
        hidden.to_string()
    } else if t == "#" {
        String::new()
    } else {
        line.to_string()
    }
}

/// Whether the code defines its own `main`, so that rustdoc would not wrap it.
fn has_main(code: &str) -> bool {
    code.lines().any(|l| {
        let t = l.trim_start();
        let t = t.strip_prefix("pub ").unwrap_or(t);
        t.strip_prefix("fn main").is_some_and(|r| r.starts_with(['(', '<', ' ']))
    })
}

/// `src/select/one_shot.rs`, line 120 → `select_one_shot_rs_line_120`.
fn module_name(b: &Block) -> String {
    let file: String = b.file.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    format!("{file}_line_{}", b.line)
}

fn render(blocks: &[Block]) -> String {
    let mut g = String::from("// Generated by build.rs (build/doc_examples.rs) from the doc comments of src/.\n\n");
    let (mut run, mut compile_only) = (0, 0);
    let mut skipped = Vec::new();
    for b in blocks {
        let (attrs, call) = match &b.kind {
            Kind::Skip(why) => {
                skipped.push((b, why));
                continue;
            }
            Kind::CompileOnly => {
                compile_only += 1;
                ("#[ignore = \"no_run doc example: compiled, never run\"]\n", false)
            }
            Kind::Run { should_panic } => {
                run += 1;
                (if *should_panic { "#[should_panic]\n" } else { "" }, true)
            }
        };
        let wrapped = if has_main(&b.code) {
            b.code.clone()
        } else if b.code.trim_end().ends_with("(())") {
            format!("fn main() -> Result<(), impl core::fmt::Debug> {{\n{}\n}}", b.code)
        } else {
            format!("fn main() {{\n{}\n}}", b.code)
        };
        // An example that opens a GPU stream returns early without one; asking for the GPU first makes
        // it a failure under LOOKBACK_REQUIRE_GPU=1 (and prints the one SKIPPED line otherwise).
        let gpu = if b.code.contains("default_stream(") { "    let _ = crate::common::gpu();\n" } else { "" };
        let body = if call { format!("{gpu}    crate::doc_support::finish(main());\n") } else { String::new() };
        // Lints stay off as in rustdoc, which compiles examples under `#![allow(unused)]` and never
        // runs clippy on them: they are written to be read.
        writeln!(
            g,
            "/// src/{}:{}\n#[allow(unused, clippy::all)]\nmod {} {{\n{wrapped}\n\n#[test]\n{attrs}fn doc_example() {{\n{body}}}\n}}\n",
            b.file,
            b.line,
            module_name(b)
        )
        .expect("writing to a String");
    }
    writeln!(g, "/// Doc examples compiled and run here.\npub const RUN: usize = {run};").unwrap();
    writeln!(g, "/// `no_run` doc examples: compiled, never run.\npub const COMPILE_ONLY: usize = {compile_only};")
        .unwrap();
    g += "/// Fenced blocks of src/'s doc comments that are not tests here: (file:line, why).\n";
    g += "pub const SKIPPED: &[(&str, &str)] = &[\n";
    for (b, why) in skipped {
        writeln!(g, "    (\"src/{}:{}\", {why:?}),", b.file, b.line).unwrap();
    }
    g += "];\n";
    writeln!(g, "/// Every fenced block of src/'s doc comments.\npub const FENCES: usize = {};", blocks.len()).unwrap();
    g
}
