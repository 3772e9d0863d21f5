//! NVRTC, opened at run time by this crate (not through cudarc, whose NVRTC bindings panic when the library
//! is missing and change with the linking mode that another crate of the build may choose): the few
//! entry points a compile to a cubin needs.
use crate::error::{Error, Result};
use std::ffi::{CStr, CString, c_char, c_int};
use std::path::PathBuf;
use std::sync::OnceLock;

type Program = *mut std::ffi::c_void;
type Status = c_int;

/// The entry points, resolved once.
struct Api {
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> Status,
    create: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> Status,
    compile: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> Status,
    destroy: unsafe extern "C" fn(*mut Program) -> Status,
    log_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    log: unsafe extern "C" fn(Program, *mut c_char) -> Status,
    cubin_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    cubin: unsafe extern "C" fn(Program, *mut c_char) -> Status,
    // Keeps the library loaded while the entry points above are in use.
    _lib: libloading::Library,
}

/// The NVRTC library's names and places, in search order: `LOOKBACK_NVRTC` alone when set (a file),
/// else the loader's own search (`LD_LIBRARY_PATH`, the system's library paths), then the CUDA toolkit's
/// folders.
pub(crate) fn candidates() -> Vec<PathBuf> {
    use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};
    if let Some(path) = std::env::var_os("LOOKBACK_NVRTC") {
        return vec![PathBuf::from(path)];
    }
    let mut out = Vec::new();
    // Versioned names first: a bare libnvrtc.so exists only where a toolkit's development files are.
    let names: Vec<String> = [".13", "", ".12"].iter().map(|v| format!("{DLL_PREFIX}nvrtc{DLL_SUFFIX}{v}")).collect();
    out.extend(names.iter().map(PathBuf::from));
    let mut dirs: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .flat_map(|root| [PathBuf::from(&root).join("lib64"), PathBuf::from(&root).join("lib")])
        .collect();
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    for dir in dirs {
        out.extend(names.iter().map(|n| dir.join(n)));
    }
    out
}

/// How to get NVRTC, for [`Error::NvrtcNotFound`].
pub(crate) const INSTALL_HINT: &str = "install the CUDA toolkit, or `pip install nvidia-cuda-nvrtc==13.0.88` \
     and add its nvidia/cu13/lib folder to LD_LIBRARY_PATH (NVRTC also loads libnvrtc-builtins from there), \
     or set LOOKBACK_NVRTC to the library file";

fn api() -> Result<&'static Api> {
    static API: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    API.get_or_init(open).as_ref().map_err(|searched| Error::NvrtcNotFound { searched: searched.clone() })
}

fn open() -> std::result::Result<Api, String> {
    let candidates = candidates();
    for path in &candidates {
        // SAFETY: loading NVRTC runs its initialisers only; its entry points are resolved by their
        // documented names and C signatures (nvrtc.h, stable since CUDA 11.1).
        let Ok(lib) = (unsafe { libloading::Library::new(path) }) else { continue };
        let api = unsafe {
            Api {
                version: *lib.get(b"nvrtcVersion\0").map_err(|e| e.to_string())?,
                create: *lib.get(b"nvrtcCreateProgram\0").map_err(|e| e.to_string())?,
                compile: *lib.get(b"nvrtcCompileProgram\0").map_err(|e| e.to_string())?,
                destroy: *lib.get(b"nvrtcDestroyProgram\0").map_err(|e| e.to_string())?,
                log_size: *lib.get(b"nvrtcGetProgramLogSize\0").map_err(|e| e.to_string())?,
                log: *lib.get(b"nvrtcGetProgramLog\0").map_err(|e| e.to_string())?,
                cubin_size: *lib.get(b"nvrtcGetCUBINSize\0").map_err(|e| e.to_string())?,
                cubin: *lib.get(b"nvrtcGetCUBIN\0").map_err(|e| e.to_string())?,
                _lib: lib,
            }
        };
        return Ok(api);
    }
    Err(candidates.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))
}

/// Whether NVRTC can be loaded on this machine.
pub fn nvrtc_available() -> bool {
    api().is_ok()
}

