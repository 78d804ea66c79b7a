// Multi-token integer products on 16-row panels for AVX2 (compiled with
// -mavx2/-mfma/-mf16c; called only after cpuid says so): prefill on CPUs
// without AVX-512, most desktop CPUs.
//
// Why: the 2x4 register tile of gemm_avx2.cpp spends five vector ops per 32
// multiply-adds (maddubs, madd, int->float, scale product, FMA), because each
// maddubs covers 32 columns of one row, one block whose scale must be applied
// before the next. Here a ymm holds 4 consecutive quants of 8 rows (half of the
// panel of gemm_panel_avx512.cpp, same layout), the activations are 4-byte
// broadcasts, and maddubs's 16-bit pair sums of a scale group are added in 16
// bits (exact: the run of words added is short enough that no sum can pass
// 32767), widened with one madd per run, and scaled once per group: a word of
// 8 rows x 4 columns costs maddubs + add, 16 multiply-adds per op.
//
// Q8_0 (u = w + 128, too large for maddubs's unsigned side) is multiplied
// signed, as the tiles do: maddubs(|w|, sign(x, w)), one word per run, no offset
// correction.
//
// Each (row, token) sees the same operations in the same order whatever the
// token count, and the integer sums are exact whatever the run length, so a
// row's result does not depend on how many tokens the call has.
#include "lanes_layout.h"
#include "panel_storage.h"
#include "quant_blocks.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace kestrel::kernels {
namespace {

constexpr int kHalfRows = 8;  // rows of a ymm word; a panel is two halves

// Rows 0..7 of 32 bytes each -> r[j] = dword j of every row, in row order.
inline void transposeWords8(__m256i (&r)[8]) {
    __m256i t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
        u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
        u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
        u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    // u[i] (i < 4): rows 0-3 of dwords {i, i + 4} in its two 128-bit halves; u[4 + i]: rows 4-7.
    for (int i = 0; i < 4; ++i) {
        r[i] = _mm256_permute2x128_si256(u[i], u[4 + i], 0x20);
        r[4 + i] = _mm256_permute2x128_si256(u[i], u[4 + i], 0x31);
    }
}

// The panel: q[c / 4][row][4] (64 bytes per 4 columns, rows 0-7 then 8-15), per
// scale group g: scale[g][row], corr[g][row]; `run`: words whose 16-bit sums may be
// added before widening.
struct Panel {
    int64_t colsPadded = 0;
    int group = 32;
    int run = 1;
    bool signedQ = false;
    const uint8_t* q = nullptr;
    const float* scale = nullptr;
    const float* corr = nullptr;
};

// Words of 4 columns whose maddubs sums (two products of at most maxU * 127 each)
// add up to at most 32767, a power of two dividing the group's words.
int runFor(int maxU, int group) {
    int run = group / 4;
    while (run > 1 && run * 2 * maxU * 127 > 32767) run /= 2;
    return run;
}

// The tile's largest quant: the run length is then safe for any data, a hostile file's too.
int maxQuant(const UnpackedTile& tile) {
    __m256i m = _mm256_setzero_si256();
    for (int r = 0; r < tile.rows; ++r) {
        const uint8_t* u = tile.u + r * tile.colsPadded;
        for (int64_t c = 0; c < tile.colsPadded; c += 32)
            m = _mm256_max_epu8(m, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(u + c)));
    }
    alignas(32) uint8_t b[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(b), m);
    return *std::max_element(b, b + 32);
}

Panel panelFromTile(const UnpackedTile& tile) {
    const int64_t cp = tile.colsPadded;
    const PanelStorage storage = panelStorage(cp, tile.scaleGroup);
    // Q8_0's u = w + 128 flipped back to signed bytes.
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(tile.signedU ? 0x80 : 0));
    for (int h = 0; h < 2; ++h) {
        const uint8_t* rows[kHalfRows];
        for (int r = 0; r < kHalfRows; ++r) {
            const int row = h * kHalfRows + r;
            rows[r] = tile.u + (row < tile.rows ? row : 0) * cp;  // missing rows: any data, zero scales
        }
        for (int64_t c = 0; c < cp; c += 32) {
            __m256i v[8];
            for (int r = 0; r < kHalfRows; ++r)
                v[r] = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[r] + c)), flip);
            transposeWords8(v);
            for (int j = 0; j < 8; ++j)
                _mm256_store_si256(reinterpret_cast<__m256i*>(storage.q + (c / 4 + j) * 64 + h * 32), v[j]);
        }
    }
    panelFactorsFromTile(tile, storage);
    const int run = tile.signedU ? 1 : runFor(maxQuant(tile), tile.scaleGroup);
    return Panel{cp, tile.scaleGroup, run, tile.signedU, storage.q, storage.scale, storage.corr};
}

