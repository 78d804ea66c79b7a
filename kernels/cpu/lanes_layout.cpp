#include "lanes_layout.h"

#include "quant_blocks.h"

#include <cstring>

namespace kestrel::kernels {
namespace {

struct BlockShape {
    int bytes;       // GGML block size
    int quantsAt;    // offset of the quant bytes in it
    bool hasMin;     // Q4_1: an f16 m after d
    uint8_t flip;    // xor applied to quant bytes in the lanes layout
    int highBitsAt;  // Q5_0: offset of the 4 bytes of high bits (qh); 0: none
};

BlockShape shapeOf(GgmlType type) {
    switch (type) {
    case GgmlType::Q4_0: return {18, 2, false, 0, 0};
    case GgmlType::Q4_1: return {20, 4, true, 0, 0};
    case GgmlType::Q5_0: return {22, 6, false, 0, 2};
    default: return {34, 2, false, 0x80, 0};  // Q8_0
    }
}

// Calls fn(lanesOffset, ggmlOffset) for the 4 high-bit bytes of each block of a Q5_0 group.
template <typename Fn>
void forEachHighBitByte(GgmlType type, LanesGroup g, int64_t b0, Fn&& fn) {
    const BlockShape s = shapeOf(type);
    if (s.highBitsAt == 0) return;
    const int at = lanesVectors(type, g) * lanesVectorBytes(g);
    for (int k = 0; k < g.blocks; ++k)
        for (int i = 0; i < 4; ++i)
            fn(static_cast<size_t>(at + k * 4 + i), static_cast<size_t>((b0 + k) * s.bytes + s.highBitsAt + i));
}

// Calls fn(lanesOffset, ggmlOffset) for every quant byte of group `g` whose
// first block is `b0`; offsets from the group's start and the row's start.
template <typename Fn>
void forEachQuantByte(GgmlType type, LanesGroup g, int64_t b0, Fn&& fn) {
    const BlockShape s = shapeOf(type);
    const int lanes = g.lanesPerBlock(), vectorBytes = lanesVectorBytes(g);
    for (int v = 0; v < lanesVectors(type, g); ++v)
        for (int l = 0; l < lanes * g.blocks; ++l)
            for (int i = 0; i < 4; ++i) {
                const int j = (v * lanes + l % lanes) * 4 + i;
                fn(static_cast<size_t>(v * vectorBytes + l * 4 + i),
                   static_cast<size_t>((b0 + l / lanes) * s.bytes + s.quantsAt + j));
            }
}

}  // namespace

size_t lanesRowBytes(GgmlType type, int64_t cols) {
    size_t bytes = 0;
    forEachLanesGroup(cols / kQK, [&](LanesGroup g, int64_t) { bytes += static_cast<size_t>(lanesGroupBytes(type, g)); });
    return bytes;
}

void toLanesRow(GgmlType type, const uint8_t* ggml, int64_t cols, uint8_t* lanes) {
    const BlockShape s = shapeOf(type);
    forEachLanesGroup(cols / kQK, [&](LanesGroup g, int64_t b0) {
        forEachQuantByte(type, g, b0, [&](size_t to, size_t from) { lanes[to] = ggml[from] ^ s.flip; });
        forEachHighBitByte(type, g, b0, [&](size_t to, size_t from) { lanes[to] = ggml[from]; });
        uint8_t* scales = lanes + lanesScalesOffset(type, g);
        std::memset(scales, 0, static_cast<size_t>(2 * g.slots * (s.hasMin ? 2 : 1)));
        for (int k = 0; k < g.blocks; ++k) {
            const uint8_t* block = ggml + (b0 + k) * s.bytes;
            std::memcpy(scales + 2 * k, block, 2);
            if (s.hasMin) std::memcpy(scales + 2 * (g.slots + k), block + 2, 2);
        }
        lanes += lanesGroupBytes(type, g);
    });
}

void fromLanesRow(GgmlType type, const uint8_t* lanes, int64_t cols, uint8_t* ggml) {
    const BlockShape s = shapeOf(type);
    forEachLanesGroup(cols / kQK, [&](LanesGroup g, int64_t b0) {
        forEachQuantByte(type, g, b0, [&](size_t from, size_t to) { ggml[to] = lanes[from] ^ s.flip; });
        forEachHighBitByte(type, g, b0, [&](size_t from, size_t to) { ggml[to] = lanes[from]; });
        const uint8_t* scales = lanes + lanesScalesOffset(type, g);
        for (int k = 0; k < g.blocks; ++k) {
            uint8_t* block = ggml + (b0 + k) * s.bytes;
            std::memcpy(block, scales + 2 * k, 2);
            if (s.hasMin) std::memcpy(block + 2, scales + 2 * (g.slots + k), 2);
        }
        lanes += lanesGroupBytes(type, g);
    });
}

}  // namespace kestrel::kernels
