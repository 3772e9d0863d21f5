// Tile shapes and back-off per (algorithm, element size in bytes), as data.
//
// `LOOKBACK_TUNING(X)`: one `X(algorithm, element_bytes, block_threads, chunks_per_thread, first_poll_ns,
// poll_ns)` per line. build.rs parses it, so the Rust launcher sizes grids from the same numbers the
// kernels are compiled with. A chunk is 16 bytes: a thread owns `chunks_per_thread * 16 / element_bytes`
// consecutive items of its tile. chunks_per_thread must be 1, 2, 4 or 8 (the shared-memory swizzle in
// tile_io.cuh is conflict-free for those). Selection keeps a thread's items in registers and evaluates
// predicates on masks of at most 32 items, so its shapes hold ≤ 32 items per thread; its 8-byte row has
// 32 KB tiles of 4096 items, compiled for 5 blocks per SM (SelectAgent::MIN_BLOCKS: 48 registers), 2.5-8 %
// faster at 2^21-2^23 than 2048-item tiles (probe, 2026-12-01). The delays are only defaults: the
// launcher passes them in the kernel parameters, so a caller (or the benchmark's sweep) can change them
// without recompiling.
//
// The run-based primitives (classic/runs.cuh) key their row by the larger of the key and value sizes and
// always give a thread 16 items: the key and value tiles then both move in whole 16-byte chunks (1, 2, 4
// or 8 per thread), and a tile of two 8-byte columns (128 threads) still fits 32 KB of shared memory.
// Their delays measured best at 1000/500 too (i32 at 2^28: 300/100 and 1250/650 within 1 %, 2500/1000
// and 4000/1500 6-8 % slower). The encodings (run-length, run-end, non-trivial runs: keys only) have rows
// of their own, `encode`: with no value column a tile of 8-byte keys fits 192 threads (3072 items, 37 KB
// with the staged positions; 5 blocks per SM), which measured 3-4 % faster than 128 at 2^22-2^26 (f64
// non-trivial runs and RLE, per-tile probe, benches/log 2026-12-01); two 8-byte columns of 192
// threads would pass the 48 KB of static shared memory. `encode_small` is the shape of the encodings'
// small-grid kernel (src/plan.rs takes it for inputs of at most 1024 `encode` tiles; 1024 resident threads
// per SM): larger tiles for 1- and 2-byte keys, whose grids there are latency-bound walks — u8 512 threads
// (8192 items) 7-11 % faster at 2^20-2^22, f16 384 threads 3-4.5 % faster at 2^22 (6 % slower at
// 2^18-2^20, where it leads CUB by 12-19 %); 320 threads for i32 was 5-25 % slower (probe, 2026-12-01).
// The same larger tiles in the many-wave kernel were 2-18 % slower at 2^23.
//
// `scan_by_key` is the register tile of the scans by key of 8-byte values (classic/scan_by_key_tile.cuh): its
// chunks_per_thread counts units of two items (7: a lane owns 14 consecutive items; odd unit counts keep
// the transposes' 16-byte reads conflict-free), not the 16-byte chunks of tile_io.cuh; for 8-byte values
// they are the same size, so the launcher's tile_items holds. Of five shapes in the probe
// benches/probes/scan_by_key_tile.cu (f64, H200, 2026-12-02), 192 × 14 was the fastest or within 3 % of
// it at every size from 2^20 to 2^28 (256 × 10 up to 6 % slower at 2^20-2^22, 128 × 10 3 % at 2^28).
//
// `heads` and `heads_encode` are the register tile whose run heads write every output (classic/runs_at_heads.cuh):
// reduce_by_key and unique_by_key of 4-byte keys and values, and run-length / run-end encoding of 4-byte
// keys. A lane owns chunks_per_thread * 16 / 4 consecutive items (20 and 32), in 16-byte units. From the
// probe benches/probes/runs_tile.cu (i32, runs of mean 4, H200, 2026-12-02; benches/log), reduce_by_key
// at 2^22 / 2^24 / 2^28: 192 × 20 (5 blocks per SM) 22.8 / 62.0 / 798.5 us, 256 × 16 22.8 / 65.8 / 840.6,
// 128 × 24 24.4 / 66.0 / 870.0, 192 × 16 24.0 / 65.9 / 865.7, 256 × 12 25.5 / 70.3 / 930.0 (the run agent
// 26.3 / 74.5 / 935.0); run-length encoding: 192 × 32 with 16-bit staging (6 blocks per SM) 16.9 / 47.0 /
// 530.4, 128 × 32 with 32-bit staging 20.2 / 51.7 / 627.8 (6 blocks), with 16-bit 17.2 / 50.1 / 582.7 (8),
// 160 × 32 18.0 / 49.2 / 571.0 (the run agent 22.1 / 54.6 / 661.6). Back-off 1000/500 was best or within
// 1 % (0/100 to 2000/500). The same tile takes the non-trivial runs of 4-byte keys (probe
// benches/probes/encode_tile.cu, 2026-12-02, at 2^22 / 2^24 / 2^28: 192 × 32 19.0 / 44.9 / 498.9 us, 128 ×
// 32 18.4 / 46.5 / 518.1, 256 × 16 21.0 / 55.0 / 700.8; the run agent 21.2 / 52.0 / 622.2) and the
// encodings of 8-byte keys, 192 × 16 (a lane owns 16 keys; same probe, f64 RLE / non-trivial runs at 2^22 /
// 2^24 / 2^28: 25.2 / 69.5 / 897.7 and 24.2 / 65.9 / 861.7 us; 256 × 16 (4 blocks per SM) 24.5 / 70.5 /
// 875.3 and 24.0 / 67.2 / 854.5, 128 × 16 26.3 / 70.9 / 919.4 and 26.4 / 72.3 / 934.8, 128 × 24 27.5 /
// 72.0 / 902.3 and 25.8 / 68.9 / 879.4, 192 × 8 32.3 / 99.8 / 1412.9; the run agent 26.8 / 73.9 / 968.7
// and 23.8 / 68.4 / 879.5). 192 × 16 keeps the 4-byte row's 192 threads and 6 blocks per SM.
//
// `reduce` is the tile of the reductions (classic/reduce.cuh), which have no look-back (so no delays): a
// block folds tiles of its share one after the other, each thread with its 4 chunks (64 bytes) in flight
// at once, as the scans' 16 KB tiles.
//
// Why these numbers (H200, benches/log): 16-byte coalesced accesses and 16 KB tiles, up to 8 blocks
// per SM, keep HBM busy. The delays are for large grids: sleeping 2.5 us before the first poll and 1 us
// between polls measured best for the i32 scan at 2^24-2^28 (0.68 → 0.81 of memcpy at 2^28 against
// 1.0/0.5 us; 6 us and more is worse). Grids of fewer than 1024 tiles, which the GPU runs in about one
// wave, use an eighth of them (src/plan.rs), which measured best at 2^16-2^20. Selection measured
// best at 1000/500 (select_if 50 % i32 at 2^28: 0/0 0.45, 1000/500 0.52, 2500/1000 0.46, 5000/2000 0.42).
#pragma once

