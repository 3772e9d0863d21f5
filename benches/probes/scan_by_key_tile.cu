// Inclusive scan by key of f64 keys and values: the classic agent's tile (cuda/agent_runs.cuh: 128 threads
// × 16 items staged in 32 KB of shared memory) against a tile whose items stay in registers (CUB's way:
// more, lighter warps; shared memory only for a per-warp transpose), timed in one process.
//
// Why (benches/NOTES.md, session 21): CUB's scan_by_key is 11 % faster at 2^24-2^28 with 224 threads × 11
// items, 56 registers, 19.7 KB and 5 blocks per SM (35 warps) against our 24 warps; 36 % of our stall
// samples wait on the barrier behind warp 0's look-back.
//
// The register tile (RegTile<THREADS, IPT>): warp w owns 32·IPT consecutive items, lane l IPT of them.
// Keys and values are loaded warp-striped with 16-byte loads (all in flight together) and transposed to
// the lanes' consecutive items through a per-warp shared buffer; lane 0 of each warp loads the key before
// the warp's first item itself. The tile's (heads, open run's sum) pair is scanned as in the classic
// agent. A tile with a head publishes P at once (its inclusive prefix is its aggregate's value). Warps
// with a head before their first item are final without the tile's prefix: they store before the
// look-back; the others (always warp 0) wait for it. Results go back through the buffer to coalesced
// 16-byte stores.
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

#include "agent_runs.cuh"
#include "check.cuh"

using namespace lookback;

using Classic = RunsAgent<8, double, OpSum, true>;
__global__ void __launch_bounds__(Classic::BLOCK_THREADS, Classic::MIN_BLOCKS) classic_kernel(RunsParams p) {
    Classic::run(p);
}

