// What the probes share: CHECK(call), the CUDA runtime error check (prints the failing call and exits),
// a 64-bit mixer for their test data, their list-of-sizes argument, and the look-back parameters and timed
// launch of a classic agent's grid.
#pragma once
#include <cuda_runtime.h>
#include <cstdio>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/params.cuh"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e = (x);                                                                       \
        if (e != cudaSuccess) {                                                                    \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

// A 64-bit finaliser (MurmurHash3's): well-spread bits from an item index, for keys and values.
inline uint64_t probe_mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

// "20,22,24": log2 sizes, comma-separated.
inline std::vector<int> probe_sizes(const char* list) {
    std::vector<int> sizes;
    for (const char* c = list; *c; ++c) {
        sizes.push_back(std::atoi(c));
        while (c[1] && c[1] != ',') ++c;
        if (c[1] == ',') ++c;
    }
    return sizes;
}

// The look-back parameters src/launch/ passes for a classic grid of `tiles` tiles on `sms` SMs: the tile
// launch word and then the status words in `ws` (zeroed before each launch: round 0, epoch 1; no second
// region to clear, status_tiles 0), the delays (an eighth of
// them for grids under 1024 tiles), and the guessed tile prefetched outside 2-8 waves.
inline lookback::LookbackParams probe_lookback(uint64_t* ws, uint64_t tiles, uint64_t sms, unsigned first_poll_ns,
                                               unsigned poll_ns) {
    const bool small = tiles < 1024;
    lookback::LookbackParams lb{};
    lb.status = ws + 2;
    lb.header = ws;
    lb.first_poll_ns = small ? first_poll_ns / 8 : first_poll_ns;
    lb.poll_ns = small ? poll_ns / 8 : poll_ns;
    lb.flags = (tiles <= 2 * sms || tiles > 8 * sms) ? lookback::LB_PREFETCH_GUESS : 0;
    return lb;
}

// One launch between events e0 and e1, after zeroing the counter and the status words of `tiles` tiles
// (outside the timed span).
template <class Launch>
void probe_timed_launch(uint64_t* ws, uint64_t tiles, cudaEvent_t e0, cudaEvent_t e1, Launch&& launch) {
    CHECK(cudaMemsetAsync(ws, 0, (2 + 2 * tiles) * 8));
    CHECK(cudaEventRecord(e0));
    launch();
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(e1));
}

// One line on a probe's kernel: its registers, static shared and local memory, and resident blocks per SM
// at `threads` threads per block (what its __launch_bounds__ and shared memory allow).
inline void probe_print_kernel(const char* name, const void* fn, int threads) {
    cudaFuncAttributes a;
    CHECK(cudaFuncGetAttributes(&a, fn));
    int blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, threads, 0));
    std::printf("kernel %-20s %3d registers, %5zu B static shared, %3zu B local, %d blocks per SM\n", name, a.numRegs,
                a.sharedSizeBytes, a.localSizeBytes, blocks);
}

// The median time in µs of `reps` calls of `launch` (each recording events e0 and e1 around its work),
// after 3 warm-up calls.
template <class Launch> double probe_median_us(int reps, cudaEvent_t e0, cudaEvent_t e1, Launch&& launch) {
    std::vector<float> ms;
    for (int r = 0; r < reps + 3; ++r) {
        launch();
        CHECK(cudaEventSynchronize(e1));
        float t;
        CHECK(cudaEventElapsedTime(&t, e0, e1));
        if (r >= 3) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2] * 1e3;
}
