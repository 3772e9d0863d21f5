// sm_90 asynchronous copies: shared-memory barriers (mbarrier) and 1-D bulk copies (TMA) from global to
// shared memory. Only the persistent agents (persistent/scan_work.cuh) use them, and only when compiled for
// sm_90 or newer; the host never launches those kernels on older GPUs.
//
// A bulk copy writes shared memory through the "async proxy" and signals completion on an mbarrier as a
// byte count (complete_tx). A thread that waits for the barrier's phase (acquire, CTA scope) then sees the
// copied bytes. Nothing here writes shared memory through the generic proxy before a bulk copy reads or
// overwrites it, so no proxy fence is needed beyond the one after the barriers' initialisation.
#pragma once
#include "common.cuh"

namespace lookback {

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

// One thread initialises; then fence_barrier_init() and a __syncthreads() before any use.
__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" : : "r"(smem_addr(bar)), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the async proxy (the bulk copies' complete_tx).
__device__ __forceinline__ void fence_barrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" : : : "memory");
}

// Arrival (release, CTA scope): writes to shared memory before it are seen by a waiter of the phase.
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
    asm volatile("{\n\t.reg .b64 state;\n\tmbarrier.arrive.shared::cta.b64 state, [%0];\n\t}"
                 : : "r"(smem_addr(bar)) : "memory");
}
// Expects `bytes` more of bulk-copy completions in the current phase, without arriving.
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" : : "r"(smem_addr(bar)), "r"(bytes) : "memory");
}
// Waits (acquire, CTA scope) until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
    uint32_t done;
    do {
        asm volatile(
            "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
            : "=r"(done)
            : "r"(smem_addr(bar)), "r"(parity)
            : "memory");
    } while (!done);
}

// Bulk copy of `bytes` (a multiple of 16, both addresses 16-byte aligned) from global to shared memory,
// completing on `bar`.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :
                 : "r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
}

// Barrier among the first `THREADS` threads of the block only (hardware barrier `ID`; 0 is __syncthreads).
template <int ID, int THREADS> __device__ __forceinline__ void named_barrier() {
    asm volatile("bar.sync %0, %1;" : : "n"(ID), "n"(THREADS) : "memory");
}

}  // namespace lookback
