//! One run-time compile: the program text → a cubin for the context's GPU, through the caches.
use super::cache::{self, CacheHit};
use super::{headers, nvrtc};
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, sys};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// The file name NVRTC gives the user's code in its messages (`#line` in the generated program).
pub(crate) const USER_FILE: &str = "user-code";

/// How one kernel family was obtained: from which cache, how long it took, and what came out.
#[derive(Clone, Debug, PartialEq)]
pub struct CompileReport {
    /// Where the cubin came from.
    pub hit: CacheHit,
    /// Wall time of the whole lookup: a hash-map probe, a file read, or an NVRTC compile.
    pub seconds: f64,
    /// The architecture it was compiled for (`sm_90`).
    pub arch: String,
    /// Size of the cubin.
    pub cubin_bytes: usize,
}

/// A compiled program: the runtime image id of its cubin and how it was obtained.
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    pub image: usize,
    pub report: CompileReport,
}

/// The GPU architecture of `ctx` as NVRTC names it (`sm_90`): a cubin for exactly this GPU, so an NVRTC
/// newer than the driver still produces code the driver loads (PTX from it might not).
pub(crate) fn arch(ctx: &CudaContext) -> Result<String> {
    let major = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    Ok(format!("sm_{major}{minor}"))
}

/// The folders that hold `cuda_fp16.h` (and the `nv/target` it includes), for programs over f16/bf16:
/// `LOOKBACK_CUDA_INCLUDE`, then the toolkit's `include` (`CUDA_HOME`, `CUDA_PATH`, `/usr/local/cuda`).
pub(crate) fn cuda_include_dirs() -> Option<Vec<PathBuf>> {
    let roots = std::env::var_os("LOOKBACK_CUDA_INCLUDE").map(PathBuf::from).into_iter().chain(
        ["CUDA_HOME", "CUDA_PATH"]
            .iter()
            .filter_map(std::env::var_os)
            .map(|r| PathBuf::from(r).join("include"))
            .chain([PathBuf::from("/usr/local/cuda/include")]),
    );
    for dir in roots {
        if dir.join("cuda_fp16.h").is_file() {
            // The PyPI wheels keep libcu++ (nv/target) under include/cccl.
            let cccl = dir.join("cccl");
            return Some(if cccl.is_dir() { vec![dir, cccl] } else { vec![dir] });
        }
    }
    None
}

/// The cubin of `program` for the GPU of `ctx`, from memory, disk, or NVRTC. `half` asks for the 16-bit
/// float headers.
pub(crate) fn compile(ctx: &Arc<CudaContext>, program: &str, half: bool) -> Result<Compiled> {
    compile_for(&arch(ctx)?, program, half)
}

/// The options every compile for `arch` starts with: the language, the architecture, then `extra`
/// (`LOOKBACK_NVRTC_FLAGS`, for experiments: the module docs) split on whitespace. All of them are part of
/// the cache key.
fn base_options(arch: &str, extra: Option<&std::ffi::OsStr>) -> Vec<String> {
    let mut options = vec!["-std=c++17".to_string(), format!("-arch={arch}")];
    if let Some(extra) = extra {
        options.extend(extra.to_string_lossy().split_whitespace().map(str::to_string));
    }
    options
}

/// [`compile`] for architecture `arch` (`sm_90`), which needs no GPU.
pub(crate) fn compile_for(arch: &str, program: &str, half: bool) -> Result<Compiled> {
    let started = Instant::now();
    let mut options = base_options(arch, std::env::var_os("LOOKBACK_NVRTC_FLAGS").as_deref());
    if half {
        let dirs = cuda_include_dirs().ok_or(Error::CudaHeadersNotFound)?;
        options.push("-DLOOKBACK_RTC_HALF".to_string());
        options.extend(dirs.iter().map(|d| format!("-I{}", d.display())));
    }
    let (major, minor) = nvrtc::version()?;
    let key = cache_key(program, &options, (major, minor));
    let report = |hit, cubin_bytes| CompileReport {
        hit,
        seconds: started.elapsed().as_secs_f64(),
        arch: arch.to_string(),
        cubin_bytes,
    };
    if let Some(image) = cache::in_memory(&key) {
        let bytes = cache::cubin(image).map_or(0, |c| c.len());
        return Ok(Compiled { image, report: report(CacheHit::Memory, bytes) });
    }
    if let Some(cubin) = cache::load(&key) {
        let bytes = cubin.len();
        return Ok(Compiled { image: cache::register(&key, cubin), report: report(CacheHit::Disk, bytes) });
    }
    match nvrtc::compile(program, "lookback-rtc.cu", headers::headers(), &options)? {
        nvrtc::Compiled::Cubin(cubin) => {
            cache::store(&key, &cubin);
            let bytes = cubin.len();
            Ok(Compiled { image: cache::register(&key, cubin), report: report(CacheHit::Compiled, bytes) })
        }
        nvrtc::Compiled::Failed { log } => Err(compile_error(program, log)),
    }
}

