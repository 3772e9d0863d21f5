//! Build script: compiles the CUDA engine in `cuda/` with nvcc and embeds it.
//!
//! 1. Parses the X-macro tables of `cuda/` (element types, operators, tuning) — the single source of
//!    truth — and generates `OUT_DIR/kernels.rs`: the `DType` and `OpKind` enums, the kernel-name table,
//!    the tuning table and the embedded fatbins.
//! 2. Finds nvcc (`NVCC`, `CUDA_HOME`, `CUDA_PATH`, `PATH`, `/usr/local/cuda`, then the PyPI wheel
//!    `nvidia-cuda-nvcc` through `python3`) and compiles every `cuda/kernels/*.cu` into one fatbin, in
//!    parallel: SASS for each architecture of `LOOKBACK_CUDA_ARCHS` (default `80,90`) plus PTX for the
//!    newest, so newer GPUs can JIT it. sm_86 and sm_89 GPUs run the sm_80 SASS (same major version);
//!    an image of their own would be code they already have (`DEFAULT_ARCHS`).
//!    `LOOKBACK_NVCC_FLAGS` adds nvcc flags (for experiments, e.g. `-D` switches).
//! 3. Without nvcc the build fails, saying how to get one, unless it opted out of the kernels (the
//!    `kernels` feature off, `LOOKBACK_NO_NVCC` or `DOCS_RS` set: `build/opt_out.rs`); then GPU entry
//!    points return `Error::KernelsNotBuilt`. When nvcc fails, the build fails with its command and stderr.
//! 4. With the `cub-baseline` feature (benchmarks only), also compiles the CUB shim in `cub/` and links it
//!    with the static CUDA runtime (`build/cub_shim.rs`); there nvcc is required. `LOOKBACK_CUB_INCLUDE`
//!    builds it against another CUB than the toolkit's.
//! 5. Writes the doc examples of `src/` as tests for `tests/doc_examples.rs` (`build/doc_examples.rs`).
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "build/cub_shim.rs"]
mod cub_shim;
#[path = "build/doc_examples.rs"]
mod doc_examples;
#[path = "build/opt_out.rs"]
mod opt_out;
#[path = "build/persistent_runs.rs"]
mod persistent_runs;
#[path = "build/rtc_headers.rs"]
mod rtc_headers;

/// SASS for sm_80 (A100, and the sm_86/sm_89 GPUs, which run sm_80 code) and sm_90 (H100/H200: the
/// persistent engine), PTX for compute_90 (JIT-compiled on newer GPUs). Images for 86 and 89 would double
/// the build time and the embedded size for the same speed: their SASS is the sm_80 SASS re-targeted
/// (compared instruction by instruction with cuobjdump; README "Build time and size").
const DEFAULT_ARCHS: &str = "80,90";
const NVCC_HINT: &str = "pip install nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 \
nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 (or install the CUDA toolkit, or set NVCC)";