// Rows in the lanes layout (lanes_layout.h) of Q4_0, Q4_1, Q8_0 or Q4_K, all 16 rows present:
// the panel straight from their groups, as gemm_panel_avx512.cpp's panelFromLanes, instead
// of restoring GGML's blocks and unpacking them (a fifth of a 64-token product). Lane d of
// a group's quant vector holds 4 quant bytes of block d / L, so an 8x8 transpose of 8 rows'
// 32-byte halves leaves in word j the panel's 4-column word of those rows. The same quants,
// scales and corrections as the tile path, so the same numbers bit for bit.
template <GgmlType Type>
Panel panelFromLanes(const uint8_t* w, size_t rowBytes, int64_t cols) {
    const int64_t cp = padCols(cols), nb = cols / kQK;
    const auto [q, scale, corr] = panelStorage(cp, kQK);
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));  // Q8_0: u = q + 128 back to q
    const __m256i dword = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    size_t at = 0;  // the group's offset in its row
    forEachLanesGroup(nb, [&](LanesGroup g, int64_t b0) {
        const int lanes = g.lanesPerBlock(), vectorBytes = lanesVectorBytes(g), present = lanes * g.blocks;
        for (int v = 0; v < lanesVectors(Type, g); ++v)
            for (int h = 0; h < 2; ++h)
                for (int part = 0; part * 8 < present; ++part) {  // dwords 0-7, then 8-15
                    // Only the group's own dwords: a short group's vector ends before 64 bytes.
                    const __m256i load = _mm256_cmpgt_epi32(_mm256_set1_epi32(present - part * 8), dword);
                    __m256i words[8];
                    for (int r = 0; r < kHalfRows; ++r)
                        words[r] = _mm256_maskload_epi32(
                            reinterpret_cast<const int*>(w + (h * kHalfRows + r) * rowBytes + at + v * vectorBytes + part * 32), load);
                    transposeWords8(words);
                    for (int j = 0; j < 8 && part * 8 + j < present; ++j) {
                        const int d = part * 8 + j;
                        const int64_t column = (b0 + d / lanes) * kQK + (v * lanes + d % lanes) * 4;  // of the word's first byte
                        auto* out = reinterpret_cast<__m256i*>(q + column / 4 * 64 + h * 32);
                        if constexpr (Type == GgmlType::Q8_0) {
                            _mm256_store_si256(out, _mm256_xor_si256(words[j], flip));
                        } else {  // byte i: value i low, i + 16 high (4 words on)
                            _mm256_store_si256(out, _mm256_and_si256(words[j], m4));
                            _mm256_store_si256(out + 8, _mm256_and_si256(_mm256_srli_epi16(words[j], 4), m4));
                        }
                    }
                }
        for (int r = 0; r < kPanelRows; ++r) {
            const uint8_t* tail = w + r * rowBytes + at + lanesScalesOffset(Type, g);
            auto half = [tail](int offset) {  // the f16 at tail + offset
                uint16_t h16;
                std::memcpy(&h16, tail + offset, 2);
                return _cvtsh_ss(h16);
            };
            for (int b = 0; b < g.blocks; ++b) {
                // The tile's unpacking makes each with the same float operations.
                float d, c = 0.0f;  // Q8_0's signed product needs no correction
                if constexpr (Type == GgmlType::Q4_K) {
                    const int super = b / 8;  // 8 slots a super block
                    d = half(Q4KTail::d(super)) * static_cast<float>(tail[Q4KTail::scale(b)]);
                    c = -half(Q4KTail::dmin(super)) * static_cast<float>(tail[Q4KTail::minimum(g.slots, b)]);
                } else {
                    d = half(2 * b);
                    if constexpr (Type == GgmlType::Q4_1) c = half(2 * g.slots + 2 * b);
                    else if constexpr (Type == GgmlType::Q4_0) c = d * -8.0f;
                }
                scale[(b0 + b) * kPanelRows + r] = d;
                corr[(b0 + b) * kPanelRows + r] = c;
            }
        }
        at += static_cast<size_t>(lanesGroupBytes(Type, g));
    });
    zeroPadding(PanelStorage{q, scale, corr}, nb, cp);
    const int run = Type == GgmlType::Q8_0 ? 1 : runFor(15, kQK);
    return Panel{cp, kQK, run, Type == GgmlType::Q8_0, q, scale, corr};
}

