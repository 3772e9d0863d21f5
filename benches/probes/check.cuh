// What the probes share: CHECK(call), the CUDA runtime error check (prints the failing call and exits),
// a 64-bit mixer for their test data, and their list-of-sizes argument.
#pragma once
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>

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
