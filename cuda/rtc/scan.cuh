// Entry points of a run-time compiled scan (src/rtc): the classic agent and the persistent engine's scan,
// instantiated for a user operator. The program that includes this header defines first
//   LOOKBACK_RTC_SCAN  a type with In, A and Out (input item, accumulator, output item) and the static
//                      __device__ functions load(In) -> A, apply(A, A) -> A, identity() -> A and
//                      store(A) -> Out, and the constant COMMUTATIVE (the user's declaration).
// The kernels are the agents scan.cu and pipe_scan.cu build for the built-in operators, with the user's
// policy: the same tuning rows, launch bounds and parameter block (the exclusive scan's seed holds the
// bits of an A), so the host plans and launches them as it does the built-in ones (src/plan.rs,
// Primitive::UserScan). The user's operator need not commute: both agents combine in tile order, unless
// it is declared commutative, when they take the built-in operators' order (scan_policy.cuh).
// Each module holds one scan, so the names are fixed.
#pragma once
#include "../classic/scan.cuh"
#include "../persistent/scan_work.cuh"
#include "user_op.cuh"

namespace lookback {

template <class U> struct UserScan {
    using In = typename U::In;
    using Out = typename U::Out;
    using A = typename U::A;
    using Op = UserScanOp<U>;
    // Declared by the user (UserScanOp::commutative); otherwise both agents combine in tile order.
    static constexpr bool COMMUTATIVE = U::COMMUTATIVE;
    // load is a transform: padding is skipped by index, whatever it holds.
    static constexpr bool PAD_IS_IDENTITY = false;
    // A reduction with the user's operator writes its total as an output item.
    using Total = Out;
    static __device__ __forceinline__ A load(In x) { return U::load(x); }
    static __device__ __forceinline__ A load_at(In x, uint64_t) { return U::load(x); }
    static __device__ __forceinline__ Out store(A a) { return U::store(a); }
    static __device__ __forceinline__ Total total(A a) { return U::store(a); }
    static __device__ __forceinline__ A seed(const uint64_t* raw) {
        A a;
        memcpy(&a, raw, sizeof(A));
        return a;
    }
    static __device__ __forceinline__ In pad() { return In{}; }
};

}  // namespace lookback

using lookback_rtc_scan_policy = lookback::UserScan<LOOKBACK_RTC_SCAN>;

extern "C" __global__ void __launch_bounds__(lookback::ScanAgent<lookback_rtc_scan_policy>::BLOCK_THREADS)
    lookback_rtc_scan(lookback::ScanParams p) {
    lookback::ScanAgent<lookback_rtc_scan_policy>::run(p);
}

// sm_90 or newer only (bulk copies): elsewhere the body traps, and the host never launches it there.
extern "C" __global__ void __launch_bounds__(lookback::PipeScanAgent<lookback_rtc_scan_policy>::THREADS, 1)
    lookback_rtc_pipe_scan(const __grid_constant__ lookback::ScanParams p) {
#if __CUDA_ARCH__ >= 900
    lookback::PipeScanAgent<lookback_rtc_scan_policy>::run(p);
#else
    __trap();
#endif
}
