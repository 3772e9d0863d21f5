// The persistent, warp-specialised scan (sm_90+): one block per SM takes tiles until none are left.
//
// Why (benches/NOTES.md, ../shared/docs/PERF-NOTES.md): with one tile per block, each tile waits for the
// chain of its predecessors' inclusive prefixes while its SM has few loads in flight, which holds the
// classic agent near 0.8 of memcpy. Here nothing waits on an inclusive prefix and loads never stop:
//
// - Load warp (one lane): takes a tile id from the global counter, then bulk-copies the whole tile into a
//   ring of STAGES shared-memory slots (cp.async.bulk, completing on the slot's `full` barrier). It runs
//   up to STAGES tiles ahead of the compute warps, so HBM always has this SM's next tiles in flight.
// - Compute warps: reduce tile k+1 and publish its *aggregate* (status A; there is no P state), then scan
//   tile k once its exclusive prefix is known and store it with coalesced 16-byte stores straight from
//   registers. Reducing one tile ahead keeps aggregates flowing while a prefix is still being resolved.
// - Look-ahead warp: keeps the block's running prefix. The tiles between this block's previous tile and
//   its next one were taken by other blocks; their aggregates (not prefixes) are all the look-ahead adds,
//   about one per SM, 128 per step. prefix(next) = prefix(previous) ⊕ aggregates [previous, next).
//
// Layout: compute warp w owns CHUNKS_PER_LANE × 32 consecutive chunks of its tile; chunk j of lane l is
// chunk w·32·CPL + 32·j + l. Each warp access (shared or global) is 512 contiguous bytes, so the shared
// reads have no bank conflicts without any swizzle, and the items of a warp row (chunk j of its 32 lanes)
// are scanned with one warp scan.
//
// Progress: tile ids come from an atomic counter, so every tile taken belongs to a running block; a
// tile's aggregate depends only on its own load; the lowest tile without a published aggregate belongs to
// a block whose compute warps need only aggregates of lower tiles (all published) to get past their
// current tile. So some tile always advances, whatever the number of resident blocks.
//
// In place (`out == in`) is safe: a tile's bytes are all in shared memory (its `full` phase completed)
// before any of them is written back, and a tile writes only its own items.
//
// Requirements (checked by the host, src/scan.rs): `in` and `out` 16-byte aligned; fewer than 2^32 - 1
// tiles; an sm_90 or newer GPU.
#pragma once
#include "async_copy.cuh"
#include "ops.cuh"
#include "params.cuh"
#include "tile_state.cuh"
#include "tuning.cuh"
#include "warp_scan.cuh"