template <int THREADS, int IPT> struct RegTile {
    static constexpr int WARPS = THREADS / 32;
    static constexpr int WARP_ITEMS = 32 * IPT;
    static constexpr int TILE_ITEMS = THREADS * IPT;
    static constexpr int CPL = IPT / 2;  // 16-byte chunks per lane and column
    static_assert(IPT % 2 == 0 && IPT <= 30 && THREADS % 32 == 0, "whole chunks, 32-bit head masks");
    using Pair = RunPair<double>;
    using Local = LocalPair<double>;
    using POp = PairOp<OpSum, true>;
    using State = WidePairState<Pair, true>;

    struct Storage {
        uint4 xpose[WARPS][WARP_ITEMS / 2];
        BlockScanStorage<Local, WARPS> scan;
        Pair exclusive;
        uint64_t tile_id;
    };

    // Warp-striped chunk c of lane l is the warp's chunk 32c + l; lane l's own items are chunks l·CPL + j.
    static __device__ __forceinline__ void to_blocked(uint4* buf, const uint4 (&striped)[CPL], double (&out)[IPT]) {
        const int lane = (int)lane_id();
#pragma unroll
        for (int c = 0; c < CPL; ++c) buf[c * 32 + lane] = striped[c];
        __syncwarp();
#pragma unroll
        for (int j = 0; j < CPL; ++j) {
            const uint4 u = buf[lane * CPL + j];
            memcpy(&out[2 * j], &u, 16);
        }
        __syncwarp();
    }
    static __device__ __forceinline__ void to_striped(uint4* buf, const double (&in)[IPT], uint4 (&striped)[CPL]) {
        const int lane = (int)lane_id();
#pragma unroll
        for (int j = 0; j < CPL; ++j) {
            uint4 u;
            memcpy(&u, &in[2 * j], 16);
            buf[lane * CPL + j] = u;
        }
        __syncwarp();
#pragma unroll
        for (int c = 0; c < CPL; ++c) striped[c] = buf[c * 32 + lane];
        __syncwarp();
    }
    // The warp's chunks of `base` (the warp's first item), items at or past `valid` (warp-relative) read 0.
    static __device__ __forceinline__ void load_striped(const double* base, int valid, bool full, uint4 (&v)[CPL]) {
        const int lane = (int)lane_id();
#pragma unroll
        for (int c = 0; c < CPL; ++c) {
            const int i = 2 * (c * 32 + lane);
            if (full) {
                v[c] = reinterpret_cast<const uint4*>(base)[c * 32 + lane];
            } else {
                double d[2] = {i < valid ? base[i] : 0.0, i + 1 < valid ? base[i + 1] : 0.0};
                memcpy(&v[c], d, 16);
            }
        }
    }
    static __device__ __forceinline__ void store_striped(double* base, int valid, bool full, const uint4 (&v)[CPL]) {
        const int lane = (int)lane_id();
#pragma unroll
        for (int c = 0; c < CPL; ++c) {
            const int i = 2 * (c * 32 + lane);
            if (full) {
                reinterpret_cast<uint4*>(base)[c * 32 + lane] = v[c];
            } else {
                double d[2];
                memcpy(d, &v[c], 16);
                if (i < valid) base[i] = d[0];
                if (i + 1 < valid) base[i + 1] = d[1];
            }
        }
    }
    // The inclusive results of the lane's items, `running` being its run's sum before its first item.
    static __device__ __forceinline__ void finish(Storage& s, double* out, int valid, bool full, const double (&v)[IPT],
                                                  uint32_t heads, double running) {
        double r[IPT];
#pragma unroll
        for (int j = 0; j < IPT; ++j) {
            running = (heads >> j) & 1u ? v[j] : running + v[j];
            r[j] = running;
        }
        uint4 striped[CPL];
        to_striped(s.xpose[warp_id()], r, striped);
        store_striped(out, valid, full, striped);
    }

    static __device__ __forceinline__ void run(const RunsParams& p) {
        __shared__ Storage s;
        const LookbackParams& lb = p.lb;
        if (threadIdx.x == 0) {
            s.tile_id = take_tile(lb, {p.keys, p.n * 8, TILE_ITEMS * 8ull}, {p.values, p.n * 8, TILE_ITEMS * 8ull});
        }
        __syncthreads();
        const uint64_t tile = s.tile_id;
        const uint64_t start = tile * (uint64_t)TILE_ITEMS;
        const int valid = (int)min((uint64_t)TILE_ITEMS, p.n - start);
        const int warp = (int)warp_id(), lane = (int)lane_id();
        const uint64_t wstart = start + (uint64_t)warp * WARP_ITEMS;  // the warp's first item
        const int wvalid = max(0, min(WARP_ITEMS, valid - warp * WARP_ITEMS));
        // Whole tiles take 16-byte accesses; every warp of the last tile goes item by item. (`full` derived
        // from the warp's clamp, wvalid == WARP_ITEMS, took the 16-byte path for a partial warp of the last
        // tile in sm_90 SASS from nvcc 13.0: compute-sanitizer saw the read past the end.)
        const bool full = valid == TILE_ITEMS && ((uintptr_t)p.keys | (uintptr_t)p.values | (uintptr_t)p.out_values) % 16 == 0;
        const double* keys = static_cast<const double*>(p.keys) + wstart;
        const double* values = static_cast<const double*>(p.values) + wstart;
        double* out = static_cast<double*>(p.out_values) + wstart;

        // 1. Loads: keys and values in flight together, and the key before the warp's first item.
        uint4 ks[CPL], vs[CPL];
        load_striped(keys, wvalid, full, ks);
        load_striped(values, wvalid, full, vs);
        double before = 0.0;
        if (lane == 0 && wstart > 0 && wvalid > 0) before = keys[-1];

        // 2. Heads from the keys (IEEE !=: each NaN its own run), then the values in the lanes' order.
        double k[IPT], v[IPT];
        to_blocked(s.xpose[warp], ks, k);
        double prev = __shfl_up_sync(0xffffffffu, k[IPT - 1], 1);
        if (lane == 0) prev = before;
        uint32_t heads = (uint32_t)(k[0] != prev);
#pragma unroll
        for (int j = 1; j < IPT; ++j) heads |= (uint32_t)(k[j] != k[j - 1]) << j;
        const int first = lane * IPT;
        if (wstart + first == 0) heads |= 1u;
        const int mine = max(0, min(IPT, wvalid - first));
        const uint32_t in_range = (uint32_t)((1ull << mine) - 1);
        heads &= in_range;
        to_blocked(s.xpose[warp], vs, v);

        // 3. The lane's pair, the block scan, the tile's aggregate.
        Local own;
        own.count = __popc(heads);
        double acc = -0.0;
#pragma unroll
        for (int j = 0; j < IPT; ++j) {
            const double x = (in_range >> j) & 1u ? v[j] : -0.0;
            acc = (heads >> j) & 1u ? x : acc + x;
        }
        own.value = acc;
        Local total;
        const Local prefix = block_exclusive_scan<POp>(own, total, s.scan);
        const bool has_heads = total.count > 0;
        const State state{lb.status, lb.epoch};
        const Pair aggregate{total.count, total.value};
        if (threadIdx.x == 0) state.publish(tile, tile == 0 || has_heads ? STATUS_P : STATUS_A, aggregate);

        // 4. Warps with a head before their first item are final now: they store before the look-back.
        const bool free = __shfl_sync(0xffffffffu, prefix.count, 0) > 0;
        if (free) finish(s, out, wvalid, full, v, heads, prefix.value);

        // 5. Warp 0 resolves the prefix the others need (none when the tile starts with a head).
        const bool carried = tile > 0 && !(start == 0 || (__shfl_sync(0xffffffffu, heads, 0) & 1u));
        if (warp == 0) {
            Pair exclusive = POp::template identity<Pair>();
            if (__shfl_sync(0xffffffffu, (uint32_t)carried, 0)) {
                exclusive = warp_lookback<POp, Pair, State>(state, tile, lb.first_poll_ns, lb.poll_ns);
                if (lane == 0 && !has_heads) state.publish(tile, STATUS_P, POp::apply(exclusive, aggregate));
            }
            if (lane == 0) s.exclusive = exclusive;
        }
        __syncthreads();
        if (!free) {
            const double running = prefix.count ? prefix.value : s.exclusive.value + prefix.value;
            finish(s, out, wvalid, full, v, heads, running);
        }
    }
};

