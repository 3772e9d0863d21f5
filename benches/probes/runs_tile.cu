// reduce_by_key and run-length encoding of i32 keys (runs of geometric length, mean 4; the benches' data):
// the classic run agent (cuda/classic/runs.cuh: tiles staged in shared memory) against register tiles whose
// heads write every output (cuda/classic/runs_at_heads.cuh) in several shapes, timed in one process with a
// device-to-device copy of the keys for the ratio to memcpy.
//
// Why (benches/log/2026-11-30-to-2026-12-02-notes.md, 2026-12-02): the run agent's i32 reduce_by_key and RLE
// reach 0.68 and 0.57 of memcpy at 2^28; its design lost 20-44 % to a register tile for the f64 scans by
// key (benches/data/h200-2026-12-02-0545/). Results of this probe: benches/data/h200-2026-12-02-0843/.
//
// Every output (keys, results, run count) is checked against a host computation on poisoned buffers.
//
// Build (from the crate root): nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I cuda \
//                                   -o runs_tile benches/probes/runs_tile.cu
// Run:                         ./runs_tile [reps [log2 sizes, e.g. 20,22 [variant name or all [first:poll ns]]]]
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "classic/runs_at_heads.cuh"
#include "check.cuh"

using namespace lookback;

template <class Agent> __global__ void __launch_bounds__(Agent::BLOCK_THREADS, Agent::MIN_BLOCKS) kernel(RunsParams p) {
    Agent::run(p);
}


using ClassicReduce = RunsAgent<4, int32_t, OpSum, true>;
using ClassicEncode = RunsAgent<4, NoValues, OpMax, false>;
using SmallEncode = RunsAgent<4, NoValues, OpMax, false, true>;  // the library's kernel up to 1024 encode tiles
template <int T, int I, int B, bool S16 = false> struct ProbeShape {
    static constexpr int THREADS = T, IPT = I, MIN_BLOCKS = B;
    static constexpr bool STAGE16 = S16;
};
template <int T, int I, int B> using Reduce = HeadsAgent<4, int32_t, OpSum, true, ProbeShape<T, I, B>>;
template <int T, int I, int B, bool S16 = false>
using Encode = HeadsAgent<4, NoValues, OpMax, false, ProbeShape<T, I, B, S16>>;

