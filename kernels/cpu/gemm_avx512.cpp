// AVX-512 VNNI kernels (compiled with -mavx512f/bw/vl/vnni; called only after
// cpuid says so). One zmm holds a pair of 32-element groups; vpdpbusd does 64
// u8 x s8 products per instruction. Register tiles are 4 rows x 4 tokens: 16
// accumulators, 4 weight vectors, the activation vectors, within 32 registers.
#include "fold_lanes_avx512.h"
#include "high_bits_avx2.h"
#include "lanes_activations.h"
#include "matmul.h"
#include "quant_blocks.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace kestrel::kernels {

bool rowsFewTokensVbmi(GgmlType type, const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols,
                       const QuantActivations& act, float* y, int64_t yStride);
void panelRowsAvx512(GgmlType type, const uint8_t* w, size_t rowBytes, int rows, int64_t cols,
                     const QuantActivations& act, float* y, int64_t yStride);
bool panelRowsLanesAvx512(GgmlType type, const uint8_t* w, size_t rowBytes, int rows, int64_t cols,
                          const QuantActivations& act, float* y, int64_t yStride);

namespace {

float dotFloat512(const float* a, const float* b, int64_t n) {
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), acc1);
    }
    for (; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (n - i)) - 1);
        acc0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), acc0);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

template <int R, int T>
void intMicro(const UnpackedTile& tile, int r0, const QuantActivations& act, int64_t t0, float* y, int64_t yStride) {
    const int64_t cp = tile.colsPadded;
    __m512 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
    const uint8_t* u = tile.u + r0 * cp;
    const float* s4 = tile.scale4 + r0 * cp / 4;
    for (int64_t c = 0; c < cp; c += 64) {
        __m512i wv[R];
        for (int r = 0; r < R; ++r) wv[r] = _mm512_loadu_si512(u + r * cp + c);
        for (int t = 0; t < T; ++t) {
            const __m512i xv = _mm512_loadu_si512(act.qs + (t0 + t) * cp + c);
            const __m512 dv = _mm512_loadu_ps(act.dx4 + (t0 + t) * cp / 4 + c / 4);
            for (int r = 0; r < R; ++r) {
                const __m512i d = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wv[r], xv);
                const __m512 s = _mm512_mul_ps(_mm512_loadu_ps(s4 + r * cp / 4 + c / 4), dv);
                acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), s, acc[r][t]);
            }
        }
    }
    // Offset terms (minimums, zero points): corr16 . s16, 16 groups per vector.
    const int64_t ng = cp / 16;
    for (int64_t g = 0; g < ng; g += 16) {
        const __mmask16 m = ng - g >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (ng - g)) - 1);
        for (int t = 0; t < T; ++t) {
            const __m512 sv = _mm512_maskz_loadu_ps(m, act.s16 + (t0 + t) * ng + g);
            for (int r = 0; r < R; ++r)
                acc[r][t] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, tile.corr16 + (r0 + r) * ng + g), sv, acc[r][t]);
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[(t0 + t) * yStride + r0 + r] = _mm512_reduce_add_ps(acc[r][t]);
}

template <int R>
void intRows(const UnpackedTile& tile, int r0, const QuantActivations& act, float* y, int64_t yStride) {
    int64_t t = 0;
    for (; t + 4 <= act.tokens; t += 4) intMicro<R, 4>(tile, r0, act, t, y, yStride);
    switch (act.tokens - t) {
    case 3: intMicro<R, 3>(tile, r0, act, t, y, yStride); break;
    case 2: intMicro<R, 2>(tile, r0, act, t, y, yStride); break;
    case 1: intMicro<R, 1>(tile, r0, act, t, y, yStride); break;
    default: break;
    }
}

void intTileAvx512(const UnpackedTile& tile, const QuantActivations& act, float* y, int64_t yStride) {
    switch (tile.rows) {
    case 4: intRows<4>(tile, 0, act, y, yStride); break;
    case 3: intRows<3>(tile, 0, act, y, yStride); break;
    case 2: intRows<2>(tile, 0, act, y, yStride); break;
    case 1: intRows<1>(tile, 0, act, y, yStride); break;
    default:
        for (int r = 0; r < tile.rows; ++r) intRows<1>(tile, r, act, y, yStride);
        break;
    }
}

inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// One token, 32-element formats, straight from the blocks. Per block:
//   y += (dw * dx) * dot(u, xq) + cw * (dx * sum xq)
// with u the unsigned quants; cw = m for Q4_1, else k * dw with k the zero point
// (-8, -16, -128), applied once per row.
template <GgmlType Type>
struct OneTokenBlock {
    __m256i u;  // unsigned quants
    float dw;   // block scale
    float cw;   // coefficient of dx * sum(xq): m for Q4_1, dw otherwise (times k at the end)
};

template <GgmlType Type>
inline OneTokenBlock<Type> loadBlock(const uint8_t* row, int64_t b) {
    const __m128i m4 = _mm_set1_epi8(0x0f);
    OneTokenBlock<Type> o;
    if constexpr (Type == GgmlType::Q8_0) {
        const auto* blk = reinterpret_cast<const BlockQ8_0*>(row) + b;
        o.u = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->qs)),
                               _mm256_set1_epi8(static_cast<char>(0x80)));
        o.dw = o.cw = _cvtsh_ss(blk->d);
    } else {
        using Block = std::conditional_t<Type == GgmlType::Q4_0, BlockQ4_0,
                                         std::conditional_t<Type == GgmlType::Q4_1, BlockQ4_1, BlockQ5_0>>;
        const auto* blk = reinterpret_cast<const Block*>(row) + b;
        const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk->qs));
        o.u = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(raw, 4), m4), _mm_and_si128(raw, m4));
        if constexpr (Type == GgmlType::Q5_0) o.u = _mm256_or_si256(o.u, highBits(blk->qh));
        o.dw = _cvtsh_ss(blk->d);
        if constexpr (Type == GgmlType::Q4_1)
            o.cw = _cvtsh_ss(blk->m);
        else
            o.cw = o.dw;
    }
    return o;
}

// One token, 32-element formats, straight from the blocks, two rows at a time
// (sharing each activation load). Per block:
//   y += (dw * dx) * dot(u, xq) + cw * (dx * sum xq)
// where k (the zero point: -8, -16, -128; 1 for Q4_1's explicit min) multiplies
// the second sum once per row.
template <GgmlType Type>
void rowsOneToken32(const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols, const QuantActivations& act,
                    float* y) {
    const int64_t nb = cols / kQK;
    constexpr float k = Type == GgmlType::Q4_0 ? -8.0f : Type == GgmlType::Q5_0 ? -16.0f : Type == GgmlType::Q8_0 ? -128.0f : 1.0f;
    int64_t r = 0;
    for (; r + 2 <= rows; r += 2) {
        const uint8_t* row0 = w + r * rowBytes;
        const uint8_t* row1 = row0 + rowBytes;
        __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
        float corr0 = 0.0f, corr1 = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act.qs + b * 32));
            const float dx = act.dx4[b * 8];
            const float sb = act.s16[2 * b] + act.s16[2 * b + 1];
            const auto b0 = loadBlock<Type>(row0, b);
            const auto b1 = loadBlock<Type>(row1, b);
            const __m256 f0 = _mm256_cvtepi32_ps(_mm256_dpbusd_epi32(_mm256_setzero_si256(), b0.u, xv));
            const __m256 f1 = _mm256_cvtepi32_ps(_mm256_dpbusd_epi32(_mm256_setzero_si256(), b1.u, xv));
            acc0 = _mm256_fmadd_ps(f0, _mm256_set1_ps(b0.dw * dx), acc0);
            acc1 = _mm256_fmadd_ps(f1, _mm256_set1_ps(b1.dw * dx), acc1);
            corr0 += b0.cw * sb;
            corr1 += b1.cw * sb;
        }
        y[r] = hsum256(acc0) + k * corr0;
        y[r + 1] = hsum256(acc1) + k * corr1;
    }
    for (; r < rows; ++r) {
        const uint8_t* row = w + r * rowBytes;
        __m256 acc = _mm256_setzero_ps();
        float corr = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act.qs + b * 32));
            const auto blk = loadBlock<Type>(row, b);
            const __m256 f = _mm256_cvtepi32_ps(_mm256_dpbusd_epi32(_mm256_setzero_si256(), blk.u, xv));
            acc = _mm256_fmadd_ps(f, _mm256_set1_ps(blk.dw * act.dx4[b * 8]), acc);
            corr += blk.cw * (act.s16[2 * b] + act.s16[2 * b + 1]);
        }
        y[r] = hsum256(acc) + k * corr;
    }
}

