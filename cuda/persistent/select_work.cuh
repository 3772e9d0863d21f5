// Compaction and partitions on the persistent engine (persistent/engine.cuh, sm_90+), one Work compiled as three
// kernel families, each with its own tuning row (ALGO_):
// - Algo::select: select_if and unique (MODE_COMPACT, out of place or in place) and count_if (MODE_COUNT);
// - Algo::partition: the three partition layouts, and MODE_COUNT for the stable partition's first pass;
// - Algo::flagged: select_flagged's compaction (out of place or in place), the flags a side stream of the
//   engine (one byte per item after the tile's items in its ring slot, persistent/engine.cuh) and the items
//   moved as bits (T is Bits<size>::type).
// The partitions have kernels of their own because they copy every item out, not only the selected ones:
// the select row's writer warps, which made compaction 9-11 % faster, made them 2.5-6 % slower (2026-12-01
// ), and a runtime switch between the two paths in one kernel made the 2- and 8-byte kernels spill
// (tuning.cuh has the measurements).
// The mask-only mode stays on the classic agent (classic/select.cuh). `handles(p)` says which modes a kernel
// was compiled for; its entry point traps on any other (the host never launches one).
//
// A tile reduces to its number of selected items. As soon as its aggregate is published, each warp
// stages its own items, still in registers from the reduce, over its own part of the ring slot: selected
// items at the front in order, rejected ones (partitions) after them in order. Once the tile's prefix is
// known, its part is copied out with coalesced item-wide stores at `prefix + warp's part` (rejected: at
// their rank among rejected items), by the engine's writer warps (write_part; scan_tile, the warp's own
// copy-out, serves the partitions and select_flagged, whose tuning rows have none).
// One warp scan of all its rows' counts, packed into one word, gives every item its place (a scan per
// row was four times the shuffle latency, on every tile).
//
// In place (`out == in`): every output index is at most its input index, and the engine writes a tile
// only after every earlier tile's bulk copy has completed (persistent/engine.cuh, "Ordering"); the status
// words use release/acquire then (CountState::ordered), published by the engine's publisher warp. unique
// also reads the item before the tile from global memory (in `on_load`, before the tile's `full` phase
// completes, so before the tile's aggregate is published); the only earlier write that can reach it
// writes back the value already there (see classic/select.cuh).
#pragma once
#include "../classic/select.cuh"
#include "engine.cuh"
#include "../core/shared_cursor.cuh"

