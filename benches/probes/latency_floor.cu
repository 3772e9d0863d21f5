// Latency floor of a single-pass look-back kernel at small sizes (issue 6's 2^16 target), measured
// apart from the library: how long does a kernel of the classic agents' skeleton take, stage by stage,
// against cudaMemcpyAsync on the same bytes, timed like the benchmark (CUDA events, everything enqueued
// behind a long memset, median of many runs, inputs rotated over 64 copies)?
//
// Each variant adds one stage of the classic agents (cuda/classic/scan.cuh) to a plain tile copy:
//   copy        block b copies tile b (blockIdx ids; 256 threads × CPT 16-byte chunks)
//   +atomic     tile id from a global atomic first (the agents' dynamic ids, DESIGN.md invariant 4)
//   +prefetch   and, while the atomic is in flight, tile blockIdx.x prefetched into L2 (one bulk prefetch)
//   +lookback   and the smallest look-back: reduce, publish, one window of ≤ 32 predecessors polled until
//               every one is ready, barrier, then the store (no compute beyond a warp reduction)
// No variant computes a prefix correctly: they bound what any kernel of this structure can reach.
//
// Cluster variants (sm_90 thread-block clusters, measured 2026-12-02: benches/data/h200-2026-12-02-0545/
// call1-latency-floor-clusters.txt): the whole grid is one cluster of ≤ 16 blocks, which the hardware
// schedules together, so tile = the block's rank in the cluster needs no atomic for forward progress, and
// the aggregates travel through distributed shared memory instead of L2:
//   cl_copy     the tile copy, launched as one cluster (what the cluster launch itself costs)
//   cl_pull     reduce, aggregate into the block's own shared memory, cluster barrier, warp 0 reads the
//               aggregates of the lower ranks remotely (ld.shared::cluster), a second barrier phase keeps
//               each block's shared memory alive until every reader is done
//   cl_push     mbarrier initialised and a cluster barrier arrived on before the loads (waited on after
//               them); each block sends its aggregate to every higher rank (st.async with complete_tx on
//               the receiver's mbarrier) and waits only for its own predecessors' bytes: a look-back whose
//               status words live in the receivers' shared memory
//
// Build (any nvcc ≥ 12 for sm_90):  nvcc -O3 -std=c++17 -arch=sm_90 -o latency_floor latency_floor.cu
// Run:                              ./latency_floor [reps]
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "check.cuh"

enum : int { ATOMIC = 1, PREFETCH = 2, LOOKBACK = 4 };
constexpr int THREADS = 256;

struct Ws {
    unsigned long long* counter;
    unsigned long long* status;
    unsigned long long base;
    unsigned epoch;
};

__device__ __forceinline__ void prefetch_l2(const void* p, unsigned bytes) {
#if __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#endif
}

// The tile's chunks of `in` (zeros past the end), and back to `out`.
template <int CPT> __device__ __forceinline__ void load_tile(const uint4* in, size_t first, size_t chunks, uint4 (&v)[CPT]) {
#pragma unroll
    for (int i = 0; i < CPT; ++i) {
        const size_t c = first + (size_t)i * THREADS + threadIdx.x;
        v[i] = c < chunks ? in[c] : make_uint4(0, 0, 0, 0);
    }
}
template <int CPT> __device__ __forceinline__ void store_tile(uint4* out, size_t first, size_t chunks, const uint4 (&v)[CPT]) {
#pragma unroll
    for (int i = 0; i < CPT; ++i) {
        const size_t c = first + (size_t)i * THREADS + threadIdx.x;
        if (c < chunks) out[c] = v[i];
    }
}
// The block's sum of its words, in warp 0 (every lane; other warps get 0). One barrier.
template <int CPT> __device__ __forceinline__ unsigned block_sum(const uint4 (&v)[CPT], unsigned* warp_sums) {
    unsigned s = 0;
#pragma unroll
    for (int i = 0; i < CPT; ++i) s += v[i].x + v[i].y + v[i].z + v[i].w;
    s = __reduce_add_sync(0xffffffffu, s);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x >= 32) return 0;
    const unsigned lane = threadIdx.x & 31;
    return __reduce_add_sync(0xffffffffu, lane < THREADS / 32 ? warp_sums[lane] : 0);
}