#define LOOKBACK_TUNING(X)            \
    X(scan, 1, 256, 4, 2500, 1000)     \
    X(scan, 2, 256, 4, 2500, 1000)     \
    X(scan, 4, 256, 4, 2500, 1000)     \
    X(scan, 8, 256, 4, 2500, 1000)     \
    X(select, 1, 256, 2, 1000, 500)   \
    X(select, 2, 256, 4, 1000, 500)   \
    X(select, 4, 256, 4, 1000, 500)   \
    X(select, 8, 256, 8, 1000, 500)   \
    X(runs, 1, 256, 1, 1000, 500)     \
    X(runs, 2, 256, 2, 1000, 500)     \
    X(runs, 4, 256, 4, 1000, 500)     \
    X(runs, 8, 128, 8, 1000, 500)     \
    X(encode, 1, 256, 1, 1000, 500)   \
    X(encode, 2, 256, 2, 1000, 500)   \
    X(encode, 4, 256, 4, 1000, 500)   \
    X(encode, 8, 192, 8, 1000, 500)   \
    X(encode_small, 1, 512, 1, 1000, 500) \
    X(encode_small, 2, 384, 2, 1000, 500) \
    X(encode_small, 4, 256, 4, 1000, 500) \
    X(encode_small, 8, 192, 8, 1000, 500) \
    X(scan_by_key, 8, 192, 7, 1000, 500) \
    X(heads, 4, 192, 5, 1000, 500)       \
    X(heads_encode, 4, 192, 8, 1000, 500) \
    X(heads_encode, 8, 192, 8, 1000, 500) \
    X(reduce, 1, 256, 4, 0, 0)           \
    X(reduce, 2, 256, 4, 0, 0)           \
    X(reduce, 4, 256, 4, 0, 0)           \
    X(reduce, 8, 256, 4, 0, 0)