fn main() {
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let cuda = Path::new("cuda");
    for var in
        ["NVCC", "CUDA_HOME", "CUDA_PATH", "PATH", "LOOKBACK_CUDA_ARCHS", "LOOKBACK_NO_NVCC", "LOOKBACK_NVCC_FLAGS"]
    {
        println!("cargo:rerun-if-env-changed={var}");
    }
    for var in opt_out::ENV_VARS.iter().chain([&persistent_runs::ENV_VAR]) {
        println!("cargo:rerun-if-env-changed={var}");
    }
    rerun_for_dir(cuda);
    rtc_headers::generate(cuda, &out_dir);

    let types = parse_xmacro(&read(&cuda.join("core/types.cuh")), "LOOKBACK_TYPES");
    let wide_types = parse_xmacro(&read(&cuda.join("core/types.cuh")), "LOOKBACK_WIDE_TYPES");
    // The register-tile scans by key are compiled for these value types only: each must be a row of
    // LOOKBACK_TYPES, and of 8 bytes (its name ends in 64: i64, u64, f64).
    for row in &wide_types {
        assert!(
            types.contains(row) && row[0].ends_with("64"),
            "LOOKBACK_WIDE_TYPES row {row:?} is not an 8-byte row of LOOKBACK_TYPES"
        );
    }
    let heads_types = parse_xmacro(&read(&cuda.join("core/types.cuh")), "LOOKBACK_HEADS_TYPES");
    // The register tile whose heads write every output reduces these value types: rows of LOOKBACK_TYPES
    // of 4 bytes (names ending in 32: i32, u32, f32), the size its tuning rows are measured for.
    for row in &heads_types {
        assert!(
            types.contains(row) && row[0].ends_with("32"),
            "LOOKBACK_HEADS_TYPES row {row:?} is not a 4-byte row of LOOKBACK_TYPES"
        );
    }
    let heads_key_bytes: Vec<String> = parse_xmacro(&read(&cuda.join("core/types.cuh")), "LOOKBACK_HEADS_KEY_BYTES")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    let heads_encode_key_bytes: Vec<String> =
        parse_xmacro(&read(&cuda.join("core/types.cuh")), "LOOKBACK_HEADS_ENCODE_KEY_BYTES")
            .into_iter()
            .map(|r| r[0].clone())
            .collect();
    let ops = parse_xmacro(&read(&cuda.join("core/ops.cuh")), "LOOKBACK_OPS");
    let tuning = parse_xmacro(&read(&cuda.join("core/tuning.cuh")), "LOOKBACK_TUNING");
    let pipe_tuning = parse_xmacro(&read(&cuda.join("core/tuning.cuh")), "LOOKBACK_PIPE_TUNING");
    let key_bytes: Vec<String> = parse_xmacro(&read(&cuda.join("core/types.cuh")), "LOOKBACK_KEY_BYTES")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    // The register tile's key sizes are sizes the library has keys of (and tuning rows for, which the
    // generated `tuning` checks when a kernel of the size is launched).
    for kb in heads_key_bytes.iter().chain(&heads_encode_key_bytes) {
        assert!(key_bytes.contains(kb), "register-tile key size {kb} is not in LOOKBACK_KEY_BYTES");
    }
    // The persistent keyed rows of a default build: 1-byte keys, these 1-byte value types
    // (build/persistent_runs.rs); every row with the persistent-runs feature.
    let pipe_k1_types = parse_xmacro(&read(&cuda.join("core/types.cuh")), "LOOKBACK_PIPE_BY_KEY_K1_TYPES");
    for row in &pipe_k1_types {
        assert!(
            types.contains(row) && row[0].ends_with('8'),
            "LOOKBACK_PIPE_BY_KEY_K1_TYPES row {row:?} is not a 1-byte row of LOOKBACK_TYPES"
        );
    }
    let flagged_bytes: Vec<String> = parse_xmacro(&read(&cuda.join("core/tuning.cuh")), "LOOKBACK_PIPE_FLAGGED_BYTES")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();

    let mut sources: Vec<PathBuf> = fs::read_dir(cuda.join("kernels"))
        .expect("cuda/kernels exists")
        .map(|e| e.expect("readable cuda/kernels").path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    sources.sort();

    let nvcc = match opt_out::reason() {
        Some(why) => {
            // Not a warning: the opt-out is deliberate. Kept in the build script's output file.
            println!("lookback: no kernels: {why}");
            None
        }
        None => match find_nvcc() {
            Some(nvcc) => Some(nvcc),
            None => return opt_out::missing_nvcc(),
        },
    };
    let images = nvcc.as_deref().map(|nvcc| compile_all(nvcc, &sources, &out_dir));
    let lists = Lists {
        types: &types,
        wide_types: &wide_types,
        heads_types: &heads_types,
        heads_key_bytes: &heads_key_bytes,
        heads_encode_key_bytes: &heads_encode_key_bytes,
        ops: &ops,
        tuning: &tuning,
        pipe_tuning: &pipe_tuning,
        key_bytes: &key_bytes,
        flagged_bytes: &flagged_bytes,
        pipe_k1_types: &pipe_k1_types,
        all_persistent_runs: persistent_runs::all(),
    };
    let generated = generate(&lists, &sources, images.as_deref());
    fs::write(out_dir.join("kernels.rs"), generated).expect("write kernels.rs");
    doc_examples::generate(Path::new("src"), &out_dir);
    if env::var_os("CARGO_FEATURE_CUB_BASELINE").is_some() {
        cub_shim::build(nvcc.as_deref(), &out_dir);
    }
}

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_else(|e| panic!("lookback build: cannot read {}: {e}", p.display()))
}

