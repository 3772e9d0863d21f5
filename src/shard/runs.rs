//! Sharded `reduce_by_key` and run-length encoding: each rank runs the single-GPU call on its shard and
//! publishes its run count, first and last key and the value of its first run. A run that crosses a
//! boundary belongs to the first rank that holds it (`merge::runs_plan`): later ranks skip their first
//! run, and the owner folds their first-run values into its last run — one item read back and written
//! on the owner's stream, after the exchange.
use super::compact::{items_of, publish_ends, same};
use super::exchange::Exchange;
use super::group::{ShardGroup, ShardedColumn, ShardedParts, W_COUNT, W_FIRST_VALUE, with_word};
use super::merge::{RunsPlan, runs_plan};
use super::scan::combine;
use crate::element::Element;
use crate::error::{Error, Result, check_len};
use crate::host::check_reduce_op;
use crate::op::ScanOp;
use crate::runs::{RunLength, check_length_type};
use cudarc::driver::{CudaSlice, DeviceRepr};

impl<X: Exchange> ShardGroup<X> {
    /// Sharded `reduce_by_key`: the first key of each run of equal adjacent keys of the whole column and
    /// its values reduced by `op` (`Sum`, `Min` or `Max`), a run that crosses shards reduced whole. Each
    /// rank's part is `keys_out[skip..skip + len]` and `values_out[skip..skip + len]` of its shards (which
    /// must hold as many items as its input shard). Waits for the exchange.
    ///
    /// A run that crosses shards is reduced in two steps, each shard's part on its GPU and the parts in
    /// rank order on the host: float sums may differ from a one-GPU call by rounding, and f16/bf16
    /// values are rounded once per part.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a bitwise `op`; [`Error::LengthMismatch`] if a shard of `values` has
    /// another length than its keys; [`Error::OutputTooSmall`], [`Error::ShardMismatch`], the
    /// transport's and the call's errors.
    ///
    /// # Example
    /// ```
    /// # fn main() -> lookback::Result<()> {
    /// # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
    /// # if !lookback::kernels_built() { return Ok(()) }
    /// use lookback::shard::{LocalExchange, ShardGroup, ShardedColumn};
    /// use lookback::{Element, ScanOp};
    /// fn up<T: Element>(group: &mut ShardGroup<LocalExchange>, parts: [&[T]; 2]) -> lookback::Result<ShardedColumn<T>> {
    ///     let bufs = (0..2).map(|r| group.stream(r).clone_htod(parts[r])).collect::<Result<_, _>>()?;
    ///     group.column(bufs)
    /// }
    /// let mut group = ShardGroup::new(LocalExchange::on_one_gpu(&stream, 2)?)?;
    /// // Keys [1, 1, 2 | 2, 3]: the run of 2s crosses the boundary.
    /// let keys = up(&mut group, [&[1u32, 1, 2], &[2, 3]])?;
    /// let values = up(&mut group, [&[10i64, 20, 1], &[2, 5]])?;
    /// let mut keys_out = up(&mut group, [&[0u32; 3], &[0; 2]])?;
    /// let mut sums = up(&mut group, [&[0i64; 3], &[0; 2]])?;
    /// let runs = group.reduce_by_key_into(&keys, &values, &mut keys_out, &mut sums, ScanOp::Sum)?;
    /// assert_eq!(runs.total, 3);
    /// // Rank 0 owns the run of 2s (its value 1 + 2); rank 1 skips its first run.
    /// assert_eq!(group.stream(0).clone_dtoh(&sums.shards()[0].data().slice(0..2))?, [30, 3]);
    /// let second = runs.parts[1];
    /// assert_eq!((second.skip, second.len, second.offset), (1, 1, 2));
    /// assert_eq!(group.stream(1).clone_dtoh(&sums.shards()[1].data().slice(1..2))?, [5]);
    /// # Ok(()) }
    /// ```
    pub fn reduce_by_key_into<K: Element, V: Element>(
        &mut self,
        keys: &ShardedColumn<K>,
        values: &ShardedColumn<V>,
        keys_out: &mut ShardedColumn<K>,
        values_out: &mut ShardedColumn<V>,
        op: ScanOp,
    ) -> Result<ShardedParts> {
        check_reduce_op::<V>(op)?;
        self.check_column("keys", keys)?;
        self.check_column("values", values)?;
        for (k, v) in keys.shards().iter().zip(values.shards()) {
            check_len("values", k.len(), v.len())?;
        }
        self.check_room("keys_out", keys, keys_out)?;
        self.check_room("values_out", keys, values_out)?;
        let summaries = self.gather(&items_of(keys), |i, ws, send| {
            let (k, v) = (keys.shards()[i].data(), values.shards()[i].data());
            let (ko, vo) = (keys_out.shards_mut()[i].data_mut(), values_out.shards_mut()[i].data_mut());
            with_word::<u64, _>(send, W_COUNT, |count| ws.reduce_by_key_into(k, v, ko, vo, count, op))?;
            publish_ends(k, send)?;
            publish_first_value(vo, k.len(), send)
        })?;
        let plan = runs_plan(&summaries, same::<K>);
        self.fold_tails(&plan, values_out, |a, b| combine::<V>(op, a, b))?;
        Ok(self.local_parts(&plan.parts))
    }

