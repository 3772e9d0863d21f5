//! The CUB baseline shim, built only with the `cub-baseline` feature: compiles every `cub/*.cu` with the
//! nvcc the kernels use, archives the objects into `OUT_DIR/liblookback_cub_shim.a`, and links it with
//! the static CUDA runtime, so a bench binary needs nothing beyond the driver's libcuda (and the C++
//! runtime). Only `benches/common/cub.rs` calls it.
//!
//! CUB comes from the nvcc's own headers unless `LOOKBACK_CUB_INCLUDE` names another CCCL include
//! directory (one with `cub/`, `cuda/`, `thrust/` and `nv/`, as `scripts/fetch-cub.sh` unpacks), so the
//! baseline can be a newer CUB than the pinned toolkit's.
//!
//! Kept out of `cuda/`: the kernel cache keys on every file there, and the shim is no part of the engine.
use super::{NVCC_HINT, rerun_for_dir, run_nvcc, sass_flags};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const SHIM_DIR: &str = "cub";
const LIB_NAME: &str = "lookback_cub_shim";
/// A CCCL include directory whose CUB the shim is built against instead of the toolkit's.
const INCLUDE_VAR: &str = "LOOKBACK_CUB_INCLUDE";

/// Builds and links the shim; fails the build, saying why, when it cannot.
pub(crate) fn build(nvcc: Option<&Path>, out_dir: &Path) {
    let dir = Path::new(SHIM_DIR);
    rerun_for_dir(dir);
    println!("cargo:rerun-if-env-changed={INCLUDE_VAR}");
    let chosen = chosen_include();
    let Some(nvcc) = nvcc else {
        panic!(
            "lookback build: the cub-baseline feature compiles a CUB shim and needs nvcc with the CUB headers \
             (nvcc was not found, or the build opted out of the kernels: see build/opt_out.rs). To get them: {NVCC_HINT}"
        );
    };
    // <root>/bin/nvcc, in a CUDA toolkit as in the PyPI wheel.
    let root = nvcc.parent().and_then(Path::parent).unwrap_or(Path::new("/"));
    let objects = compile(nvcc, root, chosen.as_deref(), &sources(dir), out_dir).unwrap_or_else(|e| panic!("{e}"));
    let lib = out_dir.join(format!("lib{LIB_NAME}.a"));
    let mut archive = Command::new(nvcc);
    archive.arg("-lib").arg("-o").arg(&lib).args(&objects);
    run_nvcc(archive).unwrap_or_else(|e| panic!("{e}"));
    link(root, out_dir);
}

/// `LOOKBACK_CUB_INCLUDE` when set and not empty; fails the build when it holds no CUB, rather than
/// silently measuring the toolkit's.
fn chosen_include() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os(INCLUDE_VAR).filter(|v| !v.is_empty())?);
    let version = dir.join("cub").join("version.cuh");
    assert!(
        version.is_file(),
        "lookback build: {INCLUDE_VAR}={} has no cub/version.cuh; it must name a CCCL include directory \
         (cub/, cuda/, thrust/, nv/), e.g. the one scripts/fetch-cub.sh prints",
        dir.display()
    );
    println!("cargo:rerun-if-changed={}", version.display());
    Some(dir)
}

fn sources(dir: &Path) -> Vec<PathBuf> {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("lookback build: cannot read {}: {e}", dir.display()));
    let mut sources: Vec<PathBuf> =
        entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "cu")).collect();
    sources.sort();
    assert!(!sources.is_empty(), "lookback build: no .cu file in {}", dir.display());
    sources
}

/// Compiles every source to an object in `out_dir`, all at once (a handful of files, under a minute
/// each), against the CUB in `chosen` if given; the errors of every failed file, joined.
fn compile(
    nvcc: &Path,
    root: &Path,
    chosen: Option<&Path>,
    sources: &[PathBuf],
    out_dir: &Path,
) -> Result<Vec<PathBuf>, String> {
    // The pip wheel nvidia-cuda-cccl puts CUB under include/cccl; a toolkit's nvcc finds it by itself.
    let cccl = root.join("include").join("cccl");
    // `-I` directories are searched in order and before nvcc's own (`-isystem`) ones: the chosen CUB
    // comes first, so every CCCL header (cuda_fp16.h's <nv/target> too) is taken from it.
    let includes: Vec<&Path> = chosen.into_iter().chain(cccl.is_dir().then_some(cccl.as_path())).collect();
    let objects: Vec<PathBuf> = sources
        .iter()
        .map(|s| out_dir.join(format!("cub_{}.o", s.file_stem().unwrap_or_default().to_string_lossy())))
        .collect();
    let results: Vec<Result<(), String>> = std::thread::scope(|scope| {
        let jobs: Vec<_> = sources
            .iter()
            .zip(&objects)
            .map(|(src, obj)| {
                let mut cmd = Command::new(nvcc);
                // -fPIC: the archive ends up in position-independent Rust executables.
                cmd.args(["-c", "-O3", "-std=c++17", "-Xcompiler", "-fPIC"]).args(sass_flags());
                for dir in &includes {
                    cmd.arg("-I").arg(dir);
                }
                cmd.arg("-o").arg(obj).arg(src);
                scope.spawn(move || run_nvcc(cmd))
            })
            .collect();
        jobs.into_iter().map(|j| j.join().unwrap_or_else(|_| Err("nvcc thread panicked".to_string()))).collect()
    });
    let errors: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    if errors.is_empty() { Ok(objects) } else { Err(errors.join("\n")) }
}

/// Links the shim and what it needs: the CUDA runtime statically (from the toolkit's lib64 or the wheel's
/// lib), then the system libraries the static runtime and CUB's host code use.
fn link(root: &Path, out_dir: &Path) {
    println!("cargo:rustc-link-search=native={}", out_dir.display());
    println!("cargo:rustc-link-lib=static={LIB_NAME}");
    let dirs: Vec<PathBuf> = ["lib64", "lib"].iter().map(|d| root.join(d)).filter(|d| d.is_dir()).collect();
    if !dirs.iter().any(|d| d.join("libcudart_static.a").is_file()) {
        panic!(
            "lookback build: the cub-baseline feature links the static CUDA runtime, and there is no \
             libcudart_static.a in {}/lib64 or {}/lib. To get it: {NVCC_HINT}",
            root.display(),
            root.display()
        );
    }
    for d in &dirs {
        println!("cargo:rustc-link-search=native={}", d.display());
    }
    println!("cargo:rustc-link-lib=static=cudart_static");
    for lib in ["stdc++", "dl", "rt", "pthread"] {
        println!("cargo:rustc-link-lib=dylib={lib}");
    }
}
