// Kernel definitions shared by scan_by_key_sum.cu, scan_by_key_min.cu and scan_by_key_max.cu (one file per
// operator, so nvcc compiles them in parallel): lookback_scan_by_key_<op>_k<key bytes>_<value type>, the
// inclusive and exclusive scans by key (the `mode` parameter) of the 8-byte value types
// (LOOKBACK_WIDE_TYPES) on the register tile (classic/scan_by_key_tile.cuh). Other value types scan on the
// run agent's kernels (by_key.cuh).
#pragma once
#include "../classic/scan_by_key_tile.cuh"

#define LOOKBACK_SCAN_BY_KEY_KERNEL(OP, OPTYPE, KB, NAME, CTYPE)                                                     \
    extern "C" __global__ void __launch_bounds__(lookback::ScanByKeyAgent<KB, CTYPE, lookback::OPTYPE>::BLOCK_THREADS, \
                                                   lookback::ScanByKeyAgent<KB, CTYPE, lookback::OPTYPE>::MIN_BLOCKS)  \
        lookback_scan_by_key_##OP##_k##KB##_##NAME(lookback::RunsParams p) {                                        \
        lookback::ScanByKeyAgent<KB, CTYPE, lookback::OPTYPE>::run(p);                                             \
    }

// Every 8-byte value type for each key size of LOOKBACK_KEY_BYTES (types.cuh).
#define LOOKBACK_SCAN_BY_KEY_KERNELS(OP)            \
    LOOKBACK_WIDE_TYPES(LOOKBACK_SCAN_BY_KEY_##OP##_K1) \
    LOOKBACK_WIDE_TYPES(LOOKBACK_SCAN_BY_KEY_##OP##_K2) \
    LOOKBACK_WIDE_TYPES(LOOKBACK_SCAN_BY_KEY_##OP##_K4) \
    LOOKBACK_WIDE_TYPES(LOOKBACK_SCAN_BY_KEY_##OP##_K8)
