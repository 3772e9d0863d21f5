// One tile of the run-based primitives whose outputs are written at run heads — reduce_by_key, run-length
// and run-end encoding, unique_by_key — with the items in registers. Semantics are the classic run agent's
// (classic/runs.cuh), output for output; the look-back, its state and the pair operator are that agent's.
//
// Why a tile of its own (benches/log, 2026-12-02). The run agent stages whole input tiles in shared
// memory, reads them back into registers and stages its outputs block-wide; its i32 reduce_by_key and
// run-length encoding reach 0.68 and 0.57 of memcpy at 2^28. The same design lost 20-44 % to a register
// tile for the scans by key of 8-byte values (classic/scan_by_key_tile.cuh, 2026-12-02). Here warp w owns 32·IPT
// consecutive items and lane l IPT of them; keys (and values) are loaded warp-striped in 16-byte units, all
// in flight together, and transposed to the lanes' items through a per-warp shared buffer.
//
// Everything is written at heads, so no item needs the key after it. Run r's head writes run r's key and
// the *previous* run's result: its reduction (the running value before the head), its length (the head's
// index minus the previous head's) or its end (the head's index). The input's last run is closed by the
// last tile, with the run count. Each warp stages its heads' outputs at warp-local slots in its own shared
// buffer before the look-back — only the tile's first head needs the tile's exclusive prefix for its value,
// and it is fixed while storing — and stores them coalesced once the tile's run count is known.
//
// Non-trivial runs (NON_TRIVIAL) are written at heads too, and counted at second items: a run is longer
// than 1 exactly when its second item is not a head, which needs only the two keys before an item, so the
// count is as local as the head count. The second item writes the run's offset (the item before it) and
// the head that ends the run writes its length — a head h closes a non-trivial run exactly when item h-1
// is not a head. The last tile closes the input's last run if it is still open.
//
// Not in place (the Rust layer rejects overlapping buffers): a warp reads the key before its first item,
// which another warp or tile may own.
#pragma once
#include "runs.cuh"

