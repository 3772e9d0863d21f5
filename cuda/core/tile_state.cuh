// Tile-status words: how a tile publishes its aggregate (A) or inclusive prefix (P), and how a successor
// reads it. The look-back (lookback.cuh) only sees `publish` and `read`.
//
// Epochs. Every status word carries the epoch of the launch that wrote it (1..=255, never 0). A word whose
// epoch is not the current one reads as X ("not ready"), so a workspace can be reused by the next launch
// without a separate initialisation launch: one kernel launch per call. Zeroed memory has epoch 0 and
// reads as X. The epoch lives on the device, in the launch word (see "Launch word" below), so a launch
// captured in a CUDA graph is correct however often it is replayed. Launches alternate between two status
// regions every 255 epochs, and the first launch in a region clears the other one, so a word left by an
// older launch with the same epoch number can never be mistaken for a fresh one.
//
// Invariant 1 (packed status words): a reader must never see a flag without its value. Values of at most
// 4 bytes travel in the same 64-bit word as their flag, written and read with one single-copy-atomic
// access. 8-byte values travel in one 16-byte entry of two such words, each carrying the tag and half of
// the value (WideState); a 16-byte access is not single-copy atomic (CUB issue #612), so a reader accepts
// an entry only when both halves carry the same tag, which only one write of a launch can have left.
#pragma once
#include "std_subset.cuh"
#include "common.cuh"
#include "params.cuh"
#include "types.cuh"

namespace lookback {

enum : unsigned { STATUS_X = 0, STATUS_A = 1, STATUS_P = 2 };

__device__ __forceinline__ unsigned make_tag(unsigned epoch, unsigned state) { return (epoch << 2) | state; }
// The state of a tag, or X when the tag belongs to another launch.
__device__ __forceinline__ unsigned tag_state(unsigned tag, unsigned epoch) {
    return (tag >> 2) == epoch ? (tag & 3u) : STATUS_X;
}

// 16-byte entries (WideState, WidePairState, 8-byte RunsPairState): two words written and read with one
// vector access (common.cuh), each carrying the tag at bit SHIFT. PTX makes each word single-copy atomic,
// not the pair, so a reader may see halves of two writes. Within a launch an entry is written at most once
// per state (A, then P in the classic agents), so equal tags of the current epoch mean one write; a torn
// read (unequal tags) reads as X and is polled again.
template <int SHIFT> __device__ __forceinline__ bool torn(U64Pair w) {
    return (unsigned)(w.hi >> SHIFT) != (unsigned)(w.lo >> SHIFT);
}

// Values of at most 4 bytes: word = tag << 32 | value bits.
//
// ORDERED selects release/acquire. A scan needs none: a reader uses nothing but the value, which is inside
// the word it read atomically, so relaxed (but strong, GPU-scope) accesses suffice. In-place compaction
// needs them: seeing a predecessor's flag must also mean that the predecessor's loads of its input are
// finished before this tile overwrites that memory (invariant 3, classic/select.cuh).
template <class A, bool ORDERED> struct PackedState {
    static_assert(sizeof(A) <= 4, "PackedState holds values of at most 4 bytes");
    uint64_t* words;
    unsigned epoch;

    __device__ __forceinline__ void publish(uint64_t tile, unsigned state, A value) const {
        uint64_t w = ((uint64_t)make_tag(epoch, state) << 32) | (uint64_t)to_bits(value);
        if (ORDERED) st_release(words + tile, w); else st_relaxed(words + tile, w);
    }
    __device__ __forceinline__ unsigned read(uint64_t tile, A& value) const { return unpack(tile, word(tile), value); }
    // `read` in two steps, for a reader that issues many loads before using any (the engine's look-ahead).
    using Word = uint64_t;
    __device__ __forceinline__ Word word(uint64_t tile) const {
        return ORDERED ? ld_acquire(words + tile) : ld_relaxed(words + tile);
    }
    __device__ __forceinline__ unsigned unpack(uint64_t, Word w, A& value) const {
        value = from_bits<A>((typename Bits<sizeof(A)>::type)(w & 0xffffffffu));
        return tag_state((unsigned)(w >> 32), epoch);
    }
};

// 8-byte values: one 16-byte entry per tile, words[2t..2t+2) (the host keeps two status words per tile;
// see torn). Each half is tag << 32 | 32 bits of the value (low bits first): a PackedState word's
// layout, so the reasoning about words a launch of another format left holds for each half (another
// launch's epoch reads as X; the count formats' tags sit in bits 54-63, which a packed word leaves zero).
// One load gives flag and value: a reader that polls many tiles needs one round trip per step, where a
// flag word with separate value slots would need two (flags, fence, values).
template <class A, bool ORDERED> struct WideState {
    static_assert(sizeof(A) == 8, "WideState holds 8-byte values");
    using Word = U64Pair;
    uint64_t* words;
    unsigned epoch;

    __device__ __forceinline__ void publish(uint64_t tile, unsigned state, A value) const {
        const uint64_t bits = to_bits(value);
        const uint64_t tag = (uint64_t)make_tag(epoch, state) << 32;
        st_pair<ORDERED>(words + 2 * tile, U64Pair{tag | (bits & 0xffffffffu), tag | (bits >> 32)});
    }
    __device__ __forceinline__ unsigned read(uint64_t tile, A& value) const { return unpack(tile, word(tile), value); }
    // `read` in two steps, for a reader that issues many loads before using any (the engine's batched
    // look-ahead).
    __device__ __forceinline__ Word word(uint64_t tile) const { return ld_pair<ORDERED>(words + 2 * tile); }
    __device__ __forceinline__ unsigned unpack(uint64_t, Word w, A& value) const {
        if (torn<32>(w)) return STATUS_X;
        const unsigned state = tag_state((unsigned)(w.hi >> 32), epoch);
        if (state != STATUS_X) value = from_bits<A>((w.hi << 32) | (w.lo & 0xffffffffu));
        return state;
    }
};

// Item counts (selection offsets) of any n: word = tag << 54 | count. Epoch (8 bits) and state (2 bits)
// fill the top 10 bits; 54 bits count up to 1.8e16 items. `ordered` (uniform per launch) selects
// release/acquire, which only in-place compaction needs (invariant 3); out of place, a reader uses nothing
// but the count inside the word, as in a scan, and relaxed accesses keep fences off the critical path.
// (The classic select agent publishes in place through an unordered one after its own fence.)
struct CountState {
    uint64_t* words;
    unsigned epoch;
    bool ordered;
    static constexpr uint64_t COUNT_MASK = (1ull << 54) - 1;

