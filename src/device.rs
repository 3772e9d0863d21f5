//! Opening a GPU without risking cudarc's panic when no driver is installed.
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaStream};
use std::sync::Arc;

/// Whether the CUDA driver library can be loaded on this machine.
///
/// # Example
/// ```
/// if !lookback::driver_available() {
///     // Without a driver library, opening a GPU reports an error instead of panicking.
///     assert!(matches!(lookback::default_stream(0), Err(lookback::Error::NoCudaDriver)));
/// }
/// ```
pub fn driver_available() -> bool {
    use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};
    // cudarc's own check (`is_culib_present`) exists only when cudarc loads libcuda at run time, which
    // another crate of the build may have switched to linking; this one works either way. The names
    // are the driver library's on Linux (libcuda.so, and the versioned names a driver install has) and
    // on Windows (nvcuda.dll).
    let names = ["cuda", "nvcuda"]
        .into_iter()
        .flat_map(|lib| ["", ".1", ".13", ".12"].map(move |version| format!("{DLL_PREFIX}{lib}{DLL_SUFFIX}{version}")));
    // SAFETY: opening the driver library runs its initialisers, as cudarc's first driver call would;
    // nothing of it is called here.
    names.into_iter().any(|name| unsafe { libloading::Library::new(name) }.is_ok())
}

/// The default stream of GPU `ordinal`, or an error (never a panic) when there is no driver or no GPU.
///
/// # Errors
/// [`Error::NoCudaDriver`] without a driver library; [`Error::Driver`] when there is no such GPU.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// use lookback::{Error, ScanOp};
/// match lookback::default_stream(0) {
///     Ok(stream) => {
///         let buf = stream.clone_htod(&[1u8, 2, 3])?;
///         assert_eq!(stream.clone_dtoh(&buf)?, [1, 2, 3]);
///     }
///     Err(Error::NoCudaDriver) => {
///         assert!(!lookback::driver_available());
///         // The host path computes the same results without a GPU.
///         assert_eq!(lookback::host::inclusive_scan(&[1u8, 2, 3], ScanOp::Sum)?, [1, 3, 6]);
///     }
///     Err(e) => println!("no usable GPU 0: {e}"),
/// }
/// # Ok(()) }
/// ```
pub fn default_stream(ordinal: usize) -> Result<Arc<CudaStream>> {
    if !driver_available() {
        return Err(Error::NoCudaDriver);
    }
    Ok(CudaContext::new(ordinal)?.default_stream())
}