namespace lookback {

// `Pred` decides selection by predicate (core/predicate.cuh): the launch's program, or user code. `Eq`
// decides unique's runs, as in the classic agent (IeeeDiffer, classic/select.cuh).
template <class T, Algo ALGO_ = Algo::select, class Pred = ProgramPredicate, class Eq = IeeeDiffer>
struct PipeSelectWork : PipeWorkDefaults {
    static_assert(ALGO_ == Algo::select || ALGO_ == Algo::partition || ALGO_ == Algo::flagged,
                  "a selection kernel family");
    static constexpr Algo ALGO = ALGO_;
    // Flagged selection's slots hold the flags too (its own tuning row: tuning.cuh).
    static constexpr bool FLAGS = ALGO == Algo::flagged;
    // Whether the kernel's layouts are compaction's (select, flagged) rather than the partitions'.
    static constexpr bool COMPACTS = ALGO != Algo::partition;
    static constexpr int SIDE_BYTES = FLAGS ? 1 : 0;
    using Params = SelectParams;
    using Op = OpSum;
    using A = uint64_t;
    // How the look-ahead reads the status words, per launch (i32 at 2^28 on the H200, benches/log
    // 2026-12-01; serial → the choice): count_if clamped batches, 415 → 268 µs (it waits for no prefix,
    // so the look-ahead's pace was its limit); out-of-place compaction predicated batches, select_if 485 →
    // 459, 1 % 425 → 394, unique 456 → 423. In place stays serial (predicated 493 → 563, clamped equal),
    // and so do the partitions (predicated equal within noise, in the stable partition's second pass).
    // In place the engine reads serially whatever this says (the state is ordered).
    static __device__ __forceinline__ AheadReads ahead_reads(const Params& p) {
        if (FLAGS) return AheadReads::predicated;  // compaction only
        if (p.mode == MODE_COUNT) return AheadReads::clamped;
        return COMPACTS ? AheadReads::predicated : AheadReads::serial;
    }
    using State = CountState;
    static constexpr int ITEM_BYTES = sizeof(T);
    static constexpr bool WRITES_RING = true;
    static constexpr bool PUBLISH_WARP = true;
    using Engine = PipeEngine<PipeSelectWork>;  // complete only after this class: use Shape in its body
    using Shape = PipeTuning<ALGO>;
    static constexpr int CPL = Shape::CHUNKS_PER_LANE;
    static constexpr int E = 16 / sizeof(T);                           // items per chunk
    static constexpr int CG = CPL < 32 / E ? CPL : 32 / E;             // chunks per mask word
    static constexpr int G = CG * E;                                   // items per mask word (≤ 32)
    static constexpr int MW = CPL / CG;                                // mask words per lane
    static constexpr int WARP_ITEMS = 32 * CPL * E;
    static constexpr uint32_t CHUNK_BITS = E == 32 ? ~0u : (1u << E) - 1;
    // The warp scan of row counts: row j's count (≤ E) at bits [j·F, (j+1)·F), wide enough for the
    // warp's total of one row (≤ 32·E).
    static constexpr int F = E == 16 ? 10 : E == 8 ? 9 : E == 4 ? 8 : 7;
    using Packed = std::conditional_t<(CPL * F <= 32), uint32_t, uint64_t>;
    static constexpr Packed FIELD = ((Packed)1 << F) - 1;
    union Chunk {
        uint4 vec;
        T items[E];
    };
    struct Slot {
        uint32_t selected[Shape::COMPUTE_WARPS];  // each warp's selected items, staged by prepare_tile
        T before;                                 // unique: the item before the tile
        uint64_t known_total;                     // stable partition: the number selected
    };
    // A thread's chunks and selection masks (bit k of word g: item k of its chunk group g), kept in
    // registers from the reduce to the staging (prepare_tile) right after the tile's aggregate is out.
    struct Kept {
        Chunk c[CPL];
        uint32_t masks[MW];
    };

    static __device__ __forceinline__ State state(const Params& p, uint64_t* status, unsigned epoch) {
        return State{status, epoch, p.in == p.out};
    }
    static __device__ __forceinline__ bool ordered(const State& s) { return s.ordered; }
    static __device__ __forceinline__ State unordered(const State& s) { return State{s.words, s.epoch, false}; }
    // A warp's count fits 32 bits (≤ 32 lanes × 32 items): one redux instruction.
    template <class, class X> static __device__ __forceinline__ X warp_sum(X x) {
        return __reduce_add_sync(0xffffffffu, (uint32_t)x);
    }
    // A tile's count fits 32 bits too: warp w's exclusive part and the tile's total are two redux
    // instructions (the engine's default, a scan of 64-bit values, was ~55 instructions per warp per tile
    // with the named barrier before it: ncu, benches/log 2026-12-01).
    template <class, int WARPS, class X>
    static __device__ __forceinline__ void scan_warp_totals(const X* totals, int w, X& exclusive, X& aggregate) {
        const int lane = (int)lane_id();
        const uint32_t t = lane < WARPS ? (uint32_t)totals[lane] : 0u;
        exclusive = __reduce_add_sync(0xffffffffu, lane < w ? t : 0u);
        aggregate = __reduce_add_sync(0xffffffffu, t);
    }
    // count_if needs the last tile's prefix only (for the total).
    static __device__ __forceinline__ bool needs_prefix(const Params& p) { return FLAGS || p.mode != MODE_COUNT; }
    // The modes this kernel family was compiled for (its entry point traps on the others).
    static __device__ __forceinline__ bool handles(const Params& p) {
        if (FLAGS) return p.mode == MODE_COMPACT;
        if (p.mode == MODE_COUNT) return true;
        return COMPACTS ? p.mode == MODE_COMPACT
                        : p.mode == MODE_PARTITION_REVERSE || p.mode == MODE_PARTITION_SPLIT ||
                              p.mode == MODE_PARTITION_STABLE;
    }
    static __device__ __forceinline__ const void* side_input(const Params& p) { return p.flags; }
    static __device__ __forceinline__ A initial(const Params&) { return 0; }
    static __device__ __forceinline__ void finish(const Params& p, A total) { *p.num_selected = total; }