inline __m256i broadcast4(const int8_t* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

// Tokens t0 .. t0 + T - 1 against the panel's first H halves (rows 0 .. 8H - 1), each
// token's broadcast serving all H; y (already at the panel's first row) gets the first
// `rows` rows per token.
template <int T, int H, int G, int Run, bool Signed>
void panelMicro(const Panel& p, const QuantActivations& act, int64_t t0, float* y, int64_t yStride, int rows) {
    const int64_t cp = p.colsPadded;
    const int64_t groups = cp / G;
    const float* sums = G == 32 ? act.s32 : act.s16;
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc[H][T];
    for (int h = 0; h < H; ++h)
        for (int t = 0; t < T; ++t) acc[h][t] = _mm256_setzero_ps();
    for (int64_t k = 0; k < groups; ++k) {
        const uint8_t* q = p.q + k * G * kPanelRows;
        __m256i dot[H][T];
        for (int j0 = 0; j0 < G / 4; j0 += Run) {
            __m256i pairs[H][T];
            for (int j = j0; j < j0 + Run; ++j) {
                __m256i w[H];
                [[maybe_unused]] __m256i magnitude[H];
                for (int h = 0; h < H; ++h) {
                    w[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(q + j * 64 + h * 32));
                    if constexpr (Signed) magnitude[h] = _mm256_abs_epi8(w[h]);
                }
                for (int t = 0; t < T; ++t) {
                    const __m256i x = broadcast4(act.qs + (t0 + t) * cp + k * G + j * 4);
                    for (int h = 0; h < H; ++h) {
                        const __m256i s = Signed ? _mm256_maddubs_epi16(magnitude[h], _mm256_sign_epi8(x, w[h]))
                                                 : _mm256_maddubs_epi16(w[h], x);
                        pairs[h][t] = j == j0 ? s : _mm256_add_epi16(pairs[h][t], s);
                    }
                }
            }
            for (int h = 0; h < H; ++h)
                for (int t = 0; t < T; ++t) {
                    const __m256i d = _mm256_madd_epi16(pairs[h][t], ones);
                    dot[h][t] = j0 == 0 ? d : _mm256_add_epi32(dot[h][t], d);
                }
        }
        for (int h = 0; h < H; ++h) {
            const __m256 sc = _mm256_loadu_ps(p.scale + k * kPanelRows + h * kHalfRows);
            const __m256 cr = _mm256_loadu_ps(p.corr + k * kPanelRows + h * kHalfRows);
            for (int t = 0; t < T; ++t) {
                const __m256 dx = _mm256_set1_ps(act.dx4[(t0 + t) * cp / 4 + k * G / 4]);
                acc[h][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[h][t]), _mm256_mul_ps(sc, dx), acc[h][t]);
                if constexpr (!Signed)
                    acc[h][t] = _mm256_fmadd_ps(cr, _mm256_set1_ps(sums[(t0 + t) * groups + k]), acc[h][t]);
            }
        }
    }
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int h = 0; h < H; ++h) {
        const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(rows - h * kHalfRows), lane);
        for (int t = 0; t < T; ++t) _mm256_maskstore_ps(y + (t0 + t) * yStride + h * kHalfRows, mask, acc[h][t]);
    }
}

// Every token against the first H halves, kT tokens at a time.
template <int H, int kT, int G, int Run, bool Signed>
void tokensOnHalves(const Panel& p, const QuantActivations& act, float* y, int64_t yStride, int rows) {
    int64_t t = 0;
    for (; t + kT <= act.tokens; t += kT) panelMicro<kT, H, G, Run, Signed>(p, act, t, y, yStride, rows);
    switch (act.tokens - t) {
    case 3: if constexpr (kT > 3) panelMicro<3, H, G, Run, Signed>(p, act, t, y, yStride, rows); break;
    case 2: if constexpr (kT > 2) panelMicro<2, H, G, Run, Signed>(p, act, t, y, yStride, rows); break;
    case 1: panelMicro<1, H, G, Run, Signed>(p, act, t, y, yStride, rows); break;
    default: break;
    }
}

