// Kernel parameter blocks, passed by value. Each is mirrored field for field by a #[repr(C)] struct in
// src/launch.rs; change both together (tests/kernel_table.rs checks the sizes).
#pragma once
#include <cstdint>
#include "predicate.cuh"

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

// What decides that an item is selected.
enum : uint32_t { SOURCE_PRED = 0, SOURCE_FLAGS = 1, SOURCE_UNIQUE = 2 };
// Where selected (and rejected) items go.
enum : uint32_t {
    MODE_COMPACT = 0,            // selected → out[rank] (out may equal in)
    MODE_PARTITION_REVERSE = 1,  // selected → out[rank], rejected → out[n-1-reject_rank] (CUB's layout)
    MODE_PARTITION_SPLIT = 2,    // selected → out[rank], rejected → out_rejected[reject_rank]
    MODE_PARTITION_STABLE = 3,   // selected → out[rank], rejected → out[*known_total + reject_rank]
    MODE_COUNT = 4,              // only the number selected
    MODE_MASK = 5,               // out_rejected[i] = selected(i) as a byte; no look-back
};

struct SelectParams {
    const void* in;
    void* out;
    void* out_rejected;
    const uint8_t* flags;
    uint64_t* num_selected;        // written by the last tile (not in MODE_MASK)
    const uint64_t* known_total;   // MODE_PARTITION_STABLE: the count a MODE_COUNT launch left
    uint64_t n;
    uint32_t source;
    uint32_t mode;
    PredProgram pred;
    LookbackParams lb;
};

}  // namespace lookback

// The Rust mirrors assert the same sizes (src/launch.rs).
static_assert(sizeof(lookback::LookbackParams) == 48, "LookbackParams layout changed: update src/launch.rs");
static_assert(sizeof(lookback::ScanParams) == 88, "ScanParams layout changed: update src/launch.rs");
static_assert(sizeof(lookback::SelectParams) == 392, "SelectParams layout changed: update src/launch.rs");
