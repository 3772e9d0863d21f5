// Warp-wide scans and reductions from shuffles. Never touch global memory.
#pragma once
#include "std_subset.cuh"
#include "common.cuh"

namespace lookback {

// Shuffles of any trivially copyable value: arithmetic types use the hardware overloads, anything else
// (the (count, value) pairs of the run-based primitives) moves as 32-bit words.
template <class A> __device__ __forceinline__ A shfl_up(A x, int d) {
    if constexpr (std::is_arithmetic_v<A>) {
        return __shfl_up_sync(0xffffffffu, x, d);
    } else {
        constexpr int WORDS = (sizeof(A) + 3) / 4;
        uint32_t w[WORDS] = {};
        memcpy(w, &x, sizeof(A));
#pragma unroll
        for (int i = 0; i < WORDS; ++i) w[i] = __shfl_up_sync(0xffffffffu, w[i], d);
        memcpy(&x, w, sizeof(A));
        return x;
    }
}
template <class A> __device__ __forceinline__ A shfl_from(A x, int lane) {
    if constexpr (std::is_arithmetic_v<A>) {
        return __shfl_sync(0xffffffffu, x, lane);
    } else {
        constexpr int WORDS = (sizeof(A) + 3) / 4;
        uint32_t w[WORDS] = {};
        memcpy(w, &x, sizeof(A));
#pragma unroll
        for (int i = 0; i < WORDS; ++i) w[i] = __shfl_sync(0xffffffffu, w[i], lane);
        memcpy(&x, w, sizeof(A));
        return x;
    }
}

// Inclusive scan across the 32 lanes of a warp (lane i gets x_0 ⊕ … ⊕ x_i), in lane order.
template <class Op, class A> __device__ __forceinline__ A warp_inclusive_scan(A x) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        A y = shfl_up(x, d);
        if ((int)lane_id() >= d) x = Op::apply(y, x);
    }
    return x;
}

// Inclusive scan across the first WIDTH lanes only (the others get values nobody should use): log2(WIDTH)
// steps instead of five.
template <class Op, int WIDTH, class A> __device__ __forceinline__ A warp_inclusive_scan_first(A x) {
#pragma unroll
    for (int d = 1; d < WIDTH; d <<= 1) {
        A y = shfl_up(x, d);
        if ((int)lane_id() >= d) x = Op::apply(y, x);
    }
    return x;
}

// Reduction across the warp in lane order; every lane gets the result.
template <class Op, class A> __device__ __forceinline__ A warp_reduce(A x) {
    return shfl_from(warp_inclusive_scan<Op>(x), 31);
}

// ROWS rows reduced at once, each across the warp in lane order (row r: lane 0's x[r] ⊕ … ⊕ lane 31's),
// by warp_reduce's own balanced tree, so with the same bits. Each of the first log2(ROWS) levels halves
// the rows a lane holds: it keeps the half its lane bit names, combined with its partner's copy, and sends
// the other half; the last levels combine one value: ROWS + 4 - log2(ROWS) shuffles, and one per row
// total read back (warp_row_total), where ROWS warp_reduces take 6·ROWS (8 rows: 17 against 48).
// Returns a value from which warp_row_total reads each row's total. x is overwritten.
template <class Op, int ROWS, class A> __device__ __forceinline__ A warp_reduce_rows(A (&x)[ROWS]) {
    static_assert(ROWS >= 1 && ROWS <= 32 && (ROWS & (ROWS - 1)) == 0, "ROWS: a power of two up to 32");
    const unsigned lane = lane_id();
    int level = 0;
#pragma unroll
    for (int half = ROWS / 2; half >= 1; half /= 2, ++level) {
        const bool hi = lane & (1u << level);
#pragma unroll
        for (int k = 0; k < half; ++k) {
            const A keep = hi ? x[half + k] : x[k];
            const A send = hi ? x[k] : x[half + k];
            const A got = shfl_from(send, (int)(lane ^ (1u << level)));
            x[k] = hi ? Op::apply(got, keep) : Op::apply(keep, got);
        }
    }
#pragma unroll
    for (int l = 0; l < 5; ++l) {
        if (l < level) continue;
        const bool hi = lane & (1u << l);
        const A got = shfl_from(x[0], (int)(lane ^ (1u << l)));
        x[0] = hi ? Op::apply(got, x[0]) : Op::apply(x[0], got);
    }
    return x[0];
}

// Row r's total from warp_reduce_rows' result `v` (every lane): the lanes whose low log2(ROWS) bits,
// reversed, are r hold it.
template <int ROWS, class A> __device__ __forceinline__ A warp_row_total(A v, int r) {
    int lane = 0, level = 0;
#pragma unroll
    for (int half = ROWS / 2; half >= 1; half /= 2, ++level)
        if (r & half) lane |= 1 << level;
    return shfl_from(v, lane);
}

// acc ⊕ row 0 ⊕ row 1 ⊕ … ⊕ row (count-1), each row's total by warp_reduce_rows (warp_reduce's tree),
// the rows folded left in order: what one warp_reduce per row folded into acc gives, bit for bit. Every
// lane gets the result; `count` (≤ ROWS, the same in every lane) leaves the last rows out. x is overwritten.
template <class Op, int ROWS, class A> __device__ __forceinline__ A warp_fold_rows(A acc, A (&x)[ROWS], int count = ROWS) {
    const A totals = warp_reduce_rows<Op, ROWS>(x);
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
        if (r < count) acc = Op::apply(acc, warp_row_total<ROWS>(totals, r));
    return acc;
}

// acc ⊕ x_from ⊕ x_(from+1) ⊕ … ⊕ x_(to-1), one lane at a time in lane order (a left fold; `from` and `to`
// the same in every lane, 0 ≤ from ≤ to ≤ 32); every lane gets the result. The grouping of the operations
// depends on nothing but `from` and `to`, which is what deterministic float sums need (LB_DETERMINISTIC).
// Fully unrolled with predicated combines: the 32 shuffles do not wait on one another, only the combines
// form a chain.
template <class Op, class A> __device__ __forceinline__ A warp_fold_in_order(A acc, A x, int from, int to) {
#pragma unroll
    for (int l = 0; l < 32; ++l) {
        const A y = shfl_from(x, l);
        if (l >= from && l < to) acc = Op::apply(acc, y);
    }
    return acc;
}

// warp_fold_in_order(acc, x, from, 32), the same combines of the same operands in the same order (so the
// same bits), for a warp-uniform `from`: when only a few lanes remain, one shuffle per lane folded instead
// of all 32. The deterministic look-back's anchor fold (core/lookback.cuh) usually folds the one or two
// anchor entries after the nearest P (none when the nearest anchor already has its P), and its 32 shuffles
// (64 or 96 words for 8-byte values and pairs) sat on every tile's path to its prefix.
template <class Op, class A> __device__ __forceinline__ A warp_fold_tail(A acc, A x, int from) {
    constexpr int FEW = 4;
    if (from >= 32 - FEW) {
#pragma unroll
        for (int i = 0; i < FEW; ++i) {
            const int l = 32 - FEW + i;
            if (l >= from) acc = Op::apply(acc, shfl_from(x, l));
        }
        return acc;
    }
    return warp_fold_in_order<Op>(acc, x, from, 32);
}

}  // namespace lookback