    // Load lane, while the tile's bulk copy is in flight: the global reads that would otherwise stall a
    // compute warp (and, through the next barrier, all of them) for an HBM round trip on every tile.
    static __device__ __forceinline__ void on_load(const Params& p, Slot& slot, uint64_t start, uint64_t*) {
        if (FLAGS) return;
        if (p.source == SOURCE_UNIQUE && start > 0) slot.before = static_cast<const T*>(p.in)[start - 1];
        if (!COMPACTS && p.mode == MODE_PARTITION_STABLE) slot.known_total = *p.known_total;
    }

    // Chunk j of this lane: whole from the ring in a full tile, item by item in the last one. FULL is
    // `valid == TILE_ITEMS`, decided once per tile by the callers (a test per chunk compiled to a branch
    // around every chunk's load).
    template <bool FULL>
    static __device__ __forceinline__ Chunk chunk_of(const Params& p, const uint4* tile, uint64_t start, int valid,
                                                     int j) {
        Chunk c;
        if (FULL) {
            c.vec = tile[Engine::chunk_index(j)];
        } else {
            const T* in = static_cast<const T*>(p.in) + start;
            const int first = Engine::chunk_index(j) * E;
#pragma unroll
            for (int e = 0; e < E; ++e) c.items[e] = Engine::partial_item(tile, in, first + e, valid, T());
        }
        return c;
    }

    // unique: the item just before chunk j of this lane (from the ring, or the previous tile's last item).
    // FULL as in chunk_of.
    template <bool FULL>
    static __device__ __forceinline__ bool first_differs(const Params& p, const Slot& slot, const uint4* tile,
                                                         uint64_t start, int valid, int j, T first_item) {
        const int i = Engine::chunk_index(j) * E;
        if (i == 0) return start == 0 || Eq::differ(slot.before, first_item);
        const T* in = static_cast<const T*>(p.in) + start;
        const T before = FULL ? reinterpret_cast<const T*>(tile)[i - 1]
                              : Engine::partial_item(tile, in, i - 1, valid, T());
        return Eq::differ(before, first_item);
    }

    // FLAGS: the flags of chunk j of this lane as E bits (bit e: item e's flag is not zero), from the
    // slot's side items; past the bulk-copied part of a partial tile from global memory, 0 past its end.
    template <bool FULL>
    static __device__ __forceinline__ uint32_t chunk_flags(const Params& p, const uint4* tile, uint64_t start,
                                                           int valid, int j) {
        const int first = Engine::chunk_index(j) * E;
        const uint8_t* side = reinterpret_cast<const uint8_t*>(Engine::side_items(tile));
        if (FULL && E == 4) {
            // Four flag bytes in one load: 0x01 in each nonzero byte, then gathered into bits 0-3.
            uint32_t v = __vcmpne4(reinterpret_cast<const uint32_t*>(side)[first / 4], 0u) & 0x01010101u;
            v |= v >> 7;
            return (v | v >> 14) & 0xfu;
        }
        uint32_t bits = 0;
#pragma unroll
        for (int e = 0; e < E; ++e) {
            const uint8_t f = FULL ? side[first + e]
                                   : Engine::partial_item(Engine::side_items(tile), p.flags + start, first + e, valid,
                                                          (uint8_t)0);
            bits |= (uint32_t)(f != 0) << e;
        }
        return bits;
    }

    static __device__ __forceinline__ A reduce_tile(const Params& p, Slot& slot, const uint4* tile, uint64_t start,
                                                    int valid, Kept& kept) {
        return valid == Engine::TILE_ITEMS ? reduce_rows<true>(p, slot, tile, start, valid, kept)
                                           : reduce_rows<false>(p, slot, tile, start, valid, kept);
    }

