// Multi-token integer products on 16-row panels, for AVX-512 VNNI (compiled
// with -mavx512f/bw/vl/vnni; called only after cpuid says so).
//
// Why: the 4x4 register tile of gemm_avx512.cpp spends four vector ops per
// dpbusd (dpbusd, int->float, scale product, FMA), because each dpbusd covers
// 64 columns of one row, i.e. two blocks whose scales must be applied before
// the next pair. Here one zmm holds 4 consecutive quants of 16 rows
// (interleaved), and the activations are 4-byte broadcasts, so the G/4
// dpbusd of a scale group (G = 32 or 16 values) accumulate in int32 for all
// 16 rows at once, and the scale, the correction and the conversion are paid
// once per group: 8 dpbusd + 4 ops per 32 values instead of 16.
//
// The panel is built per call and reused by every token: for Q4_0, Q4_1 and
// Q8_0 straight from the blocks, for rows in the lanes layout straight from
// their groups, for the other formats from the unpacked tile (a 16x16
// transpose of 4-byte words per 64 columns).
#include "lanes_factors_avx512.h"
#include "lanes_layout.h"
#include "panel_storage.h"
#include "quant_blocks.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace kestrel::kernels {
namespace {

// Interleaved form of up to 16 rows: q[c / 4][row][4] (64 bytes per 4 columns),
// per scale group g: scale[g][row], corr[g][row]. Missing rows have zero scales.
struct Panel {
    int64_t colsPadded = 0;
    int group = 32;
    const uint8_t* q = nullptr;
    const float* scale = nullptr;
    const float* corr = nullptr;
};

// r[i] (16 vectors of 16 dwords) -> r[j] = dword j of every input, in input order.
inline void transposeWords16(__m512i (&r)[16]) {
    __m512i t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    // v[q][d]: lane L holds rows 4q..4q+3 of dword 4L + d.
    __m512i v[4][4];
    for (int q = 0; q < 4; ++q) {
        const __m512i* p = t + 4 * q;
        v[q][0] = _mm512_unpacklo_epi64(p[0], p[2]);
        v[q][1] = _mm512_unpackhi_epi64(p[0], p[2]);
        v[q][2] = _mm512_unpacklo_epi64(p[1], p[3]);
        v[q][3] = _mm512_unpackhi_epi64(p[1], p[3]);
    }
    for (int d = 0; d < 4; ++d) {
        const __m512i a = _mm512_shuffle_i32x4(v[0][d], v[1][d], 0x44), b = _mm512_shuffle_i32x4(v[0][d], v[1][d], 0xee);
        const __m512i e = _mm512_shuffle_i32x4(v[2][d], v[3][d], 0x44), f = _mm512_shuffle_i32x4(v[2][d], v[3][d], 0xee);
        r[0 + d] = _mm512_shuffle_i32x4(a, e, 0x88);
        r[4 + d] = _mm512_shuffle_i32x4(a, e, 0xdd);
        r[8 + d] = _mm512_shuffle_i32x4(b, f, 0x88);
        r[12 + d] = _mm512_shuffle_i32x4(b, f, 0xdd);
    }
}

// Rows 0..15 of 64 bytes each (at rows[r]) -> out[j] = dword j of every row.
inline void transpose16x16(const uint8_t* const* rows, int64_t c, uint8_t* out) {
    __m512i r[16];
    for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_si512(rows[i] + c);
    transposeWords16(r);
    for (int j = 0; j < 16; ++j) _mm512_store_si512(out + j * 64, r[j]);
}

// Any format: from the unpacked tile (u8 rows, per-4 scales, per-16 corrections).
Panel panelFromTile(const UnpackedTile& tile, int slot) {
    const int64_t cp = tile.colsPadded;
    const PanelStorage storage = panelStorage(cp, tile.scaleGroup, slot);
    const uint8_t* rows[kPanelRows];
    for (int r = 0; r < kPanelRows; ++r) rows[r] = tile.u + (r < tile.rows ? r : 0) * cp;  // missing rows: any data
    for (int64_t c = 0; c < cp; c += 64) transpose16x16(rows, c, storage.q + c * kPanelRows);
    panelFactorsFromTile(tile, storage);
    return Panel{cp, tile.scaleGroup, storage.q, storage.scale, storage.corr};
}

// Lane L of zmm q (q = 0..3) <- the 16 bytes at rows[4L + q] + offset; then
// v[j] = dword j (j = 0..3) of those 16 bytes for all 16 rows, in row order.
inline void gatherRows16x16B(const uint8_t* const* rows, size_t offset, __m512i v[4]) {
    __m512i z[4];
    for (int q = 0; q < 4; ++q) {
        z[q] = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[q] + offset)));
        z[q] = _mm512_inserti32x4(z[q], _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[4 + q] + offset)), 1);
        z[q] = _mm512_inserti32x4(z[q], _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[8 + q] + offset)), 2);
        z[q] = _mm512_inserti32x4(z[q], _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[12 + q] + offset)), 3);
    }
    const __m512i t0 = _mm512_unpacklo_epi32(z[0], z[1]), t1 = _mm512_unpackhi_epi32(z[0], z[1]);
    const __m512i t2 = _mm512_unpacklo_epi32(z[2], z[3]), t3 = _mm512_unpackhi_epi32(z[2], z[3]);
    v[0] = _mm512_unpacklo_epi64(t0, t2);
    v[1] = _mm512_unpackhi_epi64(t0, t2);
    v[2] = _mm512_unpacklo_epi64(t1, t3);
    v[3] = _mm512_unpackhi_epi64(t1, t3);
}

