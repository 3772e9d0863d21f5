//! Opening a GPU without risking cudarc's panic when no driver is installed.
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaStream};
use std::sync::Arc;

/// Whether the CUDA driver library can be loaded on this machine.
pub fn driver_available() -> bool {
    // SAFETY: only tries to dlopen libcuda; it has no preconditions.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// The default stream of GPU `ordinal`, or an error (never a panic) when there is no driver or no GPU.
///
/// # Errors
/// [`Error::NoCudaDriver`] without a driver library; [`Error::Driver`] when there is no such GPU.
pub fn default_stream(ordinal: usize) -> Result<Arc<CudaStream>> {
    if !driver_available() {
        return Err(Error::NoCudaDriver);
    }
    Ok(CudaContext::new(ordinal)?.default_stream())
}
