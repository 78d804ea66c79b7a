#include "lanes_layout.h"

#include "quant_blocks.h"

#include <algorithm>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

// Calls fn(lanesOffset, block, j) for every quant byte of group `g` whose first
// block is `b0`: the group's byte lanesOffset holds quant byte j of the row's block.
// Walks the lanes in memory order (lanesQuantOffset's inverse, without its divisions:
// prefill restores every row this way per panel).
template <typename Fn>
void forEachLanesQuant(GgmlType type, LanesGroup g, int64_t b0, Fn&& fn) {
    const int lanes = g.lanesPerBlock(), vectorBytes = lanesVectorBytes(g);
    for (int v = 0; v < lanesVectors(type, g); ++v)
        for (int l = 0; l < lanes * g.blocks; ++l)
            for (int i = 0; i < 4; ++i)
                fn(static_cast<size_t>(v * vectorBytes + l * 4 + i), b0 + l / lanes, (v * lanes + l % lanes) * 4 + i);
}

// The same as (lanesOffset, ggmlOffset) pairs, offsets from the group's and the row's start.
template <typename Fn>
void forEachQuantByte(GgmlType type, LanesGroup g, int64_t b0, Fn&& fn) {
    const BlockShape s = shapeOf(type);
    forEachLanesQuant(type, g, b0, [&](size_t at, int64_t block, int j) {
        fn(at, static_cast<size_t>(block * s.bytes + s.quantsAt + j));
    });
}

// Q4_K's super blocks to and from groups of sub-blocks (lanes_layout.h).
// Nibble h of qs[32 c + l] is value l of sub-block 2 c + h.
uint8_t q4kNibble(const BlockQ4_K& b, int sub, int value) {
    return static_cast<uint8_t>((b.qs[32 * (sub / 2) + value] >> (4 * (sub % 2))) & 0xf);
}

void q4kToLanes(const BlockQ4_K* sb, LanesGroup g, int64_t b0, uint8_t* out) {
    forEachLanesQuant(GgmlType::Q4_K, g, b0, [&](size_t at, int64_t b, int j) {
        const BlockQ4_K& block = sb[b / 8];
        const int sub = static_cast<int>(b % 8);
        out[at] = static_cast<uint8_t>(q4kNibble(block, sub, j) | (q4kNibble(block, sub, j + 16) << 4));
    });
    uint8_t* tail = out + lanesScalesOffset(GgmlType::Q4_K, g);
    std::memset(tail, 0, static_cast<size_t>(lanesGroupBytes(GgmlType::Q4_K, g) - lanesScalesOffset(GgmlType::Q4_K, g)));
    for (int k = 0; k < (g.blocks + 7) / 8; ++k) {
        std::memcpy(tail + Q4KTail::d(k), &sb[(b0 + 8 * k) / 8].d, 2);
        std::memcpy(tail + Q4KTail::dmin(k), &sb[(b0 + 8 * k) / 8].dmin, 2);
    }
    for (int k = 0; k < g.blocks; ++k) {
        const int64_t b = b0 + k;
        kScaleMin(sb[b / 8].scales, static_cast<int>(b % 8), tail[Q4KTail::scale(k)], tail[Q4KTail::minimum(g.slots, k)]);
    }
}

// Prefill restores rows to GGML blocks per panel where it cannot build its panels from the
// lanes layout (AVX2; partial panels), once per row and prefill chunk, so the quants go 16
// bytes at a time: a sub-block's 16 bytes (value j low, j + 16 high) are four 4-byte words
// 64 bytes apart in a 16-slot group (lane k of each vector), so one 4x4 word transpose per
// 16-byte column of the group's 4 vectors gives 4 sub-blocks; in a 4-slot group they are
// contiguous. A pair of sub-blocks (2c, 2c + 1) becomes qs[32c .. 32c + 31]. A 4096-wide row
// took 1.75 us a byte at a time through lanesQuantOffset (5x its unpacking).
#ifdef __SSE2__
inline void q4kPairToGgml(__m128i even, __m128i odd, uint8_t* qs) {
    const __m128i m4 = _mm_set1_epi8(0x0f);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs),
                     _mm_or_si128(_mm_and_si128(even, m4), _mm_slli_epi16(_mm_and_si128(odd, m4), 4)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16),
                     _mm_or_si128(_mm_and_si128(_mm_srli_epi16(even, 4), m4), _mm_andnot_si128(m4, odd)));
}

