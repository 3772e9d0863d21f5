// Kernel parameter blocks, passed by value. Each is mirrored field for field by a #[repr(C)] struct in
// src/launch.rs; change both together (tests/kernel_table.rs checks the sizes).
#pragma once
#include <cstdint>

namespace lookback {

// The look-back workspace of one launch (see tile_state.cuh).
struct LookbackParams {
    uint64_t* status;        // one status word per tile
    uint64_t* values;        // two value slots per tile, for 8-byte values (else unused)
    uint64_t* tile_counter;  // dynamic tile ids
    uint64_t tile_base;      // the counter's value before this launch
    uint32_t epoch;          // 1..=255
    uint32_t first_poll_ns;  // back-off before the first poll of a predecessor
    uint32_t poll_ns;        // back-off between polls
    uint32_t _pad;
};

struct ScanParams {
    const void* in;
    void* out;       // may equal `in`
    uint64_t n;
    uint64_t seed;   // bits of the initial value (an element of the scanned type), when `exclusive`
    uint32_t exclusive;
    uint32_t _pad;
    LookbackParams lb;
};

}  // namespace lookback

// The Rust mirrors assert the same sizes (src/launch.rs).
static_assert(sizeof(lookback::LookbackParams) == 48, "LookbackParams layout changed: update src/launch.rs");
static_assert(sizeof(lookback::ScanParams) == 88, "ScanParams layout changed: update src/launch.rs");