// Both halves under each broadcast, 3 tokens at a time (15 of the 16 ymm registers
// for the nibble types): 64-token products 5-13 % faster than one half under 4 tokens'
// broadcasts, and 2 tokens a pass were no faster. A panel of at most 8 rows takes its half.
template <int G, int Run, bool Signed>
void panelTokens(const Panel& p, const QuantActivations& act, float* y, int64_t yStride, int rows) {
    if (rows > kHalfRows) tokensOnHalves<2, 3, G, Run, Signed>(p, act, y, yStride, rows);
    else tokensOnHalves<1, 4, G, Run, Signed>(p, act, y, yStride, rows);
}

template <int G>
void tokensByRun(const Panel& p, const QuantActivations& act, float* y, int64_t yStride, int rows) {
    if (p.signedQ) return panelTokens<G, 1, true>(p, act, y, yStride, rows);
    switch (p.run) {
    case 8:
        if constexpr (G == 32) return panelTokens<G, 8, false>(p, act, y, yStride, rows);
        break;
    case 4: return panelTokens<G, 4, false>(p, act, y, yStride, rows);
    case 2: return panelTokens<G, 2, false>(p, act, y, yStride, rows);
    default: break;
    }
    panelTokens<G, 1, false>(p, act, y, yStride, rows);
}

// Every token of `act` against panel p, whose first `rows` rows are real.
void panelAllTokens(const Panel& p, const QuantActivations& act, float* y, int64_t yStride, int rows) {
    if (p.group == 32) tokensByRun<32>(p, act, y, yStride, rows);
    else tokensByRun<16>(p, act, y, yStride, rows);
}

}  // namespace

// An IsaKernels::panelRows for AVX2: the call's panels (up to kPanelCallRows rows) one after another.
void panelRowsAvx2(GgmlType type, const uint8_t* w, size_t rowBytes, int rows, int64_t cols,
                   const QuantActivations& act, float* y, int64_t yStride) {
    thread_local std::vector<unsigned char> scratch;
    const int64_t cp = padCols(cols);
    if (scratch.size() < unpackedTileBytes(cp, kPanelRows)) scratch.resize(unpackedTileBytes(cp, kPanelRows));
    UnpackedTile tile = makeUnpackedTile(scratch.data(), cp, kPanelRows);
    for (int r0 = 0; r0 < rows; r0 += kPanelRows) {
        const int n = std::min(kPanelRows, rows - r0);
        unpackRowsAvx2(type, w + static_cast<size_t>(r0) * rowBytes, rowBytes, n, cols, tile);
        panelAllTokens(panelFromTile(tile), act, y + r0, yStride, n);
    }
}

// An IsaKernels::panelRowsLanes for AVX2: whole panels only (16 or 32 rows); false where
// the caller must restore GGML's blocks.
bool panelRowsLanesAvx2(GgmlType type, const uint8_t* w, size_t rowBytes, int rows, int64_t cols,
                        const QuantActivations& act, float* y, int64_t yStride) {
    if (rows % kPanelRows != 0) return false;
    for (int r0 = 0; r0 < rows; r0 += kPanelRows) {
        const uint8_t* rows0 = w + static_cast<size_t>(r0) * rowBytes;
        Panel p;
        switch (type) {
        case GgmlType::Q4_0: p = panelFromLanes<GgmlType::Q4_0>(rows0, rowBytes, cols); break;
        case GgmlType::Q4_1: p = panelFromLanes<GgmlType::Q4_1>(rows0, rowBytes, cols); break;
        case GgmlType::Q8_0: p = panelFromLanes<GgmlType::Q8_0>(rows0, rowBytes, cols); break;
        case GgmlType::Q4_K: p = panelFromLanes<GgmlType::Q4_K>(rows0, rowBytes, cols); break;
        default: return false;
        }
        panelAllTokens(p, act, y + r0, yStride, kPanelRows);
    }
    return true;
}

}  // namespace kestrel::kernels