/// Everything the cubin depends on, as text: the crate's version and headers, NVRTC's version, the options
/// and the program.
fn cache_key(program: &str, options: &[String], (major, minor): (i32, i32)) -> String {
    // Hashed once: the headers are about 320 KB, and every call with user code looks its kernels up here.
    static HEADERS: OnceLock<u64> = OnceLock::new();
    let headers = *HEADERS.get_or_init(|| {
        headers::headers().iter().fold(0u64, |h, (name, text)| {
            h.rotate_left(5) ^ cache::fnv1a(name.as_bytes()) ^ cache::fnv1a(text.as_bytes())
        })
    });
    format!(
        "lookback {} headers {headers:016x}\nnvrtc {major}.{minor}\n{}\n{program}",
        env!("CARGO_PKG_VERSION"),
        options.join(" ")
    )
}

/// The typed error of a failed compile: NVRTC's log, and the user's first line it complains about.
fn compile_error(program: &str, log: String) -> Error {
    // NVRTC writes `user-code(3): error: ...` for line 3 of the user's code; a program with several
    // parts of user code names each part's file (`#line 1 "user-load"`).
    let line = log.lines().find_map(|l| {
        let (file, rest) = l.split_once('(')?;
        // Only the user's parts: the generated lines around them have files of their own.
        if !file.starts_with(USER_FILE) {
            return None;
        }
        let (number, _) = rest.split_once(')')?;
        let n: usize = number.parse().ok()?;
        let user = user_code(program, file)?;
        Some((n, user.lines().nth(n.checked_sub(1)?)?.to_string()))
    });
    Error::Compile { log, line }
}

/// The user's code of file `file` inside a generated program: the lines after `#line 1 "<file>"` up to
/// the next `#line`; `None` when the program has no such part.
fn user_code<'a>(program: &'a str, file: &str) -> Option<&'a str> {
    let marker = format!("#line 1 \"{file}\"");
    let (_, after) = program.split_once(&marker)?;
    let after = after.strip_prefix('\n').unwrap_or(after);
    after.split("\n#line ").next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compile_error_names_the_users_line() {
        let program = "int a;\n#line 1 \"user-code\"\nx > 0 &&\n  x < nope\n#line 9 \"lookback\"\n}\n";
        let log = "user-code(2): error: identifier \"nope\" is undefined\n\n1 error detected".to_string();
        match compile_error(program, log.clone()) {
            Error::Compile { log: got, line } => {
                assert_eq!(got, log);
                assert_eq!(line, Some((2, "  x < nope".to_string())));
            }
            e => panic!("unexpected {e:?}"),
        }
        // A log that names no user line (an error in a header) keeps the log alone.
        let other = "core/ops.cuh(3): error: something".to_string();
        assert!(matches!(compile_error(program, other), Error::Compile { line: None, .. }));
    }

    #[test]
    fn extra_flags_follow_the_architecture_and_change_the_key() {
        assert_eq!(base_options("sm_90", None), ["-std=c++17", "-arch=sm_90"]);
        let flags = std::ffi::OsStr::new("  -DLB_X=1\t-DLB_Y ");
        let with = base_options("sm_90", Some(flags));
        assert_eq!(with, ["-std=c++17", "-arch=sm_90", "-DLB_X=1", "-DLB_Y"]);
        assert_eq!(base_options("sm_90", Some(std::ffi::OsStr::new(" "))), base_options("sm_90", None));
        assert_ne!(cache_key("p", &with, (13, 0)), cache_key("p", &base_options("sm_90", None), (13, 0)));
    }

    #[test]
    fn the_key_holds_the_program_and_options() {
        let a = cache_key("p", &["-arch=sm_90".into()], (13, 0));
        assert!(a.contains("nvrtc 13.0") && a.contains("-arch=sm_90") && a.ends_with("\np"));
        assert_ne!(a, cache_key("p", &["-arch=sm_80".into()], (13, 0)));
        assert_ne!(a, cache_key("p", &["-arch=sm_90".into()], (13, 1)));
    }
}