    __device__ __forceinline__ void publish(uint64_t tile, unsigned state, uint64_t count) const {
        const uint64_t w = ((uint64_t)make_tag(epoch, state) << 54) | count;
        if (ordered) st_release(words + tile, w); else st_relaxed(words + tile, w);
    }
    __device__ __forceinline__ unsigned read(uint64_t tile, uint64_t& count) const {
        return unpack(tile, ordered ? ld_acquire(words + tile) : ld_relaxed(words + tile), count);
    }
    // Batched reads (persistent/engine.cuh's fold_step): relaxed, so the engine takes them for unordered
    // states only.
    using Word = uint64_t;
    __device__ __forceinline__ Word word(uint64_t tile) const { return ld_relaxed(words + tile); }
    __device__ __forceinline__ unsigned unpack(uint64_t, Word w, uint64_t& count) const {
        count = w & COUNT_MASK;
        return tag_state((unsigned)(w >> 54), epoch);
    }
};

// (count, value) pairs of the classic look-back agents (classic/runs.cuh, classic/partition3.cuh): one 16-byte
// entry per tile, words[2t..2t+2), each half under a tag << 54 (CountState's layout, so a half another
// launch left reads as X in every format, and theirs in this one). As WideState: one vector access, torn
// reads read as X (torn; A and P of a tile are two writes of the same entry). One load per predecessor,
// where a flag word with separate value slots took two round trips (flag with acquire, then the values).
// No ordering is needed: readers use nothing but the entry (run-based outputs are never in place).
//
// Two layouts, by what the value needs:
// * FULL = false, values that fit 54 bits (reductions of values of at most 4 bytes, item positions, item
//   counts): count then value, each half tag << 54 | 54 bits.
// * FULL = true, 64-bit values (8-byte reductions): the low half is tag << 54 | count << 10 | the value's
//   low 10 bits, the high half tag << 54 | the value's high 54 bits. Counts then fit 44 bits (1.7e13
//   runs: more items than any GPU holds).
template <class P, bool FULL = false> struct WidePairState {
    using V = decltype(P::value);
    using B = typename Bits<sizeof(V)>::type;
    static_assert(!FULL || sizeof(V) == 8, "FULL is the layout of 64-bit values");
    static constexpr uint64_t MASK = (1ull << 54) - 1;
    static constexpr int LOW_BITS = 10;  // FULL: value bits beside the count
    static constexpr uint64_t LOW_MASK = (1ull << LOW_BITS) - 1;
    static constexpr uint64_t FULL_COUNT_MASK = (1ull << (54 - LOW_BITS)) - 1;
    uint64_t* words;
    unsigned epoch;

    __device__ __forceinline__ void publish(uint64_t tile, unsigned state, P pair) const {
        const uint64_t tag = (uint64_t)make_tag(epoch, state) << 54;
        const uint64_t bits = (uint64_t)to_bits(pair.value);
        U64Pair w;
        if constexpr (FULL) {
            w = U64Pair{tag | (pair.count & FULL_COUNT_MASK) << LOW_BITS | (bits & LOW_MASK), tag | (bits >> LOW_BITS)};
        } else {
            w = U64Pair{tag | (pair.count & MASK), tag | (bits & MASK)};
        }
        st_pair<false>(words + 2 * tile, w);
    }
    __device__ __forceinline__ unsigned read(uint64_t tile, P& pair) const {
        const U64Pair w = ld_pair<false>(words + 2 * tile);
        if (torn<54>(w)) return STATUS_X;
        const unsigned state = tag_state((unsigned)(w.hi >> 54), epoch);
        if (state != STATUS_X) {
            if constexpr (FULL) {
                pair.count = (w.lo >> LOW_BITS) & FULL_COUNT_MASK;
                pair.value = from_bits<V>((B)((w.hi & MASK) << LOW_BITS | (w.lo & LOW_MASK)));
            } else {
                pair.count = w.lo & MASK;
                pair.value = from_bits<V>((B)(w.hi & MASK));
            }
        }
        return state;
    }
};

// Tile aggregates of the persistent run-based Works (persistent/runs_work.cuh): (count, payload) pairs whose
// count is tile-local (at most TILE_ITEMS <= 2^15 heads), so a pair usually fits one word with its tag:
// word = tag << 54 | count << 32 | payload. The payload is the segmented reduction's value (at most 4
// bytes) or, for POSITIONS, the tile-local index + 1 of the tile's latest head (0: none), which `read`
// turns into a global position with the tile id it was asked about. Readers use nothing but the word:
// relaxed accesses suffice, as for scans (the outputs are not in place). 8-byte payloads (TWO_WORDS) take
// a 16-byte entry, words[2t..2t+2), as WideState: that word with the payload's low half, then the tag with
// its high half, one vector access, torn reads read as X (torn).
//
// The engine's pairs are global: P::count is 64-bit and positions are global item indices, identity 0.
template <class P, bool POSITIONS, int TILE_ITEMS> struct RunsPairState {
    using V = decltype(P::value);
    static constexpr bool TWO_WORDS = !POSITIONS && sizeof(V) == 8;
    static constexpr uint64_t COUNT_MASK = (1ull << 22) - 1;
    static_assert(TILE_ITEMS < (1 << 22) && (POSITIONS || sizeof(V) <= 8), "tile-local counts fit 22 bits");
    uint64_t* words;
    unsigned epoch;

    __device__ __forceinline__ uint32_t payload(uint64_t tile, const P& pair) const {
        if constexpr (POSITIONS) {
            const uint64_t start = tile * (uint64_t)TILE_ITEMS;
            // A tile's aggregate holds a position inside the tile, or 0 (no head) from a later tile (tile 0
            // always has one: item 0). Not keyed on the count: non-trivial runs count markers, and a tile
            // of heads without markers still moves the latest head.
            return pair.value >= start ? (uint32_t)(pair.value - start) + 1u : 0u;
        } else {
            return (uint32_t)to_bits(pair.value);
        }
    }
    __device__ __forceinline__ void decode(uint64_t tile, uint64_t w, P& pair) const {
        pair.count = (w >> 32) & COUNT_MASK;
        const uint32_t low = (uint32_t)w;
        if constexpr (POSITIONS) pair.value = low ? tile * (uint64_t)TILE_ITEMS + low - 1 : 0;
        else if constexpr (!TWO_WORDS) pair.value = from_bits<V>((typename Bits<sizeof(V)>::type)low);
    }
    __device__ __forceinline__ void publish(uint64_t tile, unsigned state, P pair) const {
        const uint64_t tag = (uint64_t)make_tag(epoch, state) << 54;
        const uint64_t head = tag | ((uint64_t)pair.count << 32);
        if constexpr (TWO_WORDS) {
            const uint64_t bits = to_bits(pair.value);
            st_pair<false>(words + 2 * tile, U64Pair{head | (bits & 0xffffffffu), tag | (bits >> 32)});
        } else {
            st_relaxed(words + tile, head | payload(tile, pair));
        }
    }
    // State and pair from one relaxed load: readers use nothing but the word (or entry).
    __device__ __forceinline__ unsigned read(uint64_t tile, P& pair) const { return unpack(tile, word(tile), pair); }
    // `read` in two steps, for a reader that issues many loads before using any (the engine's batched
    // look-ahead): the words need no ordering, so the loads may be issued together.
    using Word = std::conditional_t<TWO_WORDS, U64Pair, uint64_t>;
    __device__ __forceinline__ Word word(uint64_t tile) const {
        if constexpr (TWO_WORDS) return ld_pair<false>(words + 2 * tile);
        else return ld_relaxed(words + tile);
    }
    __device__ __forceinline__ unsigned unpack(uint64_t tile, Word w, P& pair) const {
        if constexpr (TWO_WORDS) {
            if (torn<54>(w)) return STATUS_X;
            const unsigned state = tag_state((unsigned)(w.hi >> 54), epoch);
            if (state != STATUS_X) {
                decode(tile, w.lo, pair);
                pair.value = from_bits<V>(((w.hi & 0xffffffffu) << 32) | (w.lo & 0xffffffffu));
            }
            return state;
        } else {
            const unsigned state = tag_state((unsigned)(w >> 54), epoch);
            if (state != STATUS_X) decode(tile, w, pair);
            return state;
        }
    }
};

// 16-byte units of the status entry of an accumulator of `bytes` bytes: one up to 8 bytes (PackedState
// and WideState), else MultiState's. The host computes the same (src/launch/launcher.rs, entry_units).
__host__ __device__ constexpr int entry_units_for(int bytes) { return bytes <= 8 ? 1 : (bytes + 7) / 8; }

// Accumulators of other sizes (user operators compiled at run time, src/rtc: up to 32 bytes): one entry of
// UNITS 16-byte units per tile, words[2·UNITS·t ..). Each 64-bit word is tag << 32 | 32 bits of the value
// (low bits first), so every word says on its own which write it came from: WideState's format on more
// units (WideState is the case of one unit). A reader loads every unit, one vector access each, all issued
// before any is tested, and accepts the entry only when every word carries the same tag, which only one
// write of a launch can have left (torn): a partly overwritten or partly visible entry reads as X and is
// polled again. Entries are UNITS times wider, so a region holds status_tiles / UNITS of them and the
// anchors of the deterministic look-back sit at the top of that count (anchor_entry in lookback.cuh);
// the host sizes the regions for it and passes UNITS in the launch's flags (entry_units).
template <class A, bool ORDERED> struct MultiState {
    static constexpr int PIECES = (int)(sizeof(A) + 3) / 4;
    static constexpr int UNITS = (PIECES + 1) / 2;
    static_assert(UNITS <= LB_MAX_ENTRY_UNITS, "status entries hold accumulators of at most 32 bytes");
    static_assert(UNITS == entry_units_for((int)sizeof(A)), "the host's status_units (src/plan.rs) must agree");
    uint64_t* words;
    unsigned epoch;

    __device__ __forceinline__ void publish(uint64_t tile, unsigned state, A value) const {
        uint32_t piece[2 * UNITS] = {};
        memcpy(piece, &value, sizeof(A));
        const uint64_t tag = (uint64_t)make_tag(epoch, state) << 32;
        uint64_t* entry = words + 2 * UNITS * tile;
#pragma unroll
        for (int u = 0; u < UNITS; ++u) st_pair<ORDERED>(entry + 2 * u, U64Pair{tag | piece[2 * u], tag | piece[2 * u + 1]});
    }
    __device__ __forceinline__ unsigned read(uint64_t tile, A& value) const {
        const uint64_t* entry = words + 2 * UNITS * tile;
        U64Pair w[UNITS];
#pragma unroll
        for (int u = 0; u < UNITS; ++u) w[u] = ld_pair<ORDERED>(entry + 2 * u);
        const unsigned tag = (unsigned)(w[0].lo >> 32);
        bool same = true;
#pragma unroll
        for (int u = 0; u < UNITS; ++u) same &= (unsigned)(w[u].lo >> 32) == tag && (unsigned)(w[u].hi >> 32) == tag;
        if (!same) return STATUS_X;
        const unsigned state = tag_state(tag, epoch);
        if (state != STATUS_X) {
            uint32_t piece[2 * UNITS];
#pragma unroll
            for (int u = 0; u < UNITS; ++u) {
                piece[2 * u] = (uint32_t)w[u].lo;
                piece[2 * u + 1] = (uint32_t)w[u].hi;
            }
            memcpy(&value, piece, sizeof(A));
        }
        return state;
    }
};

// The status representation for an accumulator type, with or without release/acquire ordering.
template <class A, bool ORDERED, int FORMAT = (sizeof(A) == 1 || sizeof(A) == 2 || sizeof(A) == 4) ? 0
                                              : sizeof(A) == 8                                      ? 1
                                                                                                    : 2>
struct StateFor {
    using type = PackedState<A, ORDERED>;
    static __device__ __forceinline__ type make(uint64_t* words, unsigned epoch) { return {words, epoch}; }
};
template <class A, bool ORDERED> struct StateFor<A, ORDERED, 1> {
    using type = WideState<A, ORDERED>;
    static __device__ __forceinline__ type make(uint64_t* words, unsigned epoch) { return {words, epoch}; }
};
template <class A, bool ORDERED> struct StateFor<A, ORDERED, 2> {
    using type = MultiState<A, ORDERED>;
    static __device__ __forceinline__ type make(uint64_t* words, unsigned epoch) { return {words, epoch}; }
};

// Dynamic tile ids (invariant 4): tiles are numbered in the order blocks start, not by blockIdx.x, so a
// block only ever waits for tiles already taken by blocks that are running, whatever order the hardware
// (or MPS, or a debugger) schedules blocks in.
//
// Launch word (LookbackParams::header): round << 32 | ids taken so far by this launch. A block's ticket is
// the word its atomic increment returned: the low half is its tile id, the high half the launch's round
// (0..2·255), which gives the epoch (round % 255 + 1) and the status region (round / 255). Every launch
// takes a number of ids it can compute on the device (`takers`: one per block for the classic agents;
// tiles plus one per block for the persistent engine, whose every block ends on a failed take), and the
// block that takes the last one stores the next round with no ids taken: no id of this launch is taken
// after it, and the next launch is ordered after this one by the stream. So nothing about the counter or
// the epoch is baked into the parameters, and a replayed launch finds the state its predecessor left.
enum : uint32_t { EPOCHS = 255, ROUNDS = 2 * EPOCHS };

__device__ __forceinline__ uint64_t take_ticket(const LookbackParams& lb, uint64_t takers) {
    const uint64_t ticket = atomicAdd((unsigned long long*)lb.header, 1ull);
    if ((ticket & 0xffffffffu) == takers - 1) st_relaxed(lb.header, (((ticket >> 32) + 1) % ROUNDS) << 32);
    return ticket;
}
__device__ __forceinline__ uint64_t ticket_tile(uint64_t ticket) { return ticket & 0xffffffffu; }
__device__ __forceinline__ unsigned ticket_epoch(uint64_t ticket) { return (unsigned)(ticket >> 32) % EPOCHS + 1; }
// A region is 2 · status_tiles words whatever the launch's entry format, so that launches of different
// formats in one workspace agree on where each region lies (a region is cleared, and told from the other,
// by that geometry alone).
__device__ __forceinline__ uint64_t region_words(const LookbackParams& lb) { return 2 * (uint64_t)lb.status_tiles; }
// 16-byte units per status entry of this launch (MultiState), from its flags: 1 unless the host set more.
__device__ __forceinline__ unsigned entry_units(const LookbackParams& lb) {
    return ((lb.flags >> LB_ENTRY_UNITS_SHIFT) & LB_ENTRY_UNITS_MASK) + 1;
}
__device__ __forceinline__ uint64_t* ticket_status(const LookbackParams& lb, uint64_t ticket) {
    return lb.status + ((ticket >> 32) >= EPOCHS ? region_words(lb) : 0);
}

// The first launch of a region (round 0 or 255) clears the other region, last used by the launches of
// the previous 255 rounds (all finished: stream order) and next used 255 launches later; every thread of
// the grid stores a share. Any block, whatever its tile or role, may run it once it knows the round.
__device__ __forceinline__ void clear_idle_region(const LookbackParams& lb, uint64_t ticket) {
    const unsigned round = (unsigned)(ticket >> 32);
    if (round % EPOCHS != 0) return;
    uint4* idle = reinterpret_cast<uint4*>(lb.status + (round >= EPOCHS ? 0 : region_words(lb)));
    const uint64_t units = region_words(lb) / 2;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < units; i += (uint64_t)gridDim.x * blockDim.x)
        idle[i] = make_uint4(0, 0, 0, 0);
}

