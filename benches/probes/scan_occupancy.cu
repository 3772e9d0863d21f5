// The classic scan agent's 8-byte sums at several register budgets, against CUB's DeviceScan in the same
// process, with a device-to-device copy for the ratio to memcpy.
//
// Why (benches/log/2026-12-07.md, 23:17): ptxas gives the f64 sum kernel 40 registers where every other scan
// kernel gets 30-32, so 6 blocks of 256 threads fit an SM instead of 8, and the classic f64 sum ran 3-15 %
// behind the i64 one at 2^21-2^24 on the H100 (13 % behind CUB at 2^21). A minimum of 8 blocks caps it at 32
// registers with 28 bytes of spills (7 blocks round to the same 32). The f64 max takes 36 registers: 6 blocks
// too, since registers are given per warp in units of 256.
// This probe times each budget.
//
// Every variant's output is checked against a host scan on poisoned buffers before it is timed (values are
// small integers, so every f64 partial sum is exact); a row prints `ok` or `CHECK FAILED`. Inputs and
// outputs rotate over >= 256 MiB (at most 64 copies), as the benches' do, so each launch reads from DRAM.
//
// Build (from the crate root; CUB from scripts/fetch-cub.sh):
//   nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I cuda -I "$(scripts/fetch-cub.sh)" \
//        -L<dir of libcudart_static.a> -o target/probes/scan_occupancy benches/probes/scan_occupancy.cu
// Run:   ./scan_occupancy [reps [log2 sizes, e.g. 16,20,21,22]]
#include <cuda_runtime.h>
#include <cub/device/device_scan.cuh>
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "classic/scan.cuh"
#include "check.cuh"

using namespace lookback;

template <class T, class Op>
__global__ void __launch_bounds__(ScanAgent<BuiltinScan<T, Op>>::BLOCK_THREADS) free_regs(ScanParams p) {
    ScanAgent<BuiltinScan<T, Op>>::run(p);
}
template <class T, class Op, int MIN_BLOCKS>
__global__ void __launch_bounds__(ScanAgent<BuiltinScan<T, Op>>::BLOCK_THREADS, MIN_BLOCKS) min_blocks(ScanParams p) {
    ScanAgent<BuiltinScan<T, Op>>::run(p);
}

struct Variant {
    const char* name;
    bool f64;  // else i64
    bool max;  // else sum
    void (*fn)(ScanParams);
};

