// Run-length encoding and non-trivial runs of i32 and f64 keys (runs of geometric length, mean 4 unless
// asked; the benches' data): the classic run agent (cuda/classic/runs.cuh) against the register tile whose
// run heads write every output (cuda/classic/runs_at_heads.cuh) in several shapes, timed in one process with a
// device-to-device copy of the keys for the ratio to memcpy.
//
// Why (benches/log/2026-11-30-to-2026-12-02-notes.md, 2026-12-02): the register tile took i32 RLE from 0.57 to
// 0.72 of memcpy at 2^28 (benches/data/h200-2026-12-02-0843/), but non-trivial runs (0.56) and every 8-byte
// key stayed on the run agent; f64 non-trivial runs were 2-4 % slower than CUB at 2^22-2^28. Results of
// this probe: benches/data/h200-2026-12-02-1146/call1-probe-encode-tile.txt.
//
// Every output (keys or offsets, lengths, run count) is checked against a host computation on poisoned
// buffers, and nothing past the runs may be written.
//
// Build (from the crate root): nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I cuda \
//                                   -o encode_tile benches/probes/encode_tile.cu
// Run:   ./encode_tile [reps [log2 sizes, e.g. 20,22 [variant name or all [mean run length]]]]
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

template <int T, int I, int B> struct ProbeShape {
    static constexpr int THREADS = T, IPT = I, MIN_BLOCKS = B;
    static constexpr bool STAGE16 = true;
};
template <int KB> using Classic = RunsAgent<KB, NoValues, OpMax, false>;
template <int KB> using SmallGrid = RunsAgent<KB, NoValues, OpMax, false, true>;
template <int KB, int T, int I, int B> using Rle = HeadsAgent<KB, NoValues, OpMax, false, ProbeShape<T, I, B>>;
template <int KB, int T, int I, int B> using NonTrivial = HeadsNonTrivial<KB, ProbeShape<T, I, B>>;

struct Variant {
    const char* name;
    int key_bytes;
    uint32_t mode;  // RUNS_ENCODE or RUNS_NON_TRIVIAL
    void (*fn)(RunsParams);
    int threads, tile_items;
};
template <class Agent> constexpr Variant variant(const char* name, int kb, uint32_t mode) {
    return {name, kb, mode, kernel<Agent>, Agent::BLOCK_THREADS, Agent::TILE_ITEMS};
}
constexpr uint32_t RLE = RUNS_ENCODE, NT = RUNS_NON_TRIVIAL;

// The family of a variant (key size and mode): its first variant is the classic agent, the ratios' reference.
const Variant variants[] = {
    variant<Classic<4>>("i32_nt_classic", 4, NT),
    variant<SmallGrid<4>>("i32_nt_small_grid", 4, NT),
    variant<NonTrivial<4, 192, 32, 6>>("i32_nt_192x32", 4, NT),
    variant<NonTrivial<4, 128, 32, 8>>("i32_nt_128x32", 4, NT),
    variant<NonTrivial<4, 256, 16, 4>>("i32_nt_256x16", 4, NT),
    variant<Classic<4>>("i32_rle_classic", 4, RLE),
    variant<Rle<4, 192, 32, 6>>("i32_rle_192x32", 4, RLE),
    variant<Classic<8>>("f64_rle_classic", 8, RLE),
    variant<SmallGrid<8>>("f64_rle_small_grid", 8, RLE),
    variant<Rle<8, 128, 16, 8>>("f64_rle_128x16", 8, RLE),
    variant<Rle<8, 192, 16, 6>>("f64_rle_192x16", 8, RLE),
    variant<Rle<8, 256, 16, 4>>("f64_rle_256x16", 8, RLE),
    variant<Rle<8, 128, 24, 6>>("f64_rle_128x24", 8, RLE),
    variant<Rle<8, 192, 8, 6>>("f64_rle_192x8", 8, RLE),
    variant<Classic<8>>("f64_nt_classic", 8, NT),
    variant<SmallGrid<8>>("f64_nt_small_grid", 8, NT),
    variant<NonTrivial<8, 128, 16, 8>>("f64_nt_128x16", 8, NT),
    variant<NonTrivial<8, 192, 16, 6>>("f64_nt_192x16", 8, NT),
    // The library's shape compiled for 5 blocks: 64 registers and no spills, where 6 blocks leave it at 56
    // registers with a 24-byte stack (ptxas 13.0.88; STATUS lead 3).
    variant<NonTrivial<8, 192, 16, 5>>("f64_nt_192x16_b5", 8, NT),
    variant<NonTrivial<8, 256, 16, 4>>("f64_nt_256x16", 8, NT),
    variant<NonTrivial<8, 128, 24, 6>>("f64_nt_128x24", 8, NT),
    variant<NonTrivial<8, 192, 8, 6>>("f64_nt_192x8", 8, NT),
};