namespace lookback {

template <class T, class Op> struct PipeScanAgent {
    using Shape = PipeTuning<Algo::scan>;
    static constexpr int WARPS = Shape::COMPUTE_WARPS;
    static constexpr int CPL = Shape::CHUNKS_PER_LANE;
    static constexpr int STAGES = Shape::STAGES;
    static constexpr int COMPUTE_THREADS = WARPS * 32;
    static constexpr int LOAD_WARP = WARPS;
    static constexpr int AHEAD_WARP = WARPS + 1;
    static constexpr int THREADS = COMPUTE_THREADS + 64;
    static constexpr int E = 16 / sizeof(T);  // items per chunk
    static constexpr int TILE_CHUNKS = WARPS * 32 * CPL;
    static constexpr int TILE_BYTES = TILE_CHUNKS * 16;
    static constexpr int TILE_ITEMS = TILE_CHUNKS * E;
    // Tiles the compute warps reduce (and publish) ahead of the one they scan: the slack every block's
    // look-ahead has to collect the aggregates of the tiles before its own.
    static constexpr int REDUCE_AHEAD = Shape::REDUCE_AHEAD;
    static_assert(REDUCE_AHEAD >= 1 && REDUCE_AHEAD < STAGES, "the tiles reduced ahead must fit the ring");
    // Aggregates each look-ahead lane reads per step (2, 4 and 8 measured within 1 % with 4 tiles
    // reduced ahead; 4 was best for 8-byte values).
    static constexpr int AHEAD_PER_LANE = 4;
    static constexpr uint64_t END = ~0ull;    // tile id meaning "no tiles left"
    static constexpr int COMPUTE_BARRIER = 1;

    using A = typename Acc<T>::type;
    // Statuses carry nothing but their value: relaxed accesses suffice (tile_state.cuh).
    using State = StateFor<A, false>;
    union Chunk {
        uint4 vec;
        T items[E];
    };

    struct Storage {
        uint64_t full[STAGES];   // slot loaded (tx bytes) and its tile id written
        uint64_t empty[STAGES];  // every compute warp is done reading the slot
        uint64_t ready[STAGES];  // the look-ahead wrote the slot's exclusive prefix
        uint64_t tile_id[STAGES];
        A prefix[STAGES];
        A warp_exclusive[STAGES][WARPS];  // per slot: ⊕ of the tile's warps before each warp
        A warp_totals[2][WARPS];          // double-buffered: read between two barriers (see reduce)
    };

    // Dynamic shared memory the launch must provide (the host computes the same number from tuning.cuh).
    static constexpr int RING_BYTES = STAGES * TILE_BYTES;

    static __device__ __forceinline__ void run(const ScanParams& p) {
        extern __shared__ __align__(128) uint4 ring[];
        __shared__ Storage s;
        const LookbackParams& lb = p.lb;
        const uint64_t num_tiles = (p.n + TILE_ITEMS - 1) / TILE_ITEMS;
        if (threadIdx.x == 0) {
            for (int i = 0; i < STAGES; ++i) {
                mbar_init(&s.full[i], 1);
                mbar_init(&s.empty[i], WARPS);
                mbar_init(&s.ready[i], 1);
            }
            fence_barrier_init();
        }
        __syncthreads();
        const typename State::type state = State::make(lb.status, lb.values, lb.epoch);
        if (warp_id() == LOAD_WARP) {
            if (lane_id() == 0) load_tiles(p, s, ring, num_tiles);
        } else if (warp_id() == AHEAD_WARP) {
            look_ahead(p, s, state);
        } else {
            compute(p, s, ring, state);
        }
    }

    // Load warp, one lane: tile ids in, bulk copies out, STAGES tiles ahead at most. A tile id is taken
    // only once a slot is free, so every id taken is loaded at once (a block holding a low id it cannot
    // load yet would hold up every later tile's prefix). Taking the next id one tile early, to hide the
    // atomic's round trip, measured no faster (benches/NOTES.md).
    static __device__ __forceinline__ void load_tiles(const ScanParams& p, Storage& s, uint4* ring,
                                                      uint64_t num_tiles) {
        const uint64_t total_bytes = p.n * sizeof(T);
        for (uint32_t k = 0;; ++k) {
            const int slot = k % STAGES;
            if (k >= STAGES) mbar_wait(&s.empty[slot], (k / STAGES - 1) & 1);
            const uint64_t tile = take_tile_id(p.lb.tile_counter, p.lb.tile_base);
            if (tile >= num_tiles) {
                s.tile_id[slot] = END;
                mbar_arrive(&s.full[slot]);
                return;
            }
            s.tile_id[slot] = tile;
            const uint64_t offset = tile * (uint64_t)TILE_BYTES;
            // The last tile's trailing < 16 bytes are read by the compute warps (bulk copies move 16-byte
            // multiples).
            const uint32_t bytes = (uint32_t)min((uint64_t)TILE_BYTES, total_bytes - offset) & ~15u;
            mbar_arrive_expect_tx(&s.full[slot], bytes);
            if (bytes) bulk_load(ring + slot * TILE_CHUNKS, static_cast<const char*>(p.in) + offset, bytes, &s.full[slot]);
        }
    }

    // Aggregates of tiles [cursor, min(cursor + 32·AHEAD_PER_LANE, end)), folded (lane-major). Every
    // lane issues all its status loads before waiting on any, so a step costs one L2 round trip (two
    // for 8-byte values: flags, then values) when the aggregates are there.
    static __device__ __forceinline__ A fold_aggregates(const typename State::type& state, uint64_t cursor,
                                                        uint64_t end) {
        const A identity = Op::template identity<A>();
        A v[AHEAD_PER_LANE];
        unsigned st[AHEAD_PER_LANE];
        if constexpr (sizeof(A) <= 4) {
#pragma unroll
            for (int i = 0; i < AHEAD_PER_LANE; ++i) {
                const uint64_t t = cursor + 32 * i + lane_id();
                v[i] = identity;
                st[i] = t < end ? state.read(t, v[i]) : STATUS_A;
            }
#pragma unroll
            for (int i = 0; i < AHEAD_PER_LANE; ++i)
                while (st[i] == STATUS_X) st[i] = state.read(cursor + 32 * i + lane_id(), v[i]);
        } else {
#pragma unroll
            for (int i = 0; i < AHEAD_PER_LANE; ++i) {
                const uint64_t t = cursor + 32 * i + lane_id();
                st[i] = t < end ? state.peek(t) : STATUS_A;
            }
#pragma unroll
            for (int i = 0; i < AHEAD_PER_LANE; ++i)
                while (st[i] == STATUS_X) st[i] = state.peek(cursor + 32 * i + lane_id());
            fence_acquire();
#pragma unroll
            for (int i = 0; i < AHEAD_PER_LANE; ++i) {
                const uint64_t t = cursor + 32 * i + lane_id();
                v[i] = t < end ? state.value(t, STATUS_A) : identity;
            }
        }
        A part = identity;
#pragma unroll
        for (int i = 0; i < AHEAD_PER_LANE; ++i) part = Op::apply(part, v[i]);
        return part;
    }

    // Look-ahead warp: the block's running exclusive prefix, one slot's tile at a time.
    static __device__ __forceinline__ void look_ahead(const ScanParams& p, Storage& s,
                                                      const typename State::type& state) {
        A running = p.exclusive ? from_bits<A>(seed_bits(p.seed)) : Op::template identity<A>();
        uint64_t cursor = 0;  // aggregates of tiles [0, cursor) are folded into `running`
        for (uint32_t k = 0;; ++k) {
            const int slot = k % STAGES;
            mbar_wait(&s.full[slot], (k / STAGES) & 1);
            const uint64_t tile = s.tile_id[slot];
            if (tile == END) return;
            while (cursor < tile) {
                // Lane-major order (lane l holds tiles l, l+32, …) is not tile order: fine for the
                // commutative operators of ops.cuh; float sums differ from sequential order by rounding
                // only, as with any parallel scan.
                running = Op::apply(running, warp_reduce<Op>(fold_aggregates(state, cursor, tile)));
                cursor = min(cursor + 32 * AHEAD_PER_LANE, tile);
            }
            if (lane_id() == 0) {
                s.prefix[slot] = running;
                mbar_arrive(&s.ready[slot]);
            }
        }
    }

    // Item `i` of a partial tile: from shared memory while the bulk copy covered it, else from global.
    static __device__ __forceinline__ A partial_item(const T* ring_items, const T* in, int i, int bulk_items,
                                                     int valid) {
        if (i < bulk_items) return Acc<T>::load(ring_items[i]);
        if (i < valid) return Acc<T>::load(in[i]);
        return Op::template identity<A>();
    }

    // Waits for slot k, reduces it and publishes its aggregate; leaves the warp's exclusive prefix within
    // the tile in the slot. False when the load warp said "no more tiles".
    static __device__ __forceinline__ bool reduce(const ScanParams& p, Storage& s, const uint4* ring,
                                                  const typename State::type& state, uint32_t k) {
        const int slot = k % STAGES;
        mbar_wait(&s.full[slot], (k / STAGES) & 1);
        const uint64_t tile = s.tile_id[slot];
        if (tile == END) return false;
        const int w = warp_id();
        const uint4* mine = ring + slot * TILE_CHUNKS + w * 32 * CPL + lane_id();
        const uint64_t start = tile * (uint64_t)TILE_ITEMS;
        const int valid = (int)min((uint64_t)TILE_ITEMS, p.n - start);
        A total = Op::template identity<A>();
        if (valid == TILE_ITEMS) {
#pragma unroll
            for (int j = 0; j < CPL; ++j) {
                Chunk c;
                c.vec = mine[32 * j];
#pragma unroll
                for (int e = 0; e < E; ++e) total = Op::apply(total, Acc<T>::load(c.items[e]));
            }
        } else {
            const T* items = reinterpret_cast<const T*>(ring + slot * TILE_CHUNKS);
            const T* in = static_cast<const T*>(p.in) + start;
            const int bulk_items = (int)(((uint32_t)valid * sizeof(T)) & ~15u) / (int)sizeof(T);
            for (int j = 0; j < CPL; ++j) {
                const int first = (w * 32 * CPL + 32 * j + (int)lane_id()) * E;
                for (int e = 0; e < E; ++e) total = Op::apply(total, partial_item(items, in, first + e, bulk_items, valid));
            }
        }
        const A warp_total = warp_reduce<Op>(total);
        if (lane_id() == 0) s.warp_totals[k & 1][w] = warp_total;
        named_barrier<COMPUTE_BARRIER, COMPUTE_THREADS>();
        // Read the totals now: the next write to this buffer (tile k+2) comes after the next barrier.
        A aggregate = Op::template identity<A>();
        A exclusive = aggregate;
#pragma unroll
        for (int i = 0; i < WARPS; ++i) {
            if (i == w) exclusive = aggregate;
            aggregate = Op::apply(aggregate, s.warp_totals[k & 1][i]);
        }
        // Every lane writes the same value and later reads only its own write: no warp sync needed.
        s.warp_exclusive[slot][w] = exclusive;
        if (threadIdx.x == 0) state.publish(tile, STATUS_A, aggregate);
        return true;
    }

    // Scans slot k (reduced earlier) once its prefix is ready, stores it, and frees the slot.
    static __device__ __forceinline__ void scan(const ScanParams& p, Storage& s, const uint4* ring, uint32_t k) {
        const int slot = k % STAGES;
        const int w = warp_id();
        const int lane = lane_id();
        const uint64_t tile = s.tile_id[slot];
        mbar_wait(&s.ready[slot], (k / STAGES) & 1);
        A carry = Op::apply(s.prefix[slot], s.warp_exclusive[slot][w]);
        const uint64_t start = tile * (uint64_t)TILE_ITEMS;
        const int valid = (int)min((uint64_t)TILE_ITEMS, p.n - start);
        const uint4* mine = ring + slot * TILE_CHUNKS + w * 32 * CPL + lane;
        if (valid == TILE_ITEMS) {
            uint4* out = static_cast<uint4*>(p.out) + tile * (uint64_t)TILE_CHUNKS + w * 32 * CPL + lane;
#pragma unroll
            for (int j = 0; j < CPL; ++j) {
                Chunk c;
                c.vec = mine[32 * j];
                A x[E];
#pragma unroll
                for (int e = 0; e < E; ++e) x[e] = Acc<T>::load(c.items[e]);
                scan_row(p.exclusive, x, carry);
#pragma unroll
                for (int e = 0; e < E; ++e) c.items[e] = Acc<T>::store(x[e]);
                out[32 * j] = c.vec;
            }
        } else {
            const T* items = reinterpret_cast<const T*>(ring + slot * TILE_CHUNKS);
            const T* in = static_cast<const T*>(p.in) + start;
            T* out = static_cast<T*>(p.out) + start;
            const int bulk_items = (int)(((uint32_t)valid * sizeof(T)) & ~15u) / (int)sizeof(T);
            for (int j = 0; j < CPL; ++j) {
                const int first = (w * 32 * CPL + 32 * j + lane) * E;
                A x[E];
#pragma unroll
                for (int e = 0; e < E; ++e) x[e] = partial_item(items, in, first + e, bulk_items, valid);
                scan_row(p.exclusive, x, carry);
#pragma unroll
                for (int e = 0; e < E; ++e)
                    if (first + e < valid) out[first + e] = Acc<T>::store(x[e]);
            }
        }
        __syncwarp();
        if (lane == 0) mbar_arrive(&s.empty[slot]);
    }

    // One warp row: lane l's E items follow lane l-1's. Replaces x with its scanned values (inclusive or
    // exclusive) after `carry`, and advances `carry` past the whole row.
    static __device__ __forceinline__ void scan_row(bool exclusive, A (&x)[E], A& carry) {
        A local[E];
        A acc = x[0];
        local[0] = acc;
#pragma unroll
        for (int e = 1; e < E; ++e) {
            acc = Op::apply(acc, x[e]);
            local[e] = acc;
        }
        const A lane_inclusive = warp_inclusive_scan<Op>(acc);
        A before = shfl_up(lane_inclusive, 1);
        if (lane_id() == 0) before = Op::template identity<A>();
        const A base = Op::apply(carry, before);
        if (exclusive) {
            x[0] = base;
#pragma unroll
            for (int e = 1; e < E; ++e) x[e] = Op::apply(base, local[e - 1]);
        } else {
#pragma unroll
            for (int e = 0; e < E; ++e) x[e] = Op::apply(base, local[e]);
        }
        carry = Op::apply(carry, shfl_from(lane_inclusive, 31));
    }

    // Compute warps: reduce REDUCE_AHEAD tiles ahead of the one being scanned.
    static __device__ __forceinline__ void compute(const ScanParams& p, Storage& s, const uint4* ring,
                                                   const typename State::type& state) {
        uint32_t reduced = 0;  // slots reduced so far
        bool more = true;      // the load warp has not said "no more tiles" yet
        while (more && reduced < REDUCE_AHEAD) {
            more = reduce(p, s, ring, state, reduced);
            reduced += more;
        }
        for (uint32_t k = 0; k < reduced; ++k) {
            if (more) {
                more = reduce(p, s, ring, state, reduced);
                reduced += more;
            }
            scan(p, s, ring, k);
        }
    }

    // The host passes the seed as an element of T; the accumulator may be wider (f16 → f32).
    static __device__ __forceinline__ typename Bits<sizeof(A)>::type seed_bits(uint64_t raw) {
        const T x = from_bits<T>((typename Bits<sizeof(T)>::type)raw);
        return to_bits(Acc<T>::load(x));
    }
};

}  // namespace lookback
