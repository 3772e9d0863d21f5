//! The checks every call makes on its streams and buffers, and what an empty call writes.
use crate::error::{Error, Result};
use cudarc::driver::{CudaStream, sys};

/// Whether `stream` is capturing work into a CUDA graph.
pub(crate) fn is_capturing(stream: &CudaStream) -> Result<bool> {
    use sys::CUstreamCaptureStatus as Status;
    Ok(stream.capture_status()? != Status::CU_STREAM_CAPTURE_STATUS_NONE)
}

/// `Ok` if both streams belong to the same CUDA context, else [`Error::ContextMismatch`].
pub(crate) fn same_context(a: &CudaStream, b: &CudaStream) -> Result<()> {
    if a.context().cu_ctx() == b.context().cu_ctx() { Ok(()) } else { Err(Error::ContextMismatch) }
}

/// Writes `words` zero u64 counts at `addr` on `stream`: what a call on an empty input leaves instead of
/// launching a kernel (invariant 6).
pub(crate) fn zero_counts(stream: &CudaStream, addr: u64, words: usize) -> Result<()> {
    // SAFETY: callers pass the address of at least `words` u64 of a buffer they checked and hold borrowed.
    unsafe { cudarc::driver::result::memset_d8_async(addr, 0, 8 * words, stream.cu_stream()) }?;
    Ok(())
}

/// A device buffer as an address range, for [`check_disjoint`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    pub what: &'static str,
    pub addr: u64,
    pub bytes: usize,
}

impl Span {
    pub fn new<T>(what: &'static str, addr: u64, len: usize) -> Self {
        Span { what, addr, bytes: len * size_of::<T>() }
    }
    fn overlaps(&self, other: &Span) -> bool {
        self.bytes > 0
            && other.bytes > 0
            && self.addr < other.addr + other.bytes as u64
            && other.addr < self.addr + self.bytes as u64
    }
}

/// `Ok` if no output overlaps an input or another output, else [`Error::Overlap`].
pub(crate) fn check_disjoint(inputs: &[Span], outputs: &[Span]) -> Result<()> {
    for (i, out) in outputs.iter().enumerate() {
        if let Some(other) = inputs.iter().chain(&outputs[i + 1..]).find(|other| out.overlaps(other)) {
            return Err(Error::Overlap { what: out.what, other: other.what });
        }
    }
    Ok(())
}

/// `Ok` if an output of `actual` items can hold `needed`, else [`Error::OutputTooSmall`].
pub(crate) fn check_room(what: &'static str, needed: usize, actual: usize) -> Result<()> {
    if actual < needed { Err(Error::OutputTooSmall { what, needed, actual }) } else { Ok(()) }
}