fn rerun_for_dir(dir: &Path) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("lookback build: cannot read {}: {e}", dir.display()));
    for entry in entries.flatten() {
        let p = entry.path();
        if p.is_dir() {
            rerun_for_dir(&p);
        } else {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}

/// Rows `X(a, b, …)` of the X-macro `#define NAME(X) \` … in a header, one row per line.
fn parse_xmacro(text: &str, name: &str) -> Vec<Vec<String>> {
    let head = format!("#define {name}(X)");
    let mut rows = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with(&head) {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        let body = t.trim_end_matches('\\').trim();
        if let Some(args) = body.strip_prefix("X(").and_then(|r| r.strip_suffix(')')) {
            rows.push(args.split(',').map(|a| a.trim().to_string()).collect());
        }
        if !t.ends_with('\\') {
            break;
        }
    }
    assert!(!rows.is_empty(), "lookback build: no rows in X-macro {name}");
    rows
}

fn find_nvcc() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = env::var_os("NVCC") {
        candidates.push(PathBuf::from(p));
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = env::var_os(var) {
            candidates.push(PathBuf::from(root).join("bin").join("nvcc"));
        }
    }
    if let Some(path) = env::var_os("PATH") {
        candidates.extend(env::split_paths(&path).map(|d| d.join("nvcc")));
    }
    candidates.push(PathBuf::from("/usr/local/cuda/bin/nvcc"));
    if let Some(wheel) = wheel_nvcc() {
        candidates.push(wheel);
    }
    candidates.into_iter().find(|p| p.is_file())
}

