// Per-tile timeline of a classic look-back launch (issue 6's mid sizes): when each tile's block took
// its id, finished its loads, its block scan, its look-back, its staging and its stores. Built outside
// the library from the same agent headers, with the LB_TRACE hook (in cuda/core/) recording
// %globaltimer for thread 0 of each block; the library compiles the hook out.
//
// Kinds: rle (run_length_encode, keys in runs of 4), nontrivial (non-trivial runs, the same keys),
// unique (i32, runs of 4), flagged (i32, half the flags set), selectif (i32, x < 0: half the items). The encodings' keys are i32 by default;
// -DPROBE_SELECT_BYTES=8 builds the selection kinds for i64 items (the same values). -DPROBE_KEY_BYTES=1, 2 or 8 builds the encodings for u8, f16 or f64 keys (IEEE equality, as the library passes for
// float keys), so one binary traces one key width. Launch parameters follow src/plan.rs: back-off from cuda/core/tuning.cuh (an eighth below
// 1024 tiles), the L2 prefetch of the guessed tile for grids of at most 2 or more than 8 tiles per SM.
// Inputs rotate over copies (≥ 256 MB in all, beyond L2) as in the benches; timing with CUDA events
// around the kernel alone (the status words are cleared by a memset before each launch, outside them).
//
// Build (nvcc ≥ 12, sm_90):
//   nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I cuda -o trace_tiles benches/probes/trace_tiles.cu
// Run:   ./trace_tiles KIND LOG2N [reps] [csv]   (the csv gets one row per tile)
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.cuh"

__device__ unsigned long long* g_trace;  // 8 words per tile: points 0-5, SM id, unused
__device__ int g_trace_on;

__device__ __forceinline__ void probe_trace(uint64_t tile, int point) {
    if (threadIdx.x != 0 || !g_trace_on) return;
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    g_trace[tile * 8 + point] = t;
    if (point == 0) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        g_trace[tile * 8 + 6] = sm;
    }
}
#define LB_TRACE(tile, point) probe_trace((tile), (point))

#include "classic/runs.cuh"
#include "classic/select.cuh"

using namespace lookback;
#ifndef PROBE_KEY_BYTES
#define PROBE_KEY_BYTES 4
#endif
constexpr int KB = PROBE_KEY_BYTES;
using Key = Bits<KB>::type;
using Rle = RunsAgent<KB, ValueBits<0>::type, OpMax, false>;
// The selection kinds' item type: i32, or i64 with -DPROBE_SELECT_BYTES=8 (the same values, widened).
#ifndef PROBE_SELECT_BYTES
#define PROBE_SELECT_BYTES 4
#endif
using SelItem = std::conditional_t<PROBE_SELECT_BYTES == 8, int64_t, int32_t>;
using Sel = SelectAgent<SelItem>;

extern "C" __global__ void __launch_bounds__(Rle::BLOCK_THREADS, Rle::MIN_BLOCKS) probe_rle(RunsParams p) { Rle::run(p); }
// The library's encodings take this one for inputs of at most 1024 tiles of the other (src/plan.rs).
using RleSmall = RunsAgent<KB, ValueBits<0>::type, OpMax, false, true>;
extern "C" __global__ void __launch_bounds__(RleSmall::BLOCK_THREADS, RleSmall::MIN_BLOCKS) probe_rle_small(RunsParams p) {
    RleSmall::run(p);
}
// The library's select kernels are compiled for SelectAgent::MIN_BLOCKS resident blocks; -D to try others.
#ifndef PROBE_SELECT_MIN_BLOCKS
#define PROBE_SELECT_MIN_BLOCKS Sel::MIN_BLOCKS
#endif
extern "C" __global__ void __launch_bounds__(Sel::BLOCK_THREADS, PROBE_SELECT_MIN_BLOCKS) probe_select(SelectParams p) { Sel::run(p); }