namespace lookback {

// Transposes between a warp's striped 16-byte units (lane l holds units 32c + l) and each lane's UPL
// consecutive units, through a per-warp shared buffer. With an even UPL the blocked phase would hit the
// same banks (lanes UPL·16 bytes apart): one unit of padding every 8 keeps both phases conflict-free.
template <int UPL> struct WarpUnits {
    static constexpr bool PAD = UPL % 2 == 0;
    static constexpr int UNITS = 32 * UPL;
    static constexpr int SLOTS = UNITS + (PAD ? UNITS / 8 : 0);
    static __device__ __forceinline__ int slot(int u) { return PAD ? u + u / 8 : u; }

    // Units 32c + lane of the warp's items from `base`: items at or past `valid` read as zero bits.
    template <class T>
    static __device__ __forceinline__ void load(const T* base, int valid, bool full, uint4 (&units)[UPL]) {
        constexpr int PER = 16 / (int)sizeof(T);
        const int lane = (int)lane_id();
#pragma unroll
        for (int c = 0; c < UPL; ++c) {
            const int u = c * 32 + lane;
            if (full) {
                units[c] = reinterpret_cast<const uint4*>(base)[u];
            } else {
                T items[PER];
#pragma unroll
                for (int e = 0; e < PER; ++e) items[e] = u * PER + e < valid ? base[u * PER + e] : from_bits<T>(0);
                memcpy(&units[c], items, sizeof(uint4));
            }
        }
    }
    template <class T, int N>
    static __device__ __forceinline__ void to_blocked(uint4* buf, const uint4 (&striped)[UPL], T (&out)[N]) {
        static_assert(N * sizeof(T) == UPL * sizeof(uint4), "a lane's items fill its units");
        constexpr int PER = 16 / (int)sizeof(T);
        const int lane = (int)lane_id();
#pragma unroll
        for (int c = 0; c < UPL; ++c) buf[slot(c * 32 + lane)] = striped[c];
        __syncwarp();
#pragma unroll
        for (int j = 0; j < UPL; ++j) {
            const uint4 u = buf[slot(lane * UPL + j)];
            memcpy(&out[j * PER], &u, sizeof(uint4));
        }
        __syncwarp();
    }
};

// The tile of HeadsAgent<KB, V, ..., VALUED> from its tuning row (tuning.cuh: `heads` with a value column,
// `heads_encode` without, keyed by the larger column's bytes): THREADS × IPT items, compiled for MIN_BLOCKS
// resident blocks — 5 with values (192 × 20: 63 registers, 30.8 KB), 6 for the encodings (4-byte keys
// 192 × 32: 56 registers, 36.9 KB; 8-byte keys 192 × 16: 56 registers, 30.8 KB), no spills. The encodings
// stage 16-bit tile-local lengths and indices (STAGE16): 6 KB per warp instead of 8 let 6 blocks of 192
// threads fit (probe, 2026-12-02: 128 × 32 went from 6 to 8 blocks per SM and 7 % faster at 2^28).
template <int KB, class V, bool VALUED> struct HeadsShape {
    static constexpr bool HAS_VALUES = VALUED || !std::is_same_v<V, NoValues>;
    static constexpr int MAXB = HAS_VALUES && (int)sizeof(V) > KB ? (int)sizeof(V) : KB;
    using Shape = typename Tuning<HAS_VALUES ? Algo::heads : Algo::heads_encode, MAXB>::Shape;
    static constexpr int THREADS = Shape::BLOCK_THREADS;
    static constexpr int IPT = Shape::CHUNKS_PER_THREAD * 16 / MAXB;
    static constexpr int MIN_BLOCKS = HAS_VALUES ? 5 : 6;
    static constexpr bool STAGE16 = !HAS_VALUES;
};

// KB: key bytes. V: the value type (NoValues: the encodings). VALUED: values are reduced with Op
// (reduce_by_key); otherwise carried (unique_by_key) or absent. Shape: THREADS, IPT, MIN_BLOCKS (the
// probe passes its own). NON_TRIVIAL: the non-trivial runs (no values; see HeadsNonTrivial).
template <int KB, class V, class Op, bool VALUED, class Shape = HeadsShape<KB, V, VALUED>, bool NON_TRIVIAL = false>
struct HeadsAgent {
    using K = typename Bits<KB>::type;
    static constexpr bool HAS_VALUES = VALUED || !std::is_same_v<V, NoValues>;
    static constexpr int VB = HAS_VALUES ? (int)sizeof(V) : 0;
    static constexpr int BLOCK_THREADS = Shape::THREADS;
    static constexpr int WARPS = BLOCK_THREADS / 32;
    static constexpr int IPT = Shape::IPT;
    static constexpr int WARP_ITEMS = 32 * IPT;
    static constexpr int TILE_ITEMS = BLOCK_THREADS * IPT;
    static constexpr int MIN_BLOCKS = Shape::MIN_BLOCKS;
    static_assert(IPT <= 32, "a lane's heads are a 32-bit mask");
    static_assert(IPT * KB % 16 == 0 && IPT * VB % 16 == 0, "a lane's keys and values fill 16-byte units");
    static_assert(!NON_TRIVIAL || !HAS_VALUES, "non-trivial runs have no values");
    static constexpr int KUPL = IPT * KB / 16;
    static constexpr int VUPL = HAS_VALUES ? IPT * VB / 16 : 1;
    using KeyUnits = WarpUnits<KUPL>;
    using ValueUnits = WarpUnits<VUPL>;