// One token of Q4_K: per 32-element group j of a super block,
//   y += (d * sc_j * dx) * dot(u, xq) - dmin * m_j * (dx * sum xq).
void rowsOneTokenQ4_K(const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols, const QuantActivations& act,
                      float* y) {
    const int64_t nb = cols / kQKK;
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    for (int64_t r = 0; r < rows; ++r) {
        const auto* blk = reinterpret_cast<const BlockQ4_K*>(w + r * rowBytes);
        __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
        float corr = 0.0f;
        for (int64_t i = 0; i < nb; ++i) {
            const float d = _cvtsh_ss(blk[i].d), dmin = _cvtsh_ss(blk[i].dmin);
            const int64_t c0 = i * kQKK;
            for (int c = 0; c < 4; ++c) {
                const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk[i].qs + c * 32));
                const __m256i lo = _mm256_and_si256(raw, m4), hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
                uint8_t sc0, m0, sc1, m1;
                kScaleMin(blk[i].scales, 2 * c, sc0, m0);
                kScaleMin(blk[i].scales, 2 * c + 1, sc1, m1);
                const int64_t g0 = c0 + c * 64, g1 = g0 + 32;
                const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act.qs + g0));
                const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act.qs + g1));
                const __m256 f0 = _mm256_cvtepi32_ps(_mm256_dpbusd_epi32(_mm256_setzero_si256(), lo, x0));
                const __m256 f1 = _mm256_cvtepi32_ps(_mm256_dpbusd_epi32(_mm256_setzero_si256(), hi, x1));
                acc0 = _mm256_fmadd_ps(f0, _mm256_set1_ps(d * sc0 * act.dx4[g0 / 4]), acc0);
                acc1 = _mm256_fmadd_ps(f1, _mm256_set1_ps(d * sc1 * act.dx4[g1 / 4]), acc1);
                corr -= dmin * (m0 * (act.s16[g0 / 16] + act.s16[g0 / 16 + 1]) +
                                m1 * (act.s16[g1 / 16] + act.s16[g1 / 16 + 1]));
            }
        }
        y[r] = hsum256(_mm256_add_ps(acc0, acc1)) + corr;
    }
}