// The items of a launch: the host's `n` (the capacity its grid was sized for), or the count in device
// memory when the call was sized on the device, bounded by that capacity. The count was written before
// the launch and nothing writes it during it (the host checks it is no output), so a cached load is right.
__device__ __forceinline__ uint64_t launch_items(const LookbackParams& lb, uint64_t n) {
    return lb.items ? min(__ldg(lb.items), n) : n;
}

// What thread 0 of a classic block leaves in shared memory for the block: its ticket and the launch's items.
struct TileTicket {
    uint64_t word;
    uint64_t items;
};

// What a block of the classic agents works on: its tile, the launch's items, and the status words and
// epoch of the launch.
struct BlockTile {
    uint64_t tile;
    uint64_t n;
    uint64_t* status;
    unsigned epoch;
    // Tiles past the launch's items (a call sized on the device) take part in the launch word and the
    // region clearing, and do nothing else.
    __device__ __forceinline__ bool idle(uint64_t tile_items) const { return tile * tile_items >= n && tile > 0; }
};

// Every thread, after the barrier that publishes thread 0's ticket.
__device__ __forceinline__ BlockTile block_tile(const TileTicket& t, const LookbackParams& lb) {
    clear_idle_region(lb, t.word);
    return BlockTile{ticket_tile(t.word), t.items, ticket_status(lb, t.word), ticket_epoch(t.word)};
}

