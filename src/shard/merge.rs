//! The merge rules of the sharded primitives, as pure functions over the per-shard summaries that the
//! ranks all-gather: every rank computes the same plan from the same words, so no second exchange is
//! needed. Items, keys and values travel as bits (`Element::to_bits`); the caller supplies the equality
//! and the operator.
//!
//! # Example
//! A column `[7, 7 | 7 | 7, 2]` in three shards: the run of 7s starts on rank 0 and crosses two
//! boundaries, so ranks 1 and 2 drop their first run and rank 0's last run takes their partial values.
//! ```
//! use lookback::shard::merge::{Summary, runs_plan};
//! let summaries = [
//!     Summary { items: 2, count: 1, first: 7, last: 7, first_value: 2 },
//!     Summary { items: 1, count: 1, first: 7, last: 7, first_value: 1 },
//!     Summary { items: 2, count: 2, first: 7, last: 2, first_value: 1 },
//! ];
//! let plan = runs_plan(&summaries, |a, b| a == b);
//! assert_eq!(plan.parts.iter().map(|p| (p.skip, p.len, p.offset)).collect::<Vec<_>>(), [(0, 1, 0), (1, 0, 1), (1, 1, 1)]);
//! // Rank 0's last run (7) also takes the first-run values of ranks 1 and 2: 2 + 1 + 1 = 4 items.
//! assert_eq!(plan.tails, [vec![1, 1], vec![], vec![]]);
//! assert_eq!(plan.total, 2);
//! ```

/// What one rank publishes about its shard after its local pass (the words of the all-gather).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Items in the shard.
    pub items: u64,
    /// The local result's count: items selected, or runs.
    pub count: u64,
    /// The shard's first item (or key), as bits; meaningless when `items == 0`.
    pub first: u64,
    /// The shard's last item (or key), as bits; meaningless when `items == 0`.
    pub last: u64,
    /// The value of the shard's first run (reduce_by_key: its reduced values; the encodings: its length),
    /// as bits; meaningless when `items == 0`.
    pub first_value: u64,
}

/// Where one rank's part of a sharded result lies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Part {
    /// Items at the front of the rank's output that are not its result (1 when its first run or
    /// item continues the previous non-empty shard's, else 0).
    pub skip: u64,
    /// Items of the result on this rank: `output[skip..skip + len]`.
    pub len: u64,
    /// Their position in the whole result: the sum of `len` over earlier ranks.
    pub offset: u64,
}

/// The plan of a run-based primitive (`unique`, `reduce_by_key`, the run encodings).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunsPlan {
    /// Each rank's part.
    pub parts: Vec<Part>,
    /// For each rank, the first-run values of the later ranks whose first run continues this rank's
    /// last run, in rank order: the rank folds them into the value of its last run (`output[skip + len -
    /// 1]`). Empty for most ranks.
    pub tails: Vec<Vec<u64>>,
    /// Items of the whole result.
    pub total: u64,
}

/// Exclusive sums of `counts`: each rank's offset in a result of concatenated parts.
///
/// # Example
/// ```
/// assert_eq!(lookback::shard::merge::offsets(&[3, 0, 5, 1]), [0, 3, 3, 8]);
/// ```
pub fn offsets(counts: &[u64]) -> Vec<u64> {
    counts
        .iter()
        .scan(0u64, |sum, &c| {
            let offset = *sum;
            *sum += c;
            Some(offset)
        })
        .collect()
}

/// The parts of a selection (`select_if`, `select_flagged`): each rank keeps all its `count` items, at
/// the exclusive sum of the earlier counts.
///
/// # Example
/// ```
/// use lookback::shard::merge::{Summary, selection_parts};
/// let s = |count| Summary { items: 10, count, ..Summary::default() };
/// let parts = selection_parts(&[s(4), s(0), s(6)]);
/// assert_eq!(parts.iter().map(|p| p.offset).collect::<Vec<_>>(), [0, 4, 4]);
/// ```
pub fn selection_parts(summaries: &[Summary]) -> Vec<Part> {
    let counts: Vec<u64> = summaries.iter().map(|s| s.count).collect();
    offsets(&counts).into_iter().zip(&counts).map(|(offset, &len)| Part { skip: 0, len, offset }).collect()
}

/// The plan of a run-based primitive. A run that crosses a boundary belongs to the rank that holds its
/// first item; every later rank whose first item continues it (its first key `same` as the last key of
/// the previous non-empty shard, which carries the run) drops its first run and hands that run's value
/// to the owner, whose last run it is. Empty shards neither break nor carry runs. `unique` is the same
/// plan: its count is the number of runs, and its tails are not used.
pub fn runs_plan(summaries: &[Summary], same: impl Fn(u64, u64) -> bool) -> RunsPlan {
    let mut parts = Vec::with_capacity(summaries.len());
    let mut tails = vec![Vec::new(); summaries.len()];
    // The run that is open at the end of the shards so far: its owner, and its key.
    let mut open: Option<(usize, u64)> = None;
    let mut offset = 0;
    for (rank, s) in summaries.iter().enumerate() {
        if s.items == 0 {
            parts.push(Part { skip: 0, len: 0, offset });
            continue;
        }
        let continues = open.filter(|&(_, key)| same(key, s.first));
        if let Some((owner, _)) = continues {
            tails[owner].push(s.first_value);
        }
        let skip = u64::from(continues.is_some());
        // A shard always holds at least one run; if that one continues the open run, the open run stays
        // open (its owner and key unchanged), else this shard's last run is the open one.
        let len = s.count.saturating_sub(skip);
        if len > 0 {
            open = Some((rank, s.last));
        }
        parts.push(Part { skip, len, offset });
        offset += len;
    }
    RunsPlan { parts, tails, total: offset }
}

/// The seeds of a sharded scan: for each rank, the ⊕ of the totals of the earlier non-empty shards, or
/// `None` when there are none (the rank scans from the operator's identity, or from an exclusive
/// scan's initial value alone). `totals[r]` is meaningless when `items[r] == 0`.
///
/// # Example
/// ```
/// let seeds = lookback::shard::merge::scan_seeds(&[2, 0, 3, 1], &[10, 99, 5, 1], |a, b| a + b);
/// assert_eq!(seeds, [None, Some(10), Some(10), Some(15)]);
/// ```
pub fn scan_seeds(items: &[u64], totals: &[u64], combine: impl Fn(u64, u64) -> u64) -> Vec<Option<u64>> {
    let mut prefix: Option<u64> = None;
    items
        .iter()
        .zip(totals)
        .map(|(&n, &total)| {
            let seed = prefix;
            if n > 0 {
                prefix = Some(prefix.map_or(total, |p| combine(p, total)));
            }
            seed
        })
        .collect()
}