    using A = std::conditional_t<VALUED, typename Acc<V>::type, uint64_t>;
    using Pair = RunPair<A>;
    using Local = LocalPair<std::conditional_t<VALUED, A, uint32_t>>;
    using POp = std::conditional_t<VALUED, PairOp<Op, true>, PairOp<OpMax, false>>;
    using State = WidePairState<Pair, VALUED && sizeof(A) == 8>;
    // What a head stages beside its key: the previous run's reduction (reduce), its own value (unique), or
    // a tile-local index or length (the encodings: below TILE_ITEMS, so 16 bits hold it when STAGE16).
    static_assert(TILE_ITEMS <= 65536, "tile-local indices fit 16 bits");
    using S = std::conditional_t<HAS_VALUES, V, std::conditional_t<Shape::STAGE16, uint16_t, uint32_t>>;
    // Non-trivial runs: a staged length whose run began before the tile holds the closing head's
    // tile-local index with this bit set; it is completed with the exclusive prefix while storing.
    static constexpr uint32_t BEFORE_TILE = 1u << (8 * sizeof(S) - 1);
    static_assert(HAS_VALUES || (uint32_t)TILE_ITEMS <= BEFORE_TILE, "tile-local indices leave the top bit free");

    // Per warp: the transposes' units, then (the same bytes) the staged keys and S's of its heads (non-trivial
    // runs: S's in both parts, offsets in the keys' — a warp has at most WARP_ITEMS / 2 + 1 of each).
    static constexpr int XPOSE_UNITS = KeyUnits::SLOTS > (HAS_VALUES ? ValueUnits::SLOTS : 0)
                                           ? KeyUnits::SLOTS
                                           : ValueUnits::SLOTS;
    static constexpr int STAGE_UNITS = (WARP_ITEMS * (KB + (int)sizeof(S)) + 15) / 16;
    static constexpr int WARP_UNITS = XPOSE_UNITS > STAGE_UNITS ? XPOSE_UNITS : STAGE_UNITS;
    struct Storage {
        uint4 warp[WARPS][WARP_UNITS];
        BlockScanStorage<Local, WARPS> scan;
        Pair exclusive;
        TileTicket ticket;
        bool last_open;  // non-trivial runs: the input's last item is not a head (its run is not closed)
    };

    static __device__ __forceinline__ void put_index(void* base, uint64_t at, uint64_t x, uint32_t bytes) {
        if (bytes == 4) static_cast<uint32_t*>(base)[at] = (uint32_t)x;
        else static_cast<uint64_t*>(base)[at] = x;
    }

    // Where a tile is and which of its items a warp holds.
    struct Place {
        uint64_t start;  // the tile's first item
        int valid;       // items in the tile
        int wfirst;      // the warp's first item, tile-local
        int wvalid;      // items of the warp
        bool full;       // a whole tile of aligned columns: moved in units
    };
    static __device__ __forceinline__ Place place(const RunsParams& p, const BlockTile& bt) {
        Place at;
        at.start = bt.tile * (uint64_t)TILE_ITEMS;
        at.valid = (int)min((uint64_t)TILE_ITEMS, bt.n - at.start);
        at.wfirst = (int)warp_id() * WARP_ITEMS;
        at.wvalid = max(0, min(WARP_ITEMS, at.valid - at.wfirst));
        // The last tile goes item by item (see classic/scan_by_key_tile.cuh for why the test is per tile).
        at.full = at.valid == TILE_ITEMS && ((uintptr_t)p.keys | (HAS_VALUES ? (uintptr_t)p.values : 0)) % 16 == 0;
        return at;
    }

    // A warp's loaded part of a tile: its keys' and values' units, and the key before its first item.
    struct Loaded {
        uint4 ku[KUPL];
        uint4 vu[VUPL];
        K before;
        bool before_head;  // non-trivial runs: the item before the warp's first is a head (or there is none)
    };
    // 1. Keys (and values) in flight together, and the key before the warp's first item.
    static __device__ __forceinline__ void load(const RunsParams& p, const BlockTile& bt, Loaded& in) {
        const Place at = place(p, bt);
        const uint64_t wstart = at.start + at.wfirst;
        const K* keys = static_cast<const K*>(p.keys) + wstart;
        KeyUnits::load(keys, at.wvalid, at.full, in.ku);
        if constexpr (HAS_VALUES) ValueUnits::load(static_cast<const V*>(p.values) + wstart, at.wvalid, at.full, in.vu);
        in.before = K(0);
        if (lane_id() == 0 && wstart > 0 && at.wvalid > 0) in.before = keys[-1];
        if constexpr (NON_TRIVIAL) {
            in.before_head = true;
            if (lane_id() == 0 && wstart > 1 && at.wvalid > 0) {
                const K prev[1] = {keys[-1]};
                in.before_head = differ_bits<KB>(p, keys[-2], prev) & 1u;
            }
        }
    }