void q4kQuantsFromLanes(const uint8_t* in, LanesGroup g, int64_t b0, BlockQ4_K* sb) {
    auto load = [](const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
    auto qsOf = [&](int64_t b) { return sb[b / 8].qs + 32 * ((b % 8) / 2); };  // b even
    if (g.slots == 4) {
        for (int k = 0; k < g.blocks; k += 2) q4kPairToGgml(load(in + 16 * k), load(in + 16 * (k + 1)), qsOf(b0 + k));
        return;
    }
    for (int c = 0; c < 4; ++c) {  // sub-blocks 4c .. 4c + 3
        const __m128i r0 = load(in + 16 * c), r1 = load(in + 64 + 16 * c), r2 = load(in + 128 + 16 * c),
                      r3 = load(in + 192 + 16 * c);
        const __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpacklo_epi32(r2, r3);
        const __m128i t2 = _mm_unpackhi_epi32(r0, r1), t3 = _mm_unpackhi_epi32(r2, r3);
        q4kPairToGgml(_mm_unpacklo_epi64(t0, t1), _mm_unpackhi_epi64(t0, t1), qsOf(b0 + 4 * c));
        q4kPairToGgml(_mm_unpacklo_epi64(t2, t3), _mm_unpackhi_epi64(t2, t3), qsOf(b0 + 4 * c + 2));
    }
}
#else
void q4kQuantsFromLanes(const uint8_t* in, LanesGroup g, int64_t b0, BlockQ4_K* sb) {
    for (int k = 0; k < g.blocks; k += 2) {
        const int64_t b = b0 + k;
        uint8_t* qs = sb[b / 8].qs + 32 * ((b % 8) / 2);
        for (int j = 0; j < 16; ++j) {
            const uint8_t even = in[lanesQuantOffset(g, k, j)], odd = in[lanesQuantOffset(g, k + 1, j)];
            qs[j] = static_cast<uint8_t>((even & 0xf) | ((odd & 0xf) << 4));
            qs[j + 16] = static_cast<uint8_t>((even >> 4) | (odd & 0xf0));
        }
    }
}
#endif

// The quants as above, then a super block's d, dmin and scales, packed once per group.
void q4kFromLanes(const uint8_t* in, LanesGroup g, int64_t b0, BlockQ4_K* sb) {
    q4kQuantsFromLanes(in, g, b0, sb);
    const uint8_t* tail = in + lanesScalesOffset(GgmlType::Q4_K, g);
    const int superStep = std::min(8, g.blocks);  // sub-blocks of one super block in this group
    for (int k = 0; k < g.blocks; k += superStep) {
        const int64_t b = b0 + k;
        BlockQ4_K& block = sb[b / 8];
        std::memcpy(&block.d, tail + Q4KTail::d(k / 8), 2);
        std::memcpy(&block.dmin, tail + Q4KTail::dmin(k / 8), 2);
        // A 4-slot group holds half a super block: keep the other half's scales.
        uint8_t sc[8], m[8];
        for (int j = 0; j < 8; ++j) kScaleMin(block.scales, j, sc[j], m[j]);
        for (int j = 0; j < superStep; ++j) {
            sc[(b + j) % 8] = tail[Q4KTail::scale(k + j)];
            m[(b + j) % 8] = tail[Q4KTail::minimum(g.slots, k + j)];
        }
        kPackScaleMin(sc, m, block.scales);
    }
}

}  // namespace

size_t lanesRowBytes(GgmlType type, int64_t cols) {
    size_t bytes = 0;
    forEachLanesGroup(cols / kQK, [&](LanesGroup g, int64_t) { bytes += static_cast<size_t>(lanesGroupBytes(type, g)); });
    return bytes;
}

void toLanesRow(GgmlType type, const uint8_t* ggml, int64_t cols, uint8_t* lanes) {
    if (type == GgmlType::Q4_K) {
        forEachLanesGroup(cols / kQK, [&](LanesGroup g, int64_t b0) {
            q4kToLanes(reinterpret_cast<const BlockQ4_K*>(ggml), g, b0, lanes);
            lanes += lanesGroupBytes(type, g);
        });
        return;
    }
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
    if (type == GgmlType::Q4_K) {
        forEachLanesGroup(cols / kQK, [&](LanesGroup g, int64_t b0) {
            q4kFromLanes(lanes, g, b0, reinterpret_cast<BlockQ4_K*>(ggml));
            lanes += lanesGroupBytes(type, g);
        });
        return;
    }
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