// Q4_0, Q4_1, Q8_0 with all 16 rows present: straight from the blocks, no
// intermediate tile. Per block and 16 rows: the quants transposed in 4-byte
// words, the f16 scale (and Q4_1's min) of each row gathered and converted.
template <GgmlType Type>
Panel panelDirect(const uint8_t* w, size_t rowBytes, int64_t cols, int slot) {
    constexpr int kBlockBytes = Type == GgmlType::Q4_0 ? 18 : Type == GgmlType::Q4_1 ? 20 : 34;
    constexpr int kQuants = Type == GgmlType::Q4_1 ? 4 : 2;  // offset of qs in the block
    const int64_t cp = padCols(cols), nb = cols / kQK;
    const auto [q, scale, corr] = panelStorage(cp, kQK, slot);
    const uint8_t* rows[kPanelRows];
    for (int r = 0; r < kPanelRows; ++r) rows[r] = w + r * rowBytes;
    const __m512i rowOffsets = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                                  _mm512_set1_epi32(static_cast<int>(rowBytes)));
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    for (int64_t b = 0; b < nb; ++b) {
        uint8_t* out = q + b * kQK * kPanelRows;
        __m512i v[4];
        gatherRows16x16B(rows, static_cast<size_t>(b * kBlockBytes + kQuants), v);
        if constexpr (Type == GgmlType::Q8_0) {
            const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // u = w + 128
            for (int j = 0; j < 4; ++j) _mm512_store_si512(out + j * 64, _mm512_xor_si512(v[j], flip));
            gatherRows16x16B(rows, static_cast<size_t>(b * kBlockBytes + kQuants + 16), v);
            for (int j = 0; j < 4; ++j) _mm512_store_si512(out + (4 + j) * 64, _mm512_xor_si512(v[j], flip));
        } else {
            // Byte i holds value i (low nibble) and value i + 16 (high nibble).
            for (int j = 0; j < 4; ++j) {
                _mm512_store_si512(out + j * 64, _mm512_and_si512(v[j], m4));
                _mm512_store_si512(out + (4 + j) * 64, _mm512_and_si512(_mm512_srli_epi16(v[j], 4), m4));
            }
        }
        const __m512i h = _mm512_i32gather_epi32(_mm512_add_epi32(rowOffsets, _mm512_set1_epi32(static_cast<int>(b * kBlockBytes))), w, 1);
        const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(h));
        _mm512_store_ps(scale + b * kPanelRows, d);
        if constexpr (Type == GgmlType::Q4_1)
            _mm512_store_ps(corr + b * kPanelRows, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(h, 16))));
        else
            _mm512_store_ps(corr + b * kPanelRows, _mm512_mul_ps(d, _mm512_set1_ps(Type == GgmlType::Q4_0 ? -8.0f : -128.0f)));
    }
    zeroPadding(PanelStorage{q, scale, corr}, nb, cp);
    return Panel{cp, kQK, q, scale, corr};
}

inline __mmask64 byteMask(int n) { return n >= 64 ? ~0ull : (1ull << n) - 1; }