// Dynamic ids put a round trip before a block's first load: the atomic must return before the block knows
// which tile to read. Blocks start in about blockIdx order, so tile blockIdx.x is about to be taken by this
// block or by one that started beside it; asking L2 for that tile's `tile_bytes` of an array of `bytes`
// bytes while the atomic is in flight overlaps the DRAM read with the round trip. A hint only: nothing
// depends on which block takes the tile. The range is clipped to whole 16-byte units inside the array, as
// the bulk prefetch requires (sm_90+; elsewhere nothing is prefetched); an array of 0 bytes is skipped.
// Asks L2 for the whole 16-byte units of [p, p + bytes) (sm_90+; elsewhere nothing): a hint only.
__device__ __forceinline__ void prefetch_l2(const void* p, uint64_t bytes) {
#if __CUDA_ARCH__ >= 900
    const uintptr_t lo = ((uintptr_t)p + 15) & ~(uintptr_t)15;
    const uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)15;
    if (hi > lo) asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(lo), "r"((unsigned)(hi - lo)) : "memory");
#endif
}

// (Its own arithmetic rather than prefetch_l2's: the selection kernels' code stays as measured.)
__device__ __forceinline__ void prefetch_guessed_tile(const void* array, uint64_t bytes, uint64_t tile_bytes) {
#if __CUDA_ARCH__ >= 900
    const uintptr_t base = (uintptr_t)array;
    const uint64_t begin = min((uint64_t)blockIdx.x * tile_bytes, bytes);
    const uintptr_t lo = (base + begin + 15) & ~(uintptr_t)15;
    const uintptr_t hi = (base + min(begin + tile_bytes, bytes)) & ~(uintptr_t)15;
    if (hi > lo) asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(lo), "r"((unsigned)(hi - lo)) : "memory");
#endif
}

// One input array of a tile, for take_tile's prefetch: its size and a tile's size, in bytes.
struct TileArray {
    const void* data;
    uint64_t bytes;
    uint64_t tile_bytes;
};

// Thread 0 of a classic block: its ticket (one id per block) and the launch's items, with the guessed tile
// of each input array prefetched while the atomic is in flight when the launcher asks for it
// (LB_PREFETCH_GUESS: not for grids that fill the GPU in one wave, where it measured slower; src/plan.rs).
// The device count, if any, is loaded before the atomic so that both round trips overlap.
__device__ __forceinline__ void take_tile(TileTicket& out, const LookbackParams& lb, uint64_t n, const TileArray& a,
                                          const TileArray& b = {}) {
    const uint64_t items = launch_items(lb, n);
    if (lb.flags & LB_PREFETCH_GUESS) {
        prefetch_guessed_tile(a.data, a.bytes, a.tile_bytes);
        prefetch_guessed_tile(b.data, b.bytes, b.tile_bytes);
    }
    out.word = take_ticket(lb, gridDim.x);
    out.items = items;
}

}  // namespace lookback
