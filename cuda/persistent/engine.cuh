// The persistent, warp-specialised look-back engine (sm_90+): one block per SM takes tiles until none are
// left. A `Work` (persistent/scan_work.cuh, persistent/select_work.cuh) says what a tile reduces to and what it
// writes once its exclusive prefix is known; this file moves the tiles and resolves the prefixes.
//
// Why (benches/log, ../shared/docs/PERF-NOTES.md): with one tile per block, each tile waits for the
// chain of its predecessors' inclusive prefixes while its SM has few loads in flight, which holds the
// classic agents near 0.8 of memcpy. Here nothing waits on an inclusive prefix and loads never stop:
//
// - Load warp (one lane): takes a tile id from the global counter, then bulk-copies the whole tile into a
//   ring of STAGES shared-memory slots (cp.async.bulk, completing on the slot's `full` barrier). It runs
//   up to STAGES tiles ahead of the compute warps, so HBM always has this SM's next tiles in flight.
// - Compute warps: reduce tile k + REDUCE_AHEAD and publish its *aggregate* (status A; there is no P
//   state), then finish tile k (Work::scan_tile) once its exclusive prefix is known. Reducing ahead
//   keeps aggregates flowing while prefixes are being resolved.
// - Look-ahead warp: keeps the block's running prefix. The tiles between this block's previous tile and
//   its next one were taken by other blocks; their aggregates (not prefixes) are all the look-ahead adds,
//   about one per SM. prefix(next) = prefix(previous) ⊕ aggregates [previous, next).
//
// Layout: compute warp w owns CHUNKS_PER_LANE × 32 consecutive 16-byte chunks of its tile; chunk j of
// lane l is chunk w·32·CPL + 32·j + l. Each warp access (shared or global) is 512 contiguous bytes, so
// shared-memory reads have no bank conflicts without any swizzle.
//
// Progress: tile ids come from an atomic counter, and an id is taken only when a slot is free, so every
// tile taken belongs to a running block and is loaded at once; a tile's aggregate depends only on its
// own load; the lowest tile without a published aggregate belongs to a block whose compute warps need
// only aggregates of lower tiles (all published) to get past their current tile. So some tile always
// advances, whatever the number of resident blocks.
//
// Ordering (in-place compaction, invariant 3 of DESIGN.md): a tile publishes its aggregate only after
// its `full` phase completed, i.e. after the bulk copy finished reading its input; a tile learns its
// prefix only after seeing the aggregates of every earlier tile. So when tile t writes, every read of
// an earlier tile's input has completed; later tiles read only at indices at or after their own start.
//
// Writer warps (WRITER_WARPS > 0 in the Work's tuning row: `select`, i.e. compaction and count_if by
// predicate or uniqueness; the partitions' and select_flagged's rows have none). The compute warps then only
// reduce a tile, publish its aggregate and stage it (prepare_tile), and go on to the next loaded slot at
// once; writer warps wait for each tile's prefix and write it out (Work::write_part, one compute warp's
// part at a time), then free the slot. With the compute warps finishing tile k themselves, they reduce
// tile k + REDUCE_AHEAD first, so tile k's slot stays taken until tile k + REDUCE_AHEAD has been loaded
// even when k's prefix came much earlier, and a prefix that comes late stops the reduces, so aggregates,
// of every later tile of the block. With writer warps a slot is held for its load, its prefix and its
// copy-out only, and aggregates go out as fast as tiles arrive (select_if i32 at 2^28: 435 → 394 µs;
// benches/log, 2026-12-01). Progress as below: compute warps wait only for `full`, writer warps for
// `staged` (the compute warps) and `ready` (the look-ahead).
//
// Two input streams (persistent/runs_work.cuh: keys and values). A Work may declare VALUE_BYTES > 0 and
// `input(p)` / `values_input(p)`: a tile is then TILE_ITEMS items of each stream, the keys at the start of
// its ring slot and the values right after them, TILE_ITEMS = TILE_BYTES / (ITEM_BYTES + VALUE_BYTES
// rounded up to a power of two), so both parts are 16-byte aligned and fit the same slot. The load warp
// issues one bulk copy per stream on the slot's `full` barrier, expecting the sum of their bytes; each
// stream's trailing < 16 bytes of the last tile are read from global memory by the compute warps
// (partial_item on that stream's part of the slot).
//
// A side stream (persistent/select_work.cuh: select_flagged's flags). A Work may declare SIDE_BYTES > 0 and
// `side_input(p)`: the tile keeps TILE_BYTES of items (TILE_ITEMS = TILE_BYTES / ITEM_BYTES, as with one
// stream) and each ring slot grows by the tile's side items, TILE_ITEMS × SIDE_BYTES bytes right after
// them (the host sizes the ring the same way: `PipeTuning::with_side_stream`). The side stream's bulk
// copy completes on the slot's `full` barrier too; its trailing < 16 bytes of the last tile are read from
// global memory by the compute warps (partial_item on the slot's side part, `side_items`). Unlike
// VALUE_BYTES, the compute warps' item layout is that of one stream, so a one-stream Work takes a side
// stream without changing how it reads its items.
//
// Operators that do not commute (COMMUTATIVE = false in the Work: the segmented pair operator of the
// run-based primitives, a user operator not declared commutative) get the look-ahead's ordered fold:
// each lane folds AHEAD_PER_LANE consecutive tiles in tile order and the warp reduction combines lanes in
// lane order, so aggregates are combined exactly in tile order; reads still X are polled together
// (wait_pending). Accumulators of at most 4 bytes instead read lane-major rows of 32 tiles, as the
// commutative Works do, and reduce every row by one ordered tree (warp_fold_rows), folding the rows in
// order: AHEAD_ROWS. Commutative Works keep the lane-major fold (and their generated code).
//
// Requirements (checked by the host): every bulk-copied input 16-byte aligned; fewer than 2^32 - 1 tiles;
// sm_90+.
#pragma once
#include "../core/std_subset.cuh"
#include "../core/async_copy.cuh"
#include "../core/ops.cuh"
#include "../core/params.cuh"
#include "../core/tile_state.cuh"
#include "../core/tuning.cuh"
#include "../core/warp_scan.cuh"