// Q5_0's fifth bits for a panel word of 4 values j .. j + 3 (j a multiple of 4) in each of
// 16 rows: `bits` holds each row's 32 high bits in the same word position; vpshufb copies
// byte j / 8 of it into the word's 4 bytes, vptestmb picks bit j % 8 + i for byte i, and
// 16 is added where it is set.
inline __m512i withFifthBits(__m512i values, __m512i bits, int j) {
    const __m512i wordBase = _mm512_set4_epi32(0x0c0c0c0c, 0x08080808, 0x04040404, 0x00000000);
    return addFifthBits(values, bits, _mm512_add_epi8(wordBase, _mm512_set1_epi8(static_cast<char>(j / 8))),
                        _mm512_set1_epi32(0x08040201 << (j % 8)));
}

// A lanes group's per-lane factors (a scale and a correction per lane) of 16 rows,
// transposed: f[l] holds lane l's factor of every row (the panel's order).
template <GgmlType Type, int Slots>
void laneFactorsOf16Rows(const uint8_t* tail, size_t rowBytes, __m512i (&scale)[16], __m512i (&corr)[16]) {
    for (int r = 0; r < kPanelRows; ++r) {
        const uint8_t* p = tail + r * rowBytes;
        const __m512 d = laneScale<Type, Slots>(p);
        __m512 c;
        if constexpr (lanesHasMinimum(Type)) c = laneMinimum<Type, Slots>(p);
        else c = _mm512_mul_ps(d, _mm512_set1_ps(-static_cast<float>(lanesZeroPoint(Type))));  // as panelDirect and the tiles
        scale[r] = _mm512_castps_si512(d);
        corr[r] = _mm512_castps_si512(c);
    }
    transposeWords16(scale);
    transposeWords16(corr);
}

// Rows in the lanes layout (lanes_layout.h), all 16 rows present: the panel straight
// from the groups. Prefill used to restore GGML's blocks first, per panel and call: for
// Q4_K that cost 5x the unpacking (1.75 us a 4096-wide row), for Q4_1 0.24 us against
// panelDirect's own work. Lane d of a group's quant vector v holds 4 quant bytes of
// block d / L (L lanes a block), so transposing the 16 rows' vector v leaves in word d
// one 4-column word of all 16 rows, which is the panel's layout; nibbles split into
// their two columns as in panelDirect, Q5_0's fifth bits added from the same transpose
// of the rows' high-bit words. The same numbers as the GGML path: the same quants, and
// scales and corrections made by the same float operations.
template <GgmlType Type>
Panel panelFromLanes(const uint8_t* w, size_t rowBytes, int64_t cols, int slot) {
    const int64_t cp = padCols(cols), nb = cols / kQK;
    const auto [q, scale, corr] = panelStorage(cp, kQK, slot);
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    size_t at = 0;  // the group's offset in its row
    forEachLanesGroup(nb, [&](LanesGroup g, int64_t b0) {
        const int lanes = g.lanesPerBlock(), vectorBytes = lanesVectorBytes(g), present = lanes * g.blocks;
        const __mmask64 k = byteMask(vectorBytes);
        [[maybe_unused]] __m512i highBits[16];  // Q5_0: word k holds block k's 32 high bits of all 16 rows
        if constexpr (Type == GgmlType::Q5_0) {
            const int at5 = lanesVectors(Type, g) * vectorBytes;
            const __mmask64 k5 = byteMask(4 * g.blocks);
            for (int r = 0; r < kPanelRows; ++r) highBits[r] = _mm512_maskz_loadu_epi8(k5, w + r * rowBytes + at + at5);
            transposeWords16(highBits);
        }
        for (int v = 0; v < lanesVectors(Type, g); ++v) {
            __m512i words[16];
            for (int r = 0; r < kPanelRows; ++r) words[r] = _mm512_maskz_loadu_epi8(k, w + r * rowBytes + at + v * vectorBytes);
            transposeWords16(words);
            for (int d = 0; d < present; ++d) {
                const int64_t column = (b0 + d / lanes) * kQK + (v * lanes + d % lanes) * 4;  // of the word's first byte
                uint8_t* out = q + column * kPanelRows;
                if constexpr (Type == GgmlType::Q8_0) {
                    _mm512_store_si512(out, words[d]);  // already u = w + 128
                } else {  // byte i: value i low, i + 16 high
                    __m512i lo = _mm512_and_si512(words[d], m4), hi = _mm512_and_si512(_mm512_srli_epi16(words[d], 4), m4);
                    if constexpr (Type == GgmlType::Q5_0) {
                        const int j = static_cast<int>(column % kQK);  // values j .. j + 3 and j + 16 .. j + 19
                        lo = withFifthBits(lo, highBits[d / lanes], j);
                        hi = withFifthBits(hi, highBits[d / lanes], j + 16);
                    }
                    _mm512_store_si512(out, lo);
                    _mm512_store_si512(out + 16 * kPanelRows, hi);
                }
            }
        }
        __m512i s[16], c[16];
        const uint8_t* tail = w + at + lanesScalesOffset(Type, g);
        if (g.slots == 16) laneFactorsOf16Rows<Type, 16>(tail, rowBytes, s, c);
        else laneFactorsOf16Rows<Type, 4>(tail, rowBytes, s, c);
        for (int b = 0; b < g.blocks; ++b) {
            _mm512_store_si512(scale + (b0 + b) * kPanelRows, s[b * lanes]);
            _mm512_store_si512(corr + (b0 + b) * kPanelRows, c[b * lanes]);
        }
        at += static_cast<size_t>(lanesGroupBytes(Type, g));
    });
    zeroPadding(PanelStorage{q, scale, corr}, nb, cp);
    return Panel{cp, kQK, q, scale, corr};
}

