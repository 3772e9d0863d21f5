//! The table filter: the rows of several columns selected by one mask or predicate in one pass, as
//! arrow's `filter_record_batch` does, and predicates over two columns (`a[i] > b[i]`).
//!
//! [`Workspace::filter_columns_into`](crate::Workspace::filter_columns_into) takes up to eight input
//! columns ([`ColumnRef`]: any [`DeviceType`](crate::rtc::DeviceType) of 1, 2, 4 or 8 bytes, types
//! mixed), as many outputs ([`ColumnMut`]), and a [`FilterBy`]: a mask column, a [`Pred`](crate::Pred) or
//! [`UserPred`](crate::rtc::UserPred) over one column, or a [`UserPred2`](crate::rtc::UserPred2) over two.
//! [`Workspace::filter_indices_into`](crate::Workspace::filter_indices_into) writes the kept rows'
//! indices instead, and [`Workspace::count_filtered_into`](crate::Workspace::count_filtered_into) only
//! counts them; all three leave the count on the device (graph-capturable, and sized by
//! [`Workspace::with_count`](crate::Workspace::with_count) like the other `_into` calls).
//! [`filter_columns`], [`filter_indices`] and [`count_filtered`] are the one-shot forms, and
//! [`host::filter_rows`](crate::host::filter_rows) and [`host::filter_columns`](crate::host::filter_columns)
//! the host references.
//!
//! # How it works
//! One launch of the table agent (`cuda/classic/table.cuh`): per tile, each row is decided once (only the
//! decision's columns are read for it), the selected rows are counted and looked back on once — the
//! selection agent's own flag loads, count, look-back and staged compaction — and then each column in
//! turn is loaded coalesced through the tile buffer, compacted in shared memory and stored in whole
//! 16-byte chunks, in row order. A tile with no selected row reads no payload. The tile is the
//! selection tile of the widest column (decision columns included): 4096 rows for 4- and 8-byte columns,
//! 8192 for 1- and 2-byte ones. Against separate `select_flagged` calls per column, the mask is read
//! once instead of once per column, and the look-back runs once.
//!
//! The kernel is a template over the columns' sizes, compiled at run time by NVRTC for each signature
//! (column sizes in order, the decision, the predicate's code) and cached in memory and on disk like
//! user predicates ([`crate::rtc`]). So every table filter needs NVRTC — masks and built-in `Pred`s too
//! — and returns [`Error::NvrtcNotFound`](crate::Error::NvrtcNotFound) without it; the first call of a
//! signature compiles for about a second (a disk-cache hit takes milliseconds).
//!
//! Not in place: an output overlapping an input, a decision column or another output is an
//! [`Error::Overlap`](crate::Error::Overlap). Inputs may be unaligned views (a slice at any offset): they
//! are then read item by item.
mod by;
mod checks;
mod column;
mod filter;
mod one_shot;

pub use by::FilterBy;
pub use column::{ColumnMut, ColumnRef};
pub use filter::RowIndex;
pub use one_shot::{Filtered, count_filtered, filter_columns, filter_indices};
