// Compaction on the persistent engine (pipe_engine.cuh, sm_90+): select_if and unique (MODE_COMPACT,
// out of place or in place) and count_if (MODE_COUNT). Flags and the partition layouts stay on the
// classic agent (agent_select.cuh).
//
// A tile reduces to its number of selected items; the selection masks (bit k of word g: item k of the
// lane's chunk group g) wait in the slot's shared state until the tile's prefix is known. Then each warp
// takes its own chunks into registers, packs its selected items at the front of its own part of the
// ring slot, in order, and copies them out with coalesced item-wide stores at `prefix + warp's part`.
//
// In place (`out == in`): every output index is at most its input index, and the engine writes a tile
// only after every earlier tile's bulk copy has completed (pipe_engine.cuh, "Ordering"); the status
// words use release/acquire then (CountState::ordered). unique also reads the item before the tile from
// global memory; the only earlier write that can reach it writes back the value already there (see
// agent_select.cuh).
#pragma once
#include "agent_select.cuh"
#include "pipe_engine.cuh"

namespace lookback {

template <class T> struct PipeSelectWork {
    static constexpr Algo ALGO = Algo::select;
    using Params = SelectParams;
    using Op = OpSum;
    using A = uint64_t;
    using State = CountState;
    static constexpr int ITEM_BYTES = sizeof(T);
    static constexpr bool WRITES_RING = true;
    using Engine = PipeEngine<PipeSelectWork>;
    static constexpr int CPL = Engine::CPL;
    static constexpr int E = 16 / sizeof(T);                           // items per chunk
    static constexpr int CG = CPL < 32 / E ? CPL : 32 / E;             // chunks per mask word
    static constexpr int G = CG * E;                                   // items per mask word (≤ 32)
    static constexpr int MW = CPL / CG;                                // mask words per lane
    static constexpr uint32_t CHUNK_BITS = E == 32 ? ~0u : (1u << E) - 1;
    union Chunk {
        uint4 vec;
        T items[E];
    };
    struct Slot {
        uint32_t masks[MW][Engine::COMPUTE_THREADS];  // [word][thread]: conflict-free
    };

    static __device__ __forceinline__ State state(const Params& p) {
        return State{p.lb.status, p.lb.epoch, p.in == p.out};
    }
    static __device__ __forceinline__ A initial(const Params&) { return 0; }
    static __device__ __forceinline__ void finish(const Params& p, A total) { *p.num_selected = total; }

    // Chunk j of this lane: whole from the ring in a full tile, item by item in the last one.
    static __device__ __forceinline__ Chunk chunk_of(const Params& p, const uint4* tile, uint64_t start, int valid,
                                                     int j) {
        Chunk c;
        if (valid == Engine::TILE_ITEMS) {
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
    static __device__ __forceinline__ bool first_differs(const Params& p, const uint4* tile, uint64_t start,
                                                         int valid, int j, T first_item) {
        const int i = Engine::chunk_index(j) * E;
        if (i == 0) {
            if (start == 0) return true;
            return items_differ(first_item, static_cast<const T*>(p.in)[start - 1]);
        }
        const T* in = static_cast<const T*>(p.in) + start;
        const T before = valid == Engine::TILE_ITEMS ? reinterpret_cast<const T*>(tile)[i - 1]
                                                     : Engine::partial_item(tile, in, i - 1, valid, T());
        return items_differ(first_item, before);
    }

    static __device__ __forceinline__ A reduce_tile(const Params& p, Slot& slot, const uint4* tile, uint64_t start,
                                                    int valid) {
        uint32_t count = 0;
#pragma unroll
        for (int g = 0; g < MW; ++g) {
            T x[G];
#pragma unroll
            for (int c = 0; c < CG; ++c) {
                const Chunk chunk = chunk_of(p, tile, start, valid, g * CG + c);
#pragma unroll
                for (int e = 0; e < E; ++e) x[c * E + e] = chunk.items[e];
            }
            uint32_t mask;
            if (p.source == SOURCE_PRED) {
                mask = eval_predicate(p.pred, x);
            } else {
                mask = 0;
#pragma unroll
                for (int k = 0; k < G; ++k) {
                    const bool differs = k % E == 0 ? first_differs(p, tile, start, valid, g * CG + k / E, x[k])
                                                    : items_differ(x[k], x[k - 1]);
                    mask |= (uint32_t)differs << k;
                }
            }
            if (valid != Engine::TILE_ITEMS) {
#pragma unroll
                for (int c = 0; c < CG; ++c) {
                    const int first = Engine::chunk_index(g * CG + c) * E;
                    const int mine = max(0, min(E, valid - first));
                    // 64-bit shift: well defined for mine = 32 (see the ptxas note in agent_select.cuh).
                    mask &= ~(CHUNK_BITS << (c * E)) | ((uint32_t)((1ull << mine) - 1) << (c * E));
                }
            }
            slot.masks[g][threadIdx.x] = mask;
            count += __popc(mask);
        }
        return count;
    }

    static __device__ __forceinline__ void scan_tile(const Params& p, Slot& slot, uint4* tile, uint64_t start,
                                                     int valid, A carry) {
        if (p.mode == MODE_COUNT) return;
        const int lane = lane_id();
        // Every lane takes its chunks into registers first; the warp then packs its selected items over
        // its own part of the slot. (A partial tile's trailing items come from global memory again.)
        Chunk c[CPL];
#pragma unroll
        for (int j = 0; j < CPL; ++j) c[j] = chunk_of(p, tile, start, valid, j);
        uint32_t masks[MW];
#pragma unroll
        for (int g = 0; g < MW; ++g) masks[g] = slot.masks[g][threadIdx.x];
        __syncwarp();
        T* stage = reinterpret_cast<T*>(tile + Engine::chunk_index(0) - lane);
        uint32_t row_base = 0;  // selected items of this warp's earlier rows
#pragma unroll
        for (int j = 0; j < CPL; ++j) {
            const uint32_t bits = (masks[j / CG] >> ((j % CG) * E)) & CHUNK_BITS;
            const uint32_t n = __popc(bits);
            const uint32_t inclusive = warp_inclusive_scan<OpSum>(n);
            uint32_t pos = row_base + inclusive - n;
#pragma unroll
            for (int e = 0; e < E; ++e)
                if ((bits >> e) & 1u) stage[pos++] = c[j].items[e];
            row_base += shfl_from(inclusive, 31);
        }
        __syncwarp();
        T* out = static_cast<T*>(p.out) + carry;
        for (uint32_t i = lane; i < row_base; i += 32) out[i] = stage[i];
    }
};

}  // namespace lookback