inline __m512i broadcast4(const int8_t* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

// Tokens t0..t0+T-1 against P panels (the rows of one call), each token's
// broadcast serving all P; y (already offset to the call's first row) gets the
// panels' real rows (masks) per token.
template <int T, int P, int G>
void panelMicro(const Panel (&p)[2], const QuantActivations& act, int64_t t0, float* y, int64_t yStride,
                const __mmask16 (&rows)[2]) {
    const int64_t cp = p[0].colsPadded;
    const int64_t groups = cp / G;
    // s of each group: dx * sum of its quants (s32 for 32-value groups, s16 for 16).
    const float* sums = G == 32 ? act.s32 : act.s16;
    __m512 acc[P][T];
    for (int i = 0; i < P; ++i)
        for (int t = 0; t < T; ++t) acc[i][t] = _mm512_setzero_ps();
    for (int64_t k = 0; k < groups; ++k) {
        __m512i dot[P][T];
        for (int i = 0; i < P; ++i)
            for (int t = 0; t < T; ++t) dot[i][t] = _mm512_setzero_si512();
        for (int j = 0; j < G / 4; ++j) {
            __m512i w[P];
            for (int i = 0; i < P; ++i) w[i] = _mm512_load_si512(p[i].q + k * G * kPanelRows + j * 64);
            for (int t = 0; t < T; ++t) {
                const __m512i x = broadcast4(act.qs + (t0 + t) * cp + k * G + j * 4);
                for (int i = 0; i < P; ++i) dot[i][t] = _mm512_dpbusd_epi32(dot[i][t], w[i], x);
            }
        }
        for (int i = 0; i < P; ++i) {
            const __m512 sc = _mm512_loadu_ps(p[i].scale + k * kPanelRows), cr = _mm512_loadu_ps(p[i].corr + k * kPanelRows);
            for (int t = 0; t < T; ++t) {
                const __m512 dx = _mm512_set1_ps(act.dx4[(t0 + t) * cp / 4 + k * G / 4]);
                acc[i][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[i][t]), _mm512_mul_ps(sc, dx), acc[i][t]);
                acc[i][t] = _mm512_fmadd_ps(cr, _mm512_set1_ps(sums[(t0 + t) * groups + k]), acc[i][t]);
            }
        }
    }
    for (int i = 0; i < P; ++i)
        for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + (t0 + t) * yStride + i * kPanelRows, rows[i], acc[i][t]);
}

// Every token, kT at a time. One panel takes 8 tokens a pass; two take 6, each
// broadcast then feeding two vpdpbusd (kestrel-bench-matmul, 64 tokens: a panel's share of
// the work 16-23 % faster than alone).
template <int P, int kT, int G>
void panelTokens(const Panel (&p)[2], const QuantActivations& act, float* y, int64_t yStride,
                 const __mmask16 (&rows)[2]) {
    int64_t t = 0;
    for (; t + kT <= act.tokens; t += kT) panelMicro<kT, P, G>(p, act, t, y, yStride, rows);
    switch (act.tokens - t) {
    case 7: if constexpr (kT > 7) panelMicro<7, P, G>(p, act, t, y, yStride, rows); break;
    case 6: if constexpr (kT > 6) panelMicro<6, P, G>(p, act, t, y, yStride, rows); break;
    case 5: panelMicro<5, P, G>(p, act, t, y, yStride, rows); break;
    case 4: panelMicro<4, P, G>(p, act, t, y, yStride, rows); break;
    case 3: panelMicro<3, P, G>(p, act, t, y, yStride, rows); break;
    case 2: panelMicro<2, P, G>(p, act, t, y, yStride, rows); break;
    case 1: panelMicro<1, P, G>(p, act, t, y, yStride, rows); break;
    default: break;
    }
}