// The persistent, warp-specialised agents (persistent/scan_work.cuh), one row per algorithm:
// `X(algorithm, compute_warps, chunks_per_lane, stages, reduce_ahead, min_tiles, writer_warps)`. A tile is
// compute_warps × 32 lanes × chunks_per_lane chunks of 16 bytes (32 KB, the size NVIDIA's warp-specialised
// scan uses; 40 KB for selection, below); `stages` tiles are in flight per SM (the shared-memory ring: 7 × 32 KB = 224 KB of the
// H200's 227 KB); the compute warps reduce `reduce_ahead` tiles ahead of the one they scan. Calls of
// fewer than `min_tiles` tiles use the classic one-tile-per-block agent. `writer_warps` > 0: that many
// warps of their own write each tile out once its prefix is known, and the compute warps only reduce
// (and stage), as far ahead as the ring lets them (`reduce_ahead` then unused; persistent/engine.cuh, "Writer
// warps"). build.rs parses this table too.
//
// Why these numbers (H200, i32 inclusive sum at 2^28, ratio to memcpy; benches/log): reducing
// 1 / 2 / 3 / 4 tiles ahead with 6 stages gave 0.32-0.83 / 0.55-0.81 / 0.97 / 0.95; 5 of 6 stages 0.63
// (the ring has no room left to load ahead); 7 stages with 4 ahead 0.97 (u8 0.88, i64 0.76), with 6
// ahead 0.62. Below 1024 tiles (32 MB) the classic agent is faster (2^22 i32: 18.0 against 19.1 us;
// 2^23: 29.8 against 25.6 us).
//
// Selection runs 20 compute warps of 4 chunks per lane (40 KB tiles, a ring of 5, 3 tiles reduced
// ahead): its per-item work (predicate, staging) is chains of dependent instructions, and more warps
// per scheduler hide them (ncu, benches/log 2026-12-01). i32 at 2^28, µs, 16 × 4 (32 KB, ring of 6)
// → 20 × 4: select_if 450 → 442, 1 % 377 → 338, in place 471 → 448, unique 399 → 384, count_if 256 →
// 264 (fewer bytes in flight: 2 slots loading, not 3); 24 × 2 (24 KB, ring of 8) 12-29 % slower than
// 16 × 4 (twice the per-warp overhead per item); 32 × 2 cannot launch (1,120 threads with the engine's
// 3 warps; 29 compute warps at most). Earlier: 8 × 8 0.605, 12 × 4 0.592, 16 × 4 0.642 of memcpy for
// select_if (2026-11-30). With 16 × 4: a ring of 7 was 0.1-0.6 % slower at 2^28 and 19 % slower for
// select_if 1 % at 2^24; 2 ahead of 6 up to 2.6 × slower (select_if 1 % at 2^28; count_if, which waits
// for no prefix, unchanged: the look-ahead's slack). min_tiles 819: the 32 MB of 1024 tiles of 32 KB.
// 8 writer warps (2026-12-01; 31 warps, so 64 registers): i32 at 2^28, µs, same call, none → 8:
// select_if 432 → 393, 1 % 337 → 311, unique 383 → 340, count_if 268 → 250, in place 432 → 439,
// partition reversed 555 → 590; 4 writer warps (copying their parts in a row) 428 / 309 / 361 and
// partition 696; 16 compute + 8 writers with a ring of 7 × 32 KB 408 / 339 / 371.
//
// The partitions (`partition`) run the same Work without writer warps, in kernels of their own (2026-12-02
// ): they copy every item out, not only the selected ones, and through 8 writer warps the reversed
// partition of i32 at 2^28 took 591 µs; on their own 20 compute warps 565-569 (with compaction's batched
// copy-out 577), i64 1126 → 1074, f16 449 → 420 (benches/log 2026-12-02). 2 tiles reduced ahead was
// 1 % faster at 2^28 and 2-4 % slower at 2^23-2^24; 16 × 4 with a ring of 6 × 32 KB 3 % slower.
//
// The run-based primitives (persistent/runs_work.cuh) run 16 compute warps of 4 chunks per lane (as
// selection did until 2026-12-01; a 32 KB slot holds keys and values: i32 + i32 is 4096 items), with a
// ring of 6 and 3 tiles reduced ahead; the encodings also keep staged head indices (up to 32 KB) in static shared memory.
// Their per-round work (warp scans of (count, payload) pairs, staging) is latency-bound with 8 warps:
// i32 at 2^28, runs of 4, same call, 8 × 8 / 16 × 4: run_length_encode 1205 / 733 µs, reduce_by_key
// 1231 / 1246, unique_by_key 1256 / 1263 (CUB 784, 1250, 1749; benches/log).
//
// select_flagged (`flagged`) is selection with the flags as a side stream: each slot holds the tile's
// items and then its flags (one byte per item), so a 32 KB tile of items takes 40 KB with i32 items and
// 36 KB with i64, and 16 × 4 keeps the ring of 5 and 3 tiles reduced ahead that selection has (20 × 4 would
// take 50 KB slots, a ring of 4). 1- and 2-byte items would add 16-32 KB per slot: they keep the classic
// agent, and no persistent kernel is compiled for them (LOOKBACK_PIPE_FLAGGED_BYTES; the kernels move
// items as bits, so one per item size serves every type).
#define LOOKBACK_PIPE_TUNING(X)     \
    X(scan, 8, 8, 7, 4, 1024, 0)    \
    X(select, 20, 4, 5, 3, 819, 8)  \
    X(partition, 20, 4, 5, 3, 819, 0) \
    X(flagged, 16, 4, 5, 3, 1024, 0) \
    X(runs, 16, 4, 6, 3, 1024, 0)

