// Kernel parameter blocks, passed by value. Each is mirrored field for field by a #[repr(C)] struct in
// src/launch/params.rs; change both together (tests/kernel_table.rs checks the sizes).
#pragma once
#include "std_subset.cuh"
#include "predicate.cuh"

namespace lookback {

// The look-back workspace of one launch (see tile_state.cuh). Nothing in it changes from launch to launch
// of one workspace except `items` and the back-off, so a launch captured in a CUDA graph replays correctly.
struct LookbackParams {
    uint64_t* status;        // two status regions of 2 · status_tiles words (16-byte units: a word, or an entry
                             // of entry_units units, per tile)
    uint64_t* header;        // the launch word: round << 32 | tile ids taken (tile_state.cuh)
    const uint64_t* items;   // null, or the item count of a call sized on the device (bounded by the params' n)
    uint32_t status_tiles;   // 16-byte units of one status region: the tiles' entries, then the anchors' (lookback.cuh)
    uint32_t first_poll_ns;  // back-off before the first poll of a predecessor
    uint32_t poll_ns;        // back-off between polls
    uint32_t flags;          // LB_* below
};

enum : uint32_t {
    // The classic agents prefetch tile blockIdx.x (tile_state.cuh).
    LB_PREFETCH_GUESS = 1,
    // Order-sensitive operators (OrderSensitive in ops.cuh: float sums) combine tiles' values strictly in
    // tile order, so the results are the same bits whatever the timing (lookback.cuh, persistent/engine.cuh).
    LB_DETERMINISTIC = 2,
    // Bits 8-9: 16-byte units per status entry, minus one (tile_state.cuh's MultiState: user accumulators
    // of more than 8 bytes). 0 for every other launch.
    LB_ENTRY_UNITS_SHIFT = 8,
    LB_ENTRY_UNITS_MASK = 3,
    LB_MAX_ENTRY_UNITS = 4,
};

struct ScanParams {
    const void* in;
    void* out;       // may equal `in`
    uint64_t n;
    uint64_t seed[4];  // bits of the initial value (an element of the scanned type, or a user accumulator of
                       // up to 32 bytes, low bytes first), unless SCAN_INCLUSIVE
    uint32_t exclusive;  // SCAN_* below: which result, and whether `seed` starts it
    // Nonzero: a reduction. Nothing is written per item; the tile holding the last item writes the total
    // (the seed, when `exclusive`, ⊕ every item) as the policy's Total to out[0] (classic/scan.cuh,
    // persistent/scan_work.cuh). An empty launch writes the seed (or the identity).
    uint32_t reduce;
    LookbackParams lb;
};

// ScanParams::exclusive. The seeded inclusive scan is what a sharded scan runs on every shard after the
// first, seeded with the earlier shards' total (src/shard/): one pass instead of a scan and a fix-up pass.
enum : uint32_t {
    SCAN_INCLUSIVE = 0,         // out[i] = in[0] ⊕ … ⊕ in[i]
    SCAN_EXCLUSIVE = 1,         // out[i] = seed ⊕ in[0] ⊕ … ⊕ in[i-1]
    SCAN_INCLUSIVE_SEEDED = 2,  // out[i] = seed ⊕ in[0] ⊕ … ⊕ in[i]
};

// A reduction of a built-in operator, or arg_min / arg_max (classic/reduce.cuh): no look-back. Block b
// of the G = gridDim.x blocks (fixed by the host from n alone) folds its share of the tiles into
// partials[2b..2b+2); the last block to finish (counted in *finished) folds the shares' values and writes
// the policy's Total to out[0].
struct ReduceParams {
    const void* in;
    void* out;
    uint64_t* partials;      // 2 words per block (the workspace holds MAX_SHARES entries: src/plan.rs)
    uint64_t* finished;      // blocks finished; zero between launches (the last block puts it back)
    const uint64_t* items;   // null, or the item count of a call sized on the device (bounded by n)
    uint64_t n;
};

// What decides that an item is selected.
enum : uint32_t { SOURCE_PRED = 0, SOURCE_FLAGS = 1, SOURCE_UNIQUE = 2 };
// Where selected (and rejected) items go.
enum : uint32_t {
    MODE_COMPACT = 0,            // selected → out[rank] (out may equal in)
    MODE_PARTITION_REVERSE = 1,  // selected → out[rank], rejected → out[n-1-reject_rank] (CUB's layout)
    MODE_PARTITION_SPLIT = 2,    // selected → out[rank], rejected → out_rejected[reject_rank]
    MODE_PARTITION_STABLE = 3,   // selected → out[rank], rejected → out[*known_total + reject_rank]
    MODE_COUNT = 4,              // only the number selected
    MODE_MASK = 5,               // out_rejected[i] = selected(i) as a byte; no look-back
};

struct SelectParams {
    const void* in;
    void* out;
    void* out_rejected;
    const uint8_t* flags;
    uint64_t* num_selected;        // written by the last tile (not in MODE_MASK)
    const uint64_t* known_total;   // MODE_PARTITION_STABLE: the count a MODE_COUNT launch left
    uint64_t n;
    uint32_t source;
    uint32_t mode;
    PredProgram pred;
    LookbackParams lb;
};

// The table filter (classic/table.cuh): the rows of up to TABLE_MAX_COLUMNS columns selected by one
// decision per row, in one pass. Which columns, their sizes and the decision are the kernel's template
// arguments (it is compiled at run time for each signature: src/rtc/table.rs); this block carries the
// addresses.
constexpr int TABLE_MAX_COLUMNS = 8;
struct TableParams {
    const void* in[TABLE_MAX_COLUMNS];   // column c's input (null for a column of row indices)
    void* out[TABLE_MAX_COLUMNS];        // column c's output: its selected rows, in order
    const void* decide[2];               // the mask column, or the predicate's column(s)
    uint64_t* num_selected;              // written by the last tile
    uint64_t n;                          // rows (the capacity when sized on the device)
    PredProgram pred;                    // a built-in predicate's program (DecideByColumn with ProgramPredicate)
    LookbackParams lb;
};

// What a run-based launch computes (classic/runs.cuh). The first three carry values through the operator
// (template parameter); the others only count runs and track positions.
enum : uint32_t {
    RUNS_REDUCE = 0,          // out_keys[r] = first key of run r, out_values[r] = its reduced values
    RUNS_SCAN_INCLUSIVE = 1,  // out_values[i] = values of i's run up to i, reduced
    RUNS_SCAN_EXCLUSIVE = 2,  // out_values[i] = seed ⊕ values of i's run before i
    RUNS_ENCODE = 3,          // out_keys[r] = key of run r, out_values[r] = its length
    RUNS_ENDS = 4,            // out_keys[r] = key of run r, out_values[r] = one past its last index
    RUNS_NON_TRIVIAL = 5,     // for runs longer than 1: out_keys[r] = offset, out_values[r] = length
    RUNS_UNIQUE = 6,          // out_keys[r], out_values[r] = key and value at the first item of run r
};

struct RunsParams {
    const void* keys;
    const void* values;      // RUNS_REDUCE, RUNS_SCAN_*, RUNS_UNIQUE
    void* out_keys;
    void* out_values;
    uint64_t* num_runs;      // written by the item n-1 (not by the scans)
    uint64_t n;
    uint64_t seed;           // RUNS_SCAN_EXCLUSIVE: bits of the initial value (an element of the value type)
    uint64_t key_abs_mask;   // float keys: the bits below the sign (IEEE ==); 0 for integer keys
    uint64_t key_inf_bits;   // float keys: +inf's bits, which tell bf16 from f16 (key_equality.cuh)
    uint32_t mode;
    uint32_t length_bytes;   // 4 or 8: the width of lengths, ends and offsets
    LookbackParams lb;
};

// The three-way partition (classic/partition3.cuh).
struct Partition3Params {
    const void* in;
    void* out_first;             // items for which `first` holds
    void* out_second;            // the others for which `second` holds
    void* out_rest;              // the others
    uint64_t* num_selected;      // [2]: sizes of the first two parts (written by the last tile)
    uint64_t n;
    PredProgram first;
    PredProgram second;
    LookbackParams lb;
};

}  // namespace lookback

// The Rust mirrors assert the same sizes (src/launch/params.rs).
static_assert(sizeof(lookback::LookbackParams) == 40, "LookbackParams layout changed: update src/launch/params.rs");
static_assert(sizeof(lookback::ReduceParams) == 48, "ReduceParams layout changed: update src/launch/params.rs");
static_assert(sizeof(lookback::ScanParams) == 104, "ScanParams layout changed: update src/launch/params.rs");
static_assert(sizeof(lookback::Partition3Params) == 648, "Partition3Params layout changed: update src/launch/params.rs");
static_assert(sizeof(lookback::RunsParams) == 120, "RunsParams layout changed: update src/launch/params.rs");
static_assert(sizeof(lookback::SelectParams) == 384, "SelectParams layout changed: update src/launch/params.rs");
static_assert(sizeof(lookback::TableParams) == 480, "TableParams layout changed: update src/launch/params.rs");
