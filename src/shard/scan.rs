//! Sharded scans: each rank reduces its shard, the ranks all-gather the totals, and each scans its shard
//! seeded with the total of the shards before it (`Workspace::inclusive_scan_seeded_into`, or the
//! exclusive scan's initial value ⊕ that total). Reads 3n items and writes n, where a local scan followed
//! by a fix-up pass that adds each shard's prefix would read 2n and write 2n (see the module docs).
use super::exchange::Exchange;
use super::group::{ShardGroup, ShardedColumn, W_FIRST, with_word};
use super::merge::scan_seeds;
use crate::element::Element;
use crate::error::Result;
use crate::op::ScanOp;

impl<X: Exchange> ShardGroup<X> {
    /// Sharded inclusive scan: `output` gets the inclusive scan of the whole column, each rank's part in
    /// its shard (`output`'s shards must each hold at least as many items as `input`'s). The same items
    /// as a scan of the concatenated column on one GPU (float sums: within rounding, combined in another
    /// order). Waits for the exchange; the scans themselves run on the ranks' streams.
    ///
    /// # Errors
    /// [`Error::Unsupported`](crate::Error::Unsupported) for a bitwise operator on floats;
    /// [`Error::OutputTooSmall`](crate::Error::OutputTooSmall); [`Error::ShardMismatch`](crate::Error::ShardMismatch);
    /// the transport's and the scans' errors.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::ScanOp;
    /// use lookback::shard::{LocalExchange, ShardGroup};
    /// // Two ranks on one GPU.
    /// let mut group = ShardGroup::new(LocalExchange::on_one_gpu(&stream, 2)?)?;
    /// let parts = [vec![3i32, 1, 4], vec![1, 5]];
    /// let input = (0..2).map(|r| group.stream(r).clone_htod(&parts[r])).collect::<Result<_, _>>()?;
    /// let input = group.column(input)?;
    /// let output = (0..2).map(|r| group.stream(r).alloc_zeros::<i32>(parts[r].len())).collect::<Result<_, _>>()?;
    /// let mut output = group.column(output)?;
    /// group.inclusive_scan_into(&input, &mut output, ScanOp::Sum)?;
    /// let shards = output.shards();
    /// assert_eq!(group.stream(0).clone_dtoh(shards[0].data())?, [3, 4, 8]);
    /// assert_eq!(group.stream(1).clone_dtoh(shards[1].data())?, [9, 14]);
    /// # Ok(()) }
    /// ```
    pub fn inclusive_scan_into<T: Element>(
        &mut self,
        input: &ShardedColumn<T>,
        output: &mut ShardedColumn<T>,
        op: ScanOp,
    ) -> Result<()> {
        self.scan(input, output, None, op)
    }

    /// Sharded exclusive scan seeded with `init`: as [`inclusive_scan_into`](Self::inclusive_scan_into),
    /// each item getting `init` ⊕ every item before it in the whole column.
    ///
    /// # Errors
    /// As [`inclusive_scan_into`](Self::inclusive_scan_into).
    pub fn exclusive_scan_into<T: Element>(
        &mut self,
        input: &ShardedColumn<T>,
        output: &mut ShardedColumn<T>,
        init: T,
        op: ScanOp,
    ) -> Result<()> {
        self.scan(input, output, Some(init), op)
    }

    fn scan<T: Element>(
        &mut self,
        input: &ShardedColumn<T>,
        output: &mut ShardedColumn<T>,
        init: Option<T>,
        op: ScanOp,
    ) -> Result<()> {
        op.check(T::DTYPE)?;
        self.check_column("input", input)?;
        self.check_room("output", input, output)?;
        let world = self.world_size();
        let items: Vec<u64> = input.shards().iter().map(|s| s.len() as u64).collect();
        // One rank alone needs no exchange, and the last rank's total seeds nobody: neither reduces.
        let seeds = if world == 1 {
            vec![None]
        } else {
            let ranks: Vec<usize> = (0..self.local_ranks()).map(|i| self.exchange().rank(i)).collect();
            let summaries = self.gather(&items, |i, ws, send| {
                let shard = input.shards()[i].data();
                if shard.is_empty() || ranks[i] + 1 == world {
                    return Ok(());
                }
                with_word::<T, _>(send, W_FIRST, |total| ws.reduce_into(shard, total, op))
            })?;
            let items: Vec<u64> = summaries.iter().map(|s| s.items).collect();
            let totals: Vec<u64> = summaries.iter().map(|s| s.first).collect();
            let all = scan_seeds(&items, &totals, |a, b| combine::<T>(op, a, b));
            ranks.iter().map(|&r| all[r]).collect()
        };
        for (i, seed) in seeds.into_iter().enumerate() {
            let (shard, out) = (input.shards()[i].data(), output.shards_mut()[i].data_mut());
            let seed = seed.map(T::from_bits);
            let ws = self.workspace_mut(i);
            match (init, seed) {
                (None, None) => ws.inclusive_scan_into(shard, out, op)?,
                (None, Some(seed)) => ws.inclusive_scan_seeded_into(shard, out, seed, op)?,
                (Some(init), None) => ws.exclusive_scan_into(shard, out, init, op)?,
                (Some(init), Some(seed)) => ws.exclusive_scan_into(
                    shard,
                    out,
                    T::from_bits(combine::<T>(op, init.to_bits(), seed.to_bits())),
                    op,
                )?,
            }
        }
        Ok(())
    }
}

/// `a op b` of two elements' bits, in the accumulator type and rounded once to `T`.
pub(super) fn combine<T: Element>(op: ScanOp, a: u64, b: u64) -> u64 {
    let (a, b) = (T::from_bits(a).to_acc(), T::from_bits(b).to_acc());
    // The operator was checked against T before anything ran.
    T::from_acc(T::apply(op, a, b).expect("the operator was checked for this type")).to_bits()
}
