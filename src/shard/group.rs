//! [`ShardGroup`]: the ranks this process drives (a workspace and the exchange's words each), sharded
//! columns, and the one collective step every sharded call is built on ([`ShardGroup::gather`]).
use super::exchange::{Exchange, SUMMARY_WORDS};
use super::merge::{Part, Summary};
use crate::error::{Error, Result};
use crate::launch::Workspace;
use cudarc::driver::{CudaSlice, CudaStream, CudaViewMut, DeviceRepr};
use std::sync::Arc;

/// The words of a [`Summary`] in the exchange.
pub(super) const W_ITEMS: usize = 0;
pub(super) const W_COUNT: usize = 1;
pub(super) const W_FIRST: usize = 2;
pub(super) const W_LAST: usize = 3;
pub(super) const W_FIRST_VALUE: usize = 4;

/// One rank's part of a [`ShardedColumn`]: its items on the rank's GPU and where they start in the
/// whole column.
#[derive(Debug)]
pub struct Shard<T> {
    data: CudaSlice<T>,
    rank: usize,
    offset: u64,
}

impl<T> Shard<T> {
    /// The items, on the rank's stream.
    pub fn data(&self) -> &CudaSlice<T> {
        &self.data
    }
    /// The items, to write.
    pub fn data_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.data
    }
    /// The world rank that holds it.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// The index of its first item in the whole column.
    pub fn offset(&self) -> u64 {
        self.offset
    }
    /// Its items.
    pub fn len(&self) -> usize {
        self.data.len()
    }
    /// Whether it has no items.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// A column split across the ranks of a world, in rank order; this process holds the shards of its own
/// ranks. Made by [`ShardGroup::column`].
#[derive(Debug)]
pub struct ShardedColumn<T> {
    shards: Vec<Shard<T>>,
    len: u64,
}

impl<T> ShardedColumn<T> {
    /// This process's shards, one per local rank, in rank order.
    pub fn shards(&self) -> &[Shard<T>] {
        &self.shards
    }
    /// This process's shards, to write.
    pub fn shards_mut(&mut self) -> &mut [Shard<T>] {
        &mut self.shards
    }
    /// Items in the whole column, every rank's.
    pub fn len(&self) -> u64 {
        self.len
    }
    /// Whether the whole column is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The device buffers back, one per local rank.
    pub fn into_buffers(self) -> Vec<CudaSlice<T>> {
        self.shards.into_iter().map(|s| s.data).collect()
    }
}

/// Where the result of a sharded compaction or run-based call lies: it stays sharded, each local rank's
/// part in its own output at `output[skip..skip + len]`, at `offset` in the whole result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShardedParts {
    /// One part per local rank, in rank order.
    pub parts: Vec<Part>,
    /// Items of the whole result, every rank's.
    pub total: u64,
}

/// The ranks this process drives and their transport: every sharded call is a method of it (see the
/// [module docs](super)). Every process of the world must make the same sharded calls in the same order:
/// each is a collective.
#[derive(Debug)]
pub struct ShardGroup<X: Exchange> {
    exchange: X,
    /// Per local rank: its workspace, its summary words, and every rank's.
    workspaces: Vec<Workspace>,
    send: Vec<CudaSlice<u64>>,
    recv: Vec<CudaSlice<u64>>,
}

impl<X: Exchange> ShardGroup<X> {
    /// A group over `exchange`'s local ranks: one [`Workspace`] and the exchange's buffers per rank,
    /// allocated now.
    ///
    /// # Errors
    /// [`Error::ShardMismatch`] for a transport without local ranks; [`Error::Driver`].
    pub fn new(exchange: X) -> Result<Self> {
        let world = exchange.world_size();
        if exchange.streams().is_empty() {
            return Err(Error::ShardMismatch { reason: "the transport drives no rank".into() });
        }
        let streams = exchange.streams();
        let workspaces = streams.iter().map(Workspace::new).collect();
        let send =
            streams.iter().map(|s| s.alloc_zeros::<u64>(SUMMARY_WORDS)).collect::<std::result::Result<_, _>>()?;
        let recv = streams
            .iter()
            .map(|s| s.alloc_zeros::<u64>(world * SUMMARY_WORDS))
            .collect::<std::result::Result<_, _>>()?;
        Ok(ShardGroup { exchange, workspaces, send, recv })
    }

    /// The transport.
    pub fn exchange(&self) -> &X {
        &self.exchange
    }
    /// Ranks in the world.
    pub fn world_size(&self) -> usize {
        self.exchange.world_size()
    }
    /// Ranks this process drives.
    pub fn local_ranks(&self) -> usize {
        self.workspaces.len()
    }
    /// The stream of local rank `local`: its shards must live on it.
    ///
    /// # Panics
    /// If `local >= self.local_ranks()`.
    pub fn stream(&self, local: usize) -> &Arc<CudaStream> {
        &self.exchange.streams()[local]
    }
    /// The workspace of local rank `local` (to set its engine, back-off or determinism).
    ///
    /// # Panics
    /// If `local >= self.local_ranks()`.
    pub fn workspace_mut(&mut self, local: usize) -> &mut Workspace {
        &mut self.workspaces[local]
    }