    /// Sharded run-length encoding: each run of equal adjacent items of the whole column and its length
    /// (`u32` or `u64`), a run that crosses shards counted whole. Parts as
    /// [`reduce_by_key_into`](Self::reduce_by_key_into).
    ///
    /// # Errors
    /// [`Error::Unsupported`] if `L` is `u32` and the whole column has more than `u32::MAX` items;
    /// [`Error::OutputTooSmall`], [`Error::ShardMismatch`], the transport's and the call's errors.
    pub fn run_length_encode_into<T: Element, L: RunLength>(
        &mut self,
        input: &ShardedColumn<T>,
        values_out: &mut ShardedColumn<T>,
        lengths_out: &mut ShardedColumn<L>,
    ) -> Result<ShardedParts> {
        self.check_column("input", input)?;
        // A merged run is as long as the whole column at most.
        check_length_type::<L>(usize::try_from(input.len()).unwrap_or(usize::MAX))?;
        self.check_room("values_out", input, values_out)?;
        self.check_room("lengths_out", input, lengths_out)?;
        let summaries = self.gather(&items_of(input), |i, ws, send| {
            let shard = input.shards()[i].data();
            let (vo, lo) = (values_out.shards_mut()[i].data_mut(), lengths_out.shards_mut()[i].data_mut());
            with_word::<u64, _>(send, W_COUNT, |count| ws.run_length_encode_into(shard, vo, lo, count))?;
            publish_ends(shard, send)?;
            publish_first_value(lo, shard.len(), send)
        })?;
        let plan = runs_plan(&summaries, same::<T>);
        // Lengths are unsigned integers of at most 8 bytes: their bits add as u64.
        self.fold_tails(&plan, lengths_out, |a, b| a + b)?;
        Ok(self.local_parts(&plan.parts))
    }

    /// Folds the later ranks' first-run values into the last run of each local rank that owns a run
    /// crossing its end: reads that one item back, combines on the host in rank order, writes it.
    fn fold_tails<V: DeviceRepr + Copy>(
        &mut self,
        plan: &RunsPlan,
        values_out: &mut ShardedColumn<V>,
        combine: impl Fn(u64, u64) -> u64,
    ) -> Result<()> {
        for i in 0..self.local_ranks() {
            let rank = self.exchange().rank(i);
            let (part, tail) = (plan.parts[rank], &plan.tails[rank]);
            if tail.is_empty() {
                continue;
            }
            let stream = self.stream(i).clone();
            let out = values_out.shards_mut()[i].data_mut();
            let last = usize::try_from(part.skip + part.len).ok().and_then(|end| end.checked_sub(1));
            let Some(last) = last.filter(|&l| l < out.len()) else {
                return Err(Error::ShardMismatch { reason: format!("rank {rank} owns no run to fold into") });
            };
            let own = stream.clone_dtoh(&out.slice(last..last + 1))?[0];
            let folded = tail.iter().fold(to_bits(own), |acc, &v| combine(acc, v));
            stream.memcpy_htod(&[from_bits::<V>(folded)], &mut out.slice_mut(last..last + 1))?;
        }
        Ok(())
    }
}

/// Copies the value of the first run of a non-empty shard (`values_out[0]`) into its summary.
fn publish_first_value<V: DeviceRepr>(
    values_out: &CudaSlice<V>,
    items: usize,
    send: &mut CudaSlice<u64>,
) -> Result<()> {
    if items == 0 {
        return Ok(());
    }
    let stream = values_out.stream().clone();
    with_word::<V, _>(send, W_FIRST_VALUE, |w| stream.memcpy_dtod(&values_out.slice(..1), w))?;
    Ok(())
}

/// The bits of a value of at most 8 bytes, zero-extended (as the exchange carries it).
fn to_bits<V: DeviceRepr + Copy>(v: V) -> u64 {
    let mut word = 0u64;
    // SAFETY: V is an element or a run length, plain data of at most 8 bytes, copied into the low bytes
    // of a u64 (little-endian, as the GPU writes them into a summary word).
    unsafe {
        std::ptr::copy_nonoverlapping(&v as *const V as *const u8, &mut word as *mut u64 as *mut u8, size_of::<V>())
    };
    word
}

/// The value whose bits `to_bits` gave.
fn from_bits<V: DeviceRepr>(word: u64) -> V {
    assert!(size_of::<V>() <= size_of::<u64>());
    // SAFETY: as in `to_bits`: the low bytes of the word, and every bit pattern is a value of these plain
    // types.
    unsafe { std::mem::transmute_copy::<u64, V>(&word) }
}