/// nvcc of the PyPI wheel `nvidia-cuda-nvcc` (`nvidia/cu13/bin/nvcc`; `nvidia.cu13` is a namespace package).
fn wheel_nvcc() -> Option<PathBuf> {
    let out =
        Command::new("python3").args(["-c", "import nvidia.cu13 as m; print(list(m.__path__)[0])"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let root = String::from_utf8(out.stdout).ok()?;
    Some(PathBuf::from(root.trim()).join("bin").join("nvcc"))
}

/// The architectures of `LOOKBACK_CUDA_ARCHS` (default `DEFAULT_ARCHS`), sorted, without duplicates.
fn archs() -> Vec<u32> {
    let archs = env::var("LOOKBACK_CUDA_ARCHS").unwrap_or_else(|_| DEFAULT_ARCHS.to_string());
    let mut list: Vec<u32> = archs
        .split(',')
        .map(|a| a.trim().trim_start_matches("sm_"))
        .filter(|a| !a.is_empty())
        .map(|a| a.parse().unwrap_or_else(|_| panic!("lookback build: bad LOOKBACK_CUDA_ARCHS entry {a:?}")))
        .collect();
    list.sort_unstable();
    list.dedup();
    assert!(!list.is_empty(), "LOOKBACK_CUDA_ARCHS names at least one architecture");
    list
}

/// `-gencode` flags for SASS of every architecture of `archs()`.
fn sass_flags() -> Vec<String> {
    archs().iter().map(|a| format!("-gencode=arch=compute_{a},code=sm_{a}")).collect()
}

/// SASS of every architecture plus PTX of the newest, so newer GPUs can JIT the kernels.
fn arch_flags() -> Vec<String> {
    let newest = *archs().last().expect("archs() is not empty");
    let mut flags = sass_flags();
    flags.push(format!("-gencode=arch=compute_{newest},code=compute_{newest}"));
    flags
}

/// Compiles every source into `OUT_DIR/<stem>.fatbin`, two at a time (machines here have 2 cores).
fn compile_all(nvcc: &Path, sources: &[PathBuf], out_dir: &Path) -> Vec<PathBuf> {
    let mut flags = arch_flags();
    flags.extend(persistent_runs::nvcc_flags());
    let outputs: Vec<PathBuf> = sources
        .iter()
        .map(|s| out_dir.join(s.file_stem().expect("a .cu file has a stem")).with_extension("fatbin"))
        .collect();
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get()).max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(sources.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(src) = sources.get(i) else { break };
                    if let Err(msg) = compile_cached(nvcc, &flags, src, &outputs[i], out_dir) {
                        failures.lock().expect("no panics while holding the lock").push(msg);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().expect("no panics while holding the lock");
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("{f}");
        }
        panic!("lookback build: nvcc failed on {} file(s); see the commands and errors above", failures.len());
    }
    outputs
}

/// `compile_one` through a cache shared by every profile of one target directory: `cargo clippy`,
/// `cargo test` and `cargo build --release` each run this script with their own OUT_DIR, and nvcc is by far
/// the slowest part of a build. The key hashes every file of `cuda/`, the flags, the nvcc path and the
/// source name, so any change recompiles.
fn compile_cached(nvcc: &Path, flags: &[String], src: &Path, out: &Path, out_dir: &Path) -> Result<(), String> {
    use std::hash::{Hash, Hasher};
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out.
    let Some(cache_dir) = out_dir.ancestors().nth(4).map(|t| t.join("lookback-nvcc-cache")) else {
        return compile_one(nvcc, flags, src, out);
    };
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut files: Vec<PathBuf> = Vec::new();
    let mut dirs = vec![PathBuf::from("cuda")];
    while let Some(d) = dirs.pop() {
        for e in fs::read_dir(&d).map_err(|e| format!("lookback build: cannot read {}: {e}", d.display()))?.flatten() {
            let p = e.path();
            if p.is_dir() { dirs.push(p) } else { files.push(p) }
        }
    }
    files.sort();
    for f in &files {
        f.hash(&mut hasher);
        fs::read(f).map_err(|e| format!("lookback build: cannot read {}: {e}", f.display()))?.hash(&mut hasher);
    }
    (nvcc, flags, src, env::var("LOOKBACK_NVCC_FLAGS").unwrap_or_default()).hash(&mut hasher);
    let stem = src.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let cached = cache_dir.join(format!("{stem}-{:016x}.fatbin", hasher.finish()));
    if fs::copy(&cached, out).is_ok() {
        return Ok(());
    }
    compile_one(nvcc, flags, src, out)?;
    // Best effort: a failed cache write only costs a recompile next time. Written under a temporary name
    // and renamed, so a concurrent build never copies a half-written file.
    let _ = fs::create_dir_all(&cache_dir);
    let partial = cached.with_extension(format!("partial{}", std::process::id()));
    if fs::copy(out, &partial).is_ok() {
        let _ = fs::rename(&partial, &cached);
    }
    Ok(())
}

fn compile_one(nvcc: &Path, flags: &[String], src: &Path, out: &Path) -> Result<(), String> {
    let mut cmd = Command::new(nvcc);
    // -compress-all: the fatbins are embedded in every binary that links the crate; compressed they are
    // about 4x smaller (the driver decompresses them when the module loads).
    cmd.args(["-fatbin", "-std=c++17", "-O3", "--expt-relaxed-constexpr", "-Xfatbin=-compress-all"])
        .args(flags)
        // Extra flags for experiments (e.g. -D switches), split on whitespace.
        .args(env::var("LOOKBACK_NVCC_FLAGS").unwrap_or_default().split_whitespace())
        .arg("-o")
        .arg(out)
        .arg(src);
    run_nvcc(cmd)
}

/// Runs an nvcc command: its warnings become cargo warnings; a failure returns the command and its output.
fn run_nvcc(mut cmd: Command) -> Result<(), String> {
    let shown = format!("{cmd:?}");
    match cmd.output() {
        Ok(o) if o.status.success() => {
            let stderr = String::from_utf8_lossy(&o.stderr);
            for line in stderr.lines().filter(|l| l.contains("warning")) {
                println!("cargo:warning=lookback nvcc: {line}");
            }
            Ok(())
        }
        Ok(o) => Err(format!(
            "lookback build: nvcc failed ({}):\n  {shown}\n{}{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Err(format!("lookback build: could not run nvcc: {e}\n  {shown}")),
    }
}

/// `fn_name(op, ty) -> Option<Kernel>` over every (operator, type) pair the operator's class allows;
/// kernels named `lookback_<prefix>_<op>_<type>` in fatbin `image`.
#[allow(clippy::too_many_arguments)]
fn op_type_table(
    g: &mut String,
    names: &mut Vec<String>,
    ops: &[Vec<String>],
    types: &[Vec<String>],
    fn_name: &str,
    what: &str,
    prefix: &str,
    image: usize,
) {
    writeln!(g, "/// {what} of (operator, type), if one is compiled.").unwrap();
    writeln!(g, "pub(crate) const fn {fn_name}(op: OpKind, ty: DType) -> Option<Kernel> {{\n    match (op, ty) {{")
        .unwrap();
    for o in ops {
        for t in types {
            if o[1] == "all" || o[1] == t[2] {
                let name = format!("lookback_{prefix}_{}_{}", o[0], t[0]);
                writeln!(
                    g,
                    "        (OpKind::{}, DType::{}) => Some(Kernel {{ name: \"{name}\", image: {image} }}),",
                    camel(&o[0]),
                    camel(&t[0])
                )
                .unwrap();
                names.push(name);
            }
        }
    }
    *g += "        _ => None,\n    }\n}\n\n";
}

/// `fn_name(ty) -> Kernel` over every type; kernels named `lookback_<prefix>_<type>` in fatbin `image`.
fn type_table(
    g: &mut String,
    names: &mut Vec<String>,
    types: &[Vec<String>],
    fn_name: &str,
    doc: &str,
    prefix: &str,
    image: usize,
) {
    let arms = types.iter().map(|t| (format!("DType::{}", camel(&t[0])), format!("lookback_{prefix}_{}", t[0])));
    kernel_match(g, names, &format!("{fn_name}(ty: DType) -> Kernel"), doc, arms, image, false);
}

/// `fn_name(bytes) -> Option<Kernel>` over the item sizes `bytes`; kernels named `lookback_<prefix>_b<bytes>`
/// in fatbin `image`.
fn bytes_table(
    g: &mut String,
    names: &mut Vec<String>,
    bytes: &[String],
    fn_name: &str,
    doc: &str,
    prefix: &str,
    image: usize,
) {
    let arms = bytes.iter().map(|b| (b.clone(), format!("lookback_{prefix}_b{b}")));
    kernel_match(g, names, &format!("{fn_name}(bytes: usize) -> Option<Kernel>"), doc, arms, image, true);
}

/// A `pub(crate) const fn <signature>` matching its argument against each arm's pattern and returning
/// that arm's kernel (in fatbin `image`); `optional` wraps them in `Some` and adds `_ => None`.
fn kernel_match(
    g: &mut String,
    names: &mut Vec<String>,
    signature: &str,
    doc: &str,
    arms: impl Iterator<Item = (String, String)>,
    image: usize,
    optional: bool,
) {
    let scrutinee = &signature[signature.find('(').unwrap() + 1..signature.find(':').unwrap()];
    writeln!(g, "/// {doc}").unwrap();
    writeln!(g, "pub(crate) const fn {signature} {{\n    match {scrutinee} {{").unwrap();
    for (pattern, name) in arms {
        let kernel = format!("Kernel {{ name: \"{name}\", image: {image} }}");
        let result = if optional { format!("Some({kernel})") } else { kernel };
        writeln!(g, "        {pattern} => {result},").unwrap();
        names.push(name);
    }
    *g += if optional { "        _ => None,\n    }\n}\n\n" } else { "    }\n}\n\n" };
}

/// `<prefix>_kernel(op, key_bytes, ty) -> Option<Kernel>`: kernels `lookback_<prefix>_<op>_k<key
/// bytes>_<type>` for the reduction operators, in fatbin `<prefix>_<op>` (one file per operator).
fn by_key_table(
    g: &mut String,
    names: &mut Vec<String>,
    types: &[Vec<String>],
    key_bytes: &[String],
    prefix: &str,
    what: &str,
    image_of: &dyn Fn(&str) -> usize,
) {
    writeln!(g, "/// {what} of (operator, key bytes, value type), if one is compiled.").unwrap();
    writeln!(
        g,
        "pub(crate) const fn {prefix}_kernel(op: OpKind, key_bytes: usize, ty: DType) -> Option<Kernel> {{\n    match (op, key_bytes, ty) {{"
    )
    .unwrap();
    for op in ["sum", "min", "max"] {
        let image = image_of(&format!("{prefix}_{op}"));
        for kb in key_bytes {
            for t in types {
                let name = format!("lookback_{prefix}_{op}_k{kb}_{}", t[0]);
                writeln!(
                    g,
                    "        (OpKind::{}, {kb}, DType::{}) => Some(Kernel {{ name: \"{name}\", image: {image} }}),",
                    camel(op),
                    camel(&t[0])
                )
                .unwrap();
                names.push(name);
            }
        }
    }
    *g += "        _ => None,\n    }\n}\n\n";
}

/// `<prefix>_kernel(key_bytes, value_bytes) -> Option<Kernel>`: kernels `lookback_<prefix>_k<key
/// bytes>_v<value bytes or 0>` in fatbin `image`, one per (key bytes, value bytes) row.
fn runs_table(g: &mut String, names: &mut Vec<String>, rows: &[(&str, &str)], prefix: &str, what: &str, image: usize) {
    writeln!(g, "/// {what} of (key bytes, value bytes or 0), if one is compiled.").unwrap();
    writeln!(g, "pub(crate) const fn {prefix}_kernel(key_bytes: usize, value_bytes: usize) -> Option<Kernel> {{")
        .unwrap();
    // A family this build leaves out (build/persistent_runs.rs): no row, and no match to write.
    if rows.is_empty() {
        *g += "    let _ = (key_bytes, value_bytes);\n    None\n}\n\n";
        return;
    }
    *g += "    match (key_bytes, value_bytes) {\n";
    for (kb, vb) in rows {
        let name = format!("lookback_{prefix}_k{kb}_v{vb}");
        writeln!(g, "        ({kb}, {vb}) => Some(Kernel {{ name: \"{name}\", image: {image} }}),").unwrap();
        names.push(name);
    }
    *g += "        _ => None,\n    }\n}\n\n";
}

/// Every (key bytes, value bytes or 0) row of keys of `key_bytes` and values of none or `value_bytes`.
fn key_value_rows<'a>(key_bytes: &'a [String], value_bytes: &'a [String]) -> Vec<(&'a str, &'a str)> {
    let values = || std::iter::once("0").chain(value_bytes.iter().map(String::as_str));
    key_bytes.iter().flat_map(|kb| values().map(move |vb| (kb.as_str(), vb))).collect()
}

/// `<prefix>_kernel(key_bytes) -> Option<Kernel>`: kernels `lookback_<prefix>_k<key bytes>` in fatbin
/// `image`.
fn key_table(g: &mut String, names: &mut Vec<String>, key_bytes: &[String], prefix: &str, what: &str, image: usize) {
    writeln!(g, "/// {what} of a key size, if one is compiled.").unwrap();
    writeln!(g, "pub(crate) const fn {prefix}_kernel(key_bytes: usize) -> Option<Kernel> {{\n    match key_bytes {{")
        .unwrap();
    for kb in key_bytes {
        let name = format!("lookback_{prefix}_k{kb}");
        writeln!(g, "        {kb} => Some(Kernel {{ name: \"{name}\", image: {image} }}),").unwrap();
        names.push(name);
    }
    *g += "        _ => None,\n    }\n}\n\n";
}

/// `encode_small` → `EncodeSmall`: a table's algorithm name as a Rust enum variant.
fn num(s: &str) -> usize {
    s.trim().parse().unwrap_or_else(|_| panic!("cuda/core/tuning.cuh: {s:?} is not a number"))
}

fn camel(s: &str) -> String {
    s.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

/// What build.rs parsed from the headers.
struct Lists<'a> {
    types: &'a [Vec<String>],
    wide_types: &'a [Vec<String>],
    heads_types: &'a [Vec<String>],
    heads_key_bytes: &'a [String],
    heads_encode_key_bytes: &'a [String],
    ops: &'a [Vec<String>],
    tuning: &'a [Vec<String>],
    pipe_tuning: &'a [Vec<String>],
    key_bytes: &'a [String],
    flagged_bytes: &'a [String],
    /// The value types of the persistent keyed kernels of 1-byte keys that every build compiles.
    pipe_k1_types: &'a [Vec<String>],
    /// Whether every persistent run-based kernel is compiled (build/persistent_runs.rs).
    all_persistent_runs: bool,
}

fn generate(lists: &Lists, sources: &[PathBuf], images: Option<&[PathBuf]>) -> String {
    let Lists {
        types,
        wide_types,
        heads_types,
        heads_key_bytes,
        heads_encode_key_bytes,
        ops,
        tuning,
        pipe_tuning,
        key_bytes,
        flagged_bytes,
        pipe_k1_types,
        all_persistent_runs,
    } = *lists;
    let mut g = String::from(
        "// Generated by build.rs from cuda/core/types.cuh, cuda/core/ops.cuh and cuda/core/tuning.cuh.\n",
    );
    // DType
    g += "/// An element type the kernels are compiled for (generated from `cuda/core/types.cuh`).\n";
    g += "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]\n#[non_exhaustive]\npub enum DType {\n";
    for t in types {
        writeln!(g, "    /// `{}` (C type `{}`)\n    {},", t[0], t[1], camel(&t[0])).unwrap();
    }
    g += "}\n\nimpl DType {\n    /// Every element type, in the order of `cuda/core/types.cuh`.\n";
    writeln!(g, "    pub const ALL: [DType; {}] = [", types.len()).unwrap();
    for t in types {
        writeln!(g, "        DType::{},", camel(&t[0])).unwrap();
    }
    g += "    ];\n    /// The short name used in kernel names (`i32`, `bf16`, …).\n";
    g += "    pub const fn name(self) -> &'static str {\n        match self {\n";
    for t in types {
        writeln!(g, "            DType::{} => \"{}\",", camel(&t[0]), t[0]).unwrap();
    }
    g += "        }\n    }\n    /// The CUDA C++ type of the elements (`int32_t`, `float`, `__half`, …): the type of `x` in user code\n";
    g += "    /// ([`crate::rtc`]).\n    pub const fn c_type(self) -> &'static str {\n        match self {\n";
    for t in types {
        writeln!(g, "            DType::{} => \"{}\",", camel(&t[0]), t[1]).unwrap();
    }
    g += "        }\n    }\n    /// Whether the type is an integer (bitwise operators exist only for integers).\n";
    g += "    pub const fn is_integer(self) -> bool {\n        match self {\n";
    for t in types {
        writeln!(g, "            DType::{} => {},", camel(&t[0]), t[2] == "int").unwrap();
    }
    g += "        }\n    }\n}\n\n";
    // OpKind
    g += "/// A scan operator as the kernels know it (generated from `cuda/core/ops.cuh`).\n";
    g += "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]\npub(crate) enum OpKind {\n";
    for o in ops {
        writeln!(g, "    {},", camel(&o[0])).unwrap();
    }
    g += "}\n\n";
    // Kernel table
    let image_of = |prefix: &str| {
        sources
            .iter()
            .position(|s| s.file_stem().is_some_and(|f| f.to_string_lossy() == prefix))
            .unwrap_or_else(|| panic!("lookback build: no cuda/kernels/{prefix}.cu"))
    };
    let mut names = Vec::new();
    op_type_table(&mut g, &mut names, ops, types, "scan_kernel", "The scan kernel", "scan", image_of("scan"));
    op_type_table(
        &mut g,
        &mut names,
        ops,
        types,
        "pipe_scan_kernel",
        "The persistent (sm_90+) scan kernel",
        "pipe_scan",
        image_of("pipe_scan"),
    );
    // The reductions (cuda/classic/reduce.cuh): the built-in operators, and arg_min and arg_max, in one
    // fatbin.
    op_type_table(
        &mut g,
        &mut names,
        ops,
        types,
        "reduce_kernel",
        "The reduction kernel",
        "reduce",
        image_of("reduce"),
    );
    for dir in ["min", "max"] {
        let doc = format!("The arg_{dir} kernel of a type.");
        type_table(
            &mut g,
            &mut names,
            types,
            &format!("arg_{dir}_kernel"),
            &doc,
            &format!("arg_{dir}"),
            image_of("reduce"),
        );
    }
    type_table(
        &mut g,
        &mut names,
        types,
        "select_kernel",
        "The selection kernel of a type (select, flagged, unique, partition, count, mask).",
        "select",
        image_of("select"),
    );
    type_table(
        &mut g,
        &mut names,
        types,
        "pipe_select_kernel",
        "The persistent (sm_90+) compaction kernel of a type (select_if, unique, count_if).",
        "pipe_select",
        image_of("pipe_select"),
    );
    type_table(
        &mut g,
        &mut names,
        types,
        "pipe_partition_kernel",
        "The persistent (sm_90+) partition kernel of a type (partition_if's three layouts).",
        "pipe_partition",
        image_of("pipe_partition"),
    );
    bytes_table(
        &mut g,
        &mut names,
        flagged_bytes,
        "pipe_flagged_kernel",
        "The persistent (sm_90+) select_flagged kernel of an item size, if one is compiled.",
        "pipe_flagged",
        image_of("pipe_flagged"),
    );
    // Run-based kernels, classic and persistent from the same lists: keyed reductions and scans per
    // (operator, key bytes, value type), in one file per operator; encodings and unique_by_key per (key
    // bytes, value bytes or 0).
    by_key_table(&mut g, &mut names, types, key_bytes, "by_key", "The keyed reduction/scan kernel", &image_of);
    // The persistent rows a build compiles (build/persistent_runs.rs): all, or 1-byte keys with 1-byte values.
    let one_byte_keys = ["1".to_string()];
    let (pipe_key_bytes, pipe_types) =
        if all_persistent_runs { (key_bytes, types) } else { (&one_byte_keys[..], pipe_k1_types) };
    by_key_table(
        &mut g,
        &mut names,
        pipe_types,
        pipe_key_bytes,
        "pipe_by_key",
        "The persistent (sm_90+) reduce_by_key and scan-by-key kernel",
        &image_of,
    );
    by_key_table(
        &mut g,
        &mut names,
        wide_types,
        key_bytes,
        "scan_by_key",
        "The register-tile scan-by-key kernel (8-byte values)",
        &image_of,
    );
    let runs_rows = key_value_rows(key_bytes, key_bytes);
    runs_table(&mut g, &mut names, &runs_rows, "runs", "The encoding / unique_by_key kernel", image_of("runs"));
    runs_table(
        &mut g,
        &mut names,
        if all_persistent_runs { &runs_rows } else { &[] },
        "pipe_runs",
        "The persistent (sm_90+) run-length / run-end encoding and unique_by_key kernel",
        image_of("pipe_runs"),
    );
    writeln!(
        g,
        "/// Whether every persistent run-based kernel is compiled (the `persistent-runs` feature or \
         `LOOKBACK_PERSISTENT_RUNS`).\npub(crate) const ALL_PERSISTENT_RUNS: bool = {all_persistent_runs};\n"
    )
    .unwrap();
    key_table(
        &mut g,
        &mut names,
        key_bytes,
        "runs_small",
        "The encodings' kernel for small grids (`RunsAgent`'s `SMALL_GRID`)",
        image_of("runs"),
    );
    // The register tile whose run heads write every output, all in cuda/kernels/heads.cu.
    by_key_table(
        &mut g,
        &mut names,
        heads_types,
        heads_key_bytes,
        "heads",
        "The register-tile reduce_by_key kernel (run heads write every output)",
        &|_| image_of("heads"),
    );
    // Its encodings (value bytes 0) for heads_encode_key_bytes, unique_by_key for 4-byte keys and values.
    let heads_runs_rows: Vec<(&str, &str)> = heads_encode_key_bytes
        .iter()
        .map(|kb| (kb.as_str(), "0"))
        .chain(heads_key_bytes.iter().map(|kb| (kb.as_str(), kb.as_str())))
        .collect();
    runs_table(
        &mut g,
        &mut names,
        &heads_runs_rows,
        "heads_runs",
        "The register-tile run-length / run-end encoding and unique_by_key kernel",
        image_of("heads"),
    );
    key_table(
        &mut g,
        &mut names,
        heads_encode_key_bytes,
        "heads_non_trivial",
        "The register-tile non-trivial runs kernel",
        image_of("heads"),
    );
    type_table(
        &mut g,
        &mut names,
        types,
        "partition3_kernel",
        "The three-way partition kernel of a type.",
        "partition3",
        image_of("partition3"),
    );
    g += "/// Every kernel name in the table (for the test that loads them all).\n#[allow(unreachable_pub)]\n";
    writeln!(g, "pub const ALL_KERNELS: [&str; {}] = [", names.len()).unwrap();
    for n in &names {
        writeln!(g, "    \"{n}\",").unwrap();
    }
    g += "];\n\n";
    // Tuning
    g += "/// Tile shape and back-off of (algorithm, element bytes), from `cuda/core/tuning.cuh`.\n";
    g += "pub(crate) const fn tuning(algo: Algo, bytes: usize) -> Tuning {\n    match (algo, bytes) {\n";
    for r in tuning {
        writeln!(
            g,
            "        (Algo::{}, {}) => Tuning {{ block_threads: {}, chunks_per_thread: {}, first_poll_ns: {}, poll_ns: {} }},",
            camel(&r[0]),
            r[1],
            r[2],
            r[3],
            r[4],
            r[5]
        )
        .unwrap();
    }
    g += "        _ => panic!(\"no tuning entry for this algorithm and element size\"),\n    }\n}\n\n";
    g += "/// Shape of the persistent agent of an algorithm, from `LOOKBACK_PIPE_TUNING` in `cuda/core/tuning.cuh`.\n";
    g += "pub(crate) const fn pipe_tuning(algo: Algo) -> Option<PipeTuning> {\n    match algo {\n";
    for r in pipe_tuning {
        writeln!(
            g,
            "        Algo::{} => Some(PipeTuning {{ compute_warps: {}, chunks_per_lane: {}, stages: {}, min_tiles: {}, writer_warps: {}, side_bytes_per_tile: 0 }}),",
            camel(&r[0]),
            r[1],
            r[2],
            r[3],
            r[5],
            r[6]
        )
        .unwrap();
    }
    g += "        #[allow(unreachable_patterns)]\n        _ => None,\n    }\n}\n\n";
    // The smallest tile of any launch: classic rows hold 16 / bytes items per chunk; a persistent tile
    // holds at least one item per 16 bytes (two 8-byte streams: keys and values).
    let classic_min = tuning.iter().map(|r| num(&r[2]) * num(&r[3]) * (16 / num(&r[1])));
    let pipe_min = pipe_tuning.iter().map(|r| num(&r[1]) * 32 * num(&r[2]));
    let min_tile = classic_min.chain(pipe_min).min().expect("tuning rows");
    writeln!(
        g,
        "/// Items of the smallest tile of any launch (`Workspace::reserve`), from `cuda/core/tuning.cuh`.\npub(crate) const MIN_TILE_ITEMS: usize = {min_tile};\n"
    )
    .unwrap();
    // Images
    match images {
        Some(paths) => {
            writeln!(g, "/// The embedded fatbins, one per `cuda/kernels/*.cu`.\npub(crate) static IMAGES: Option<[&[u8]; {}]> = Some([", paths.len()).unwrap();
            for p in paths {
                writeln!(g, "    include_bytes!({:?}),", p.display().to_string()).unwrap();
            }
            g += "]);\n";
        }
        None => {
            writeln!(
                g,
                "/// nvcc was not found: no kernels.\npub(crate) static IMAGES: Option<[&[u8]; {}]> = None;",
                sources.len()
            )
            .unwrap();
        }
    }
    g
}
