// Warp-wide scans and reductions from shuffles. Never touch global memory.
#pragma once
#include "common.cuh"

namespace lookback {

// Inclusive scan across the 32 lanes of a warp (lane i gets x_0 ⊕ … ⊕ x_i), in lane order.
template <class Op, class A> __device__ __forceinline__ A warp_inclusive_scan(A x) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        A y = __shfl_up_sync(0xffffffffu, x, d);
        if ((int)lane_id() >= d) x = Op::apply(y, x);
    }
    return x;
}

// Reduction across the warp in lane order; every lane gets the result.
template <class Op, class A> __device__ __forceinline__ A warp_reduce(A x) {
    return __shfl_sync(0xffffffffu, warp_inclusive_scan<Op>(x), 31);
}

}  // namespace lookback
