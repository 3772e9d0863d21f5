// What a scan scans: the policy that the scan agents (classic/scan.cuh, persistent/scan_work.cuh) take.
//
// A policy provides the input item type In, the accumulator type A, the output item type Out, and
//   Op                     the combine as an operator type (apply, identity<A>()), which the look-back,
//                          warp and block scans take as it is;
//   load(In) -> A          what an item contributes (a transform on load: u8 flags → u64 counts);
//   store(A) -> Out        what a scanned value writes;
//   seed(raw) -> A         an exclusive scan's initial value, from the bits in ScanParams::seed (raw: its
//                          four words);
//   pad() -> In            what fills a partial tile past its items;
//   COMMUTATIVE            whether the agents may fold items out of tile order (the classic agent reduces
//                          a tile as it arrives, striped; the persistent one reduces lane-major);
//   PAD_IS_IDENTITY        whether load(pad()) is the identity, so padding may be combined like items;
//                          else the agents skip it by index (the tile's `valid`);
//   load_at(In, index) -> A  what an item contributes where the agents know its index (every policy:
//                          load(x), or the item with its index for arg_min);
//   Total, total(A)        what a reduction writes to out[0] (ScanParams::reduce, classic/reduce.cuh);
//   fold_next(A, In, index) -> A  acc ⊕ the item at `index`, for an agent that folds each thread's items
//                          one by one in increasing index order (classic/reduce.cuh), where arg_min needs
//                          no tie-break by index (arg_policy.cuh);
//   fold_chunk(A, chunk, index) -> A  the same over one 16-byte chunk of consecutive items from `index`
//                          (TileIO's Chunk: `vec` and `items`), for a policy that can do better than item
//                          by item (arg_min over packed bytes); the others fold its items with fold_next.
// The built-in scans are BuiltinScan<T, Op>: In = Out = T, A = Acc<T>::type; user scans compiled at run
// time are rtc/scan.cuh's UserScan. arg_min and arg_max are arg_policy.cuh's ArgReduce, which only the
// reduction agent (classic/reduce.cuh) takes, and which has no load, store or pad.
#pragma once
#include "ops.cuh"
#include "tuning.cuh"
#include "types.cuh"

namespace lookback {

template <class T, class Op_> struct BuiltinScan {
    using In = T;
    using Out = T;
    using A = typename Acc<T>::type;
    using Op = Op_;
    static constexpr bool COMMUTATIVE = true;  // every built-in operator commutes
    static constexpr bool PAD_IS_IDENTITY = true;
    using Total = Out;
    static __device__ __forceinline__ A load(In x) { return Acc<T>::load(x); }
    static __device__ __forceinline__ A load_at(In x, uint64_t) { return load(x); }
    static __device__ __forceinline__ A fold_next(A acc, In x, uint64_t) { return Op::apply(acc, load(x)); }
    template <class Chunk> static __device__ __forceinline__ A fold_chunk(A acc, const Chunk& c, uint64_t index) {
#pragma unroll
        for (int e = 0; e < (int)(sizeof(c.items) / sizeof(c.items[0])); ++e) acc = fold_next(acc, c.items[e], index + e);
        return acc;
    }
    static __device__ __forceinline__ Out store(A a) { return Acc<T>::store(a); }
    static __device__ __forceinline__ Total total(A a) { return store(a); }
    // The host passes the initial value as an element of T (f16 → f32 here).
    static __device__ __forceinline__ A seed(const uint64_t* raw) { return load_seed<T>(raw[0]); }
    static __device__ __forceinline__ In pad() { return Acc<T>::store(Op::template identity<A>()); }
};

// The classic agent's tile shape for input and output items of IN and OUT bytes (1, 2, 4, 8 or 16; the
// larger at most 8 times the smaller). The scan tuning row of the larger size (8-byte row for 16) gives
// the block and the chunks per thread of the larger type; a thread then owns at least one whole chunk of
// the smaller type, so both sides move in whole 16-byte chunks. Equal sizes of at most 8 bytes give the
// row itself: the built-in scans' shapes. src/rtc/scan_shape.rs computes the same numbers for the host.
template <int IN, int OUT> struct ScanShape {
    static constexpr int BIG = IN > OUT ? IN : OUT;
    static constexpr int SMALL = IN > OUT ? OUT : IN;
    using Row = typename Tuning<Algo::scan, (BIG < 8 ? BIG : 8)>::Shape;
    static constexpr int BLOCK_THREADS = Row::BLOCK_THREADS;
    static constexpr int ROW_ITEMS = Row::CHUNKS_PER_THREAD * 16 / BIG;
    static constexpr int ITEMS_PER_THREAD = ROW_ITEMS > 16 / SMALL ? ROW_ITEMS : 16 / SMALL;
    static constexpr int IN_CHUNKS = ITEMS_PER_THREAD * IN / 16;
    static constexpr int OUT_CHUNKS = ITEMS_PER_THREAD * OUT / 16;
    static_assert(BIG <= 16 && BIG <= 8 * SMALL, "item sizes up to 16 bytes, differing by at most 8 times");
};

}  // namespace lookback