/// NVRTC's version (major, minor).
pub(crate) fn version() -> Result<(i32, i32)> {
    let api = api()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two out-parameters.
    let status = unsafe { (api.version)(&mut major, &mut minor) };
    if status != 0 {
        return Err(Error::NvrtcNotFound { searched: format!("nvrtcVersion failed with status {status}") });
    }
    Ok((major, minor))
}

/// What a compile produced: the cubin, or the log of a failed compile.
pub(crate) enum Compiled {
    Cubin(Vec<u8>),
    Failed { log: String },
}

/// Compiles `source` (named `name` in messages) with the in-memory `headers` (name, text) and `options`.
pub(crate) fn compile(source: &str, name: &str, headers: &[(String, String)], options: &[String]) -> Result<Compiled> {
    let api = api()?;
    let cstr = |s: &str| CString::new(s).map_err(|_| Error::InvalidSource { reason: "contains a NUL byte" });
    let source = cstr(source)?;
    let name = cstr(name)?;
    let header_texts = headers.iter().map(|(_, t)| cstr(t)).collect::<Result<Vec<_>>>()?;
    let header_names = headers.iter().map(|(n, _)| cstr(n)).collect::<Result<Vec<_>>>()?;
    let options = options.iter().map(|o| cstr(o)).collect::<Result<Vec<_>>>()?;
    let texts: Vec<*const c_char> = header_texts.iter().map(|c| c.as_ptr()).collect();
    let names: Vec<*const c_char> = header_names.iter().map(|c| c.as_ptr()).collect();
    let opts: Vec<*const c_char> = options.iter().map(|c| c.as_ptr()).collect();
    let failed = |what: &str, status: Status| Error::NvrtcFailed { what: what.to_string(), status };
    let mut prog: Program = std::ptr::null_mut();
    // SAFETY: every pointer is to a NUL-terminated string that outlives the call; the arrays have
    // `headers.len()` entries.
    let status = unsafe {
        (api.create)(&mut prog, source.as_ptr(), name.as_ptr(), texts.len() as c_int, texts.as_ptr(), names.as_ptr())
    };
    if status != 0 {
        return Err(failed("nvrtcCreateProgram", status));
    }
    // Destroys the program on every path out.
    struct Guard<'a>(&'a Api, Program);
    impl Drop for Guard<'_> {
        fn drop(&mut self) {
            // SAFETY: the program was created above and is destroyed once.
            unsafe { (self.0.destroy)(&mut self.1) };
        }
    }
    let guard = Guard(api, prog);
    // SAFETY: `opts` holds `opts.len()` valid option strings.
    let status = unsafe { (api.compile)(guard.1, opts.len() as c_int, opts.as_ptr()) };
    // SAFETY: the size query, then a buffer of that size (NUL included) for the log.
    let log = unsafe {
        let mut size = 0usize;
        if (api.log_size)(guard.1, &mut size) != 0 || size == 0 {
            String::new()
        } else {
            let mut buf = vec![0 as c_char; size];
            (api.log)(guard.1, buf.as_mut_ptr());
            CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
        }
    };
    // NVRTC_ERROR_COMPILATION (6) is the user's code; any other failure is NVRTC's own trouble (a missing
    // libnvrtc-builtins, for one), which its log explains.
    if status == 6 {
        return Ok(Compiled::Failed { log });
    }
    if status != 0 {
        return Err(failed(&format!("nvrtcCompileProgram ({})", log.trim()), status));
    }
    // SAFETY: as for the log.
    let cubin = unsafe {
        let mut size = 0usize;
        let status = (api.cubin_size)(guard.1, &mut size);
        if status != 0 {
            return Err(failed("nvrtcGetCUBINSize", status));
        }
        let mut buf = vec![0u8; size];
        let status = (api.cubin)(guard.1, buf.as_mut_ptr().cast());
        if status != 0 {
            return Err(failed("nvrtcGetCUBIN", status));
        }
        buf
    };
    Ok(Compiled::Cubin(cubin))
}
