//! Sharded columns: one column split across the GPUs of a world (the GPUs of one host in one process,
//! or one process per GPU, across hosts), each GPU running the single-GPU engine on its shard.
//!
//! | call | local pass per rank | exchanged | after the exchange |
//! |---|---|---|---|
//! | [`ShardGroup::inclusive_scan_into`], [`ShardGroup::exclusive_scan_into`] | `reduce` | the shard's total | a scan seeded with the earlier shards' total |
//! | [`ShardGroup::select_if_into`], [`ShardGroup::select_flagged_into`] | the selection | its count | — (offsets on the host) |
//! | [`ShardGroup::unique_into`] | `unique` | count, first and last item | — (a shard may skip its first item) |
//! | [`ShardGroup::reduce_by_key_into`], [`ShardGroup::run_length_encode_into`] | the call | run count, first and last key, first run's value | the owner of a crossing run folds the later parts into it (one item) |
//! | [`ShardGroup::partition_counts`] | `count_if` | the count | — |
//!
//! # How a call runs
//! Every sharded call is one collective step ([`ShardGroup`]): each rank runs its local pass on its
//! stream, writing a few words of summary ([`merge::Summary`]) in device memory; the ranks all-gather
//! [`SUMMARY_WORDS`] words each ([`Exchange::all_gather`]); the host reads them back (the one wait of the
//! call) and computes the plan with the pure functions of [`merge`], the same on every rank. Results stay
//! sharded: each rank's part of a compaction or run-based result is in its own output, with its offset
//! in the whole result ([`ShardedParts`]). No item moves between GPUs.
//!
//! # Memory traffic of a scan
//! The exchange must carry each shard's total before the later shards know their seed. This module
//! reduces each shard first (n reads) and then scans it seeded with the earlier shards' total
//! ([`Workspace::inclusive_scan_seeded_into`](crate::Workspace::inclusive_scan_seeded_into): 2n), so
//! 3n item transfers in all — against 4n for a local scan followed by a pass that adds each shard's
//! prefix (2n + 2n; cuPyNumeric's scheme), which this module does not take: a reduction runs at memory
//! speed, and a read-only pass costs about half a read-write one. With one rank there is no exchange
//! and no reduction (a plain scan, 2n), and the last rank never reduces (nobody needs its total).
//! `examples/shard_bench.rs` times the reduction and the scan apart.
//!
//! What that means for speed: with equal shards, rank 0 moves 3n (it reduces, then scans) and every later
//! rank waits for the earlier reductions (1n) before its scan (2n), where one GPU scanning one shard
//! moves 2n. So N GPUs scan at most 2N/3 times as fast as one (1.33× on two), whatever the transport.
//! No order of passes does better: a rank can write its items only once the total before them is known,
//! so either the earlier ranks read their shard once more (3n on the critical path) or the later ranks
//! write theirs twice (scan, then fix-up: 4n). Compaction, counts and the run calls add no pass over the
//! items and approach N×.
//!
//! # Transports
//! [`Exchange`] is the whole interface to a transport: an all-gather of [`SUMMARY_WORDS`] `u64` words
//! per rank, in device memory, ordered on each rank's stream. `NcclExchange` (feature `nccl`) runs it
//! over NCCL — one process driving every GPU of a host (`NcclExchange::all_ranks`), or one process per
//! GPU (`NcclExchange::one_rank`, with an `NcclId` the caller hands from rank 0 to the others).
//! [`LocalExchange`] runs several ranks on one GPU, each with its own stream and workspace: it shares
//! every line with the NCCL path except the all-gather, and is what tests the sharded logic on one GPU.
//! NVLink SHARP (multicast) does nothing for a few words; run NCCL with `NCCL_NVLS_ENABLE=0`.
//!
//! # Limits
//! * Every process must make the same sharded calls in the same order, and a call that fails on one
//!   process before its exchange (a bad argument) leaves the others waiting in it: check arguments
//!   the same way on every process.
//! * Each call waits for its exchange on the host (a few microseconds on one host), so sharded calls
//!   cannot be captured in a CUDA graph.
//! * Float sums combine the shards' totals in rank order on the host; like any float sum of this crate,
//!   the result matches a one-GPU scan only within rounding. f16/bf16 seeds and merged run values are
//!   rounded to the element type once per shard.
//! * A bad argument is reported before any rank writes its outputs; an error of the transport or of a
//!   later rank's launch can leave earlier ranks' outputs written.
//!
//! # Example
//! Three ranks on one GPU (with NCCL the only change is the transport):
//! ```
//! # fn main() -> lookback::Result<()> {
//! # let Ok(stream) = lookback::default_stream(0) else { return Ok(()) };
//! # if !lookback::kernels_built() { return Ok(()) }
//! use lookback::shard::{LocalExchange, ShardGroup};
//! let mut group = ShardGroup::new(LocalExchange::on_one_gpu(&stream, 3)?)?;
//! // [4, 4 | 4 | 4, 9]: one run of 4s over three shards.
//! let parts = [vec![4u16, 4], vec![4], vec![4, 9]];
//! let input = (0..3).map(|r| group.stream(r).clone_htod(&parts[r])).collect::<Result<_, _>>()?;
//! let input = group.column(input)?;
//! assert_eq!(input.shards()[2].offset(), 3);
//! let output = (0..3).map(|r| group.stream(r).alloc_zeros::<u16>(parts[r].len())).collect::<Result<_, _>>()?;
//! let mut output = group.column(output)?;
//! let unique = group.unique_into(&input, &mut output)?;
//! assert_eq!(unique.total, 2);
//! assert_eq!(unique.parts.iter().map(|p| (p.skip, p.len, p.offset)).collect::<Vec<_>>(), [(0, 1, 0), (1, 0, 1), (1, 1, 1)]);
//! # Ok(()) }
//! ```
mod compact;
mod exchange;
mod group;
pub mod merge;
#[cfg(feature = "nccl")]
mod nccl;
mod runs;
mod scan;

pub use compact::PartitionCounts;
pub use exchange::{Exchange, LocalExchange, SUMMARY_WORDS};
pub use group::{Shard, ShardGroup, ShardedColumn, ShardedParts};
pub use merge::Part;
#[cfg(feature = "nccl")]
pub use nccl::{NcclExchange, NcclId, nccl_available};