// Q6_K rows for 1 to 8 tokens on 512-bit vectors, R rows and T tokens at a time: each
// row's super block is decoded once for all tokens, and the rows share the tokens'
// activation loads. A super block is two halves of 128 values. Per half, one 64-byte load
// of ql holds values 0-63 in its low nibbles and 64-127 in its high ones; qh's 32 bytes,
// in both 256-bit halves, give each value's two high bits after a shift that differs per
// half (sllv/srlv on 16-bit words, masked to bits 4-5). A vpdpbusd lane covers 4 values
// inside one 16-value scale group, so each product vector takes 4 of the super block's
// scales, each over 4 lanes: the 16 int8 scales are converted and multiplied by d once per
// super block, then permuted per vector. The -32 offset is one FMA per super block and
// token: (d * sc) . s16, s16 being the activations' dx * sum of each 16-value group.
// Every (row, token) output sees the same operations in the same order whatever R and T,
// so a token's outputs are bit for bit those of a one-token call. The block-at-a-time
// form (256-bit vectors, scalar scales and offsets per 32 values, one token) ran 18.7 GB/s
// in cache on two threads, and several tokens took the panels (7x one token at 4).
template <int R, int T>
void rowsQ6_K(const uint8_t* w, size_t rowBytes, int64_t cols, const QuantActivations& act, int64_t t0, float* y,
              int64_t yStride) {
    const int64_t nb = cols / kQKK, cp = act.colsPadded;
    const __m512i m4 = _mm512_set1_epi8(0x0f), m30 = _mm512_set1_epi8(0x30);
    // Per 256-bit half of the qh vector: << 4 and << 2 (low nibbles: bits 0-1, 2-3), >> 0 and >> 2 (high: 4-5, 6-7).
    const __m512i lowShift = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
    const __m512i highShift = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const int8_t* qs = act.qs + t0 * cp;
    const float* dx4 = act.dx4 + t0 * cp / 4;
    const float* s16 = act.s16 + t0 * cp / 16;
    __m512 acc[T][R], corr[T][R];
    for (int t = 0; t < T; ++t)
        for (int r = 0; r < R; ++r) acc[t][r] = corr[t][r] = _mm512_setzero_ps();
    const BlockQ6_K* blocks[R];
    for (int r = 0; r < R; ++r) blocks[r] = reinterpret_cast<const BlockQ6_K*>(w + r * rowBytes);
    for (int64_t i = 0; i < nb; ++i) {
        __m512 sd[R];  // d * sc of the 16 groups
        for (int r = 0; r < R; ++r) {
            const BlockQ6_K& b = blocks[r][i];
            sd[r] = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)))),
                                  _mm512_set1_ps(_cvtsh_ss(b.d)));
            for (int t = 0; t < T; ++t)
                corr[t][r] = _mm512_fmadd_ps(sd[r], _mm512_loadu_ps(s16 + t * cp / 16 + i * 16), corr[t][r]);
        }
        for (int h = 0; h < 2; ++h) {
            const int64_t c0 = i * kQKK + h * 128;
            const __m512i pick0 = _mm512_add_epi32(_mm512_srli_epi32(lane, 2), _mm512_set1_epi32(8 * h));
            const __m512i pick1 = _mm512_add_epi32(pick0, _mm512_set1_epi32(4));
            __m512i u0[R], u1[R];
            __m512 sc0[R], sc1[R];
            for (int r = 0; r < R; ++r) {
                const BlockQ6_K& b = blocks[r][i];
                const __m512i ql = _mm512_loadu_si512(b.ql + 64 * h);
                const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * h)));
                u0[r] = _mm512_or_si512(_mm512_and_si512(ql, m4), _mm512_and_si512(_mm512_sllv_epi16(qh, lowShift), m30));
                u1[r] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
                                        _mm512_and_si512(_mm512_srlv_epi16(qh, highShift), m30));
                sc0[r] = _mm512_permutexvar_ps(pick0, sd[r]);
                sc1[r] = _mm512_permutexvar_ps(pick1, sd[r]);
            }
            for (int t = 0; t < T; ++t) {
                const __m512i x0 = _mm512_loadu_si512(qs + t * cp + c0), x1 = _mm512_loadu_si512(qs + t * cp + c0 + 64);
                const __m512 dx0 = _mm512_loadu_ps(dx4 + t * cp / 4 + c0 / 4), dx1 = _mm512_loadu_ps(dx4 + t * cp / 4 + (c0 + 64) / 4);
                for (int r = 0; r < R; ++r) {
                    const __m512 p0 = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), u0[r], x0));
                    const __m512 p1 = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), u1[r], x1));
                    acc[t][r] = _mm512_fmadd_ps(p0, _mm512_mul_ps(sc0[r], dx0), acc[t][r]);
                    acc[t][r] = _mm512_fmadd_ps(p1, _mm512_mul_ps(sc1[r], dx1), acc[t][r]);
                }
            }
        }
    }
    for (int t = 0; t < T; ++t)
        for (int r = 0; r < R; ++r)
            y[(t0 + t) * yStride + r] = _mm512_reduce_add_ps(acc[t][r]) - 32.0f * _mm512_reduce_add_ps(corr[t][r]);
}