#define REG_KERNEL(NAME, THREADS, IPT, BLOCKS)                                                  \
    __global__ void __launch_bounds__(THREADS, BLOCKS) NAME(RunsParams p) { RegTile<THREADS, IPT>::run(p); }
REG_KERNEL(reg_256x10, 256, 10, 4)
REG_KERNEL(reg_224x10, 224, 10, 5)
REG_KERNEL(reg_256x6, 256, 6, 6)
REG_KERNEL(reg_128x10, 128, 10, 8)
REG_KERNEL(reg_192x14, 192, 14, 4)

struct Variant {
    const char* name;
    void (*kernel)(RunsParams);
    int threads, tile_items;
};

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 30;
    std::vector<int> sizes;
    for (const char* c = argc > 2 ? argv[2] : "20,22,24,26,28"; *c; ++c) {
        sizes.push_back(std::atoi(c));
        while (c[1] && c[1] != ',') ++c;
        if (c[1] == ',') ++c;
    }
    const char* only = argc > 3 ? argv[3] : nullptr;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const uint64_t sms = prop.multiProcessorCount;
    std::printf("scan_by_key_tile: %s; f64 keys (runs of 4) and values, inclusive sum; median of %d\n", prop.name, reps);
    const Variant variants[] = {
        {"classic_128x16", classic_kernel, Classic::BLOCK_THREADS, Classic::TILE_ITEMS},
        {"reg_256x10", reg_256x10, 256, 2560},
        {"reg_224x10", reg_224x10, 224, 2240},
        {"reg_256x6", reg_256x6, 256, 1536},
        {"reg_128x10", reg_128x10, 128, 1280},
        {"reg_192x14", reg_192x14, 192, 2688},
    };
    for (const Variant& v : variants) {
        cudaFuncAttributes a;
        CHECK(cudaFuncGetAttributes(&a, v.kernel));
        int blocks = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, v.kernel, v.threads, 0));
        std::printf("kernel %-16s %3d registers, %5zu B static shared, %3zu B local, %d blocks per SM\n", v.name,
                    a.numRegs, a.sharedSizeBytes, a.localSizeBytes, blocks);
    }
    for (int log2n : sizes) {
        const uint64_t n = (1ull << log2n) + (log2n == 20 ? 1234 : 0);  // 2^20 + 1234: a partial last tile
        std::vector<double> hk(n), hv(n), ref(n);
        for (uint64_t i = 0; i < n; ++i) {
            const uint64_t m = mix(i / 4);
            hk[i] = (double)(m % 1000 + 1) * ((i / 4) % 2 ? 1.0 : -1.0);
            hv[i] = (double)(int)(mix(i ^ 0x9e37) % 17) - 8.0;  // small integers: sums are exact
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
        const uint64_t max_tiles = n / 1280 + 2;
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
            const bool small = tiles < 1024;
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
            p.lb.status = ws + 2;
            p.lb.tile_counter = ws;
            p.lb.epoch = 1;
            p.lb.first_poll_ns = small ? 1000 / 8 : 1000;
            p.lb.poll_ns = small ? 500 / 8 : 500;
            p.lb.flags = (tiles <= 2 * sms || tiles > 8 * sms) ? LB_PREFETCH_GUESS : 0;
            auto launch = [&] {
                CHECK(cudaMemsetAsync(ws, 0, (2 + 2 * tiles) * 8));
                CHECK(cudaEventRecord(e0));
                v.kernel<<<(unsigned)tiles, v.threads>>>(p);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(e1));
            };
            // Correctness first: poisoned output (NaN bits), one launch, every item against the host.
            CHECK(cudaMemset(out, 0xff, n * 8));
            launch();
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(got.data(), out, n * 8, cudaMemcpyDeviceToHost));
            uint64_t bad = 0, first_bad = 0;
            for (uint64_t i = 0; i < n; ++i)
                if (std::memcmp(&got[i], &ref[i], 8) != 0 && !bad++) first_bad = i;
            std::vector<float> ms;
            for (int r = 0; r < reps + 3; ++r) {
                launch();
                CHECK(cudaEventSynchronize(e1));
                float t;
                CHECK(cudaEventElapsedTime(&t, e0, e1));
                if (r >= 3) ms.push_back(t);
            }
            std::sort(ms.begin(), ms.end());
            const double us = ms[ms.size() / 2] * 1e3;
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
