// Block-wide scans and reductions composed from warp scans, through a small shared-memory array of warp
// totals. Never touch global memory.
#pragma once
#include "ops.cuh"
#include "warp_scan.cuh"

namespace lookback {

template <class A, int WARPS> struct BlockScanStorage {
    A warp_totals[WARPS];
};

// Exclusive scan of one value per thread, in thread order, seeded with `identity`. Returns the thread's
// exclusive prefix; `total` receives the block total. Contains one __syncthreads(); `storage` must not be
// reused before the next barrier.
template <class Op, class A, int WARPS>
__device__ __forceinline__ A block_exclusive_scan(A x, A& total, BlockScanStorage<A, WARPS>& storage) {
    A incl = warp_inclusive_scan<Op>(x);
    if (lane_id() == 31) storage.warp_totals[warp_id()] = incl;
    __syncthreads();
    A before = Op::template identity<A>();
    A all = Op::template identity<A>();
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
        if (w == (int)warp_id()) before = all;
        all = Op::apply(all, storage.warp_totals[w]);
    }
    total = all;
    A excl_in_warp = shfl_up(incl, 1);
    if (lane_id() == 0) return before;
    return Op::apply(before, excl_in_warp);
}

// Exclusive sum of one 32-bit count per thread (selection's counts, whose tile total fits 32 bits): the
// warp totals are combined by two warp reductions (`redux.sync`, sm_80+) instead of a loop over the
// warps, and the warp's own exclusive prefix is its inclusive one minus the count. Same contract as
// block_exclusive_scan.
template <int WARPS>
__device__ __forceinline__ uint32_t block_exclusive_count(uint32_t x, uint32_t& total,
                                                          BlockScanStorage<uint32_t, WARPS>& storage) {
    static_assert(WARPS <= 32, "one warp total per lane");
    const uint32_t incl = warp_inclusive_scan<OpSum>(x);
    if (lane_id() == 31) storage.warp_totals[warp_id()] = incl;
    __syncthreads();
    const uint32_t lane = lane_id();
    const uint32_t t = lane < WARPS ? storage.warp_totals[lane] : 0u;
    total = __reduce_add_sync(0xffffffffu, t);
    return __reduce_add_sync(0xffffffffu, lane < warp_id() ? t : 0u) + incl - x;
}

}  // namespace lookback
