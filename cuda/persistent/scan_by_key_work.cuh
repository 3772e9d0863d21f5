// The segmented scans (inclusive and exclusive scan by key) on the persistent engine (persistent/engine.cuh,
// sm_90+), in the same kernels as reduce_by_key (kernels/pipe_by_key.cuh: the mode picks the Work).
// Semantics are the classic agent's (classic/runs.cuh, step 4'), item for item.
//
// A tile reduces to the same (heads, reduction of the open run) pair as reduce_by_key, so this Work is
// reduce_by_key's (persistent/runs_work.cuh) with another write pass: reduce_tile, the packed look-ahead
// state, key start-1 (bulk-copied by on_load) and the head test are inherited. What differs is that
// every item has a result. The write pass takes a warp's items in rows of 32 lanes × E consecutive
// items (E·max(key, value bytes) = 16 bytes: one 16-byte load per stream and lane, conflict-free); a
// warp scan of the lanes' pairs gives each lane the open run's reduction before its first item, and the
// lane writes its E results with one store (the warp's 32 stores are 32·E consecutive values) straight
// from registers: no staging, so the ring is only read.
//
// Not in place (the Rust layer rejects overlapping buffers), as reduce_by_key.
#pragma once
#include "runs_work.cuh"

namespace lookback {

template <int KB, class V, class Op_> struct PipeScanByKeyWork : PipeRunsWork<KB, V, Op_, true> {
    using Base = PipeRunsWork<KB, V, Op_, true>;
    using typename Base::A;
    using typename Base::AV;
    using typename Base::K;
    using typename Base::L;
    using typename Base::LOp;
    using typename Base::Op;
    using typename Base::Params;
    using typename Base::Slot;
    static constexpr bool WRITES_RING = false;  // results go from registers to global memory
    using Engine = PipeEngine<PipeScanByKeyWork>;
    static constexpr int MAX_BYTES = KB > (int)sizeof(V) ? KB : (int)sizeof(V);
    static constexpr int E = 16 / MAX_BYTES;  // a lane's consecutive items per row
    static constexpr int ROW_ITEMS = 32 * E;
    static constexpr int ROWS = Base::WARP_ITEMS / ROW_ITEMS;
    static_assert(ROWS >= 1 && Base::WARP_ITEMS % ROW_ITEMS == 0, "a warp's items are whole rows");

    // The scans write no run count.
    static __device__ __forceinline__ void finish(const Params&, A) {}
    // No early staging: every item has a result, written straight from registers, and the write pass
    // reads the whole tile (reduce_by_key's prepare_tile would stage over it).
    template <class Kept>
    static __device__ __forceinline__ void prepare_tile(const Params&, Slot&, uint4*, uint64_t, int, const Kept&) {}

    template <bool FULL, KeyEq EQ> struct WritePass {
        static __device__ __forceinline__ void run(const Params& p, int valid, const Slot& slot, const uint4* tile,
                                                   uint64_t start, A carry) {
            const int lane = (int)lane_id();
            K prev = Base::template warp_key_before<FULL>(p, slot, tile, start, valid);
            const K* keys = reinterpret_cast<const K*>(tile);
            const V* values = reinterpret_cast<const V*>(reinterpret_cast<const char*>(tile) + Engine::VALUES_OFFSET);
            const K* keys_in = static_cast<const K*>(p.keys) + start;
            const V* values_in = static_cast<const V*>(p.values) + start;
            V* out = static_cast<V*>(p.out_values) + start;
            const AV seed = load_seed<V>(p.seed);
            const AV identity = Op_::template identity<AV>();
            const bool inclusive = p.mode == RUNS_SCAN_INCLUSIVE;
#pragma unroll 1
            for (int r = 0; r < ROWS; ++r) {
                const int mine = (int)warp_id() * Base::WARP_ITEMS + r * ROW_ITEMS + E * lane;
                K k[E];
                V v[E];
                int n = E;  // this lane's items that exist
                if constexpr (FULL) {
                    load_group(keys + mine, k);
                    load_group(values + mine, v);
                } else {
#pragma unroll
                    for (int e = 0; e < E; ++e) {
                        k[e] = Engine::partial_item(tile, keys_in, mine + e, valid, K(0));
                        v[e] = Engine::partial_item(reinterpret_cast<const uint4*>(values), values_in, mine + e, valid,
                                                    from_bits<V>(0));
                    }
                    n = max(0, min(E, valid - mine));
                }
                K before = shfl_up(k[E - 1], 1);
                if (lane == 0) before = prev;
                prev = shfl_from(k[E - 1], 31);
                uint32_t heads = keys_differ<EQ>(before, k[0]) || start + (uint64_t)mine == 0;
#pragma unroll
                for (int e = 1; e < E; ++e) heads |= (uint32_t)keys_differ<EQ>(k[e - 1], k[e]) << e;
                if constexpr (!FULL) heads &= (1u << n) - 1;  // E <= 16: the shift is defined
                AV x[E];
                L own;
                own.count = __popc(heads);
                own.value = identity;
#pragma unroll
                for (int e = 0; e < E; ++e) {
                    x[e] = FULL || e < n ? Acc<V>::load(v[e]) : identity;
                    own.value = (heads >> e) & 1u ? x[e] : Op_::apply(own.value, x[e]);
                }
                const L inclusive_pair = warp_inclusive_scan<LOp>(own);
                L exclusive = shfl_up(inclusive_pair, 1);
                if (lane == 0) exclusive = LOp::template identity<L>();
                // The open run's reduction before this lane's first item (the carry's, unless a head came
                // earlier in the row).
                AV running = exclusive.count ? exclusive.value : Op_::apply(carry.value, exclusive.value);
                carry = Op::apply(carry, Base::widen(shfl_from(inclusive_pair, 31), 0));
#pragma unroll
                for (int e = 0; e < E; ++e) {
                    const bool head = (heads >> e) & 1u;
                    if (inclusive) {
                        running = head ? x[e] : Op_::apply(running, x[e]);
                        v[e] = Acc<V>::store(running);
                    } else {
                        v[e] = Acc<V>::store(head ? seed : Op_::apply(seed, running));
                        running = head ? x[e] : Op_::apply(running, x[e]);
                    }
                }
                if constexpr (FULL) {
                    store_group(out + mine, v);
                } else {
#pragma unroll
                    for (int e = 0; e < E; ++e)
                        if (e < n) out[mine + e] = v[e];
                }
            }
        }
    };

    static __device__ __forceinline__ void scan_tile(const Params& p, Slot& slot, uint4* tile, uint64_t start,
                                                     int valid, A carry) {
        static_assert(Engine::TILE_ITEMS == Base::TILE_ITEMS && Engine::COMPUTE_THREADS == Base::WARPS * 32,
                      "the Work's tile is the engine's");
        Base::template dispatch<WritePass>(p, valid, slot, tile, start, carry);
    }
};

template <int KB, class V, class Op> using PipeScanByKeyAgent = PipeEngine<PipeScanByKeyWork<KB, V, Op>>;

}  // namespace lookback