    template <bool FULL>
    static __device__ __forceinline__ A reduce_rows(const Params& p, const Slot& slot, const uint4* tile,
                                                    uint64_t start, int valid, Kept& kept) {
        uint32_t count = 0;
#pragma unroll
        for (int g = 0; g < MW; ++g) {
            T x[G];
#pragma unroll
            for (int c = 0; c < CG; ++c) {
                kept.c[g * CG + c] = chunk_of<FULL>(p, tile, start, valid, g * CG + c);
#pragma unroll
                for (int e = 0; e < E; ++e) x[c * E + e] = kept.c[g * CG + c].items[e];
            }
            uint32_t mask = 0;
            if constexpr (FLAGS) {
#pragma unroll
                for (int c = 0; c < CG; ++c) mask |= chunk_flags<FULL>(p, tile, start, valid, g * CG + c) << (c * E);
            } else if (p.source == SOURCE_PRED) {
                mask = Pred::mask(p.pred, x);
            } else {
#pragma unroll
                for (int k = 0; k < G; ++k) {
                    const bool differs = k % E == 0
                                             ? first_differs<FULL>(p, slot, tile, start, valid, g * CG + k / E, x[k])
                                             : Eq::differ(x[k - 1], x[k]);
                    mask |= (uint32_t)differs << k;
                }
            }
            if (!FULL) {
#pragma unroll
                for (int c = 0; c < CG; ++c) {
                    const int first = Engine::chunk_index(g * CG + c) * E;
                    const int mine = max(0, min(E, valid - first));
                    // 64-bit shift: well defined for mine = 32 (see the ptxas note in classic/select.cuh).
                    mask &= ~(CHUNK_BITS << (c * E)) | ((uint32_t)((1ull << mine) - 1) << (c * E));
                }
            }
            kept.masks[g] = mask;
            count += __popc(mask);
        }
        return count;
    }

    static __device__ __forceinline__ uint32_t field(Packed v, int j) { return (uint32_t)((v >> (j * F)) & FIELD); }

    // Item e of a chunk, e a runtime index: selects among the chunk's words rather than indexing the
    // register array (which would move it to local memory).
    static __device__ __forceinline__ T chunk_item(const Chunk& c, int e) {
        const int byte = e * (int)sizeof(T);
        if constexpr (sizeof(T) == 8) {
            const uint64_t lo = ((uint64_t)c.vec.y << 32) | c.vec.x, hi = ((uint64_t)c.vec.w << 32) | c.vec.z;
            return from_bits<T>(byte < 8 ? lo : hi);
        } else {
            const uint32_t w = byte < 8 ? (byte < 4 ? c.vec.x : c.vec.y) : (byte < 12 ? c.vec.z : c.vec.w);
            return from_bits<T>((typename Bits<sizeof(T)>::type)(w >> ((byte & 3) * 8)));
        }
    }

    // Stages this lane's selected items over the warp's part of the slot, each at its place among the
    // warp's selected items. Every store is predicated, not branched around: a branch on a lane's own bit
    // diverges on every item (SharedCursor: three instructions per item).
    //
    // A warp with few selected items (at most SPARSE_ITEMS, a warp-uniform test) visits only the set bits
    // instead: a select_if of 1 % ran the per-item loop for ~5 items per warp.
    static constexpr uint32_t SPARSE_ITEMS = 32;
    static __device__ __forceinline__ void stage_selected(T* stage, const Chunk (&c)[CPL], const uint32_t (&bits)[CPL],
                                                          const uint32_t (&row_base)[CPL], Packed exclusive,
                                                          uint32_t selected) {
        if (selected <= SPARSE_ITEMS) {
#pragma unroll
            for (int j = 0; j < CPL; ++j) {
                uint32_t pos = row_base[j] + field(exclusive, j);
                for (uint32_t b = bits[j]; b != 0; b &= b - 1) stage[pos++] = chunk_item(c[j], __ffs(b) - 1);
            }
            return;
        }
#pragma unroll
        for (int j = 0; j < CPL; ++j) {
            // At the selected items before this lane's row-j items.
            SharedCursor to(stage + row_base[j] + field(exclusive, j));
#pragma unroll
            for (int e = 0; e < E; ++e) to.put_if(c[j].items[e], bits[j], 1u << e);
        }
    }

