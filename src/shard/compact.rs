//! Sharded compaction: each rank compacts its shard into its own output with the single-GPU call, its
//! count written straight into its summary; the all-gather gives every rank its global offset. `unique`
//! also publishes the shard's first and last item, so that a shard whose first item equals the last
//! item of the previous non-empty shard drops it (its part starts at `output[1]`). One pass over the
//! items; nothing is moved between GPUs.
use super::exchange::Exchange;
use super::group::{ShardGroup, ShardedColumn, ShardedParts, W_COUNT, W_FIRST, W_LAST, with_word};
use super::merge::{Part, Summary, offsets, runs_plan, selection_parts};
use crate::element::{Element, Flag};
use crate::error::{Result, check_len};
use crate::pred::Predicate;

/// The counts of a sharded partition ([`ShardGroup::partition_counts`]): where each rank's selected
/// and rejected items go in a partitioned column of the whole input (selected first, in order, then the
/// rejected, in order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartitionCounts {
    /// The selected items: each local rank's count, and its offset among all selected items.
    pub selected: ShardedParts,
    /// The rejected items: each local rank's count, and its offset in the partitioned column (the
    /// number of selected items of the whole column, plus the rejected items of earlier ranks).
    pub rejected: ShardedParts,
}

impl<X: Exchange> ShardGroup<X> {
    /// Sharded `select_if`: each rank copies the items of its shard for which `pred` holds to the front
    /// of its shard of `output` (which must hold as many items as the input shard); the result's parts say
    /// how many and where they are in the whole selection. Waits for the exchange.
    ///
    /// # Errors
    /// [`Error::OutputTooSmall`](crate::Error::OutputTooSmall), [`Error::ShardMismatch`](crate::Error::ShardMismatch),
    /// [`Error::PredicateTooComplex`](crate::Error::PredicateTooComplex), the transport's and the
    /// selection's errors.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::Pred;
    /// use lookback::shard::{LocalExchange, ShardGroup};
    /// let mut group = ShardGroup::new(LocalExchange::on_one_gpu(&stream, 2)?)?;
    /// let parts = [vec![5i32, -1, 8], vec![-3, 7]];
    /// let input = (0..2).map(|r| group.stream(r).clone_htod(&parts[r])).collect::<Result<_, _>>()?;
    /// let input = group.column(input)?;
    /// let output = (0..2).map(|r| group.stream(r).alloc_zeros::<i32>(parts[r].len())).collect::<Result<_, _>>()?;
    /// let mut output = group.column(output)?;
    /// let selected = group.select_if_into(&input, &Pred::gt(0), &mut output)?;
    /// assert_eq!(selected.total, 3);
    /// let second = selected.parts[1];
    /// assert_eq!((second.len, second.offset), (1, 2));
    /// assert_eq!(group.stream(1).clone_dtoh(&output.shards()[1].data().slice(..1))?, [7]);
    /// # Ok(()) }
    /// ```
    pub fn select_if_into<T: Element>(
        &mut self,
        input: &ShardedColumn<T>,
        pred: &impl Predicate<T>,
        output: &mut ShardedColumn<T>,
    ) -> Result<ShardedParts> {
        self.check_compaction(input, output)?;
        let summaries = self.gather(&items_of(input), |i, ws, send| {
            let out = output.shards_mut()[i].data_mut();
            with_word::<u64, _>(send, W_COUNT, |count| ws.select_if_into(input.shards()[i].data(), pred, out, count))
        })?;
        Ok(self.local_parts(&selection_parts(&summaries)))
    }

    /// Sharded `select_flagged`: as [`select_if_into`](Self::select_if_into), keeping the items whose flag
    /// (the same shard of `flags`) is set.
    ///
    /// # Errors
    /// As [`select_if_into`](Self::select_if_into); [`Error::LengthMismatch`](crate::Error::LengthMismatch)
    /// when a shard of `flags` has another length than the input's.
    pub fn select_flagged_into<T: Element, F: Flag>(
        &mut self,
        input: &ShardedColumn<T>,
        flags: &ShardedColumn<F>,
        output: &mut ShardedColumn<T>,
    ) -> Result<ShardedParts> {
        self.check_compaction(input, output)?;
        self.check_column("flags", flags)?;
        for (s, f) in input.shards().iter().zip(flags.shards()) {
            check_len("flags", s.len(), f.len())?;
        }
        let summaries = self.gather(&items_of(input), |i, ws, send| {
            let out = output.shards_mut()[i].data_mut();
            let (shard, flags) = (input.shards()[i].data(), flags.shards()[i].data());
            with_word::<u64, _>(send, W_COUNT, |count| ws.select_flagged_into(shard, flags, out, count))
        })?;
        Ok(self.local_parts(&selection_parts(&summaries)))
    }

