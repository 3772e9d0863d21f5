// The floor of a stable partition into one buffer (issue 36 asks ≥ 0.85 of memcpy), measured apart from
// the library: the bare structure of the two passes, against cudaMemcpyAsync on the same bytes.
//
// Why two passes: a stable one-buffer partition writes the rejected items after every selected one, in
// input order, so a rejected item's place is (selected items in the whole input) + (rejected items before
// it). The first term is known only once the last item has been read. A single read of the input must
// therefore hold back every rejected item it reads before the end (all of them, but those of the last
// tiles): on-chip memory holds tens of MB, the input GBs, so they go through memory (a stash: one more
// write and read of each) or are read again. Reading from both ends and meeting in the middle does not
// help: a tile read from the front can place its selected items only, one read from the back its
// rejected items only, and at 50 % either way half of every tile waits. With half of the items rejected,
// any single-read scheme moves 2n (read, write) + n (stash write and read of n/2) item-bytes, the same as
// counting first (read n) and then partitioning (read n, write n): at best 2 / 3 of memcpy's rate.
//
// Rows (i32 items, 50 % below the threshold; µs, median of `reps` runs, CUDA events; ratio = memcpy's time
// ÷ the row's):
//   memcpy        cudaMemcpyAsync device to device (n items read and written)
//   count         one read of the input, counting the items below the threshold (the first pass)
//   copy          one read and one write of every item: a partition with no predicate and no look-back
//   count+copy    the two, back to back: the bare two-pass structure, the stable partition's ceiling
//
// Build (the pinned nvcc):  nvcc -O3 -std=c++17 -arch=sm_90 -I cuda -o partition_floor \
//                                benches/probes/partition_floor.cu     (add -L<its lib> for cudart_static)
// Run:                      ./partition_floor [reps] [log2 sizes, e.g. 24,26,28]
#include "check.cuh"

constexpr int THREADS = 256;
constexpr int UNROLL = 4;  // 16-byte chunks in flight per thread

// A thread's UNROLL chunks of a grid-stride step from `base`, `fill` past the end.
__device__ __forceinline__ void load_chunks(const uint4* in, size_t base, size_t chunks, uint4 (&v)[UNROLL], uint4 fill) {
#pragma unroll
    for (int i = 0; i < UNROLL; ++i) {
        const size_t k = base + (size_t)i * THREADS;
        v[i] = k < chunks ? in[k] : fill;
    }
}

__global__ void __launch_bounds__(THREADS) count_pass(const uint4* in, size_t chunks, int threshold,
                                                     unsigned long long* count) {
    __shared__ unsigned warp_counts[THREADS / 32];
    unsigned c = 0;
    const size_t stride = (size_t)gridDim.x * THREADS * UNROLL;
    for (size_t base = (size_t)blockIdx.x * THREADS * UNROLL + threadIdx.x; base < chunks; base += stride) {
        uint4 v[UNROLL];
        load_chunks(in, base, chunks, v, make_uint4(0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff));
#pragma unroll
        for (int i = 0; i < UNROLL; ++i) {
            c += ((int)v[i].x < threshold) + ((int)v[i].y < threshold) + ((int)v[i].z < threshold) +
                 ((int)v[i].w < threshold);
        }
    }
    c = __reduce_add_sync(0xffffffffu, c);
    if ((threadIdx.x & 31) == 0) warp_counts[threadIdx.x / 32] = c;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned total = 0;
        for (int w = 0; w < THREADS / 32; ++w) total += warp_counts[w];
        atomicAdd(count, (unsigned long long)total);
    }
}

__global__ void __launch_bounds__(THREADS) copy_pass(const uint4* in, uint4* out, size_t chunks) {
    const size_t stride = (size_t)gridDim.x * THREADS * UNROLL;
    for (size_t base = (size_t)blockIdx.x * THREADS * UNROLL + threadIdx.x; base < chunks; base += stride) {
        uint4 v[UNROLL];
        load_chunks(in, base, chunks, v, make_uint4(0, 0, 0, 0));
#pragma unroll
        for (int i = 0; i < UNROLL; ++i) {
            const size_t k = base + (size_t)i * THREADS;
            if (k < chunks) out[k] = v[i];
        }
    }
}

__global__ void fill(uint32_t* p, size_t n, uint64_t seed) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t x = (i + seed) * 0x9e3779b97f4a7c15ull;
        x ^= x >> 31;
        x *= 0xbf58476d1ce4e5b9ull;
        p[i] = (uint32_t)(x >> 32) & 0x7fffffffu;  // uniform in [0, 2^31): half below 2^30
    }
}

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
    const std::vector<int> sizes = probe_sizes(argc > 2 ? argv[2] : "24,26,28");
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, count_pass, THREADS, 0));
    const unsigned grid = (unsigned)(prop.multiProcessorCount * per_sm);
    std::printf("partition_floor: %s, %d SMs, grid %u × %d; median of %d runs, CUDA events\n", prop.name,
                prop.multiProcessorCount, grid, THREADS, reps);
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    unsigned long long* count;
    CHECK(cudaMalloc(&count, 8));
    const int threshold = 1 << 30;
    for (int log2n : sizes) {
        const size_t n = (size_t)1 << log2n, bytes = 4 * n, chunks = bytes / 16;
        uint32_t *in, *out;
        CHECK(cudaMalloc(&in, bytes));
        CHECK(cudaMalloc(&out, bytes));
        fill<<<1024, 256>>>(in, n, log2n);
        CHECK(cudaMemset(count, 0, 8));
        count_pass<<<grid, THREADS>>>((const uint4*)in, chunks, threshold, count);
        CHECK(cudaDeviceSynchronize());
        unsigned long long selected = 0;
        CHECK(cudaMemcpy(&selected, count, 8, cudaMemcpyDeviceToHost));
        auto timed = [&](auto&& work) {
            return probe_median_us(reps, e0, e1, [&] {
                CHECK(cudaMemsetAsync(count, 0, 8));
                CHECK(cudaEventRecord(e0));
                work();
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(e1));
            });
        };
        const auto count_launch = [&] { count_pass<<<grid, THREADS>>>((const uint4*)in, chunks, threshold, count); };
        const auto copy_launch = [&] { copy_pass<<<grid, THREADS>>>((const uint4*)in, (uint4*)out, chunks); };
        const double memcpy_us = timed([&] { CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice)); });
        const double count_us = timed(count_launch);
        const double copy_us = timed(copy_launch);
        const double both_us = timed([&] {
            count_launch();
            copy_launch();
        });
        auto row = [&](const char* name, double us) {
            std::printf("floor %-12s i32 n=2^%d  t= %9.1f us  vs_memcpy %.3f\n", name, log2n, us, memcpy_us / us);
        };
        row("memcpy", memcpy_us);
        row("count", count_us);
        row("copy", copy_us);
        row("count+copy", both_us);
        std::printf("selected %llu of %zu (%.1f %%)\n", selected, n, 100.0 * selected / n);
        CHECK(cudaFree(in));
        CHECK(cudaFree(out));
    }
    return 0;
}