template <class T> struct Buffers {
    std::vector<T*> in, out;
};

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 50;
    const std::vector<int> sizes = probe_sizes(argc > 2 ? argv[2] : "16,18,20,21,22,23,24");
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const uint64_t sms = prop.multiProcessorCount;
    using Agent = ScanAgent<BuiltinScan<double, OpSum>>;
    constexpr int THREADS = Agent::BLOCK_THREADS, TILE = Agent::IO::TILE_ITEMS;
    const Variant variants[] = {
        {"i64_sum", false, false, free_regs<int64_t, OpSum>},
        {"f64_sum", true, false, free_regs<double, OpSum>},
        {"f64_sum_min8", true, false, min_blocks<double, OpSum, 8>},
        {"f64_max", true, true, free_regs<double, OpMax>},
        {"f64_max_min8", true, true, min_blocks<double, OpMax, 8>},
    };
    std::printf("scan_occupancy: %s, %llu SMs; tile %d items of 8 bytes, %d threads; median of %d; back-off 2500:1000 "
                "(an eighth under 1024 tiles)\n",
                prop.name, (unsigned long long)sms, TILE, THREADS, reps);
    for (const Variant& v : variants) probe_print_kernel(v.name, (const void*)v.fn, THREADS);
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    for (int log2n : sizes) {
        const uint64_t n = 1ull << log2n, bytes = n * 8;
        const int copies = (int)std::min<uint64_t>(64, std::max<uint64_t>(1, (256ull << 20) / bytes));
        std::vector<int64_t> hi(n), want_sum(n), want_max(n);
        int64_t run = 0, top = INT64_MIN;
        for (uint64_t i = 0; i < n; ++i) {
            hi[i] = (int64_t)(probe_mix(i) % 1000000) - 500000;
            run += hi[i];
            top = std::max(top, hi[i]);
            want_sum[i] = run;
            want_max[i] = top;
        }
        std::vector<double> hd(hi.begin(), hi.end());
        std::vector<void*> in(copies), out(copies);
        for (int c = 0; c < copies; ++c) {
            CHECK(cudaMalloc(&in[c], bytes));
            CHECK(cudaMalloc(&out[c], bytes));
        }
        const uint64_t tiles = (n + TILE - 1) / TILE;
        uint64_t* ws;
        CHECK(cudaMalloc(&ws, (2 + 2 * tiles) * 8));
        int rot = 0;
        auto median = [&](auto&& launch) { return probe_median_us(reps, e0, e1, launch); };
        const double memcpy_us = median([&] {
            const int c = rot++ % copies;
            CHECK(cudaEventRecord(e0));
            CHECK(cudaMemcpyAsync(out[c], in[c], bytes, cudaMemcpyDeviceToDevice));
            CHECK(cudaEventRecord(e1));
        });
        const double memcpy_gbs = 2.0 * bytes / memcpy_us / 1e3;
        std::printf("memcpy        n=2^%d  t= %8.1f us  GB/s %7.1f  (copies %d, tiles %llu)\n", log2n, memcpy_us,
                    memcpy_gbs, copies, (unsigned long long)tiles);
        auto report = [&](const char* name, double us, bool ok) {
            std::printf("%-13s n=2^%d  t= %8.1f us  GB/s %7.1f  vs_memcpy %.3f  %s\n", name, log2n, us,
                        2.0 * bytes / us / 1e3, 2.0 * bytes / us / 1e3 / memcpy_gbs, ok ? "ok" : "CHECK FAILED");
        };
        auto check = [&](bool f64, bool max) {
            std::vector<int64_t> got(n);
            if (f64) {
                std::vector<double> g(n);
                CHECK(cudaMemcpy(g.data(), out[0], bytes, cudaMemcpyDeviceToHost));
                for (uint64_t i = 0; i < n; ++i) got[i] = (int64_t)g[i];
            } else {
                CHECK(cudaMemcpy(got.data(), out[0], bytes, cudaMemcpyDeviceToHost));
            }
            return got == (max ? want_max : want_sum);
        };
        auto fill = [&](bool f64) {
            for (int c = 0; c < copies; ++c)
                CHECK(cudaMemcpy(in[c], f64 ? (const void*)hd.data() : (const void*)hi.data(), bytes,
                                 cudaMemcpyHostToDevice));
        };
        for (const bool f64 : {false, true}) {
            fill(f64);
            for (const Variant& v : variants) {
                if (v.f64 != f64) continue;
                auto launch_on = [&](int c) {
                    ScanParams p{};
                    p.in = in[c];
                    p.out = out[c];
                    p.n = n;
                    p.exclusive = SCAN_INCLUSIVE;
                    p.lb = probe_lookback(ws, tiles, sms, 2500, 1000);
                    probe_timed_launch(ws, tiles, e0, e1, [&] { v.fn<<<(unsigned)tiles, THREADS>>>(p); });
                };
                CHECK(cudaMemset(out[0], 0xa5, bytes));
                launch_on(0);
                CHECK(cudaDeviceSynchronize());
                const bool ok = check(f64, v.max);
                report(v.name, median([&] { launch_on(rot++ % copies); }), ok);
            }
            // CUB on the same buffers (its temporary storage sized once, outside the timed span).
            size_t temp_bytes = 0;
            if (f64) CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, (double*)in[0], (double*)out[0], n));
            else CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, (int64_t*)in[0], (int64_t*)out[0], n));
            void* temp;
            CHECK(cudaMalloc(&temp, temp_bytes));
            auto cub_on = [&](int c) {
                CHECK(cudaEventRecord(e0));
                if (f64) CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, (double*)in[c], (double*)out[c], n));
                else CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, (int64_t*)in[c], (int64_t*)out[c], n));
                CHECK(cudaEventRecord(e1));
            };
            CHECK(cudaMemset(out[0], 0xa5, bytes));
            cub_on(0);
            CHECK(cudaDeviceSynchronize());
            const bool ok = check(f64, false);
            report(f64 ? "cub_f64_sum" : "cub_i64_sum", median([&] { cub_on(rot++ % copies); }), ok);
            CHECK(cudaFree(temp));
        }
        for (int c = 0; c < copies; ++c) {
            CHECK(cudaFree(in[c]));
            CHECK(cudaFree(out[c]));
        }
        CHECK(cudaFree(ws));
    }
    return 0;
}