    // One tile per block.
    static __device__ __forceinline__ void run(const RunsParams& p) {
        __shared__ Storage s;
        const LookbackParams& lb = p.lb;
        if (threadIdx.x == 0) {
            take_tile(s.ticket, lb, p.n, {p.keys, p.n * KB, TILE_ITEMS * (uint64_t)KB},
                      {p.values, HAS_VALUES ? p.n * VB : 0, TILE_ITEMS * (uint64_t)VB});
        }
        __syncthreads();
        const BlockTile bt = block_tile(s.ticket, lb);
        if (bt.idle(TILE_ITEMS)) return;
        if (bt.n == 0) {  // a device count of 0: no runs
            if (threadIdx.x == 0) *p.num_runs = 0;
            return;
        }
        Loaded in;
        load(p, bt, in);
        process(p, s, bt, in);
    }

    // Steps 2-6 of `tile` from its loaded units.
    static __device__ __forceinline__ void process(const RunsParams& p, Storage& s, const BlockTile& bt, const Loaded& in) {
        const LookbackParams& lb = p.lb;
        const uint64_t tile = bt.tile, n = bt.n;
        const Place at = place(p, bt);
        const uint64_t start = at.start;
        const int valid = at.valid, wfirst = at.wfirst, wvalid = at.wvalid;
        const uint64_t wstart = start + wfirst;
        const int warp = (int)warp_id(), lane = (int)lane_id();
        uint4* buf = s.warp[warp];

        // 2. Heads, then the values in the lanes' order.
        const int first = lane * IPT;  // the lane's first item, warp-local
        const int mine = max(0, min(IPT, wvalid - first));
        const uint32_t in_range = (uint32_t)((1ull << mine) - 1);  // 64-bit shift: mine may be 32
        K k[IPT];
        KeyUnits::to_blocked(buf, in.ku, k);
        uint32_t heads;
        {
            K prev = shfl_up(k[IPT - 1], 1);
            if (lane == 0) prev = in.before;
            heads = differ_bits<KB>(p, prev, k);
        }
        if (wstart + first == 0) heads |= 1u;
        heads &= in_range;
        // Non-trivial runs: bit j of `seconds` marks a run's second item (item j-1 a head, j not), bit j of
        // `closes` a head that ends a non-trivial run (item j-1 not a head). The input's first item has no
        // item before it: it reads as a head, so the first item closes nothing.
        [[maybe_unused]] uint32_t seconds = 0, closes = 0;
        if constexpr (NON_TRIVIAL) {
            const uint32_t up = shfl_up(heads, 1) >> (IPT - 1) & 1u;
            const uint32_t after_head = heads << 1 | (lane == 0 ? (uint32_t)in.before_head : up);
            seconds = ~heads & after_head & in_range;
            closes = heads & ~after_head;
            if (mine > 0 && wfirst + first + mine == valid && start + valid == n)
                s.last_open = !(heads >> (mine - 1) & 1u);
        }
        [[maybe_unused]] V v[IPT];
        if constexpr (HAS_VALUES) ValueUnits::to_blocked(buf, in.vu, v);

        // 3. The lane's tile-local pair, the block scan, the tile's aggregate published.
        Local own;
        own.count = __popc(NON_TRIVIAL ? seconds : heads);
        if constexpr (VALUED) {
            own.value = since_last_head<Op>(v, heads, in_range);
        } else {
            own.value = heads ? (uint32_t)(wfirst + first + 31 - __clz((int)heads)) + 1u : 0u;  // index + 1
        }
        Local total;
        const Local prefix = block_exclusive_scan<POp>(own, total, s.scan);
        Pair aggregate;
        aggregate.count = total.count;
        if constexpr (VALUED) aggregate.value = total.value;
        else aggregate.value = total.value ? start + total.value - 1 : 0;
        const State state{bt.status, bt.epoch};
        if (threadIdx.x == 0) state.publish(tile, tile == 0 ? STATUS_P : STATUS_A, aggregate);

        // 4. Each head stages its key and what it writes at warp-local slots (the transposes are done: the
        //    buffer is free). The tile's first head stages a tile-local partial value, completed in 6.
        const uint32_t wbase = __shfl_sync(0xffffffffu, prefix.count, 0);  // tile-local slot of the warp's first head
        const uint32_t wruns = __shfl_sync(0xffffffffu, prefix.count + own.count, 31) - wbase;
        K* staged_keys = reinterpret_cast<K*>(buf);
        S* staged = reinterpret_cast<S*>(reinterpret_cast<char*>(buf) + WARP_ITEMS * KB);
        [[maybe_unused]] uint32_t lengths_lo = 1, lengths_hi = 1;  // non-trivial runs: the warp's length slots
        if constexpr (NON_TRIVIAL) {
            // Offsets at the seconds' warp-local slots; lengths at the slot of the run they close plus one
            // (as the other encodings' results), so a warp's lengths take slots lo .. hi: lo is 0 when the
            // warp's first mark closes a run begun before it. Warp-local, so found before the look-back.
            const uint32_t marks = seconds | closes;
            const uint32_t marked = __ballot_sync(0xffffffffu, marks != 0);
            const bool leads_close = closes & marks & (0u - marks);
            if (marked) lengths_lo = 1u - __shfl_sync(0xffffffffu, (uint32_t)leads_close, __ffs(marked) - 1);
            lengths_hi = lengths_lo + __reduce_add_sync(0xffffffffu, (uint32_t)__popc(closes));
            S* staged_offsets = reinterpret_cast<S*>(buf);
            uint32_t r = prefix.count - wbase;
            uint32_t last = prefix.value;  // tile-local index + 1 of the latest head
#pragma unroll
            for (int j = 0; j < IPT; ++j) {
                const uint32_t at = (uint32_t)(wfirst + first + j);
                if (closes >> j & 1u) staged[r] = (S)(last == 0 ? at | BEFORE_TILE : at + 1 - last);
                if (seconds >> j & 1u) staged_offsets[r++] = (S)at;
                last = heads >> j & 1u ? at + 1 : last;
            }
        } else {
            uint32_t r = prefix.count - wbase;
            [[maybe_unused]] A running = prefix.value;  // reduce: the run's value before item j
            [[maybe_unused]] uint32_t last = prefix.value;  // encodings: tile-local index + 1 of the latest head
            const bool ends = p.mode == RUNS_ENDS;
#pragma unroll
            for (int j = 0; j < IPT; ++j) {
                const bool head = (heads >> j) & 1u;
                const uint32_t at = (uint32_t)(wfirst + first + j);
                if (head) {
                    staged_keys[r] = k[j];
                    if constexpr (VALUED) staged[r] = Acc<V>::store(running);
                    else if constexpr (HAS_VALUES) staged[r] = v[j];
                    else staged[r] = (S)(ends || last == 0 ? at : at + 1 - last);
                    ++r;
                }
                if constexpr (VALUED) {
                    const A x = Acc<V>::load(v[j]);
                    running = head ? x : Op::apply(running, x);
                } else if constexpr (!HAS_VALUES) {
                    last = head ? at + 1 : last;
                }
            }
        }

        // 5. Warp 0 looks back: the tile's exclusive prefix (its run count before the tile above all).
        if (warp == 0) {
            Pair exclusive = POp::template identity<Pair>();
            if (tile != 0) {
                exclusive = resolve_prefix<POp, Pair, State, 4>(state, tile, lb, aggregate);
            }
            if (lane == 0) s.exclusive = exclusive;
        }
        __syncthreads();

        // 6. The warp's staged heads, coalesced: keys at their run's slot, results one slot lower (the run
        //    each head closes). Warp-local slot 0 of a warp whose base is 0 is the tile's first head.
        const Pair exclusive = s.exclusive;
        const uint64_t base = exclusive.count + wbase;  // global slot of the warp's first head
        if constexpr (NON_TRIVIAL) {
            // A run's offset is the item before its second (which may be the previous tile's last item).
            const S* staged_offsets = reinterpret_cast<const S*>(buf);
            for (uint32_t i = lane; i < wruns; i += 32)
                put_index(p.out_keys, base + i, start + staged_offsets[i] - 1, p.length_bytes);
            for (uint32_t i = lengths_lo + lane; i < lengths_hi; i += 32) {
                const uint32_t x = staged[i];
                const uint64_t length = x & BEFORE_TILE ? start + (x & ~BEFORE_TILE) - exclusive.value : x;
                put_index(p.out_values, base + i - 1, length, p.length_bytes);
            }
        } else {
            K* out_keys = static_cast<K*>(p.out_keys) + base;
            for (uint32_t i = lane; i < wruns; i += 32) out_keys[i] = staged_keys[i];
            const bool tile_first = wbase == 0;
            if constexpr (VALUED) {
                V* out = static_cast<V*>(p.out_values) + base;
                for (uint32_t i = lane; i < wruns; i += 32) {
                    if (base + i == 0) continue;  // the input's first head closes no run
                    V x = staged[i];
                    if (tile_first && i == 0) x = Acc<V>::store(Op::apply(exclusive.value, Acc<V>::load(x)));
                    out[(int64_t)i - 1] = x;
                }
            } else if constexpr (HAS_VALUES) {
                V* out = static_cast<V*>(p.out_values) + base;
                for (uint32_t i = lane; i < wruns; i += 32) out[i] = staged[i];
            } else {
                const bool ends = p.mode == RUNS_ENDS;
                for (uint32_t i = lane; i < wruns; i += 32) {
                    if (base + i == 0) continue;
                    const uint32_t x = staged[i];
                    const uint64_t y = ends ? start + x : (tile_first && i == 0) ? start + x - exclusive.value : x;
                    put_index(p.out_values, base + i - 1, y, p.length_bytes);
                }
            }
        }
        // The last tile closes the input's last run and writes the run count.
        if (threadIdx.x == 0 && start + valid == n) {
            const Pair inclusive = POp::apply(exclusive, aggregate);
            *p.num_runs = inclusive.count;
            if constexpr (NON_TRIVIAL) {
                if (s.last_open) put_index(p.out_values, inclusive.count - 1, n - inclusive.value, p.length_bytes);
            } else if constexpr (VALUED) {
                static_cast<V*>(p.out_values)[inclusive.count - 1] = Acc<V>::store(inclusive.value);
            } else if constexpr (!HAS_VALUES) {
                put_index(p.out_values, inclusive.count - 1, p.mode == RUNS_ENDS ? n : n - inclusive.value,
                          p.length_bytes);
            }
        }
        // Not needed by a one-tile block; kept because the kernels measured on 2026-12-02 had it (from a
        // looping variant, since removed): without it nvcc 13.0 lays out the tail's branches differently,
        // which has not run on the H200.
        __syncwarp();
    }
};

// The non-trivial runs of KB-byte keys on the encodings' tile (offsets into out_keys, lengths into
// out_values, both of p.length_bytes).
template <int KB, class Shape = HeadsShape<KB, NoValues, false>>
using HeadsNonTrivial = HeadsAgent<KB, NoValues, OpMax, false, Shape, true>;

}  // namespace lookback
