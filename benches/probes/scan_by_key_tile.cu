// Inclusive scan by key of f64 keys and values: the classic agent's tile (cuda/classic/runs.cuh: 128 threads
// × 16 items staged in 32 KB of shared memory) against a tile whose items stay in registers (CUB's way:
// more, lighter warps; shared memory only for a per-warp transpose), timed in one process.
//
// Why (benches/log/2026-11-30-to-2026-12-02-notes.md, 2026-12-02): CUB's scan_by_key was 11 % faster at
// 2^24-2^28 with 224 threads × 11 items, 56 registers, 19.7 KB and 5 blocks per SM (35 warps) against our
// 24 warps; 36 % of our stall samples wait on the barrier behind warp 0's look-back.
//
// The register tile is the library's (cuda/classic/scan_by_key_tile.cuh, in its tuning row's shape). The
// shape sweep of 2026-12-02 (256 × 10, 224 × 10, 256 × 6, 128 × 10, 192 × 14; the notes log above, data in
// benches/data/h200-2026-12-02-0545/call8-10-probe-scan-by-key-tile.txt) ran on this probe's first version,
// commit 89f058c, which carried its own copy of the tile with the shape as template parameters.
//
// Build (from the crate root): nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I cuda \
//                                   -o scan_by_key_tile benches/probes/scan_by_key_tile.cu
// Run:                         ./scan_by_key_tile [reps [log2 sizes, e.g. 20,22 [variant name]]]
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "classic/scan_by_key_tile.cuh"
#include "check.cuh"

using namespace lookback;

using Classic = RunsAgent<8, double, OpSum, true>;
__global__ void __launch_bounds__(Classic::BLOCK_THREADS, Classic::MIN_BLOCKS) classic_kernel(RunsParams p) {
    Classic::run(p);
}

using Register = ScanByKeyAgent<8, double, OpSum>;
__global__ void __launch_bounds__(Register::BLOCK_THREADS, Register::MIN_BLOCKS) register_kernel(RunsParams p) {
    Register::run(p);
}

struct Variant {
    const char* name;
    void (*kernel)(RunsParams);
    int threads, tile_items;
};

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 30;
    const std::vector<int> sizes = probe_sizes(argc > 2 ? argv[2] : "20,22,24,26,28");
    const char* only = argc > 3 ? argv[3] : nullptr;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const uint64_t sms = prop.multiProcessorCount;
    std::printf("scan_by_key_tile: %s; f64 keys (runs of 4) and values, inclusive sum; median of %d\n", prop.name, reps);
    const Variant variants[] = {
        {"classic_128x16", classic_kernel, Classic::BLOCK_THREADS, Classic::TILE_ITEMS},
        {"register", register_kernel, Register::BLOCK_THREADS, Register::TILE_ITEMS},
    };
    for (const Variant& v : variants) probe_print_kernel(v.name, (const void*)v.kernel, v.threads);
    for (int log2n : sizes) {
        const uint64_t n = (1ull << log2n) + (log2n == 20 ? 1234 : 0);  // 2^20 + 1234: a partial last tile
        std::vector<double> hk(n), hv(n), ref(n);
        for (uint64_t i = 0; i < n; ++i) {
            const uint64_t m = probe_mix(i / 4);
            hk[i] = (double)(m % 1000 + 1) * ((i / 4) % 2 ? 1.0 : -1.0);
            hv[i] = (double)(int)(probe_mix(i ^ 0x9e37) % 17) - 8.0;  // small integers: sums are exact
        }
        double run = 0;
        for (uint64_t i = 0; i < n; ++i) {
            run = (i == 0 || hk[i] != hk[i - 1]) ? hv[i] : run + hv[i];
            ref[i] = run;
        }
        double *keys, *values, *out;
        CHECK(cudaMalloc(&keys, n * 8));
        CHECK(cudaMalloc(&values, n * 8));
        CHECK(cudaMalloc(&out, n * 8));
        CHECK(cudaMemcpy(keys, hk.data(), n * 8, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(values, hv.data(), n * 8, cudaMemcpyHostToDevice));
        const uint64_t max_tiles = n / std::min(Classic::TILE_ITEMS, Register::TILE_ITEMS) + 2;
        uint64_t* ws;
        CHECK(cudaMalloc(&ws, (2 + 2 * max_tiles) * 8));
        cudaEvent_t e0, e1;
        CHECK(cudaEventCreate(&e0));
        CHECK(cudaEventCreate(&e1));
        std::vector<double> got(n);
        double classic_us = 0;
        for (const Variant& v : variants) {
            if (only && std::strcmp(only, v.name) != 0 && v.kernel != classic_kernel) continue;
            const uint64_t tiles = (n + v.tile_items - 1) / v.tile_items;
            RunsParams p{};
            p.keys = keys;
            p.values = values;
            p.out_values = out;
            p.num_runs = ws + 1;
            p.n = n;
            p.mode = RUNS_SCAN_INCLUSIVE;
            p.length_bytes = 4;
            p.key_abs_mask = 0x7fffffffffffffffull;
            p.key_inf_bits = 0x7ff0000000000000ull;
            p.lb = probe_lookback(ws, tiles, sms, 1000, 500);
            auto launch = [&] { probe_timed_launch(ws, tiles, e0, e1, [&] { v.kernel<<<(unsigned)tiles, v.threads>>>(p); }); };
            // Correctness first: poisoned output (NaN bits), one launch, every item against the host.
            CHECK(cudaMemset(out, 0xff, n * 8));
            launch();
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(got.data(), out, n * 8, cudaMemcpyDeviceToHost));
            uint64_t bad = 0, first_bad = 0;
            for (uint64_t i = 0; i < n; ++i)
                if (std::memcmp(&got[i], &ref[i], 8) != 0 && !bad++) first_bad = i;
            const double us = probe_median_us(reps, e0, e1, launch);
            if (v.kernel == classic_kernel) classic_us = us;
            std::printf("sbk %-16s f64 n=2^%d%s  t= %9.1f us  GB/s %7.1f  vs classic %.3f  %s",
                        v.name, log2n, n != (1ull << log2n) ? "+1234" : "", us, 24.0 * n / us / 1e3, classic_us / us,
                        bad ? "CHECK FAILED" : "ok");
            if (bad) std::printf(" (%llu items, first %llu: %g vs %g)", (unsigned long long)bad, (unsigned long long)first_bad,
                                 got[first_bad], ref[first_bad]);
            std::printf("\n");
        }
        CHECK(cudaFree(keys));
        CHECK(cudaFree(values));
        CHECK(cudaFree(out));
        CHECK(cudaFree(ws));
    }
    return 0;
}