    // The partitions: selected items as stage_selected places them, rejected ones after all `selected`,
    // in order (an item's place is its index in the warp's part minus the selected items before it).
    // Items past the end of a partial tile land after every valid item (their index is larger) and are
    // not copied out.
    static __device__ __forceinline__ void stage_partition(T* stage, const Chunk (&c)[CPL],
                                                           const uint32_t (&bits)[CPL],
                                                           const uint32_t (&row_base)[CPL], Packed exclusive,
                                                           uint32_t selected) {
        const int lane = lane_id();
#pragma unroll
        for (int j = 0; j < CPL; ++j) {
            uint32_t pos = row_base[j] + field(exclusive, j);  // selected items before this lane's row-j items
            const uint32_t first_in_warp = 32 * E * j + E * lane;
#pragma unroll
            for (int e = 0; e < E; ++e) {
                const bool keep = (bits[j] >> e) & 1u;
                stage[keep ? pos : selected + first_in_warp + e - pos] = c[j].items[e];
                pos += keep;
            }
        }
    }

    // Right after the tile's aggregate is published, long before its prefix is known: the warp stages
    // its items over its own part of the slot from the registers of its reduce (every warp has read the
    // slot by then: the engine's barrier), so that all scan_tile has left to do once the prefix arrives
    // is the copy-out. (Staging after the prefix, from the chunks read again and masks kept in shared
    // memory, put the row scan and the staging between the prefix and the slot's release on every tile.)
    static __device__ __forceinline__ void prepare_tile(const Params& p, Slot& slot, uint4* tile, uint64_t,
                                                        int, const Kept& kept) {
        if (!FLAGS && p.mode == MODE_COUNT) return;
        const int lane = lane_id();
        uint32_t bits[CPL];
        Packed counts = 0;
#pragma unroll
        for (int j = 0; j < CPL; ++j) {
            bits[j] = (kept.masks[j / CG] >> ((j % CG) * E)) & CHUNK_BITS;
            counts |= (Packed)__popc(bits[j]) << (j * F);
        }
        const Packed inclusive = warp_inclusive_scan<OpSum>(counts);
        const Packed totals = shfl_from(inclusive, 31);
        const Packed exclusive = inclusive - counts;
        uint32_t selected = 0;  // the warp's selected items in rows before j, then in all rows
        uint32_t row_base[CPL];
#pragma unroll
        for (int j = 0; j < CPL; ++j) {
            row_base[j] = selected;
            selected += field(totals, j);
        }
        T* stage = reinterpret_cast<T*>(tile + Engine::chunk_index(0) - lane);
        if constexpr (COMPACTS) stage_selected(stage, kept.c, bits, row_base, exclusive, selected);
        else stage_partition(stage, kept.c, bits, row_base, exclusive, selected);
        if (lane == 0) slot.selected[warp_id()] = selected;
    }

    // Once the prefix is known, without writer warps: the warp's staged items out, coalesced.
    static __device__ __forceinline__ void scan_tile(const Params& p, Slot& slot, uint4* tile, uint64_t start,
                                                     int valid, A carry) {
        if (!FLAGS && p.mode == MODE_COUNT) return;
        // The staging and `selected` were written by other lanes of this warp (prepare_tile); with no
        // tile reduced in between, no barrier has ordered them yet.
        __syncwarp();
        write_part(p, slot, tile, start, valid, (int)warp_id(), carry);
    }

    // The staged items of compute warp `part` out, coalesced, by the calling warp (that compute warp, or
    // a writer warp: persistent/engine.cuh), `carry` the selected items before the part.
    static __device__ __forceinline__ void write_part(const Params& p, const Slot& slot, const uint4* tile,
                                                      uint64_t start, int valid, int part, A carry) {
        if (!FLAGS && p.mode == MODE_COUNT) return;
        const uint32_t selected = slot.selected[part];
        const T* stage = reinterpret_cast<const T*>(tile + part * 32 * CPL);
        copy_out<false>(static_cast<T*>(p.out) + carry, stage, selected);
        if constexpr (COMPACTS) return;
        // Rejected items: those of the part's valid items not selected, at their rank among all rejected.
        const int warp_first = part * WARP_ITEMS;  // the part's first item in the tile
        const uint32_t warp_valid = (uint32_t)max(0, min(WARP_ITEMS, valid - warp_first));
        const uint32_t rejected = warp_valid - min(selected, warp_valid);
        const uint64_t rejected_before = start + warp_first - carry;
        if (p.mode == MODE_PARTITION_REVERSE) {  // downwards from the end: the lowest address is the last one's
            copy_out<true>(static_cast<T*>(p.out) + (engine_items - rejected_before - rejected), stage + selected, rejected);
        } else {
            T* to = p.mode == MODE_PARTITION_SPLIT ? static_cast<T*>(p.out_rejected) + rejected_before
                                                   : static_cast<T*>(p.out) + slot.known_total + rejected_before;
            copy_out<false>(to, stage + selected, rejected);
        }
    }