    /// Sharded `unique`: drops adjacent duplicates of the whole column. Each rank runs `unique` on its
    /// shard; a rank whose first item equals the last item of the previous non-empty shard (IEEE `==`
    /// for floats, as `unique`) has `skip == 1`: its part is `output[1..1 + len]`.
    ///
    /// # Errors
    /// As [`select_if_into`](Self::select_if_into).
    pub fn unique_into<T: Element>(
        &mut self,
        input: &ShardedColumn<T>,
        output: &mut ShardedColumn<T>,
    ) -> Result<ShardedParts> {
        self.check_compaction(input, output)?;
        let summaries = self.gather(&items_of(input), |i, ws, send| {
            let shard = input.shards()[i].data();
            let out = output.shards_mut()[i].data_mut();
            with_word::<u64, _>(send, W_COUNT, |count| ws.unique_into(shard, out, count))?;
            publish_ends(shard, send)
        })?;
        Ok(self.local_parts(&runs_plan(&summaries, same::<T>).parts))
    }

    /// The counts of a sharded partition by `pred`: one counting pass per shard (nothing written), and
    /// each rank's offsets for its selected and rejected items in a partition of the whole column. Each
    /// rank can then partition its shard (`Workspace::partition_if_split_into`) and place its parts.
    ///
    /// # Errors
    /// [`Error::ShardMismatch`](crate::Error::ShardMismatch), [`Error::PredicateTooComplex`](crate::Error::PredicateTooComplex), the
    /// transport's and the count's errors.
    pub fn partition_counts<T: Element>(
        &mut self,
        input: &ShardedColumn<T>,
        pred: &impl Predicate<T>,
    ) -> Result<PartitionCounts> {
        self.check_column("input", input)?;
        let summaries = self.gather(&items_of(input), |i, ws, send| {
            with_word::<u64, _>(send, W_COUNT, |count| ws.count_if_into(input.shards()[i].data(), pred, count))
        })?;
        Ok(partition_parts(&summaries, |r| self.local_rank_of(r)))
    }

    fn check_compaction<T>(&self, input: &ShardedColumn<T>, output: &ShardedColumn<T>) -> Result<()> {
        self.check_column("input", input)?;
        self.check_room("output", input, output)
    }

    /// The parts of this process's ranks, out of every rank's.
    pub(super) fn local_parts(&self, all: &[Part]) -> ShardedParts {
        ShardedParts {
            parts: (0..self.local_ranks()).map(|i| all[self.exchange().rank(i)]).collect(),
            total: all.iter().map(|p| p.len).sum(),
        }
    }

    /// Whether world rank `rank` is one of this process's.
    fn local_rank_of(&self, rank: usize) -> bool {
        (0..self.local_ranks()).any(|i| self.exchange().rank(i) == rank)
    }
}

/// The partition's parts of every rank, keeping those for which `local` holds.
fn partition_parts(summaries: &[Summary], local: impl Fn(usize) -> bool) -> PartitionCounts {
    let selected: Vec<u64> = summaries.iter().map(|s| s.count).collect();
    let rejected: Vec<u64> = summaries.iter().map(|s| s.items - s.count).collect();
    let total_selected: u64 = selected.iter().sum();
    let part = |counts: &[u64], base: u64| ShardedParts {
        parts: offsets(counts)
            .into_iter()
            .zip(counts)
            .enumerate()
            .filter(|&(r, _)| local(r))
            .map(|(_, (offset, &len))| Part { skip: 0, len, offset: base + offset })
            .collect(),
        total: counts.iter().sum(),
    };
    PartitionCounts { selected: part(&selected, 0), rejected: part(&rejected, total_selected) }
}

/// The item counts of `column`'s shards.
pub(super) fn items_of<T>(column: &ShardedColumn<T>) -> Vec<u64> {
    column.shards().iter().map(|s| s.len() as u64).collect()
}

/// Copies the first and last item of a non-empty `shard` into its summary's `first` and `last` words.
pub(super) fn publish_ends<T: Element>(
    shard: &cudarc::driver::CudaSlice<T>,
    send: &mut cudarc::driver::CudaSlice<u64>,
) -> Result<()> {
    let n = shard.len();
    if n == 0 {
        return Ok(());
    }
    let stream = shard.stream().clone();
    with_word::<T, _>(send, W_FIRST, |w| stream.memcpy_dtod(&shard.slice(..1), w))?;
    with_word::<T, _>(send, W_LAST, |w| stream.memcpy_dtod(&shard.slice(n - 1..), w))?;
    Ok(())
}

/// Whether two items' bits are equal as the kernels compare them (IEEE `==` for floats).
pub(super) fn same<T: Element>(a: u64, b: u64) -> bool {
    T::from_bits(a).to_acc() == T::from_bits(b).to_acc()
}