    /// A sharded column of `buffers`, one per local rank, each allocated on its rank's
    /// [`stream`](Self::stream). A collective: the ranks all-gather their lengths to know each shard's
    /// offset. Outputs are sharded columns too; their offsets are those of their capacity.
    ///
    /// # Errors
    /// [`Error::ShardMismatch`] for another number of buffers than local ranks, or a buffer on another
    /// stream than its rank's; the transport's errors.
    pub fn column<T: DeviceRepr>(&mut self, buffers: Vec<CudaSlice<T>>) -> Result<ShardedColumn<T>> {
        if buffers.len() != self.workspaces.len() {
            return Err(Error::ShardMismatch {
                reason: format!("{} buffers for {} local ranks", buffers.len(), self.workspaces.len()),
            });
        }
        for (i, b) in buffers.iter().enumerate() {
            self.check_stream(i, b.stream())?;
        }
        let items: Vec<u64> = buffers.iter().map(|b| b.len() as u64).collect();
        let summaries = self.gather(&items, |_, _, _| Ok(()))?;
        let offsets = super::merge::offsets(&summaries.iter().map(|s| s.items).collect::<Vec<_>>());
        let len = summaries.iter().map(|s| s.items).sum();
        let shards = buffers
            .into_iter()
            .enumerate()
            .map(|(i, data)| {
                let rank = self.exchange.rank(i);
                Shard { data, rank, offset: offsets[rank] }
            })
            .collect();
        Ok(ShardedColumn { shards, len })
    }

    /// `Ok` if `stream` is local rank `local`'s stream.
    fn check_stream(&self, local: usize, stream: &CudaStream) -> Result<()> {
        let own = &self.exchange.streams()[local];
        // The handle alone would take every GPU's legacy default stream (null) for the same stream.
        if stream.cu_stream() == own.cu_stream() && stream.context().cu_ctx() == own.context().cu_ctx() {
            Ok(())
        } else {
            Err(Error::ShardMismatch { reason: format!("a shard of local rank {local} is not on that rank's stream") })
        }
    }

    /// `Ok` if `column` is this group's (one shard per local rank, each on its rank's stream).
    pub(super) fn check_column<T>(&self, what: &str, column: &ShardedColumn<T>) -> Result<()> {
        if column.shards.len() != self.workspaces.len() {
            return Err(Error::ShardMismatch {
                reason: format!("{what} has {} shards for {} local ranks", column.shards.len(), self.workspaces.len()),
            });
        }
        column.shards.iter().enumerate().try_for_each(|(i, s)| self.check_stream(i, s.data.stream()))
    }

    /// `Ok` if every shard of `output` holds at least as many items as the same shard of `input`.
    pub(super) fn check_room<T, U>(
        &self,
        what: &'static str,
        input: &ShardedColumn<T>,
        output: &ShardedColumn<U>,
    ) -> Result<()> {
        self.check_column(what, output)?;
        for (i, o) in input.shards.iter().zip(&output.shards) {
            crate::launch::check_room(what, i.len(), o.len())?;
        }
        Ok(())
    }

    /// The collective step. For each local rank: writes its summary's item count (`items`), runs `local`
    /// (its local pass, which writes the other words of its summary on its stream); then all-gathers the
    /// summaries and reads them back (this waits for the first local rank's stream). Every rank of the
    /// world gets the same summaries, so every process computes the same plan.
    pub(super) fn gather(
        &mut self,
        items: &[u64],
        mut local: impl FnMut(usize, &mut Workspace, &mut CudaSlice<u64>) -> Result<()>,
    ) -> Result<Vec<Summary>> {
        for (i, (ws, send)) in self.workspaces.iter_mut().zip(&mut self.send).enumerate() {
            let mut header = [0u64; SUMMARY_WORDS];
            header[W_ITEMS] = items[i];
            self.exchange.streams()[i].memcpy_htod(&header, send)?;
            local(i, ws, send)?;
        }
        self.exchange.all_gather(&self.send, &mut self.recv)?;
        let words = self.exchange.streams()[0].clone_dtoh(&self.recv[0])?;
        Ok(words
            .chunks_exact(SUMMARY_WORDS)
            .map(|w| Summary {
                items: w[W_ITEMS],
                count: w[W_COUNT],
                first: w[W_FIRST],
                last: w[W_LAST],
                first_value: w[W_FIRST_VALUE],
            })
            .collect())
    }
}

/// Word `k` of a rank's summary as a device item of type `T` (at most 8 bytes): where its local pass
/// writes a total, a count or an item.
pub(super) fn with_word<T, R>(send: &mut CudaSlice<u64>, k: usize, f: impl FnOnce(&mut CudaViewMut<'_, T>) -> R) -> R {
    let per_word = 8 / size_of::<T>();
    // SAFETY: T is an element or a count of 1, 2, 4 or 8 bytes, plain data for which every bit pattern is
    // a value; the words are read back as u64, which every bit pattern also is.
    let mut all = unsafe { send.transmute_mut::<T>(SUMMARY_WORDS * per_word) }.expect("the words hold their bytes");
    let mut word = all.slice_mut(k * per_word..k * per_word + 1);
    f(&mut word)
}