template <int MODE, int CPT> __global__ void __launch_bounds__(THREADS) probe(const uint4* in, uint4* out, size_t chunks, Ws ws) {
    constexpr size_t TILE = (size_t)THREADS * CPT;
    __shared__ unsigned long long tile_s;
    __shared__ unsigned warp_sums[THREADS / 32];
    __shared__ unsigned prefix_s;
    size_t tile = blockIdx.x;
    if (MODE & ATOMIC) {
        if (threadIdx.x == 0) {
            if (MODE & PREFETCH) {
                const size_t first = (size_t)blockIdx.x * TILE;
                const size_t n = chunks - first < TILE ? chunks - first : TILE;
                prefetch_l2(in + first, (unsigned)(n * 16));
            }
            tile_s = atomicAdd(ws.counter, 1ull) - ws.base;
        }
        __syncthreads();
        tile = tile_s;
    }
    const size_t first = tile * TILE;
    uint4 v[CPT];
    load_tile(in, first, chunks, v);
    if (MODE & LOOKBACK) {
        const unsigned agg = block_sum(v, warp_sums);
        if (threadIdx.x < 32) {
            if (threadIdx.x == 0) {
                const unsigned long long w = ((unsigned long long)ws.epoch << 32) | agg;
                asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(ws.status + tile), "l"(w) : "memory");
            }
            unsigned sum = 0;
            const long long pred = (long long)tile - 1 - threadIdx.x;
            if (pred >= 0) {
                unsigned long long w;
                for (;;) {
                    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(ws.status + pred) : "memory");
                    if ((unsigned)(w >> 32) == ws.epoch) break;
                }
                sum = (unsigned)w;
            }
            sum = __reduce_add_sync(0xffffffffu, sum);
            if (threadIdx.x == 0) prefix_s = sum;
        }
        __syncthreads();
        v[0].x += prefix_s;
    }
    store_tile(out, first, chunks, v);
}

enum : int { CL_COPY = 0, CL_PULL = 1, CL_PUSH = 2 };

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
// The address of this block's shared variable at `p` in the shared memory of block `rank` of the cluster.
__device__ __forceinline__ unsigned remote_addr(const void* p, unsigned rank) {
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_addr(p)), "r"(rank));
    return r;
}
__device__ __forceinline__ void cluster_arrive_release() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }

template <int MODE, int CPT>
__global__ void __launch_bounds__(THREADS) cluster_probe(const uint4* in, uint4* out, size_t chunks) {
    constexpr size_t TILE = (size_t)THREADS * CPT;
    __shared__ unsigned warp_sums[THREADS / 32];
    __shared__ unsigned prefix_s;
    __shared__ unsigned aggregate_s;       // pull: this block's aggregate, read by higher ranks
    __shared__ unsigned inbox[16];         // push: the aggregates of the lower ranks, written by them
    __shared__ alignas(8) unsigned long long inbox_full;
    const unsigned rank = cluster_rank();
    if (MODE == CL_PUSH) {
        if (threadIdx.x == 0) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&inbox_full)) : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        }
        __syncthreads();
        cluster_arrive_relaxed();  // waited on after the loads: every mbarrier is initialised by then
    }
    const size_t tile = blockIdx.x;
    const size_t first = tile * TILE;
    uint4 v[CPT];
    load_tile(in, first, chunks, v);
    if (MODE != CL_COPY) {
        const unsigned lane = threadIdx.x & 31;
        const unsigned agg = block_sum(v, warp_sums);
        if (MODE == CL_PULL) {
            if (threadIdx.x == 0) aggregate_s = agg;
            cluster_arrive_release();
            cluster_wait();
            if (threadIdx.x < 32) {
                unsigned x = 0;
                if (lane < rank) asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(x) : "r"(remote_addr(&aggregate_s, lane)) : "memory");
                x = __reduce_add_sync(0xffffffffu, x);
                if (lane == 0) prefix_s = x;
            }
            cluster_arrive_relaxed();  // done reading the others' shared memory; waited on before exit
        } else {
            cluster_wait();
            if (threadIdx.x < 32) {
                const unsigned blocks = gridDim.x;
                if (lane > rank && lane < blocks) {
                    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%0], %1, [%2];" ::"r"(
                                     remote_addr(&inbox[rank], lane)),
                                 "r"(agg), "r"(remote_addr(&inbox_full, lane))
                                 : "memory");
                }
                if (lane == 0) {
                    unsigned long long state;
                    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
                                 : "=l"(state)
                                 : "r"(smem_addr(&inbox_full)), "r"(4u * rank)
                                 : "memory");
                }
                unsigned done = 0;
                while (!done) {
                    asm volatile(
                        "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                        : "=r"(done)
                        : "r"(smem_addr(&inbox_full))
                        : "memory");
                }
                unsigned x = lane < rank ? inbox[lane] : 0;
                x = __reduce_add_sync(0xffffffffu, x);
                if (lane == 0) prefix_s = x;
            }
        }
        __syncthreads();
        v[0].x += prefix_s;
    }
    store_tile(out, first, chunks, v);
    if (MODE == CL_PULL) cluster_wait();
}