// Item sizes with a persistent select_flagged kernel (lookback_pipe_flagged_b<bytes>; build.rs parses it).
#define LOOKBACK_PIPE_FLAGGED_BYTES(X) \
    X(4)                               \
    X(8)

namespace lookback {

enum class Algo { scan, select, partition, flagged, runs, encode, encode_small, scan_by_key, heads, heads_encode, reduce };

template <int BLOCK_THREADS_, int CHUNKS_PER_THREAD_> struct TileShape {
    static constexpr int BLOCK_THREADS = BLOCK_THREADS_;
    static constexpr int CHUNKS_PER_THREAD = CHUNKS_PER_THREAD_;
};

// Tuning<Algo::scan, sizeof(T)>::Shape: the tile shape of the scan of a type of that size.
template <Algo ALGO, int BYTES> struct Tuning;
#define LOOKBACK_TUNING_ENTRY(ALGO, BYTES, THREADS, CHUNKS, FIRST, POLL) \
    template <> struct Tuning<Algo::ALGO, BYTES> { using Shape = TileShape<THREADS, CHUNKS>; };
LOOKBACK_TUNING(LOOKBACK_TUNING_ENTRY)
#undef LOOKBACK_TUNING_ENTRY

template <Algo ALGO> struct PipeTuning;
#define LOOKBACK_PIPE_ENTRY(ALGO, WARPS_, CHUNKS_, STAGES_, AHEAD_, MIN_TILES_, WRITERS_) \
    template <> struct PipeTuning<Algo::ALGO> {                                  \
        static constexpr int COMPUTE_WARPS = WARPS_;                             \
        static constexpr int CHUNKS_PER_LANE = CHUNKS_;                          \
        static constexpr int STAGES = STAGES_;                                   \
        static constexpr int REDUCE_AHEAD = AHEAD_;                              \
        static constexpr int WRITER_WARPS = WRITERS_;                            \
    };
LOOKBACK_PIPE_TUNING(LOOKBACK_PIPE_ENTRY)
#undef LOOKBACK_PIPE_ENTRY

}  // namespace lookback