// Every token of `act` against the call's `panels` (1 or 2) panels, of `rows` real rows.
void panelAllTokens(const Panel (&p)[2], int panels, const QuantActivations& act, float* y, int64_t yStride, int rows) {
    auto maskOf = [](int n) { return static_cast<__mmask16>(n >= kPanelRows ? 0xffff : n <= 0 ? 0 : (1u << n) - 1); };
    const __mmask16 masks[2] = {maskOf(rows), maskOf(rows - kPanelRows)};
    if (panels == 2) {
        if (p[0].group == 32) panelTokens<2, 6, 32>(p, act, y, yStride, masks);
        else panelTokens<2, 6, 16>(p, act, y, yStride, masks);
    } else {
        if (p[0].group == 32) panelTokens<1, 8, 32>(p, act, y, yStride, masks);
        else panelTokens<1, 8, 16>(p, act, y, yStride, masks);
    }
}

}  // namespace

// Declared in gemm_avx512.cpp; an IsaKernels::panelRows (up to kPanelCallRows rows: two panels).
void panelRowsAvx512(GgmlType type, const uint8_t* w, size_t rowBytes, int rows, int64_t cols,
                     const QuantActivations& act, float* y, int64_t yStride) {
    Panel p[2];
    const int panels = (rows + kPanelRows - 1) / kPanelRows;
    for (int i = 0; i < panels; ++i) {
        const uint8_t* rows0 = w + static_cast<size_t>(i) * kPanelRows * rowBytes;
        const int n = std::min(kPanelRows, rows - i * kPanelRows);
        const bool full = n == kPanelRows;
        if (full && type == GgmlType::Q4_0) {
            p[i] = panelDirect<GgmlType::Q4_0>(rows0, rowBytes, cols, i);
        } else if (full && type == GgmlType::Q4_1) {
            p[i] = panelDirect<GgmlType::Q4_1>(rows0, rowBytes, cols, i);
        } else if (full && type == GgmlType::Q8_0) {
            p[i] = panelDirect<GgmlType::Q8_0>(rows0, rowBytes, cols, i);
        } else {
            thread_local std::vector<unsigned char> scratch;
            const int64_t cp = padCols(cols);
            if (scratch.size() < unpackedTileBytes(cp, kPanelRows)) scratch.resize(unpackedTileBytes(cp, kPanelRows));
            UnpackedTile tile = makeUnpackedTile(scratch.data(), cp, kPanelRows);
            unpackRowsAvx2(type, rows0, rowBytes, n, cols, tile);
            p[i] = panelFromTile(tile, i);
        }
    }
    panelAllTokens(p, panels, act, y, yStride, rows);
}

// Declared in gemm_avx512.cpp; an IsaKernels::panelRowsLanes: whole panels only (16 or 32 rows).
bool panelRowsLanesAvx512(GgmlType type, const uint8_t* w, size_t rowBytes, int rows, int64_t cols,
                          const QuantActivations& act, float* y, int64_t yStride) {
    if (rows % kPanelRows != 0) return false;
    const int panels = rows / kPanelRows;
    Panel p[2];
    for (int i = 0; i < panels; ++i) {
        const uint8_t* rows0 = w + static_cast<size_t>(i) * kPanelRows * rowBytes;
        switch (type) {
        case GgmlType::Q4_0: p[i] = panelFromLanes<GgmlType::Q4_0>(rows0, rowBytes, cols, i); break;
        case GgmlType::Q4_1: p[i] = panelFromLanes<GgmlType::Q4_1>(rows0, rowBytes, cols, i); break;
        case GgmlType::Q8_0: p[i] = panelFromLanes<GgmlType::Q8_0>(rows0, rowBytes, cols, i); break;
        case GgmlType::Q4_K: p[i] = panelFromLanes<GgmlType::Q4_K>(rows0, rowBytes, cols, i); break;
        case GgmlType::Q5_0: p[i] = panelFromLanes<GgmlType::Q5_0>(rows0, rowBytes, cols, i); break;
        default: return false;
        }
    }
    panelAllTokens(p, panels, act, y, yStride, rows);
    return true;
}

}  // namespace kestrel::kernels