    // A warp's copy-out of `count` staged items to [to, to + count) (REVERSED: item r to to[count - 1 - r]),
    // in rounds of 32 consecutive destinations that start on a multiple of 32 items: every store
    // instruction then writes within one 128-byte line (i32) and whole sectors but at the range's two ends.
    // A store of 32 items from an arbitrary `to` spans two lines and five sectors, two of them partial:
    // ncu counted 17 % more L2 sectors than the bytes need for select_if at 2^28 (2026-12-01). A count known
    // before the loop lets the compiler unroll it with immediate offsets (`for (i = lane; i < count; i += 32)`
    // tested and branched after every store and rebuilt the 64-bit address each time).
    //
    // Compaction's rounds go out in batches of BATCH: every shared-memory load of a batch, then its stores,
    // so one load latency per batch rather than per round (a store after a load of the same round waited
    // for it, and the next load was not moved above the store: ~30 cycles a round). A writer warp copies
    // several parts in a row, so its copy-out's latency is what keeps each slot taken (persistent/engine.cuh).
    // The partitions, copied out by their compute warps (20 per SM), keep a plain loop: batched, reversed
    // partition i32 at 2^28 was 577 µs against 556-559 (2026-12-02).
    //
    // Up to ALIGNED_FROM items (4 rounds) go out unaligned, in at most 4 predicated loads and stores per
    // lane and no loop: with few rounds the aligned walk's extra round and the loop's set-up cost more than
    // the lines they save (2026-12-01: select_if 1 %, ~5 items per warp, 3 % slower at 2^28 through the
    // loop; unique of runs of 4, ~128 items, 1.4 % slower aligned).
    static constexpr uint32_t ALIGNED_FROM = 4 * 32;
    static constexpr uint32_t BATCH = 8;
    template <bool REVERSED>
    static __device__ __forceinline__ void copy_out(T* to, const T* stage, uint32_t count) {
        const uint32_t lane = lane_id();
        if (count <= ALIGNED_FROM) {  // warp-uniform
            T v[ALIGNED_FROM / 32];
#pragma unroll
            for (uint32_t k = 0; k < ALIGNED_FROM / 32; ++k) {
                const uint32_t d = 32 * k + lane;
                if (d < count) v[k] = stage[d];
            }
#pragma unroll
            for (uint32_t k = 0; k < ALIGNED_FROM / 32; ++k) {
                const uint32_t d = 32 * k + lane;
                if (d < count) to[REVERSED ? count - 1 - d : d] = v[k];
            }
            return;
        }
        const uint32_t shift = (uint32_t)(reinterpret_cast<uintptr_t>(to) / sizeof(T)) % 32;
        T* line = to - shift + lane;  // this lane's destination in round 0
        const uint32_t rounds = (count + shift + 31) / 32;
        if constexpr (!COMPACTS) {
#pragma unroll 4
            for (uint32_t k = 0; k < rounds; ++k) {
                const uint32_t d = 32 * k + lane - shift;  // offset from `to`; wraps below it (then ≥ count)
                if (d < count) line[32 * k] = stage[REVERSED ? count - 1 - d : d];
            }
        } else {
            for (uint32_t k0 = 0; k0 < rounds; k0 += BATCH) {
                // Rounds past the last have d ≥ count (32 · rounds ≥ count + shift): predicated off.
                T v[BATCH];
#pragma unroll
                for (uint32_t i = 0; i < BATCH; ++i) {
                    const uint32_t d = 32 * (k0 + i) + lane - shift;  // as above
                    if (d < count) v[i] = stage[REVERSED ? count - 1 - d : d];
                }
#pragma unroll
                for (uint32_t i = 0; i < BATCH; ++i) {
                    const uint32_t d = 32 * (k0 + i) + lane - shift;
                    if (d < count) line[32 * (k0 + i)] = v[i];
                }
            }
        }
    }
};

}  // namespace lookback
