// One tile of the scans by key (inclusive and exclusive) of 8-byte values, with the items in registers.
// Semantics are the classic run agent's (classic/runs.cuh, step 4'), item for item; the look-back, its state
// (WidePairState with the 64-bit layout) and the pair operator are that agent's too.
//
// Why a tile of its own (benches/log, 2026-12-02). The run agent stages both columns of a tile in
// shared memory (128 threads × 16 items: 32 KB) and then reads them into registers: 24 warps per SM, and
// 8-byte reductions wait for the tile's prefix before any rewrite. CUB's scan_by_key, which holds its items
// in registers, was 11 % faster at 2^24-2^28 (f64 keys and values). Here warp w owns 32·IPT consecutive
// items and lane l IPT of them (the tuning row's CHUNKS_PER_THREAD is IPT / 2: units of two items). Keys and
// values are loaded warp-striped (unit 32c + l, coalesced, all loads in flight together) and transposed to
// the lanes' consecutive items through a per-warp shared buffer, which serves keys, values and results in
// turn; lane 0 of each warp loads the key before the warp's first item itself. Measured by a probe
// (benches/probes/scan_by_key_tile.cu) 20-44 % faster than the run agent at 2^20-2^28.
//
// Only what depends on the tile's prefix waits for it. A tile with a head knows its inclusive prefix at once
// (the reduction since its last head: its aggregate's value) and publishes P straight away. A warp with a
// head before its first item has every result: it stores before the look-back. The other warps (always warp
// 0) wait for the prefix, which warp 0 resolves only when the tile's first item is not a head.
//
// Not in place (the Rust layer rejects overlapping buffers): a warp reads the key before its first item,
// which another warp or tile may own.
#pragma once
#include "runs.cuh"

