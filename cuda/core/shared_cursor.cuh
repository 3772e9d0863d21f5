// A write cursor into shared memory for compaction's staging: "store this item if its bit is set, then
// advance past it", in three instructions per item.
//
// Written in C++ (`if (keep) stage[pos] = x; pos += keep;`) the staging compiled to six instructions per
// item on sm_90 — a bit test, a second compare of the same bit, an add, a select to undo it, the address
// (pos × size + base) and the store — about a quarter of the select Work's instructions per tile (ncu
// source counters, benches/log 2026-12-01). Here the cursor is a 32-bit shared-space byte address and
// one predicate guards both the store and the advance: a bit test into a predicate, a predicated store, a
// predicated add.
#pragma once
#include "std_subset.cuh"
#include "async_copy.cuh"
#include "types.cuh"

namespace lookback {

struct SharedCursor {
    uint32_t addr;  // shared-space byte address of the next free place

    __device__ __forceinline__ explicit SharedCursor(const void* p) : addr(smem_addr(p)) {}

    // Stores `x` and advances by one item if `bits & bit` is not zero. volatile: the store has no result
    // the compiler could see used, and it must stay ordered with the other shared-memory accesses.
    template <class T> __device__ __forceinline__ void put_if(T x, uint32_t bits, uint32_t bit) {
        const typename Bits<sizeof(T)>::type v = to_bits(x);
// One item of WIDTH bits (operand %3), BYTES bytes: the bit test, then the store and the advance under it.
#define LOOKBACK_CURSOR_PUT(WIDTH, BYTES)                                                                   \
    "{\n\t.reg .pred p;\n\t.reg .b32 t;\n\tand.b32 t, %1, %2;\n\tsetp.ne.b32 p, t, 0;\n\t@p st.shared.b" #WIDTH \
    " [%0], %3;\n\t@p add.u32 %0, %0, " #BYTES ";\n\t}"
        if constexpr (sizeof(T) == 8) {
            asm volatile(LOOKBACK_CURSOR_PUT(64, 8) : "+r"(addr) : "r"(bits), "r"(bit), "l"((uint64_t)v) : "memory");
        } else if constexpr (sizeof(T) == 4) {
            asm volatile(LOOKBACK_CURSOR_PUT(32, 4) : "+r"(addr) : "r"(bits), "r"(bit), "r"((uint32_t)v) : "memory");
        } else if constexpr (sizeof(T) == 2) {
            asm volatile(LOOKBACK_CURSOR_PUT(16, 2) : "+r"(addr) : "r"(bits), "r"(bit), "h"((uint16_t)v) : "memory");
        } else {
            static_assert(sizeof(T) == 1, "items of 1, 2, 4 or 8 bytes");
            asm volatile(LOOKBACK_CURSOR_PUT(8, 1) : "+r"(addr) : "r"(bits), "r"(bit), "h"((uint16_t)v) : "memory");
        }
#undef LOOKBACK_CURSOR_PUT
    }
};

}  // namespace lookback