static uint32_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (uint32_t)x;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s rle|nontrivial|unique|flagged|selectif LOG2N [reps] [csv]\n", argv[0]);
        return 2;
    }
    const char* kind = argv[1];
    const bool non_trivial = !std::strcmp(kind, "nontrivial");
    const bool rle = non_trivial || !std::strcmp(kind, "rle"), flagged = !std::strcmp(kind, "flagged");
    const bool select_if = !std::strcmp(kind, "selectif");  // x < 0: half of the items
    const uint64_t n = 1ull << std::atoi(argv[2]);
    const int reps = argc > 3 ? std::atoi(argv[3]) : 50;
    const char* csv = argc > 4 ? argv[4] : nullptr;
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));

    // The encodings' small-grid kernel, with its own tile, for inputs of at most 1024 tiles of the other.
    const bool rle_small = rle && n <= 1024ull * Rle::TILE_ITEMS;
    const int tile_items = rle ? (rle_small ? RleSmall::TILE_ITEMS : Rle::TILE_ITEMS) : Sel::IO::TILE_ITEMS;
    const int threads = rle ? (rle_small ? RleSmall::BLOCK_THREADS : Rle::BLOCK_THREADS) : Sel::BLOCK_THREADS;
    const uint64_t tiles = (n + tile_items - 1) / tile_items;
    const bool small = tiles < 1024;
    const unsigned first_poll = small ? 1000 / 8 : 1000, poll = small ? 500 / 8 : 500;
    const bool prefetch = tiles <= 2ull * sms || tiles > 8ull * sms;
    const uint64_t bytes = n * (rle ? 4 : sizeof(SelItem));
    const uint64_t key_bytes = rle ? n * KB : bytes;
    const int copies = (int)std::max<uint64_t>(1, std::min<uint64_t>(64, (256ull << 20) / key_bytes));

    std::vector<int32_t> h(n);
    for (uint64_t i = 0; i < n; ++i) h[i] = (int32_t)(mix(i / 4) | 1u) * (int32_t)((i / 4) % 2 ? 1 : -1);
    const std::vector<SelItem> hs(h.begin(), h.end());
    std::vector<uint8_t> hf(n);
    for (uint64_t i = 0; i < n; ++i) hf[i] = mix(i ^ 0x5555) & 1;
    // Keys of the other widths: the same runs, as f16 or f64 values (finite, adjacent runs of opposite
    // signs, never zero, so every run head differs from its predecessor under IEEE ==).
    std::vector<Key> hk(n);
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t m = mix(i / 4), sign = (i / 4) % 2 ? 0 : 1;
        if constexpr (KB == 1) hk[i] = (Key)((m & 0x7fu) | 1u | (sign << 7));
        else if constexpr (KB == 2) hk[i] = (Key)((m & 0x3bffu) | 1u | (sign << 15));
        else if constexpr (KB == 8) hk[i] = (Key)((((m << 20) | 1u) & 0x3fffffffffffffffull) | (sign << 63));
        else hk[i] = (Key)h[i];
    }
    std::vector<void*> in(copies);
    for (auto& p : in) {
        CHECK(cudaMalloc(&p, std::max(bytes, key_bytes)));
        if (rle) CHECK(cudaMemcpy(p, hk.data(), key_bytes, cudaMemcpyHostToDevice));
        else CHECK(cudaMemcpy(p, hs.data(), bytes, cudaMemcpyHostToDevice));
    }
    uint8_t* flags;
    CHECK(cudaMalloc(&flags, n));
    CHECK(cudaMemcpy(flags, hf.data(), n, cudaMemcpyHostToDevice));
    void *out_a, *out_b;
    CHECK(cudaMalloc(&out_a, std::max(bytes, key_bytes)));
    CHECK(cudaMalloc(&out_b, bytes));
    uint64_t* ws;  // counter, num_selected, then 2 status words per tile
    const size_t ws_bytes = (2 + 2 * tiles) * 8;
    CHECK(cudaMalloc(&ws, ws_bytes));
    unsigned long long* trace;
    CHECK(cudaMalloc(&trace, tiles * 64));
    CHECK(cudaMemset(trace, 0, tiles * 64));
    CHECK(cudaMemcpyToSymbol(g_trace, &trace, sizeof(trace)));

    LookbackParams lb{};
    lb.status = ws + 2;
    lb.header = ws;  // zeroed: round 0, epoch 1
    lb.first_poll_ns = first_poll;
    lb.poll_ns = poll;
    lb.flags = prefetch ? LB_PREFETCH_GUESS : 0;

    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    auto launch = [&](int copy) {
        CHECK(cudaMemsetAsync(ws, 0, ws_bytes));
        CHECK(cudaEventRecord(e0));
        if (rle) {
            RunsParams p{};
            p.keys = in[copy];
            p.out_keys = out_a;
            p.out_values = out_b;
            p.num_runs = ws + 1;
            p.n = n;
            p.mode = non_trivial ? RUNS_NON_TRIVIAL : RUNS_ENCODE;
            p.length_bytes = 4;
            p.key_abs_mask = KB == 2 ? 0x7fffull : KB == 8 ? 0x7fffffffffffffffull : 0;
            p.key_inf_bits = KB == 2 ? 0x7c00ull : KB == 8 ? 0x7ff0000000000000ull : 0;
            p.lb = lb;
            if (rle_small) probe_rle_small<<<(unsigned)tiles, threads>>>(p);
            else probe_rle<<<(unsigned)tiles, threads>>>(p);
        } else {
            SelectParams p{};
            p.in = in[copy];
            p.out = out_a;
            p.flags = flags;
            p.num_selected = ws + 1;
            p.n = n;
            p.source = flagged ? SOURCE_FLAGS : select_if ? SOURCE_PRED : SOURCE_UNIQUE;
            if (select_if) {
                p.pred.len = 1;
                p.pred.op[0] = PRED_LT;
                p.pred.a[0] = 0;
            }
            p.mode = MODE_COMPACT;
            p.lb = lb;
            probe_select<<<(unsigned)tiles, threads>>>(p);
        }
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(e1));
    };
    std::vector<unsigned long long> tr(tiles * 8);
    // The span of a traced launch: first tile start to last tile's end of stores (µs), from `tr`.
    auto span_us = [&]() {
        unsigned long long lo = ~0ull, hi = 0;
        for (uint64_t t = 0; t < tiles; ++t) {
            lo = std::min(lo, tr[t * 8]);
            hi = std::max(hi, tr[t * 8 + 5]);
        }
        return (float)((hi - lo) / 1000.0);
    };
    // Median event time of `reps` launches after 5 warm-ups; traced, also the median span.
    std::vector<float> spans;
    auto median_us = [&](int on) {
        CHECK(cudaMemcpyToSymbol(g_trace_on, &on, sizeof(on)));
        std::vector<float> t;
        for (int r = 0; r < reps + 5; ++r) {
            launch(r % copies);
            CHECK(cudaEventSynchronize(e1));
            float ms;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            if (r < 5) continue;
            t.push_back(ms * 1000.f);
            if (on) {
                CHECK(cudaMemcpy(tr.data(), trace, tiles * 64, cudaMemcpyDeviceToHost));
                spans.push_back(span_us());
            }
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    };
    const float plain = median_us(0);
    const float traced = median_us(1);
    std::sort(spans.begin(), spans.end());
    const float median_span = spans[spans.size() / 2];
    uint64_t count = 0, expect = 0;
    CHECK(cudaMemcpy(&count, ws + 1, 8, cudaMemcpyDeviceToHost));
    if (flagged) for (uint64_t i = 0; i < n; ++i) expect += hf[i];
    else if (select_if) for (uint64_t i = 0; i < n; ++i) expect += h[i] < 0;
    else expect = n / 4;

    unsigned long long t0 = ~0ull, tend = 0;
    for (uint64_t t = 0; t < tiles; ++t) {
        t0 = std::min(t0, tr[t * 8]);
        tend = std::max(tend, tr[t * 8 + 5]);
    }
    std::printf("%s%s n=2^%s tiles=%llu (%.2f per SM) threads=%d backoff=%u/%u prefetch=%d: median %.2f us, traced %.2f us, "
                "count %llu (expected %llu)%s, span %.2f us (median %.2f)\n",
                kind, !rle ? (PROBE_SELECT_BYTES == 8 ? "[i64]" : "") : KB == 4 ? "" : KB == 1 ? "[u8]" : KB == 2 ? "[f16]" : "[f64]", argv[2], (unsigned long long)tiles, (double)tiles / sms, threads, first_poll, poll, prefetch,
                plain, traced, (unsigned long long)count, (unsigned long long)expect,
                count == expect ? "" : " MISMATCH", (tend - t0) / 1000.0, median_span);
    // Buckets of tile ids: mean offsets (µs) of each point from the launch's first tile start.
    std::printf("%-11s %7s %7s %7s %7s %7s %7s | %6s %6s %6s %6s %6s\n", "tiles", "start", "loaded", "scanned",
                "lb_done", "staged", "stored", "load", "scan", "lookbk", "stage", "store");
    const uint64_t bucket = std::max<uint64_t>(1, tiles / 16);
    for (uint64_t b0 = 0; b0 < tiles; b0 += bucket) {
        const uint64_t b1 = std::min(tiles, b0 + bucket);
        double m[6] = {0};
        for (uint64_t t = b0; t < b1; ++t)
            for (int k = 0; k < 6; ++k) m[k] += (double)(tr[t * 8 + k] - t0) / 1000.0;
        for (double& x : m) x /= (double)(b1 - b0);
        std::printf("%5llu-%-5llu %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f | %6.2f %6.2f %6.2f %6.2f %6.2f\n",
                    (unsigned long long)b0, (unsigned long long)b1 - 1, m[0], m[1], m[2], m[3], m[4], m[5],
                    m[1] - m[0], m[2] - m[1], m[3] - m[2], m[4] - m[3], m[5] - m[4]);
    }
    // Start-time histogram: how many tiles started in each microsecond after the first.
    std::vector<int> hist((tend - t0) / 1000 + 1);
    for (uint64_t t = 0; t < tiles; ++t) hist[(tr[t * 8] - t0) / 1000]++;
    std::printf("starts per us:");
    for (int c : hist) std::printf(" %d", c);
    std::printf("\n");
    if (csv) {
        FILE* f = std::fopen(csv, "w");
        std::fprintf(f, "tile,sm,start,loaded,scanned,lb_done,staged,stored\n");
        for (uint64_t t = 0; t < tiles; ++t) {
            std::fprintf(f, "%llu,%llu", (unsigned long long)t, tr[t * 8 + 6]);
            for (int k = 0; k < 6; ++k) std::fprintf(f, ",%lld", (long long)(tr[t * 8 + k] - t0));
            std::fprintf(f, "\n");
        }
        std::fclose(f);
    }
    return count == expect ? 0 : 1;
}