__global__ void empty_kernel() {}

struct Bench {
    cudaStream_t stream;
    void* head_start;
    size_t head_bytes = size_t(1) << 30;
    std::vector<cudaEvent_t> starts, ends;
    int reps;
    explicit Bench(int r) : reps(r) {
        CHECK(cudaStreamCreate(&stream));
        CHECK(cudaMalloc(&head_start, head_bytes));
        starts.resize(reps);
        ends.resize(reps);
        for (int i = 0; i < reps; ++i) {
            CHECK(cudaEventCreate(&starts[i]));
            CHECK(cudaEventCreate(&ends[i]));
        }
    }
    // Median µs of `step(i)`, every run enqueued behind memsets so the host never starves the GPU.
    template <class F> double median_us(F&& step) {
        const int warmup = 3;
        for (int i = 0; i < (reps + warmup + 14) / 15; ++i) CHECK(cudaMemsetAsync(head_start, 0, head_bytes, stream));
        for (int i = 0; i < warmup + reps; ++i) {
            if (i >= warmup) CHECK(cudaEventRecord(starts[i - warmup], stream));
            step(i);
            if (i >= warmup) CHECK(cudaEventRecord(ends[i - warmup], stream));
        }
        CHECK(cudaStreamSynchronize(stream));
        CHECK(cudaGetLastError());
        std::vector<float> ms(reps);
        for (int i = 0; i < reps; ++i) CHECK(cudaEventElapsedTime(&ms[i], starts[i], ends[i]));
        std::sort(ms.begin(), ms.end());
        return ms[reps / 2] * 1e3;
    }
};

template <int MODE, int CPT>
double run_probe(Bench& b, const std::vector<uint4*>& in, const std::vector<uint4*>& out, size_t chunks, Ws& ws) {
    const unsigned grid = (unsigned)((chunks + THREADS * CPT - 1) / (THREADS * CPT));
    return b.median_us([&](int i) {
        ws.epoch += 1;
        probe<MODE, CPT><<<grid, THREADS, 0, b.stream>>>(in[i % in.size()], out[i % out.size()], chunks, ws);
        if (MODE & ATOMIC) ws.base += grid;  // the counter moves only when the kernel takes ids
    });
}