namespace lookback {

// The items of this launch (launch_items in tile_state.cuh), resolved once per block by PipeEngine::run
// before any role starts: the engine and its Works read it here, from shared memory, instead of loading
// a device count per tile (a load that misses the small L1 beside the ring, on the critical path).
__shared__ uint64_t engine_items;

// How the look-ahead warp reads a step's status words (fold_step). Batched reads are relaxed
// loads, so the engine reads an ordered state (in-place compaction) serially, with acquire, whatever the
// Work asks.
enum class AheadReads : int {
    serial,      // each load tested before the next: one L2 round trip per status a lane reads
    clamped,     // 8 per lane issued together; lanes past the step's end read its last tile's word again
    predicated,  // 8 per lane issued together; lanes past the step's end load nothing
};

// Whether a status state reads in two steps (Word, word(t), unpack(t, w, value)).
template <class S, class = void> struct StateHasWord : std::false_type {};
template <class S> struct StateHasWord<S, std::void_t<typename S::Word>> : std::true_type {};

// Defaults for the optional parts of a Work (derive from it).
struct PipeWorkDefaults {
    static constexpr bool PUBLISH_WARP = false;
    // Whether the look-ahead issues a step's status loads together (fold_step). Chosen per Work by
    // measurement (benches/log, 2026-11-30): faster for reduce_by_key and the scans by key; slower for
    // the position-carrying runs Works (encodings, unique_by_key) and unstable for compaction.
    static constexpr bool BATCHED_LOOKAHEAD = false;
    // The ⊕ of a value across the warp, every lane getting it.
    template <class Op, class A> static __device__ __forceinline__ A warp_sum(A x) { return warp_reduce<Op>(x); }
    // From the tile's warp totals (`totals[i]`: warp i's, i < WARPS), warp w's exclusive part of the tile
    // and the tile's aggregate, for every lane: lane i takes warp i's total and one scan across those
    // lanes gives both (a loop over the warps in every thread cost ~100 instructions per warp per tile
    // with 16 warps and 8-byte counts: a quarter of count_if's instructions, ncu).
    template <class Op, int WARPS, class A>
    static __device__ __forceinline__ void scan_warp_totals(const A* totals, int w, A& exclusive, A& aggregate) {
        const A identity = Op::template identity<A>();
        const int lane = (int)lane_id();
        const A scanned = warp_inclusive_scan_first<Op, WARPS>(lane < WARPS ? totals[lane] : identity);
        const A before = shfl_from(scanned, w > 0 ? w - 1 : 0);
        exclusive = w > 0 ? before : identity;
        aggregate = shfl_from(scanned, WARPS - 1);
    }
    // Whether scan_tile needs the tile's prefix (count_if does not: only the last tile's, for `finish`).
    template <class Params> static __device__ __forceinline__ bool needs_prefix(const Params&) { return true; }
    template <class Params, class Slot>
    static __device__ __forceinline__ void on_load(const Params&, Slot&, uint64_t, uint64_t*) {}
    template <class State> static __device__ __forceinline__ bool ordered(const State&) { return false; }
    // The same status words published with relaxed stores (the publisher warp fences itself).
    template <class State> static __device__ __forceinline__ State unordered(const State& s) { return s; }
};

// Optional parts of a Work detected by their presence, with the defaults of the one-stream, commutative
// Works (scan, select).
template <class W, class = void> struct WorkValueBytes : std::integral_constant<int, 0> {};
template <class W> struct WorkValueBytes<W, std::void_t<decltype(W::VALUE_BYTES)>>
    : std::integral_constant<int, W::VALUE_BYTES> {};
template <class W, class = void> struct WorkSideBytes : std::integral_constant<int, 0> {};
template <class W> struct WorkSideBytes<W, std::void_t<decltype(W::SIDE_BYTES)>>
    : std::integral_constant<int, W::SIDE_BYTES> {};
template <class W, class = void> struct WorkCommutes : std::true_type {};
template <class W> struct WorkCommutes<W, std::void_t<decltype(W::COMMUTATIVE)>>
    : std::bool_constant<W::COMMUTATIVE> {};
// Whether a Work chooses how its look-ahead reads statuses per launch (`ahead_reads(p)`).
template <class W, class = void> struct WorkChoosesReads : std::false_type {};
template <class W>
struct WorkChoosesReads<W, std::void_t<decltype(W::ahead_reads(std::declval<const typename W::Params&>()))>>
    : std::true_type {};
// Registers a warp keeps from reduce_tile to prepare_tile (`Kept`): empty for Works without them.
template <class W, class = void> struct WorkKept : std::false_type {
    struct type {};
};
template <class W> struct WorkKept<W, std::void_t<typename W::Kept>> : std::true_type {
    using type = typename W::Kept;
};
template <class W, class = void> struct WorkHasInput : std::false_type {};
template <class W>
struct WorkHasInput<W, std::void_t<decltype(W::input(std::declval<const typename W::Params&>()))>> : std::true_type {};

// The smallest power of two >= x (x >= 1): the slot bytes one item of every stream takes.
__host__ __device__ constexpr int pow2_at_least(int x) { return x <= 1 ? 1 : 2 * pow2_at_least((x + 1) / 2); }

// What a Work provides (see persistent/scan_work.cuh for the simplest one):
//   ALGO, Params (with `in`, `n` (the capacity; `engine_items` holds the launch's items), `lb`), ITEM_BYTES, A (the scanned value), Op (its operator), State
//   (packed: publish / read, a tile's status and value in one load), Slot (shared state kept from reduce to scan),
//   WRITES_RING (whether scan_tile writes the ring slot), and
//   state(p, status, epoch) (over this launch's status words and epoch), initial(p) (the prefix of tile 0),
//   reduce_tile(p, slot, tile_smem, start, valid) → this thread's part of the tile's aggregate,
//   scan_tile(p, slot, tile_smem, start, valid, carry) with carry = prefix ⊕ the warp's exclusive part,
//   finish(p, total): called once, by the block that holds the last tile, with the grand total.
// With defaults in PipeWorkDefaults: on_load(p, slot, start, full), called by the load lane after it
//   issued a tile's bulk copies and before its arrival on the tile's `full` barrier (what a Work needs
//   from global memory besides the tile: plain loads finished before it returns, or bulk copies that
//   complete on `full` after an mbar_expect_tx of their bytes, which keep the load lane from waiting);
//   PUBLISH_WARP with ordered(state), whether publishing with release semantics goes through the
//   publisher warp (see `publish_tiles`); warp_sum<Op>(x); scan_warp_totals<Op, WARPS>(totals, w,
//   exclusive, aggregate); needs_prefix(p) (false: the compute warps wait for no prefix but the last
//   tile's, and the look-ahead frees slots too); BATCHED_LOOKAHEAD (clamped batched reads in
//   fold_step, chosen at compile time; the state then needs Word, word(t) and unpack(t, w, value),
//   and its loads must need no acquire ordering: RunsPairState's, an unordered WideState's).
// Optional: Kept with reduce_tile(p, slot, tile_smem, start, valid, kept) and prepare_tile(p, slot,
// tile_smem, start, valid, kept): what each thread keeps in registers from its reduce to its warp's
// prepare_tile, which runs right after the tile's aggregate is published (every compute warp has read
// the tile for its reduce by then, so a warp may rewrite its own part of the slot), long before the
// prefix is known. VALUE_BYTES (> 0: a second input stream; then also input(p) and values_input(p)),
// SIDE_BYTES (> 0: a side stream after the tile in its slot; then also side_input(p)), COMMUTATIVE
// (false: ordered look-ahead fold), input(p) (the first stream, else p.in), ahead_reads(p) (how the
// look-ahead reads statuses in this launch, over BATCHED_LOOKAHEAD; batched reads need word and unpack).
// With writer warps in the tuning row: write_part(p, slot, tile_smem, start, valid, part, carry), compute
// warp `part`'s share of scan_tile done by a writer warp (carry: prefix ⊕ that warp's exclusive part).
template <class Work> struct PipeEngine {
    using Params = typename Work::Params;
    using Shape = PipeTuning<Work::ALGO>;
    static constexpr int WARPS = Shape::COMPUTE_WARPS;
    static constexpr int CPL = Shape::CHUNKS_PER_LANE;
    static constexpr int STAGES = Shape::STAGES;
    // Tiles the compute warps reduce (and publish) ahead of the one they scan: the slack every block's
    // look-ahead has to collect the aggregates of the tiles before its own.
    static constexpr int REDUCE_AHEAD = Shape::REDUCE_AHEAD;
    static_assert(REDUCE_AHEAD >= 1 && REDUCE_AHEAD < STAGES, "the tiles reduced ahead must fit the ring");
    static constexpr int COMPUTE_THREADS = WARPS * 32;
    static constexpr int LOAD_WARP = WARPS;
    static constexpr int AHEAD_WARP = WARPS + 1;
    // Returns at once unless the Work publishes through it (uses_publisher); always there, so that the
    // block size follows from the tuning row alone (src/kernels.rs, PipeTuning::block_threads).
    static constexpr int PUBLISH_WARP = WARPS + 2;
    // Writer warps (see "Writer warps" above), after the publisher warp; each writes the parts of compute
    // warps writer, writer + WRITERS, ….
    static constexpr int WRITERS = Shape::WRITER_WARPS;
    static constexpr int WRITER_WARP0 = WARPS + 3;
    static_assert(WRITERS >= 0 && WRITERS <= WARPS, "at most one writer warp per compute warp");
    static constexpr int THREADS = COMPUTE_THREADS + 96 + 32 * WRITERS;
    static constexpr int TILE_CHUNKS = WARPS * 32 * CPL;
    static constexpr int TILE_BYTES = TILE_CHUNKS * 16;
    // Bytes of the second stream per item (0: one stream), and whether Op commutes.
    static constexpr int VALUE_BYTES = WorkValueBytes<Work>::value;
    static constexpr bool COMMUTATIVE = WorkCommutes<Work>::value;
    static constexpr int TILE_ITEMS =
        VALUE_BYTES == 0 ? TILE_BYTES / Work::ITEM_BYTES : TILE_BYTES / pow2_at_least(Work::ITEM_BYTES + VALUE_BYTES);
    // Byte offset of the values in a slot (16-byte aligned: TILE_ITEMS is a power of two >= 2048 there).
    static constexpr int VALUES_OFFSET = TILE_ITEMS * Work::ITEM_BYTES;
    static_assert(VALUE_BYTES == 0 || (VALUES_OFFSET % 16 == 0 && TILE_ITEMS * VALUE_BYTES % 16 == 0 &&
                                       VALUES_OFFSET + TILE_ITEMS * VALUE_BYTES <= TILE_BYTES),
                  "both streams of a tile are 16-byte aligned and fit its slot");
    // Bytes per item of the side stream (0: none) and a ring slot's size: the tile, then its side items.
    static constexpr int SIDE_BYTES = WorkSideBytes<Work>::value;
    static_assert(SIDE_BYTES == 0 || VALUE_BYTES == 0, "a Work has a second stream or a side stream, not both");
    static constexpr int SLOT_BYTES = TILE_BYTES + (TILE_ITEMS * SIDE_BYTES + 15) / 16 * 16;
    static constexpr int SLOT_CHUNKS = SLOT_BYTES / 16;
    static constexpr int RING_BYTES = STAGES * SLOT_BYTES;  // the dynamic shared memory of a launch
    // Aggregates each look-ahead lane reads per step. With 4 tiles reduced ahead of a ring of 6, 2 / 4 / 8
    // per lane gave 0.962 / 0.946 / 0.954 of memcpy for the i32 scan and 0.57 / 0.75 / 0.76 for i64.
    // The run-based Works (not commutative) and the batched Works read 8: a block's consecutive tiles are
    // about one tile per SM (132 on the H200) apart, more than the 128 of one step of 4, so 4 cost two
    // dependent L2 round trips per tile (benches/log).
    static constexpr bool BATCHED = Work::BATCHED_LOOKAHEAD;
    static constexpr int AHEAD_PER_LANE = COMMUTATIVE && !BATCHED ? 4 : 8;
    static constexpr uint64_t END = ~0ull;  // tile id meaning "no tiles left"
    static constexpr int COMPUTE_BARRIER = 1;

    using A = typename Work::A;
    using Op = typename Work::Op;
    using State = typename Work::State;
    // Order-sensitive folds of accumulators of at most 4 bytes read lane-major rows (fold_step). Only user
    // operators not declared commutative take it: the built-in non-commutative Works carry pairs of 8
    // bytes or more. User sum ÷ built-in sum at 2^24, H100, 2026-12-07 (benches/log/2026-12-07.md,
    // "Ordered look-ahead variants" and "Rows and joint polls"): i32 1.050-1.056 → 0.978-1.000, f32
    // 1.016-1.046 → 1.013-1.024. The rows cost 8-byte accumulators more in shuffles than they save (f64
    // 1.036-1.045 → 1.082-1.091), so those keep lane-contiguous reads and poll together (wait_pending).
    static constexpr bool AHEAD_ROWS = !COMMUTATIVE && sizeof(A) <= 4;

    struct Storage {
        uint64_t full[STAGES];   // slot loaded (tx bytes) and its tile id written
        uint64_t empty[STAGES];  // every compute warp (or writer warp) is done with the slot
        uint64_t ready[STAGES];  // the look-ahead wrote the slot's exclusive prefix
        uint64_t reduced[STAGES];  // the slot's aggregate is in `aggregate` (publisher warp only)
        uint64_t staged[STAGES];   // every compute thread has reduced and staged the slot (writer warps only)
        uint64_t tile_id[STAGES];
        uint64_t launch_word;
        A prefix[STAGES];
        A aggregate[STAGES];
        A warp_exclusive[STAGES][WARPS];  // per slot: ⊕ of the tile's warps before each warp
        A warp_totals[2][WARPS];          // double-buffered: read between two barriers (see reduce)
        typename Work::Slot work[STAGES];
    };

    static __device__ __forceinline__ void run(const Params& p) {
        extern __shared__ __align__(128) uint4 ring[];
        __shared__ Storage s;
        // The launch word before this block's first take: its round is this launch's (tile_state.cuh).
        if (threadIdx.x == 0) {
            s.launch_word = ld_relaxed(p.lb.header);
            engine_items = launch_items(p.lb, p.n);
        }
        __syncthreads();
        const uint64_t word = s.launch_word;
        clear_idle_region(p.lb, word);
        const uint64_t num_tiles = (engine_items + TILE_ITEMS - 1) / TILE_ITEMS;
        const State state = Work::state(p, ticket_status(p.lb, word), ticket_epoch(word));
        const bool by_publisher = uses_publisher(state);
        if (threadIdx.x == 0) {
            for (int i = 0; i < STAGES; ++i) {
                mbar_init(&s.full[i], 1);
                // The publisher warp, when it publishes, frees a slot too: the slot's tile id and
                // aggregate must stay until it has read them.
                // So does the look-ahead warp when the compute warps do not wait for its prefix.
                // With writer warps, they free it (after every compute warp, `staged`).
                mbar_init(&s.empty[i], (WRITERS > 0 ? WRITERS : WARPS) + by_publisher + !Work::needs_prefix(p));
                mbar_init(&s.ready[i], 1);
                mbar_init(&s.reduced[i], 1);
                if constexpr (WRITERS > 0) mbar_init(&s.staged[i], COMPUTE_THREADS);
            }
            fence_barrier_init();
        }
        __syncthreads();
        if (warp_id() == LOAD_WARP) {
            if (lane_id() == 0) load_tiles(p, s, ring, num_tiles);
        } else if (warp_id() == AHEAD_WARP) {
            look_ahead(p, s, state);
        } else if (warp_id() < WARPS) {
            compute(p, s, ring, state, num_tiles, by_publisher);
        } else if (warp_id() >= WRITER_WARP0) {
            if constexpr (WRITERS > 0) write_tiles(p, s, ring, num_tiles);
        } else if (by_publisher && lane_id() == 0) {
            publish_tiles(s, state);
        }
    }

    // Load warp, one lane: tile ids in, bulk copies out, STAGES tiles ahead at most. A tile id is taken
    // only once a slot is free, so every id taken is loaded at once (a block holding a low id it cannot
    // load yet would hold up every later tile's prefix). Taking the next id one tile early, to hide the
    // atomic's round trip, measured no faster (benches/log). With two streams, one bulk copy per
    // stream completes on the same barrier.
    static __device__ __forceinline__ void load_tiles(const Params& p, Storage& s, uint4* ring, uint64_t num_tiles) {
        const char* keys = static_cast<const char*>(first_input(p));
        for (uint32_t k = 0;; ++k) {
            const int slot = k % STAGES;
            if (k >= STAGES) mbar_wait(&s.empty[slot], (k / STAGES - 1) & 1);
            // Every block ends on one failed take: num_tiles + gridDim.x takes in all.
            const uint64_t tile = ticket_tile(take_ticket(p.lb, num_tiles + gridDim.x));
            if (tile >= num_tiles) {
                // An empty launch (a device count of 0) still writes its result: the Work's empty total.
                if (tile == 0) Work::finish(p, Op::template identity<A>());
                s.tile_id[slot] = END;
                mbar_arrive(&s.full[slot]);
                return;
            }
            s.tile_id[slot] = tile;
            const uint64_t start = tile * (uint64_t)TILE_ITEMS;
            const uint32_t items = (uint32_t)min((uint64_t)TILE_ITEMS, engine_items - start);
            // Each stream's trailing < 16 bytes of the last tile are read by the compute warps (bulk copies
            // move 16-byte multiples).
            const uint32_t key_bytes = (items * Work::ITEM_BYTES) & ~15u;
            uint32_t value_bytes = 0, side_bytes = 0;
            if constexpr (VALUE_BYTES > 0) value_bytes = (items * VALUE_BYTES) & ~15u;
            if constexpr (SIDE_BYTES > 0) side_bytes = (items * SIDE_BYTES) & ~15u;
            mbar_expect_tx(&s.full[slot], key_bytes + value_bytes + side_bytes);
            char* dst = reinterpret_cast<char*>(ring + slot * SLOT_CHUNKS);
            if (key_bytes) bulk_load(dst, keys + start * Work::ITEM_BYTES, key_bytes, &s.full[slot]);
            if constexpr (VALUE_BYTES > 0) {
                const char* values = static_cast<const char*>(Work::values_input(p));
                if (value_bytes) bulk_load(dst + VALUES_OFFSET, values + start * VALUE_BYTES, value_bytes, &s.full[slot]);
            }
            if constexpr (SIDE_BYTES > 0) {
                const char* side = static_cast<const char*>(Work::side_input(p));
                if (side_bytes) bulk_load(dst + TILE_BYTES, side + start * SIDE_BYTES, side_bytes, &s.full[slot]);
            }
            // While the copies are in flight: the Work's own global loads, finished before the arrival
            // (release) lets the slot's phase complete.
            Work::on_load(p, s.work[slot], start, &s.full[slot]);
            mbar_arrive(&s.full[slot]);
        }
    }

    // Whether aggregates go out through the publisher warp: for Works that ask for it, when the status
    // accesses are ordered. A release store waits for every earlier memory access of its thread, which
    // for a compute thread includes the output stores of the tile it just finished (up to a microsecond
    // of HBM write latency, every tile, with every other compute warp waiting at the next barrier). The
    // publisher warp has no other memory accesses in flight, and fences before the tile is even reduced.
    static __device__ __forceinline__ bool uses_publisher(const State& state) {
        if constexpr (Work::PUBLISH_WARP) return Work::ordered(state);
        else return false;
    }

    // Publisher warp, one lane: publishes each slot's aggregate once the compute warps have reduced it, in
    // slot order, then frees the slot for the load warp. The tile's input loads are ordered before the
    // aggregate by a fence right after this lane saw the slot's `full` phase (the bulk copy complete) and
    // before the relaxed store of the aggregate: fence + relaxed store, a release pattern (invariant 2).
    // The fence runs while the compute warps reduce the tile, so no fence stands in front of the store:
    // in place 1-2.5 % faster at 2^23-2^24 than with a release store (benches/log, 2026-12-01).
    static __device__ __forceinline__ void publish_tiles(Storage& s, const State& state) {
        const State relaxed = Work::unordered(state);
        for (uint32_t k = 0;; ++k) {
            const int slot = k % STAGES;
            mbar_wait(&s.full[slot], (k / STAGES) & 1);
            const uint64_t tile = s.tile_id[slot];
            if (tile == END) return;
            fence_acq_rel_gpu();
            mbar_wait(&s.reduced[slot], (k / STAGES) & 1);
            relaxed.publish(tile, STATUS_A, s.aggregate[slot]);
            mbar_arrive(&s.empty[slot]);
        }
    }

    static __device__ __forceinline__ const void* first_input(const Params& p) {
        if constexpr (WorkHasInput<Work>::value) return Work::input(p);
        else return p.in;
    }

    // Tile of this lane's i-th status read in a step from `cursor`: lane-major (tile cursor + 32i + lane)
    // for commutative operators and AHEAD_ROWS; lane-contiguous (cursor + PER_LANE·lane + i) otherwise, so
    // that folding i in order and then the lanes in lane order is tile order.
    template <int PER_LANE = AHEAD_PER_LANE>
    static __device__ __forceinline__ uint64_t ahead_tile(uint64_t cursor, int i) {
        if constexpr (COMMUTATIVE || AHEAD_ROWS) return cursor + 32 * i + lane_id();
        else return cursor + PER_LANE * lane_id() + i;
    }

    // Polls a step's reads that found X until each is A (v[i] then holds its aggregate). Lane-contiguous
    // reads (operators that do not commute) put a step's newest tiles, the ones most likely still X, in
    // the same lane, one after another: polling each until it turns took a round trip per such tile after
    // the first. So for them every pending read is issued again together, one round trip per poll (a state
    // with word/unpack, read unordered). Lane-major reads spread the newest tiles over the lanes.
    template <int PER_LANE>
    static __device__ __forceinline__ void wait_pending(const State& state, uint64_t cursor, A (&v)[PER_LANE],
                                                        unsigned (&st)[PER_LANE]) {
        if constexpr (!COMMUTATIVE && !AHEAD_ROWS && StateHasWord<State>::value) {
            if (!Work::ordered(state)) {
                for (;;) {
                    typename State::Word w[PER_LANE];
#pragma unroll
                    for (int i = 0; i < PER_LANE; ++i)
                        if (st[i] == STATUS_X) w[i] = state.word(ahead_tile<PER_LANE>(cursor, i));
                    bool pending = false;
#pragma unroll
                    for (int i = 0; i < PER_LANE; ++i)
                        if (st[i] == STATUS_X) {
                            st[i] = state.unpack(ahead_tile<PER_LANE>(cursor, i), w[i], v[i]);
                            pending |= st[i] == STATUS_X;
                        }
                    if (!pending) return;
                }
            }
        }
#pragma unroll
        for (int i = 0; i < PER_LANE; ++i) {
            while (st[i] == STATUS_X) st[i] = state.read(ahead_tile<PER_LANE>(cursor, i), v[i]);
        }
    }

    // `running` ⊕ the aggregates of tiles [cursor, end), end ≤ cursor + 32·PER_LANE, for every lane.
    // Every state is packed: one load (a word, or a 16-byte entry) gives a tile's status and value.
    // Batched reads (clamped, predicated) issue every load of the step before using any: one L2 round
    // trip per step. Serial reads test load i, under its `t < end` branch, before load i+1, and the
    // compiler issues the loads one round trip apart (ncu: 8 dependent L2 loads per step for the runs
    // Works; for the 4-byte user scans nvdisasm shows them predicated and issued together, 2026-12-07).
    // Which is faster depends on the Work and even its mode, and not in a way understood so far:
    // clamped batches made reduce_by_key, the scans by key and the 8-byte scans faster and the
    // position-carrying runs Works slower (2026-11-30); for compaction, predicated batches are the
    // fastest out of place and the slowest in place, clamped ones the fastest for count_if
    // (benches/log, 2026-12-01).
    template <AheadReads KIND, int PER_LANE>
    static __device__ __forceinline__ A fold_step(const State& state, uint64_t cursor, uint64_t end, A running) {
        const A identity = Op::template identity<A>();
        A v[PER_LANE];
        unsigned st[PER_LANE];
        if constexpr (KIND != AheadReads::serial) {
            typename State::Word w[PER_LANE];
#pragma unroll
            for (int i = 0; i < PER_LANE; ++i) {
                const uint64_t t = ahead_tile<PER_LANE>(cursor, i);
                if constexpr (KIND == AheadReads::clamped) w[i] = state.word(min(t, end - 1));
                else w[i] = t < end ? state.word(t) : typename State::Word{};
            }
#pragma unroll
            for (int i = 0; i < PER_LANE; ++i) {
                const uint64_t t = ahead_tile<PER_LANE>(cursor, i);
                v[i] = identity;
                st[i] = t < end ? state.unpack(t, w[i], v[i]) : STATUS_A;
            }
            wait_pending<PER_LANE>(state, cursor, v, st);
        } else {
#pragma unroll
            for (int i = 0; i < PER_LANE; ++i) {
                const uint64_t t = ahead_tile<PER_LANE>(cursor, i);
                v[i] = identity;
                st[i] = t < end ? state.read(t, v[i]) : STATUS_A;
            }
            wait_pending<PER_LANE>(state, cursor, v, st);
        }
        if constexpr (AHEAD_ROWS) {
            // Row i (tiles cursor + 32i …) reduced in lane order, the rows folded in order: tile order.
            return warp_fold_rows<Op, PER_LANE>(running, v, (int)((end - cursor + 31) / 32));
        } else {
            A part = identity;
#pragma unroll
            for (int i = 0; i < PER_LANE; ++i) part = Op::apply(part, v[i]);
            return Op::apply(running, warp_reduce<Op>(part));
        }
    }

    // Deterministic order (LB_DETERMINISTIC, order-sensitive operators), grouped by position only, as the
    // classic agents' anchored look-back (core/lookback.cuh): tiles fall into aligned windows of 32; W_w,
    // window w's 32 aggregates combined by the warp's fixed tree, is folded left into the running prefix,
    // R_w = ((initial ⊕ W_0) ⊕ W_1) ⊕ … ⊕ W_(w-1); tile 32w+p's prefix is R_w ⊕ (its window's aggregates
    // before it, by the same tree's scan). Whichever tiles a block took and whenever it read them, the
    // bits depend only on the input and the tile partition. The engine has no P states, so nothing else
    // changes: the look-ahead reads aggregates as it always does, up to DET_WINDOWS windows per round trip.
    // (The classic agents' P of keyed tiles with a head, "Keyed sums" in core/lookback.cuh, has no
    // counterpart to restore here: the engine publishes aggregates only, and its look-ahead reads those of
    // every tile between a block's tiles in either mode.)
    static constexpr int DET_WINDOWS = 4;

    // Lane l: the aggregate of tile `first` + l (first + l < end, else the identity), waiting out X.
    static __device__ __forceinline__ A read_window(const State& state, uint64_t first, uint64_t end) {
        const uint64_t t = first + lane_id();
        A v = Op::template identity<A>();
        unsigned st = t < end ? state.read(t, v) : STATUS_A;
        while (st == STATUS_X) st = state.read(t, v);
        return v;
    }

    // R folded over the whole windows [window, last): the running prefix of window `last`.
    static __device__ __forceinline__ A fold_windows(const State& state, uint64_t window, uint64_t last, A running) {
        while (window < last) {
            const int count = (int)min((uint64_t)DET_WINDOWS, last - window);
            A v[DET_WINDOWS];
            unsigned st[DET_WINDOWS];
            // Every load of the step before any is waited on: one round trip per DET_WINDOWS windows.
#pragma unroll
            for (int i = 0; i < DET_WINDOWS; ++i) {
                const uint64_t t = (window + i) * 32 + lane_id();
                v[i] = Op::template identity<A>();
                st[i] = i < count ? state.read(t, v[i]) : STATUS_A;
            }
#pragma unroll
            for (int i = 0; i < DET_WINDOWS; ++i) {
                while (st[i] == STATUS_X) st[i] = state.read((window + i) * 32 + lane_id(), v[i]);
            }
            // The windows' totals by warp_reduce's tree (the same bits), in fewer shuffles.
            running = warp_fold_rows<Op>(running, v, count);
            window += count;
        }
        return running;
    }

    // The deterministic look-ahead: for each slot's tile, R of its window (kept across tiles: windows only
    // move forward) ⊕ the scan of its window's aggregates before it.
    static __device__ __forceinline__ void look_ahead_windows(const Params& p, Storage& s, const State& state) {
        const bool frees_slot = !Work::needs_prefix(p);
        A running = Work::initial(p);
        uint64_t window = 0;  // `running` is R_window
        for (uint32_t k = 0;; ++k) {
            const int slot = k % STAGES;
            mbar_wait(&s.full[slot], (k / STAGES) & 1);
            const uint64_t tile = s.tile_id[slot];
            if (tile == END) return;
            running = fold_windows(state, window, tile / 32, running);
            window = tile / 32;
            const int pos = (int)(tile % 32);
            A prefix = running;
            if (pos > 0) {
                const A scanned = warp_inclusive_scan<Op>(read_window(state, window * 32, tile));
                prefix = Op::apply(running, shfl_from(scanned, pos - 1));
            }
            if (lane_id() == 0) {
                s.prefix[slot] = prefix;
                mbar_arrive(&s.ready[slot]);
                if (frees_slot) mbar_arrive(&s.empty[slot]);
            }
        }
    }

    // Look-ahead warp: the block's running exclusive prefix, one slot's tile at a time, read as the Work
    // chooses for this launch (ahead_reads), else as its BATCHED_LOOKAHEAD says; an ordered state serially.
    // Under LB_DETERMINISTIC, an order-sensitive operator takes look_ahead_windows.
    static __device__ __forceinline__ void look_ahead(const Params& p, Storage& s, const State& state) {
        if constexpr (OrderSensitive<Op, A>::value) {
            if (p.lb.flags & LB_DETERMINISTIC) {
                look_ahead_windows(p, s, state);
                return;
            }
        }
        if constexpr (WorkChoosesReads<Work>::value) {
            switch (Work::ordered(state) ? AheadReads::serial : Work::ahead_reads(p)) {
                case AheadReads::clamped: look_ahead_loop<AheadReads::clamped, 8>(p, s, state); return;
                case AheadReads::predicated: look_ahead_loop<AheadReads::predicated, 8>(p, s, state); return;
                case AheadReads::serial: break;
            }
        }
        look_ahead_loop<BATCHED ? AheadReads::clamped : AheadReads::serial, AHEAD_PER_LANE>(p, s, state);
    }

    template <AheadReads KIND, int PER_LANE>
    static __device__ __forceinline__ void look_ahead_loop(const Params& p, Storage& s, const State& state) {
        const bool frees_slot = !Work::needs_prefix(p);
        A running = Work::initial(p);
        uint64_t cursor = 0;  // aggregates of tiles [0, cursor) are folded into `running`
        for (uint32_t k = 0;; ++k) {
            const int slot = k % STAGES;
            mbar_wait(&s.full[slot], (k / STAGES) & 1);
            const uint64_t tile = s.tile_id[slot];
            if (tile == END) return;
            while (cursor < tile) {
                // Lane-major order (lane l holds tiles l, l+32, …) folded per lane is not tile order:
                // fine for the commutative operators of ops.cuh; float sums differ from sequential order
                // by rounding only, as with any parallel scan. Non-commutative Works fold in tile order
                // (ahead_tile, fold_step).
                const uint64_t step_end = min(cursor + 32 * (uint64_t)PER_LANE, tile);
                running = fold_step<KIND, PER_LANE>(state, cursor, step_end, running);
                cursor = step_end;
            }
            if (lane_id() == 0) {
                s.prefix[slot] = running;
                mbar_arrive(&s.ready[slot]);
                // A Work that needs no prefix (count_if) frees its slots without waiting for `ready`:
                // the slot (its tile id) must then stay until this warp is done with it.
                if (frees_slot) mbar_arrive(&s.empty[slot]);
            }
        }
    }

    // Waits for slot k, reduces it and publishes its aggregate; leaves the warp's exclusive part of the
    // tile in the slot. False when the load warp said "no more tiles".
    static __device__ __forceinline__ bool reduce(const Params& p, Storage& s, uint4* ring, const State& state,
                                                  uint32_t k, bool by_publisher) {
        const int slot = k % STAGES;
        mbar_wait(&s.full[slot], (k / STAGES) & 1);
        const uint64_t tile = s.tile_id[slot];
        if (tile == END) return false;
        const int w = warp_id();
        const uint64_t start = tile * (uint64_t)TILE_ITEMS;
        const int valid = (int)min((uint64_t)TILE_ITEMS, engine_items - start);
        uint4* tile_smem = ring + slot * SLOT_CHUNKS;
        typename WorkKept<Work>::type kept;
        A mine;
        if constexpr (WorkKept<Work>::value) mine = Work::reduce_tile(p, s.work[slot], tile_smem, start, valid, kept);
        else mine = Work::reduce_tile(p, s.work[slot], tile_smem, start, valid);
        const A warp_total = Work::template warp_sum<Op>(mine);
        if (lane_id() == 0) s.warp_totals[k & 1][w] = warp_total;
        named_barrier<COMPUTE_BARRIER, COMPUTE_THREADS>();
        // Read the totals now: the next write to this buffer (tile k+2) comes after the next barrier.
        A exclusive, aggregate;
        Work::template scan_warp_totals<Op, WARPS>(s.warp_totals[k & 1], w, exclusive, aggregate);
        // Every lane writes the same value; scan() reads it after a __syncwarp.
        s.warp_exclusive[slot][w] = exclusive;
        if (threadIdx.x == 0) {
            s.aggregate[slot] = aggregate;  // read back by this thread (and by the publisher warp)
            if (by_publisher) mbar_arrive(&s.reduced[slot]);
            else state.publish(tile, STATUS_A, aggregate);
        }
        // After the barrier: every warp's reads of the slot for its reduce are done.
        if constexpr (WorkKept<Work>::value) Work::prepare_tile(p, s.work[slot], tile_smem, start, valid, kept);
        if constexpr (WRITERS > 0) {
            // The staging's writes through the generic proxy, ordered before the next bulk copy into the
            // slot by each writing thread (the writer warps free the slot).
            if constexpr (Work::WRITES_RING) asm volatile("fence.proxy.async.shared::cta;" : : : "memory");
            // Every thread arrives: its arrive releases its own writes (warp_exclusive, the staged items)
            // to the writer warps' acquiring wait. With one arrive per warp after __syncwarp, the other
            // lanes' writes reached the writers through the warp barrier only, a chain racecheck does not
            // follow; one arrive per thread measured level with it (benches/log, 2026-12-07).
            mbar_arrive(&s.staged[slot]);
        }
        return true;
    }

    // Finishes slot k (reduced earlier) once its prefix is ready, and frees the slot.
    static __device__ __forceinline__ void scan(const Params& p, Storage& s, uint4* ring, uint32_t k,
                                                uint64_t num_tiles) {
        const int slot = k % STAGES;
        const uint64_t tile = s.tile_id[slot];
        const bool last = tile == num_tiles - 1;
        if (Work::needs_prefix(p) || last) {
            // Only the last tile waits when the Work needs no prefix (its total does); the look-ahead
            // warp then arrives on `empty` too, so the slot's tile id stays until it has read it.
            mbar_wait(&s.ready[slot], (k / STAGES) & 1);
            // The lanes leave the wait apart when it spins (a late prefix: the deterministic look-ahead,
            // a loaded GPU). Reconverged, every lane's write of warp_exclusive (the same value) is before
            // every lane's read: compute-sanitizer's racecheck otherwise reports the benign intra-warp
            // race.
            __syncwarp();
            const A prefix = s.prefix[slot];
            const uint64_t start = tile * (uint64_t)TILE_ITEMS;
            const int valid = (int)min((uint64_t)TILE_ITEMS, engine_items - start);
            Work::scan_tile(p, s.work[slot], ring + slot * SLOT_CHUNKS, start, valid,
                            Op::apply(prefix, s.warp_exclusive[slot][warp_id()]));
            if (threadIdx.x == 0 && last) Work::finish(p, Op::apply(prefix, s.aggregate[slot]));
        }
        // Writes to the slot through the generic proxy must be ordered before the next bulk copy into it.
        if constexpr (Work::WRITES_RING) asm volatile("fence.proxy.async.shared::cta;" : : : "memory");
        __syncwarp();
        if (lane_id() == 0) mbar_arrive(&s.empty[slot]);
    }

    // Writer warps: each tile, in slot order, once it is staged and its prefix known: this warp's parts
    // out (Work::write_part with the part's carry), then the slot freed.
    static __device__ __forceinline__ void write_tiles(const Params& p, Storage& s, uint4* ring, uint64_t num_tiles) {
        const int writer = (int)warp_id() - WRITER_WARP0;
        for (uint32_t k = 0;; ++k) {
            const int slot = k % STAGES;
            const uint32_t parity = (k / STAGES) & 1;
            mbar_wait(&s.full[slot], parity);
            const uint64_t tile = s.tile_id[slot];
            if (tile == END) return;
            mbar_wait(&s.staged[slot], parity);
            const bool last = tile == num_tiles - 1;
            if (Work::needs_prefix(p) || last) {
                mbar_wait(&s.ready[slot], parity);
                const A prefix = s.prefix[slot];
                const uint64_t start = tile * (uint64_t)TILE_ITEMS;
                const int valid = (int)min((uint64_t)TILE_ITEMS, engine_items - start);
                uint4* tile_smem = ring + slot * SLOT_CHUNKS;
                for (int part = writer; part < WARPS; part += WRITERS)
                    Work::write_part(p, s.work[slot], tile_smem, start, valid, part,
                                     Op::apply(prefix, s.warp_exclusive[slot][part]));
                if (writer == 0 && lane_id() == 0 && last) Work::finish(p, Op::apply(prefix, s.aggregate[slot]));
            }
            __syncwarp();
            if (lane_id() == 0) mbar_arrive(&s.empty[slot]);
        }
    }

    // Compute warps: with writer warps, reduce (and stage) every slot as it arrives; else reduce
    // REDUCE_AHEAD tiles ahead of the one being finished.
    static __device__ __forceinline__ void compute(const Params& p, Storage& s, uint4* ring, const State& state,
                                                   uint64_t num_tiles, bool by_publisher) {
        if constexpr (WRITERS > 0) {
            for (uint32_t k = 0; reduce(p, s, ring, state, k, by_publisher); ++k) {
            }
        } else {
            uint32_t reduced = 0;  // slots reduced so far
            bool more = true;      // the load warp has not said "no more tiles" yet
            while (more && reduced < REDUCE_AHEAD) {
                more = reduce(p, s, ring, state, reduced, by_publisher);
                reduced += more;
            }
            for (uint32_t k = 0; k < reduced; ++k) {
                if (more) {
                    more = reduce(p, s, ring, state, reduced, by_publisher);
                    reduced += more;
                }
                scan(p, s, ring, k, num_tiles);
            }
        }
    }

    // Item `i` of a partial tile: from the ring while the bulk copy covered it, else from global memory
    // (the < 16 trailing bytes), else `fill`. With two streams, pass each stream's part of the slot.
    template <class T>
    static __device__ __forceinline__ T partial_item(const uint4* tile_smem, const T* in, int i, int valid, T fill) {
        const int bulk_items = (int)(((uint32_t)valid * sizeof(T)) & ~15u) / (int)sizeof(T);
        if (i < bulk_items) return reinterpret_cast<const T*>(tile_smem)[i];
        if (i < valid) return in[i];
        return fill;
    }

    // The side items of a tile in its slot (SIDE_BYTES > 0).
    static __device__ __forceinline__ const uint4* side_items(const uint4* tile_smem) { return tile_smem + TILE_CHUNKS; }

    // This lane's chunk j of the tile (index into the tile's chunks) and its first item.
    static __device__ __forceinline__ int chunk_index(int j) { return (int)warp_id() * 32 * CPL + 32 * j + (int)lane_id(); }
};

}  // namespace lookback