struct Config {
    int reps;
    const char* only;
    uint64_t mean;
    uint64_t sms;
};

// Every variant of key type K at n items: correctness against the host, then the median time.
template <class K> void run_size(const Config& c, int log2n) {
    constexpr int KB = sizeof(K);
    const uint64_t n = (1ull << log2n) + (log2n == 20 ? 1234 : 0);  // 2^20 + 1234: a partial last tile
    const char* plus = n != (1ull << log2n) ? "+1234" : "";
    std::vector<K> hk(n);
    int64_t key = 0;
    for (uint64_t i = 0; i < n; ++i) {
        if (i == 0 || probe_mix(i) % c.mean == 0) key += 1 + (int64_t)(probe_mix(~i) % 1000);
        hk[i] = (K)key;
    }
    // Runs: key, offset, length; the non-trivial ones apart.
    std::vector<K> rk;
    std::vector<uint32_t> roff, rlen, noff, nlen;
    for (uint64_t i = 0; i < n; ++i) {
        if (i == 0 || hk[i] != hk[i - 1]) {
            rk.push_back(hk[i]);
            roff.push_back((uint32_t)i);
            rlen.push_back(0);
        }
        rlen.back() += 1;
    }
    for (size_t r = 0; r < rk.size(); ++r)
        if (rlen[r] > 1) {
            noff.push_back(roff[r]);
            nlen.push_back(rlen[r]);
        }
    K *keys, *copy;
    void *out_keys, *out_values;
    CHECK(cudaMalloc(&keys, n * KB));
    CHECK(cudaMalloc(&copy, n * KB));
    CHECK(cudaMalloc(&out_keys, n * KB));
    CHECK(cudaMalloc(&out_values, n * 4));
    CHECK(cudaMemcpy(keys, hk.data(), n * KB, cudaMemcpyHostToDevice));
    const uint64_t max_tiles = n / 512 + 2;
    uint64_t* ws;
    CHECK(cudaMalloc(&ws, (2 + 2 * max_tiles) * 8));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    auto median = [&](auto&& launch) { return probe_median_us(c.reps, e0, e1, launch); };
    const double memcpy_us = median([&] {
        CHECK(cudaEventRecord(e0));
        CHECK(cudaMemcpyAsync(copy, keys, n * KB, cudaMemcpyDeviceToDevice));
        CHECK(cudaEventRecord(e1));
    });
    const double memcpy_gbs = 2.0 * KB * n / memcpy_us / 1e3;
    std::printf("memcpy %s n=2^%d%s  t= %9.1f us  GB/s %7.1f  runs %zu  non-trivial %zu\n", KB == 4 ? "i32" : "f64",
                log2n, plus, memcpy_us, memcpy_gbs, rk.size(), noff.size());
    std::vector<K> gk(n);
    std::vector<uint32_t> go(n), gv(n);
    double classic_us = 0;
    for (const Variant& v : variants) {
        if (v.key_bytes != KB || (c.only && std::strcmp(c.only, v.name) != 0)) continue;
        const bool nt = v.mode == NT;
        const uint64_t runs = nt ? noff.size() : rk.size();
        const uint64_t tiles = (n + v.tile_items - 1) / v.tile_items;
        RunsParams p{};
        p.keys = keys;
        p.out_keys = out_keys;
        p.out_values = out_values;
        p.num_runs = ws + 1;
        p.n = n;
        p.mode = v.mode;
        p.length_bytes = 4;
        if (KB == 8) {
            p.key_abs_mask = 0x7fffffffffffffffull;  // f64 keys: IEEE ==, as src/runs.rs passes
            p.key_inf_bits = 0x7ff0000000000000ull;
        }
        p.lb = probe_lookback(ws, tiles, c.sms, 1000, 500);
        auto launch = [&] { probe_timed_launch(ws, tiles, e0, e1, [&] { v.fn<<<(unsigned)tiles, v.threads>>>(p); }); };
        CHECK(cudaMemset(out_keys, 0xa5, n * KB));
        CHECK(cudaMemset(out_values, 0xa5, n * 4));
        launch();
        CHECK(cudaDeviceSynchronize());
        uint64_t got_runs = 0;
        CHECK(cudaMemcpy(&got_runs, ws + 1, 8, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(nt ? (void*)go.data() : (void*)gk.data(), out_keys, n * (nt ? 4 : KB), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(gv.data(), out_values, n * 4, cudaMemcpyDeviceToHost));
        uint64_t bad = 0, first_bad = 0;
        for (uint64_t r = 0; r < runs; ++r) {
            const bool ok = nt ? go[r] == noff[r] && gv[r] == nlen[r] : gk[r] == rk[r] && gv[r] == rlen[r];
            if (!ok && !bad++) first_bad = r;
        }
        // Nothing past the runs is written (0xa5 bytes throughout).
        for (uint64_t r = runs; r < std::min(n, runs + 64); ++r) {
            K poison;
            std::memset(&poison, 0xa5, sizeof(K));
            const bool keys_ok = nt ? go[r] == 0xa5a5a5a5u : std::memcmp(&gk[r], &poison, sizeof(K)) == 0;
            if (!keys_ok || gv[r] != 0xa5a5a5a5u) ++bad;
        }
        const double us = median(launch);
        if (std::strstr(v.name, "classic")) classic_us = us;
        // Minimum bytes: keys read once; per run its key (or offset) and its length written.
        const double bytes = (double)KB * n + (double)runs * ((nt ? 4 : KB) + 4);
        const bool failed = bad || got_runs != runs;
        std::printf("%-20s n=2^%d%s  t= %9.1f us  GB/s %7.1f  vs_memcpy %.3f  vs classic %.3f  %s", v.name, log2n, plus,
                    us, bytes / us / 1e3, bytes / us / 1e3 / memcpy_gbs, classic_us / us, failed ? "CHECK FAILED" : "ok");
        if (failed)
            std::printf(" (runs %llu of %llu; %llu bad, first %llu: offset %u vs %u, length %u vs %u)",
                        (unsigned long long)got_runs, (unsigned long long)runs, (unsigned long long)bad,
                        (unsigned long long)first_bad, go[first_bad], nt ? noff[first_bad] : 0u, gv[first_bad],
                        nt ? nlen[first_bad] : rlen[first_bad]);
        std::printf("\n");
    }
    CHECK(cudaFree(keys));
    CHECK(cudaFree(copy));
    CHECK(cudaFree(out_keys));
    CHECK(cudaFree(out_values));
    CHECK(cudaFree(ws));
}

int main(int argc, char** argv) {
    Config c;
    c.reps = argc > 1 ? std::atoi(argv[1]) : 30;
    const std::vector<int> sizes = probe_sizes(argc > 2 ? argv[2] : "20,22,24,26,28");
    c.only = argc > 3 && std::strcmp(argv[3], "all") != 0 ? argv[3] : nullptr;  // one variant (ncu)
    c.mean = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 4;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    c.sms = prop.multiProcessorCount;
    std::printf("encode_tile: %s; keys in runs of geometric length, mean %llu; median of %d; back-off 1000:500 ns\n",
                prop.name, (unsigned long long)c.mean, c.reps);
    for (const Variant& v : variants) probe_print_kernel(v.name, (const void*)v.fn, v.threads);
    for (int log2n : sizes) {
        run_size<int32_t>(c, log2n);
        run_size<double>(c, log2n);
    }
    return 0;
}