// One cluster of every tile (≤ 16 blocks); nothing when the size needs more tiles than that.
template <int MODE, int CPT>
double run_cluster(Bench& b, const std::vector<uint4*>& in, const std::vector<uint4*>& out, size_t chunks) {
    const unsigned grid = (unsigned)((chunks + THREADS * CPT - 1) / (THREADS * CPT));
    if (grid > 16) return -1;
    auto kernel = cluster_probe<MODE, CPT>;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = grid;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(THREADS);
    cfg.stream = b.stream;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    return b.median_us([&](int i) {
        CHECK(cudaLaunchKernelEx(&cfg, kernel, (const uint4*)in[i % in.size()], out[i % out.size()], chunks));
    });
}

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 200;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("latency_floor: %s, %d SMs; median of %d runs, CUDA events, behind a 1 GiB memset\n", prop.name,
                prop.multiProcessorCount, reps);
    Bench b(reps);
    Ws ws{};
    CHECK(cudaMalloc(&ws.counter, 8));
    CHECK(cudaMemset(ws.counter, 0, 8));
    const size_t max_tiles = 1 << 16;
    CHECK(cudaMalloc(&ws.status, 8 * max_tiles));
    CHECK(cudaMemset(ws.status, 0, 8 * max_tiles));
    for (int log2n : {10, 12, 14, 16, 17, 18, 20}) {
        const size_t bytes = (size_t)4 << log2n;  // i32 items
        const size_t chunks = bytes / 16;
        const int copies = 64;
        std::vector<uint4*> in(copies), out(copies);
        for (int c = 0; c < copies; ++c) {
            CHECK(cudaMalloc(&in[c], bytes));
            CHECK(cudaMalloc(&out[c], bytes));
            CHECK(cudaMemset(in[c], c + 1, bytes));
        }
        auto row = [&](const char* name, double us) {
            std::printf("floor %-28s i32 n=2^%d  t= %8.2f us\n", name, log2n, us);
        };
        row("memcpy", b.median_us([&](int i) {
            CHECK(cudaMemcpyAsync(out[i % copies], in[i % copies], bytes, cudaMemcpyDeviceToDevice, b.stream));
        }));
        row("empty_1_block", b.median_us([&](int) { empty_kernel<<<1, THREADS, 0, b.stream>>>(); }));
        const unsigned grid16 = (unsigned)((chunks + THREADS * 4 - 1) / (THREADS * 4));
        row("empty_tile_grid", b.median_us([&](int) { empty_kernel<<<grid16, THREADS, 0, b.stream>>>(); }));
        row("copy_cpt4", run_probe<0, 4>(b, in, out, chunks, ws));
        row("copy_atomic_cpt4", run_probe<ATOMIC, 4>(b, in, out, chunks, ws));
        row("copy_atomic_prefetch_cpt4", run_probe<ATOMIC | PREFETCH, 4>(b, in, out, chunks, ws));
        row("lookback_cpt4", run_probe<ATOMIC | LOOKBACK, 4>(b, in, out, chunks, ws));
        row("lookback_prefetch_cpt4", run_probe<ATOMIC | PREFETCH | LOOKBACK, 4>(b, in, out, chunks, ws));
        row("copy_cpt1", run_probe<0, 1>(b, in, out, chunks, ws));
        row("lookback_cpt1", run_probe<ATOMIC | LOOKBACK, 1>(b, in, out, chunks, ws));
        row("lookback_prefetch_cpt1", run_probe<ATOMIC | PREFETCH | LOOKBACK, 1>(b, in, out, chunks, ws));
        auto cluster_row = [&](const char* name, double us) {
            if (us >= 0) row(name, us);
        };
        cluster_row("cl_copy_cpt4", run_cluster<CL_COPY, 4>(b, in, out, chunks));
        cluster_row("cl_pull_cpt4", run_cluster<CL_PULL, 4>(b, in, out, chunks));
        cluster_row("cl_push_cpt4", run_cluster<CL_PUSH, 4>(b, in, out, chunks));
        cluster_row("cl_copy_cpt8", run_cluster<CL_COPY, 8>(b, in, out, chunks));
        cluster_row("cl_pull_cpt8", run_cluster<CL_PULL, 8>(b, in, out, chunks));
        cluster_row("cl_push_cpt8", run_cluster<CL_PUSH, 8>(b, in, out, chunks));
        cluster_row("cl_push_cpt16", run_cluster<CL_PUSH, 16>(b, in, out, chunks));
        for (int c = 0; c < copies; ++c) {
            CHECK(cudaFree(in[c]));
            CHECK(cudaFree(out[c]));
        }
    }
    return 0;
}
