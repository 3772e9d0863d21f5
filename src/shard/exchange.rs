//! The one exchange of a sharded call: an all-gather of [`SUMMARY_WORDS`] words per rank, in device
//! memory, ordered on each rank's stream. [`ShardGroup`](super::ShardGroup) needs nothing else from a
//! transport, so the same code runs over NCCL ([`NcclExchange`](super::NcclExchange), feature `nccl`)
//! and over [`LocalExchange`], several ranks on one GPU (what the tests run on a single GPU).
use crate::error::{Error, Result};
use crate::launch::same_context;
use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

/// Words each rank publishes per call: its shard's summary (see [`merge::Summary`](super::merge::Summary)).
pub const SUMMARY_WORDS: usize = 8;

/// A transport: the ranks this process drives, and the all-gather between all ranks of the world.
///
/// A process may drive every rank (one process, several GPUs: one group call per all-gather) or one
/// (one process per GPU); [`ShardGroup`](super::ShardGroup) calls [`all_gather`](Self::all_gather) once per
/// sharded call on every process, in the same order: it is a collective.
pub trait Exchange {
    /// Ranks in the world, every process's.
    fn world_size(&self) -> usize;
    /// The streams of the ranks this process drives, in rank order; one per rank.
    fn streams(&self) -> &[Arc<CudaStream>];
    /// The world rank of this process's `local`-th rank.
    fn rank(&self, local: usize) -> usize;
    /// For every local rank `i`, gathers every rank's [`SUMMARY_WORDS`] words of `send` into `recv[i]`
    /// (rank `r`'s at `r · SUMMARY_WORDS`), after the work already queued on the ranks' streams and
    /// before work queued on them later. `send[i]` and `recv[i]` live on local rank `i`'s GPU and hold
    /// [`SUMMARY_WORDS`] and `world_size() · SUMMARY_WORDS` words.
    ///
    /// # Errors
    /// The transport's ([`Error::Driver`], [`Error::Nccl`]).
    fn all_gather(&mut self, send: &[CudaSlice<u64>], recv: &mut [CudaSlice<u64>]) -> Result<()>;
}

/// Several ranks on one GPU, in one process: each rank its own stream (and, in its
/// [`ShardGroup`](super::ShardGroup), its own workspace), the all-gather device-to-device copies ordered
/// by events. It shares every line of a sharded call with the NCCL transport except the all-gather, so a
/// single GPU tests the sharded logic; it gives no speed-up.
///
/// # Example
/// ```
/// # fn main() -> lookback::Result<()> {
/// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
/// use lookback::shard::{Exchange, LocalExchange};
/// let exchange = LocalExchange::on_one_gpu(&stream, 3)?;
/// assert_eq!(exchange.world_size(), 3);
/// assert_eq!(exchange.rank(2), 2);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct LocalExchange {
    streams: Vec<Arc<CudaStream>>,
}

impl LocalExchange {
    /// One rank per stream; every stream must belong to the same context.
    ///
    /// # Errors
    /// [`Error::ShardMismatch`] without streams; [`Error::ContextMismatch`] for streams of several contexts.
    pub fn new(streams: Vec<Arc<CudaStream>>) -> Result<Self> {
        let Some(first) = streams.first() else {
            return Err(Error::ShardMismatch { reason: "a group needs at least one rank".into() });
        };
        for s in &streams {
            same_context(first, s)?;
        }
        Ok(LocalExchange { streams })
    }

    /// `ranks` ranks on `stream`'s GPU, each on a new stream of its context.
    ///
    /// # Errors
    /// [`Error::ShardMismatch`] for 0 ranks; [`Error::Driver`].
    pub fn on_one_gpu(stream: &Arc<CudaStream>, ranks: usize) -> Result<Self> {
        let streams = (0..ranks).map(|_| stream.context().new_stream()).collect::<std::result::Result<_, _>>()?;
        Self::new(streams)
    }
}

impl Exchange for LocalExchange {
    fn world_size(&self) -> usize {
        self.streams.len()
    }
    fn streams(&self) -> &[Arc<CudaStream>] {
        &self.streams
    }
    fn rank(&self, local: usize) -> usize {
        local
    }
    fn all_gather(&mut self, send: &[CudaSlice<u64>], recv: &mut [CudaSlice<u64>]) -> Result<()> {
        let world = self.streams.len();
        check_buffers(world, world, send, recv)?;
        for (j, into) in recv.iter_mut().enumerate() {
            let stream = &self.streams[j];
            for (i, from) in send.iter().enumerate() {
                // Rank i's words are ready once its stream's queued work is: rank j waits for it.
                stream.join(&self.streams[i])?;
                stream.memcpy_dtod(from, &mut into.slice_mut(i * SUMMARY_WORDS..(i + 1) * SUMMARY_WORDS))?;
            }
        }
        // And no rank rewrites its words (the next call) before every rank has copied them, as NCCL
        // guarantees.
        for (i, stream) in self.streams.iter().enumerate() {
            for (j, other) in self.streams.iter().enumerate() {
                if i != j {
                    stream.join(other)?;
                }
            }
        }
        Ok(())
    }
}

/// `Ok` if there are `local` send and receive buffers of [`SUMMARY_WORDS`] and `world · SUMMARY_WORDS`
/// words: a transport's check before it copies.
pub(crate) fn check_buffers(
    local: usize,
    world: usize,
    send: &[CudaSlice<u64>],
    recv: &[CudaSlice<u64>],
) -> Result<()> {
    let fits = send.len() == local
        && recv.len() == local
        && send.iter().all(|s| s.len() == SUMMARY_WORDS)
        && recv.iter().all(|r| r.len() == world * SUMMARY_WORDS);
    if fits {
        Ok(())
    } else {
        Err(Error::ShardMismatch {
            reason: format!("all_gather needs {local} buffers of {SUMMARY_WORDS} and {} words", world * SUMMARY_WORDS),
        })
    }
}