template <int R>
void rowsQ6_KAllTokens(const uint8_t* w, size_t rowBytes, int64_t cols, const QuantActivations& act, float* y,
                       int64_t yStride) {
    forLanesTokenPasses(act.tokens, [&](auto t, int64_t t0) {
        rowsQ6_K<R, decltype(t)::value>(w, rowBytes, cols, act, t0, y, yStride);
    });
}

// y[t * yStride + r] for 1..8 tokens of Q6_K rows (passes of up to 4 tokens; later passes find the rows in L1).
bool rowsFewTokensQ6_K(const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols, const QuantActivations& act,
                       float* y, int64_t yStride) {
    if (act.tokens < 1 || act.tokens > 8) return false;
    int64_t r = 0;
    for (; r + 2 <= rows; r += 2) rowsQ6_KAllTokens<2>(w + r * rowBytes, rowBytes, cols, act, y + r, yStride);
    if (r < rows) rowsQ6_KAllTokens<1>(w + r * rowBytes, rowBytes, cols, act, y + r, yStride);
    return true;
}

// VBMI's byte permutes let whole blocks share one vector (gemv_avx512vbmi.cpp); ~4x fewer instructions.
bool useVbmi() {
    static const bool vbmi = __builtin_cpu_supports("avx512vbmi") && !std::getenv("KESTREL_CPU_NO_VBMI");
    return vbmi;
}

// Q6_K and, with VBMI, Q4_0, Q4_1 and Q8_0 take several tokens here; other small batches use the panels.
bool rowsFewTokensAvx512(GgmlType type, const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols,
                         const QuantActivations& act, float* y, int64_t yStride) {
    if (type == GgmlType::Q6_K) return rowsFewTokensQ6_K(w, rowBytes, rows, cols, act, y, yStride);
    return useVbmi() && rowsFewTokensVbmi(type, w, rowBytes, rows, cols, act, y, yStride);
}

bool rowsOneTokenAvx512(GgmlType type, const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols,
                        const QuantActivations& act, float* y) {
    if (rowsFewTokensAvx512(type, w, rowBytes, rows, cols, act, y, 0)) return true;
    switch (type) {
    case GgmlType::Q4_0: rowsOneToken32<GgmlType::Q4_0>(w, rowBytes, rows, cols, act, y); return true;
    case GgmlType::Q4_1: rowsOneToken32<GgmlType::Q4_1>(w, rowBytes, rows, cols, act, y); return true;
    case GgmlType::Q5_0: rowsOneToken32<GgmlType::Q5_0>(w, rowBytes, rows, cols, act, y); return true;
    case GgmlType::Q8_0: rowsOneToken32<GgmlType::Q8_0>(w, rowBytes, rows, cols, act, y); return true;
    case GgmlType::Q4_K: rowsOneTokenQ4_K(w, rowBytes, rows, cols, act, y); return true;
    default: return false;
    }
}

void floatTileAvx512(const float* w, int rows, const float* x, int64_t tokens, int64_t cols, float* y,
                     int64_t yStride) {
    for (int r = 0; r < rows; ++r)
        for (int64_t t = 0; t < tokens; ++t) y[t * yStride + r] = dotFloat512(w + r * cols, x + t * cols, cols);
}

void toFloatAvx512(GgmlType type, const void* src, float* dst, int64_t n) {
    const auto* h = static_cast<const uint16_t*>(src);
    int64_t i = 0;
    if (type == GgmlType::F16) {
        for (; i + 16 <= n; i += 16)
            _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(h + i))));
    } else if (type == GgmlType::BF16) {
        for (; i + 16 <= n; i += 16) {
            const __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(h + i)));
            _mm512_storeu_ps(dst + i, _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)));
        }
    }
    if (i < n) dequantizeRow(type, type == GgmlType::F32 ? static_cast<const void*>(static_cast<const float*>(src) + i)
                                                         : static_cast<const void*>(h + i),
                             dst + i, n - i);
}

