//! Capturing calls into a CUDA graph, to replay a whole pipeline with one launch and no host in the loop.
//!
//! Every [`Workspace`](crate::Workspace) call is replay-safe: the look-back keeps its tile counter and epochs in the
//! workspace's device memory, and the last block of each launch advances them for the next one, so a
//! captured call is correct however often its graph is replayed, interleaved with ordinary calls on the
//! same workspace. Sizes can live on the device too ([`Workspace::with_count`](crate::Workspace::with_count)).
//!
//! What a capture needs:
//! * **A workspace with room.** A workspace cannot allocate inside a capture: [`Workspace::reserve`](crate::Workspace::reserve) it
//!   for the largest input first (or make one eager call of each size).
//! * **`_into` forms.** Calls that return a count to the host, and the one-shot functions that allocate
//!   their results, cannot be captured; their `_into` forms (`Workspace::*_into`) leave everything on the
//!   device.
//! * **No event waits on work outside the capture.** cudarc's event tracking (on once a context has a
//!   second stream) makes every use of a buffer wait on events recorded by earlier work, which a capture
//!   refuses (`CUDA_ERROR_STREAM_CAPTURE_ISOLATION`). [`capture`] turns tracking off while it captures.
//!   A call that would make such a wait returns [`Error::NotCapturable`] before it enqueues anything.
//!
//! Inside a capture, a call that cannot be captured returns [`Error::NotCapturable`] and enqueues
//! nothing, so the capture itself stays valid.
//!
//! A graph launches on the stream it was captured on and is ordered after earlier work on that stream
//! only: data written on another stream must be joined first. Keep every buffer a graph uses, and the
//! workspace, alive while the graph can run: drop the graph first.
use crate::error::{Error, Result};
use cudarc::driver::{CudaGraph, CudaStream, sys};
use std::sync::Arc;

/// Captures the work that `calls` enqueues on `stream` into a CUDA graph, ready to replay with
/// [`CudaGraph::launch`]. Event tracking is off while `calls` runs, and on again afterwards if it was on.
/// The stream is synchronized first, so the capture depends on no earlier work, and the crate's kernels
/// are loaded first (once per context), so that no module loads inside the capture.
///
/// # Errors
/// [`Error::NotCapturable`] when `stream` is the legacy default stream (which cannot capture) or
/// already capturing; whatever `calls` returns (the capture is then ended and discarded);
/// [`Error::Driver`].
///
/// # Safety
/// While `calls` runs, cudarc's event tracking is off for the whole context (cudarc's
/// [`CudaContext::disable_event_tracking`](cudarc::driver::CudaContext::disable_event_tracking)): no
/// other thread may use buffers of this context meanwhile, and buffers allocated inside `calls` are not
/// tracked afterwards either; order their uses on other streams yourself.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// # if !lookback::kernels_built() { return Ok(()) }
/// use lookback::{Pred, ScanOp, Workspace};
/// // The legacy default stream cannot capture: use a stream of its own.
/// let stream = stream.context().new_stream()?;
/// let mut ws = Workspace::new(&stream);
/// ws.reserve(1024)?;
/// let mut input = stream.clone_htod(&[4i32, -1, 7, 0, 2])?;
/// let mut kept = stream.alloc_zeros::<i32>(5)?;
/// let mut num_kept = stream.alloc_zeros::<u64>(1)?;
/// let mut offsets = stream.alloc_zeros::<i32>(5)?;
/// // Filter, then scan what is left, sized by the count on the device.
/// let graph = unsafe {
///     lookback::graph::capture(&stream, |_| {
///         ws.select_if_into(&input, &Pred::gt(0), &mut kept, &mut num_kept)?;
///         ws.with_count(&num_kept, |ws| ws.exclusive_scan_into(&kept, &mut offsets, 0, ScanOp::Sum))
///     })?
/// };
/// for batch in [[1, 2, 3, 4, 5], [-1, 9, -1, 9, -1]] {
///     stream.memcpy_htod(&batch, &mut input)?;
///     graph.launch()?;
///     let n = stream.clone_dtoh(&num_kept)?[0] as usize;
///     let got = stream.clone_dtoh(&offsets.slice(..n))?;
///     assert_eq!(got, if n == 5 { vec![0, 1, 3, 6, 10] } else { vec![0, 9] });
/// }
/// # Ok(()) }
/// ```
pub unsafe fn capture(
    stream: &Arc<CudaStream>,
    calls: impl FnOnce(&Arc<CudaStream>) -> Result<()>,
) -> Result<CudaGraph> {
    use sys::CUstreamCaptureMode as Mode;
    use sys::CUstreamCaptureStatus as Status;
    if stream.cu_stream().is_null() {
        return Err(Error::NotCapturable {
            reason: "the legacy default stream cannot capture: use a stream of its own",
        });
    }
    if stream.capture_status()? != Status::CU_STREAM_CAPTURE_STATUS_NONE {
        return Err(Error::NotCapturable { reason: "the stream is capturing already" });
    }
    stream.synchronize()?;
    let ctx = stream.context();
    // Every kernel module loaded (once per context) before the capture, so that none loads inside it.
    crate::kernels::load_all(ctx)?;
    let tracking = ctx.is_event_tracking();
    /// Turns tracking back on however the capture ends.
    struct Tracking<'a>(&'a cudarc::driver::CudaContext, bool);
    impl Drop for Tracking<'_> {
        fn drop(&mut self) {
            if self.1 {
                // SAFETY: restores the setting `capture` found.
                unsafe { self.0.enable_event_tracking() }
            }
        }
    }
    let _restore = Tracking(ctx, tracking);
    // SAFETY: the caller guarantees that nothing else uses this context's buffers meanwhile.
    unsafe { ctx.disable_event_tracking() };
    // Thread-local mode: other threads' unrelated CUDA calls do not invalidate this capture.
    stream.begin_capture(Mode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
    let captured = calls(stream);
    let ended = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    captured?;
    ended?.ok_or(Error::NotCapturable { reason: "the capture recorded no work" })
}