namespace lookback {

// A unit of two items of T: the transposes' and the vector accesses' element.
template <int BYTES> struct UnitOf { using type = typename Bits<BYTES>::type; };
template <> struct UnitOf<16> { using type = uint4; };

template <int KB, class V, class Op> struct ScanByKeyAgent {
    static_assert(sizeof(V) == 8, "the register tile serves 8-byte values (classic/runs.cuh serves the others)");
    using K = typename Bits<KB>::type;
    using Shape = typename Tuning<Algo::scan_by_key, sizeof(V)>::Shape;
    static constexpr int BLOCK_THREADS = Shape::BLOCK_THREADS;
    static constexpr int WARPS = BLOCK_THREADS / 32;
    static constexpr int UNITS = Shape::CHUNKS_PER_THREAD;  // units of two items per lane and column
    static constexpr int IPT = 2 * UNITS;
    static constexpr int WARP_ITEMS = 32 * IPT;
    static constexpr int TILE_ITEMS = BLOCK_THREADS * IPT;
    static_assert(TILE_ITEMS == BLOCK_THREADS * Shape::CHUNKS_PER_THREAD * 16 / (int)sizeof(V),
                  "the launcher sizes grids from the tuning row (src/kernels.rs tile_items)");
    static_assert(IPT <= 32, "a lane's heads are a 32-bit mask");
    // Compiled for 4 resident blocks (the probe's 192 × 14: 77 registers, no spills, 21.6 KB).
    static constexpr int MIN_BLOCKS = 4;

    using A = typename Acc<V>::type;
    using Pair = RunPair<A>;
    using Local = LocalPair<A>;
    using POp = PairOp<Op, true>;
    using State = WidePairState<Pair, true>;
    using KeyUnit = typename UnitOf<2 * KB>::type;
    using ValueUnit = uint4;

    struct Storage {
        ValueUnit xpose[WARPS][WARP_ITEMS / 2];  // per warp: keys, then values, then results
        BlockScanStorage<Local, WARPS> scan;
        Pair exclusive;
        TileTicket ticket;
    };

    // Warp-striped unit c of lane l is the warp's unit 32c + l; lane l's own items are units l·UNITS + j.
    template <class U, class T>
    static __device__ __forceinline__ void to_blocked(ValueUnit* buffer, const U (&striped)[UNITS], T (&out)[IPT]) {
        static_assert(sizeof(U) == 2 * sizeof(T), "a unit is two items");
        U* buf = reinterpret_cast<U*>(buffer);
        const int lane = (int)lane_id();
#pragma unroll
        for (int c = 0; c < UNITS; ++c) buf[c * 32 + lane] = striped[c];
        __syncwarp();
#pragma unroll
        for (int j = 0; j < UNITS; ++j) {
            const U u = buf[lane * UNITS + j];
            memcpy(&out[2 * j], &u, sizeof(U));
        }
        __syncwarp();
    }
    static __device__ __forceinline__ void to_striped(ValueUnit* buf, const V (&in)[IPT], ValueUnit (&striped)[UNITS]) {
        const int lane = (int)lane_id();
#pragma unroll
        for (int j = 0; j < UNITS; ++j) {
            ValueUnit u;
            memcpy(&u, &in[2 * j], sizeof(u));
            buf[lane * UNITS + j] = u;
        }
        __syncwarp();
#pragma unroll
        for (int c = 0; c < UNITS; ++c) striped[c] = buf[c * 32 + lane];
        __syncwarp();
    }
    // The warp's units of `base` (its first item); items at or past `valid` (warp-relative) read as zero bits.
    template <class U, class T>
    static __device__ __forceinline__ void load_striped(const T* base, int valid, bool full, U (&units)[UNITS]) {
        const int lane = (int)lane_id();
#pragma unroll
        for (int c = 0; c < UNITS; ++c) {
            const int i = 2 * (c * 32 + lane);
            if (full) {
                units[c] = reinterpret_cast<const U*>(base)[c * 32 + lane];
            } else {
                const T pair[2] = {i < valid ? base[i] : from_bits<T>(0), i + 1 < valid ? base[i + 1] : from_bits<T>(0)};
                memcpy(&units[c], pair, sizeof(U));
            }
        }
    }
    static __device__ __forceinline__ void store_striped(V* base, int valid, bool full, const ValueUnit (&units)[UNITS]) {
        const int lane = (int)lane_id();
#pragma unroll
        for (int c = 0; c < UNITS; ++c) {
            const int i = 2 * (c * 32 + lane);
            if (full) {
                reinterpret_cast<ValueUnit*>(base)[c * 32 + lane] = units[c];
            } else {
                V pair[2];
                memcpy(pair, &units[c], sizeof(pair));
                if (i < valid) base[i] = pair[0];
                if (i + 1 < valid) base[i + 1] = pair[1];
            }
        }
    }

    // The lane's results from `running`, its run's value before its first item, stored through the
    // warp's buffer.
    static __device__ __forceinline__ void finish(const RunsParams& p, Storage& s, V* out, int valid, bool full,
                                                  const V (&v)[IPT], uint32_t heads, A running) {
        const A seed = Acc<V>::load(from_bits<V>((typename Bits<sizeof(V)>::type)p.seed));
        const bool inclusive = p.mode == RUNS_SCAN_INCLUSIVE;
        V r[IPT];
#pragma unroll
        for (int j = 0; j < IPT; ++j) {
            const bool head = (heads >> j) & 1u;
            const A x = Acc<V>::load(v[j]);
            if (inclusive) {
                running = head ? x : Op::apply(running, x);
                r[j] = Acc<V>::store(running);
            } else {
                r[j] = Acc<V>::store(head ? seed : Op::apply(seed, running));
                running = head ? x : Op::apply(running, x);
            }
        }
        ValueUnit striped[UNITS];
        to_striped(s.xpose[warp_id()], r, striped);
        store_striped(out, valid, full, striped);
    }

    static __device__ __forceinline__ void run(const RunsParams& p) {
        __shared__ Storage s;
        const LookbackParams& lb = p.lb;
        if (threadIdx.x == 0) {
            take_tile(s.ticket, lb, p.n, {p.keys, p.n * KB, TILE_ITEMS * (uint64_t)KB},
                      {p.values, p.n * sizeof(V), TILE_ITEMS * sizeof(V)});
        }
        __syncthreads();
        const BlockTile bt = block_tile(s.ticket, lb);
        // Past the items, and an empty launch (a device count of 0): nothing to scan.
        if (bt.idle(TILE_ITEMS) || bt.n == 0) return;
        const uint64_t tile = bt.tile;
        const uint64_t start = tile * (uint64_t)TILE_ITEMS;
        const int valid = (int)min((uint64_t)TILE_ITEMS, bt.n - start);
        const int warp = (int)warp_id(), lane = (int)lane_id();
        const uint64_t wstart = start + (uint64_t)warp * WARP_ITEMS;  // the warp's first item
        const int wvalid = max(0, min(WARP_ITEMS, valid - warp * WARP_ITEMS));
        // Whole tiles of aligned columns move in units; the last tile goes item by item in every warp. (A
        // per-warp `wvalid == WARP_ITEMS` took the unit path for a partial warp of the last tile in nvcc
        // 13.0's sm_90 code — a read past the end that compute-sanitizer caught in the probe.)
        const bool full = valid == TILE_ITEMS && (uintptr_t)p.keys % sizeof(KeyUnit) == 0 &&
                          ((uintptr_t)p.values | (uintptr_t)p.out_values) % sizeof(ValueUnit) == 0;
        const K* keys = static_cast<const K*>(p.keys) + wstart;
        const V* values = static_cast<const V*>(p.values) + wstart;
        V* out = static_cast<V*>(p.out_values) + wstart;

        // 1. Keys and values in flight together, and the key before the warp's first item.
        KeyUnit ku[UNITS];
        ValueUnit vu[UNITS];
        load_striped(keys, wvalid, full, ku);
        load_striped(values, wvalid, full, vu);
        K before = K(0);
        if (lane == 0 && wstart > 0 && wvalid > 0) before = keys[-1];

        // 2. Heads (key_equality.cuh), then the values in the lanes' order.
        const int first = lane * IPT;
        const int mine = max(0, min(IPT, wvalid - first));
        const uint32_t in_range = (uint32_t)((1ull << mine) - 1);  // 64-bit shift: mine may be 32
        uint32_t heads;
        {
            K k[IPT];
            to_blocked(s.xpose[warp], ku, k);
            K prev = shfl_up(k[IPT - 1], 1);
            if (lane == 0) prev = before;
            heads = differ_bits<KB>(p, prev, k);
        }
        if (wstart + first == 0) heads |= 1u;
        heads &= in_range;
        V v[IPT];
        to_blocked(s.xpose[warp], vu, v);

        // 3. The lane's pair, the block scan, the tile's aggregate: P at once when the tile has a head.
        Local own;
        own.count = __popc(heads);
        own.value = since_last_head<Op>(v, heads, in_range);
        Local total;
        const Local prefix = block_exclusive_scan<POp>(own, total, s.scan);
        const bool has_heads = total.count > 0;
        const State state{bt.status, bt.epoch};
        const Pair aggregate{total.count, total.value};
        if (threadIdx.x == 0) state.publish(tile, tile == 0 || has_heads ? STATUS_P : STATUS_A, aggregate);

        // 4. Warps with a head before their first item store now, before the look-back.
        const bool settled = __shfl_sync(0xffffffffu, prefix.count, 0) > 0;
        if (settled) finish(p, s, out, wvalid, full, v, heads, prefix.value);

        // 5. Warp 0 resolves the prefix the other warps wait for: none when the tile starts with a head.
        if (warp == 0) {
            Pair exclusive = POp::template identity<Pair>();
            const bool carried = tile > 0 && !(__shfl_sync(0xffffffffu, heads, 0) & 1u);
            // An anchor of the deterministic mode looks back for its entry even when its tile needs no prefix.
            if (carried || (tile > 0 && anchor_duty<POp, Pair>(lb, tile))) {
                const Pair found = resolve_prefix<POp, Pair, State>(state, tile, lb, aggregate, !has_heads);
                if (carried) exclusive = found;
            }
            if (lane == 0) s.exclusive = exclusive;
        }
        __syncthreads();
        if (!settled) {
            const A running = prefix.count ? prefix.value : Op::apply(s.exclusive.value, prefix.value);
            finish(p, s, out, wvalid, full, v, heads, running);
        }
    }
};

}  // namespace lookback