// Lane j of the result = op over the 16 lanes of v[j] (v is overwritten), by
// fold_lanes_avx512.h's tree.
template <typename Op>
inline __m512 reduceLanes16(__m512 (&v)[16], Op op) {
    for (int i = 0; i < 8; ++i) v[i] = foldLanes<1>(v[2 * i], v[2 * i + 1], op);
    for (int i = 0; i < 4; ++i) v[i] = foldLanes<2>(v[2 * i], v[2 * i + 1], op);
    for (int i = 0; i < 2; ++i) v[i] = foldLanes<4>(v[2 * i], v[2 * i + 1], op);
    return foldLanes<8>(v[0], v[1], op);
}

// Eight blocks (256 values) of one token's row: vector j below is half j % 2 of block
// j / 2, so the 16 half-block maxima and sums each reduce in one tree, and lane j of a
// result is what s[j] (two sums per block) wants. Same operations per value as the
// portable quantiser: the block's max |x|, d = max / 127, id = 1 / d, round to nearest
// even, saturate to int8, s = d * sum.
inline void quantizeEightBlocks(const float* x, int8_t* q, float* d4, float* s) {
    __m512 v[16];
    for (int j = 0; j < 16; ++j) v[j] = _mm512_abs_ps(_mm512_loadu_ps(x + 16 * j));
    __m512 half = reduceLanes16(v, [](__m512 a, __m512 b) { return _mm512_max_ps(a, b); });
    const __m512 amax = _mm512_max_ps(half, _mm512_permute_ps(half, 0xb1));  // lanes 2b, 2b + 1: block b
    const __m512 d = _mm512_div_ps(amax, _mm512_set1_ps(127.0f));
    const __mmask16 nonzero = _mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_NEQ_OQ);
    const __m512 id = _mm512_maskz_div_ps(nonzero, _mm512_set1_ps(1.0f), d);
    __m512 sums[16];
    for (int j = 0; j < 16; ++j) {
        const __m512 idj = _mm512_permutexvar_ps(_mm512_set1_epi32(j), id);
        const __m512i qj = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + 16 * j), idj));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16 * j), _mm512_cvtsepi32_epi8(qj));
        sums[j] = _mm512_castsi512_ps(qj);
    }
    const __m512 sum = reduceLanes16(sums, [](__m512 a, __m512 b) {
        return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
    });
    _mm512_storeu_ps(s, _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_castps_si512(sum))));
    // d4: 8 copies of each block's d, i.e. d's lane 2b eight times.
    for (int k = 0; k < 4; ++k) {
        const __m512i pick = _mm512_setr_epi32(4 * k, 4 * k, 4 * k, 4 * k, 4 * k, 4 * k, 4 * k, 4 * k, 4 * k + 2,
                                               4 * k + 2, 4 * k + 2, 4 * k + 2, 4 * k + 2, 4 * k + 2, 4 * k + 2, 4 * k + 2);
        _mm512_storeu_ps(d4 + 16 * k, _mm512_permutexvar_ps(pick, d));
    }
}

const IsaKernels kAvx512{"avx512vnni", unpackRowsAvx2, intTileAvx512, floatTileAvx512, toFloatAvx512, quantizeActivationsAvx512, rowsOneTokenAvx512,
                          panelRowsAvx512, rowsFewTokensAvx512, panelRowsLanesAvx512};

}  // namespace

const IsaKernels* avx512Kernels() { return &kAvx512; }

// Eight blocks at a time (quantizeEightBlocks), the rest of the row by the AVX2 blocks.
void quantizeActivationsAvx512(const float* x, int64_t cols, int64_t t0, int64_t t1, int8_t* qs, float* dx4,
                               float* s16, int64_t colsPadded) {
    for (int64_t t = t0; t < t1; ++t) {
        const float* xr = x + t * cols;
        int8_t* q = qs + t * colsPadded;
        float* d4 = dx4 + t * colsPadded / 4;
        float* s = s16 + t * colsPadded / 16;
        int64_t c = 0;
        for (; c + 8 * kQK <= cols; c += 8 * kQK) quantizeEightBlocks(xr + c, q + c, d4 + c / 4, s + c / 16);
        quantizeActivationBlocksAvx2(xr, c, cols, q, d4, s);
        zeroActivationPadding(q, d4, s, cols, colsPadded);
    }
}

}  // namespace kestrel::kernels