struct Variant {
    const char* name;
    bool reduce;
    void (*fn)(RunsParams);
    int threads, tile_items;
};
template <class Agent> constexpr Variant variant(const char* name, bool reduce) {
    return {name, reduce, kernel<Agent>, Agent::BLOCK_THREADS, Agent::TILE_ITEMS};
}

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 30;
    const std::vector<int> sizes = probe_sizes(argc > 2 ? argv[2] : "20,22,24,26,28");
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const uint64_t sms = prop.multiProcessorCount;
    const Variant variants[] = {
        variant<ClassicReduce>("rbk_classic", true),
        variant<Reduce<256, 16, 4>>("rbk_256x16", true),
        variant<Reduce<256, 12, 5>>("rbk_256x12", true),
        variant<Reduce<128, 24, 6>>("rbk_128x24", true),
        variant<Reduce<192, 16, 6>>("rbk_192x16", true),
        variant<Reduce<192, 20, 5>>("rbk_192x20", true),
        variant<ClassicEncode>("rle_classic", false),
        variant<SmallEncode>("rle_small_grid", false),
        variant<Encode<128, 32, 5>>("rle_128x32", false),
        variant<Encode<128, 32, 7, true>>("rle_128x32_s16", false),
        variant<Encode<192, 32, 4, true>>("rle_192x32_s16", false),
        variant<Encode<192, 32, 6, true>>("rle_192x32_s16_b6", false),
        variant<Encode<160, 32, 6, true>>("rle_160x32_s16", false),
    };
    // The first variant of each family is its classic agent (the ratios' reference).
    auto is_classic = [&](const Variant& v) { return std::strstr(v.name, "classic") != nullptr; };
    const char* only = argc > 3 && std::strcmp(argv[3], "all") != 0 ? argv[3] : nullptr;  // one variant (ncu)
    // Back-off override "first:poll" in ns (large grids; small grids take an eighth, as the library does).
    unsigned first_poll = 1000, poll = 500;
    if (argc > 4) std::sscanf(argv[4], "%u:%u", &first_poll, &poll);
    std::printf("runs_tile: %s; i32 keys in runs of mean length 4; median of %d; back-off %u:%u ns\n", prop.name, reps,
                first_poll, poll);
    for (const Variant& v : variants) probe_print_kernel(v.name, (const void*)v.fn, v.threads);
    for (int log2n : sizes) {
        const uint64_t n = (1ull << log2n) + (log2n == 20 ? 1234 : 0);  // 2^20 + 1234: a partial last tile
        std::vector<int32_t> hk(n), hv(n);
        int32_t key = 0;
        for (uint64_t i = 0; i < n; ++i) {
            if (i == 0 || probe_mix(i) % 4 == 0) key = (int32_t)((uint32_t)key + 1 + (uint32_t)(probe_mix(~i) % 1000));
            hk[i] = key;
            hv[i] = (int32_t)(probe_mix(i ^ 0x9e37) % 1000);
        }
        std::vector<int32_t> rk, rsum;
        std::vector<uint32_t> rlen;
        for (uint64_t i = 0; i < n; ++i) {
            if (i == 0 || hk[i] != hk[i - 1]) {
                rk.push_back(hk[i]);
                rsum.push_back(0);
                rlen.push_back(0);
            }
            rsum.back() += hv[i];
            rlen.back() += 1;
        }
        const uint64_t runs = rk.size();
        int32_t *keys, *values, *out_keys, *out_values, *copy;
        CHECK(cudaMalloc(&keys, n * 4));
        CHECK(cudaMalloc(&values, n * 4));
        CHECK(cudaMalloc(&out_keys, n * 4));
        CHECK(cudaMalloc(&out_values, n * 4));
        CHECK(cudaMalloc(&copy, n * 4));
        CHECK(cudaMemcpy(keys, hk.data(), n * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(values, hv.data(), n * 4, cudaMemcpyHostToDevice));
        const uint64_t max_tiles = n / 1024 + 2;
        uint64_t* ws;
        CHECK(cudaMalloc(&ws, (2 + 2 * max_tiles) * 8));
        cudaEvent_t e0, e1;
        CHECK(cudaEventCreate(&e0));
        CHECK(cudaEventCreate(&e1));
        auto median = [&](auto&& launch) { return probe_median_us(reps, e0, e1, launch); };
        // memcpy moves 8n bytes (n i32 read and written).
        const double memcpy_us = median([&] {
            CHECK(cudaEventRecord(e0));
            CHECK(cudaMemcpyAsync(copy, keys, n * 4, cudaMemcpyDeviceToDevice));
            CHECK(cudaEventRecord(e1));
        });
        const double memcpy_gbs = 8.0 * n / memcpy_us / 1e3;
        std::printf("memcpy n=2^%d%s  t= %9.1f us  GB/s %7.1f  runs %llu\n", log2n, n != (1ull << log2n) ? "+1234" : "",
                    memcpy_us, memcpy_gbs, (unsigned long long)runs);
        std::vector<int32_t> gk(n), gv(n);
        double classic_us = 0;
        for (const Variant& v : variants) {
            if (only && std::strcmp(only, v.name) != 0) continue;
            const uint64_t tiles = (n + v.tile_items - 1) / v.tile_items;
            RunsParams p{};
            p.keys = keys;
            p.values = v.reduce ? values : nullptr;
            p.out_keys = out_keys;
            p.out_values = out_values;
            p.num_runs = ws + 1;
            p.n = n;
            p.mode = v.reduce ? RUNS_REDUCE : RUNS_ENCODE;
            p.length_bytes = 4;
            p.lb = probe_lookback(ws, tiles, sms, first_poll, poll);
            auto launch = [&] { probe_timed_launch(ws, tiles, e0, e1, [&] { v.fn<<<(unsigned)tiles, v.threads>>>(p); }); };
            // Correctness first: poisoned outputs, one launch, every output against the host.
            CHECK(cudaMemset(out_keys, 0xa5, n * 4));
            CHECK(cudaMemset(out_values, 0xa5, n * 4));
            launch();
            CHECK(cudaDeviceSynchronize());
            uint64_t got_runs = 0;
            CHECK(cudaMemcpy(&got_runs, ws + 1, 8, cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(gk.data(), out_keys, n * 4, cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(gv.data(), out_values, n * 4, cudaMemcpyDeviceToHost));
            uint64_t bad = 0, first_bad = 0;
            for (uint64_t r = 0; r < runs; ++r) {
                const int32_t want = v.reduce ? rsum[r] : (int32_t)rlen[r];
                if ((gk[r] != rk[r] || gv[r] != want) && !bad++) first_bad = r;
            }
            // Nothing past the runs is written.
            for (uint64_t r = runs; r < std::min(n, runs + 64); ++r)
                if (gk[r] != (int32_t)0xa5a5a5a5 || gv[r] != (int32_t)0xa5a5a5a5) ++bad;
            const double us = median(launch);
            if (is_classic(v)) classic_us = us;
            const double bytes = (v.reduce ? 8.0 : 4.0) * n + 8.0 * runs;
            std::printf("%-12s i32 n=2^%d%s  t= %9.1f us  GB/s %7.1f  vs_memcpy %.3f  vs classic %.3f  %s", v.name,
                        log2n, n != (1ull << log2n) ? "+1234" : "", us, bytes / us / 1e3, bytes / us / 1e3 / memcpy_gbs,
                        classic_us / us, bad || got_runs != runs ? "CHECK FAILED" : "ok");
            if (bad || got_runs != runs)
                std::printf(" (runs %llu of %llu; %llu bad, first %llu: key %d vs %d, value %d vs %d)",
                            (unsigned long long)got_runs, (unsigned long long)runs, (unsigned long long)bad,
                            (unsigned long long)first_bad, gk[first_bad], rk[first_bad], gv[first_bad],
                            v.reduce ? rsum[first_bad] : (int32_t)rlen[first_bad]);
            std::printf("\n");
        }
        CHECK(cudaFree(keys));
        CHECK(cudaFree(values));
        CHECK(cudaFree(out_keys));
        CHECK(cudaFree(out_values));
        CHECK(cudaFree(copy));
        CHECK(cudaFree(ws));
    }
    return 0;
}
