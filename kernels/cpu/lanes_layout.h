// Internal to kernels/cpu: the "lanes" layout of Q4_0, Q4_1 and Q8_0 rows, made
// for the decode GEMVs (gemv_lanes_avx512.cpp; gemv_lanes_avx2.cpp reads each
// 64-byte vector as two 32-byte halves).
//
// Why: in GGML's layout a block's scale sits next to its 16 or 32 quants, so a
// kernel that wants several blocks per vector must gather them with byte
// permutes, and a 16-lane vector of dot products then covers only 4 blocks (4
// lanes each): every token pays a float convert, scale and FMA per 4 blocks.
// Repacked once at load, a group of 16 blocks is stored so that lane l of each
// 64-byte vector holds 4 quant bytes of block l: the vectors feed vpdpbusd
// straight from memory, one lane accumulates a whole block, and the float work
// per token is one convert + scale + FMA per 16 blocks. Measured on Zen 4
// (docs/PERFORMANCE.md, issue 5): one-token products 1.6-2x faster in cache,
// decode steps of 6-16 tokens half the time of the panels.
//
// A row of nb blocks is cut into groups: as many full groups of 16 blocks as
// fit, then groups of 4 (the last may hold 1-3 blocks). A group of B slots
// (16 or 4) gives each block L = 16 / B lanes. Its bytes:
//   quants: V vectors, V = B / 4 (nibbles) or B / 2 (Q8_0), each 4 * L * b
//           bytes for the b blocks present (64 when full): vector v, lane l,
//           byte i holds quant byte j = (v * L + l % L) * 4 + i of block l / L.
//           Nibble bytes keep value j low and j + 16 high; Q8_0 bytes are
//           stored as u = q + 128 (the kernel's vpdpbusd wants unsigned weights).
//   Q5_0 only: the 32 high bits (GGML's qh, bit j for value j) of each block
//           present, 4 bytes a block (a 16-slot group's are one vector whose
//           lane l is block l's; a 4-slot group's kernel spreads them over
//           their 4 lanes).
//   d[B] (f16, zero for absent blocks), then m[B] for Q4_1.
// Q4_K: a block is a 32-value sub-block of a 256-value super block, its nibbles
// rearranged to Q4_0's order (value j low, j + 16 high); after the quant vectors
// the f16 d of the group's first and second super block, then their f16 dmin,
// then the 6-bit scale and min of each slot, a byte each: sc[B], m[B]. Rows are
// whole super blocks, so a group is 16 slots (two super blocks) or 4 (half of one).
// The row keeps GGML's byte count but for those slot scales of a short last
// group (and Q4_K's byte-wide scale fields); lanesRowBytes() says how many.
#pragma once

#include "ggml_types.h"

#include <cstddef>
#include <cstdint>

namespace kestrel::kernels {

// The groups of one row, in order.
struct LanesGroup {
    int slots;      // B: 16 or 4
    int blocks;     // b: blocks present (1..slots)
    int lanesPerBlock() const { return 16 / slots; }
};

// Visits the groups of a row of `nb` blocks: fn(LanesGroup, firstBlock).
template <typename Fn>
void forEachLanesGroup(int64_t nb, Fn&& fn) {
    int64_t b = 0;
    for (; b + 16 <= nb; b += 16) fn(LanesGroup{16, 16}, b);
    for (; b < nb; b += 4) fn(LanesGroup{4, static_cast<int>(nb - b < 4 ? nb - b : 4)}, b);
}

// The most tokens one call of a lanes GEMV takes (both ISAs).
constexpr int64_t kLanesMaxTokens = 16;

inline bool isLanesType(GgmlType type) {
    return type == GgmlType::Q4_0 || type == GgmlType::Q4_1 || type == GgmlType::Q5_0 || type == GgmlType::Q8_0 ||
           type == GgmlType::Q4_K;
}
// Lanes types whose GEMV exists for AVX-512 only (Q5_0's fifth bits are added back with
// AVX-512 byte tests); the AVX2 GEMV takes the others.
constexpr bool lanesAvx512Only(GgmlType type) { return type == GgmlType::Q5_0; }

// Lanes types whose weights carry a float minimum per block (Q4_1's m, Q4_K's dmin * m),
// applied as minimum x (dx * sum of the block's activation quants).
constexpr bool lanesHasMinimum(GgmlType type) { return type == GgmlType::Q4_1 || type == GgmlType::Q4_K; }
// The zero point of the others' stored quants: weights are u - z (Q8_0's bytes are stored as
// u = q + 128); 0 for the types with a minimum.
constexpr int lanesZeroPoint(GgmlType type) {
    return type == GgmlType::Q4_0 ? 8 : type == GgmlType::Q5_0 ? 16 : type == GgmlType::Q8_0 ? 128 : 0;
}

// Quant vectors of a group and bytes each (for `g`'s blocks present); inline
// so that the kernels, which know the type at compile time, fold them.
inline int lanesVectors(GgmlType type, LanesGroup g) { return type == GgmlType::Q8_0 ? g.slots / 2 : g.slots / 4; }
inline int lanesVectorBytes(LanesGroup g) { return 4 * g.lanesPerBlock() * g.blocks; }
// Where byte j of block k's quants (j < 16 for nibbles, 32 for Q8_0) sits in a group:
// vector j / 4 / L, lane k * L + (j / 4) % L, byte j % 4.
inline int lanesQuantOffset(LanesGroup g, int k, int j) {
    const int lanes = g.lanesPerBlock();
    return j / 4 / lanes * lanesVectorBytes(g) + (k * lanes + j / 4 % lanes) * 4 + j % 4;
}
// Where the scales start: after the quant vectors and, for Q5_0, the high bits.
inline int lanesScalesOffset(GgmlType type, LanesGroup g) {
    return lanesVectors(type, g) * lanesVectorBytes(g) + (type == GgmlType::Q5_0 ? 4 * g.blocks : 0);
}
// Byte offsets in a Q4_K group's tail (at lanesScalesOffset): the f16 d and dmin of the
// group's super block s (0, or 1 in a 16-slot group), then each slot's 6-bit scale and
// minimum, a byte each.
struct Q4KTail {
    static constexpr int d(int super) { return 2 * super; }
    static constexpr int dmin(int super) { return 4 + 2 * super; }
    static constexpr int scale(int slot) { return 8 + slot; }
    static constexpr int minimum(int slots, int slot) { return 8 + slots + slot; }
    static constexpr int bytes(int slots) { return 8 + 2 * slots; }
};

inline int lanesGroupBytes(GgmlType type, LanesGroup g) {
    if (type == GgmlType::Q4_K) return lanesScalesOffset(type, g) + Q4KTail::bytes(g.slots);
    return lanesScalesOffset(type, g) + 2 * g.slots * (type == GgmlType::Q4_1 ? 2 : 1);
}
size_t lanesRowBytes(GgmlType type, int64_t cols);

// One row (cols values) from GGML blocks into the lanes layout and back.
void toLanesRow(GgmlType type, const uint8_t* ggml, int64_t cols, uint8_t* lanes);
void fromLanesRow(GgmlType type, const uint8_t* lanes, int64_t cols, uint8_t* ggml);

}  // namespace kestrel::kernels
