// AVX2 + FMA kernels (compiled with -mavx2 -mfma -mf16c; called only after cpuid says so).
// Register tiles of 2 weight rows x 4 tokens: each unpacked weight vector is
// loaded once and used for 4 tokens, each activation vector for 2 rows.
#include "high_bits_avx2.h"
#include "lanes_activations.h"
#include "matmul.h"
#include "quant_blocks.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

namespace kestrel::kernels {

void panelRowsAvx2(GgmlType type, const uint8_t* w, size_t rowBytes, int rows, int64_t cols,
                   const QuantActivations& act, float* y, int64_t yStride);
bool panelRowsLanesAvx2(GgmlType type, const uint8_t* w, size_t rowBytes, int rows, int64_t cols,
                        const QuantActivations& act, float* y, int64_t yStride);

namespace {

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

float dotFloat(const float* a, const float* b, int64_t n) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
    }
    for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    float s = hsum(_mm256_add_ps(acc0, acc1));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

template <int R, int T, bool Signed>
void intMicro(const UnpackedTile& tile, int r0, const QuantActivations& act, int64_t t0, float* y, int64_t yStride) {
    const int64_t cp = tile.colsPadded;
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
    __m256 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    for (int64_t c = 0; c < cp; c += 32) {
        __m256i wv[R];
        for (int r = 0; r < R; ++r) {
            wv[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile.u + (r0 + r) * cp + c));
            if constexpr (Signed) wv[r] = _mm256_xor_si256(wv[r], flip);
        }
        for (int t = 0; t < T; ++t) {
            const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act.qs + (t0 + t) * cp + c));
            const __m256 dv = _mm256_loadu_ps(act.dx4 + (t0 + t) * cp / 4 + c / 4);
            for (int r = 0; r < R; ++r) {
                __m256i p;
                if constexpr (Signed)
                    p = _mm256_maddubs_epi16(_mm256_abs_epi8(wv[r]), _mm256_sign_epi8(xv, wv[r]));
                else
                    p = _mm256_maddubs_epi16(wv[r], xv);
                const __m256 f = _mm256_cvtepi32_ps(_mm256_madd_epi16(p, ones));
                const __m256 s = _mm256_mul_ps(_mm256_loadu_ps(tile.scale4 + (r0 + r) * cp / 4 + c / 4), dv);
                acc[r][t] = _mm256_fmadd_ps(f, s, acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) {
            float v = hsum(acc[r][t]);
            // Signed weights were multiplied as they are; the +128 offset correction is not needed.
            if constexpr (!Signed)
                v += dotFloat(tile.corr16 + (r0 + r) * cp / 16, act.s16 + (t0 + t) * cp / 16, cp / 16);
            y[(t0 + t) * yStride + r0 + r] = v;
        }
}

template <int R, bool Signed>
void intRows(const UnpackedTile& tile, int r0, const QuantActivations& act, float* y, int64_t yStride) {
    int64_t t = 0;
    for (; t + 4 <= act.tokens; t += 4) intMicro<R, 4, Signed>(tile, r0, act, t, y, yStride);
    switch (act.tokens - t) {
    case 3: intMicro<R, 3, Signed>(tile, r0, act, t, y, yStride); break;
    case 2: intMicro<R, 2, Signed>(tile, r0, act, t, y, yStride); break;
    case 1: intMicro<R, 1, Signed>(tile, r0, act, t, y, yStride); break;
    default: break;
    }
}

template <bool Signed>
void intTileT(const UnpackedTile& tile, const QuantActivations& act, float* y, int64_t yStride) {
    int r = 0;
    for (; r + 2 <= tile.rows; r += 2) intRows<2, Signed>(tile, r, act, y, yStride);
    if (r < tile.rows) intRows<1, Signed>(tile, r, act, y, yStride);
}

void intTileAvx2(const UnpackedTile& tile, const QuantActivations& act, float* y, int64_t yStride) {
    if (tile.signedU)
        intTileT<true>(tile, act, y, yStride);
    else
        intTileT<false>(tile, act, y, yStride);
}

// One to four tokens, 32-element formats, straight from the blocks (the
// unpacked tile would cost more than the product). Each weight block is loaded
// and decoded once for all T tokens; each token's arithmetic is exactly the
// one-token kernel's (the same template with T = 1), so a sequence's result
// does not depend on how many others share its decode step. maddubs cannot
// take Q8_0's w + 128, so Q8_0 multiplies signed quants with the sign trick and
// has no offset term; the others:
//   y += (dw * dx) * dot(u, xq) + cw * (dx * sum xq), k * cw for zero points.
// Per token and block the loop does only the product (maddubs, madd: one
// shared port on Zen 2), its conversion and one FMA with a broadcast scale.
// The rest is done for a group of 8 blocks at once: their f16 scales are
// loaded and converted together, each token's 8 scales dw * dx computed in
// one multiply, and the offset terms accumulated with one FMA per token (a
// scalar chain per block was also a serial FMA latency per block).
template <GgmlType Type>
using Block32 = std::conditional_t<
    Type == GgmlType::Q4_0, BlockQ4_0,
    std::conditional_t<Type == GgmlType::Q4_1, BlockQ4_1,
                       std::conditional_t<Type == GgmlType::Q5_0, BlockQ5_0, BlockQ8_0>>>;

template <GgmlType Type>
constexpr bool kHasOffset = Type != GgmlType::Q8_0;

constexpr int kGroup = 8;  // blocks whose scales are applied together

// The activations' per-block numbers, one float per block and token: dx, and
// k * dx * sum xq (the offset term's factor, k folded in: a power of two, so
// exact). Laid out by group of kGroup blocks, then token: [dx x8][offset x8],
// so one pointer per group reaches every token's (zero past the last block).
constexpr int kTermsPerToken = 2 * kGroup;

template <GgmlType Type>
const float* blockTerms(const QuantActivations& act, int64_t nb) {
    constexpr float k = Type == GgmlType::Q4_0 ? -8.0f : Type == GgmlType::Q5_0 ? -16.0f : 1.0f;
    thread_local std::vector<float> buf;
    const int64_t groups = (nb + kGroup - 1) / kGroup, cp = act.colsPadded;
    buf.assign(static_cast<size_t>(groups * act.tokens * kTermsPerToken), 0.0f);
    for (int64_t t = 0; t < act.tokens; ++t)
        for (int64_t b = 0; b < nb; ++b) {
            float* terms = buf.data() + ((b / kGroup) * act.tokens + t) * kTermsPerToken + b % kGroup;
            terms[0] = act.dx4[t * cp / 4 + b * 8];
            const float* s16 = act.s16 + t * cp / 16 + 2 * b;
            terms[kGroup] = k * (s16[0] + s16[1]);
        }
    return buf.data();
}

// The first 4 bytes of each of n <= kGroup consecutive blocks (the f16 d, and
// Q4_1's m above it), zero past n. Scalar loads merged in general registers:
// the integer ports are idle here, and a gather is slow on Zen 2.
template <typename Block>
inline __m256i blockHeads(const Block* blk, int n) {
    auto head = [&](int i) -> uint64_t {
        uint32_t h = 0;
        if (i < n) std::memcpy(&h, blk + i, 4);
        return h;
    };
    auto pair = [&](int i) { return static_cast<long long>(head(i) | head(i + 1) << 32); };
    return _mm256_setr_epi64x(pair(0), pair(2), pair(4), pair(6));
}

// The low and high f16 halves of each 32-bit lane, as floats.
inline void halvesToFloat(__m256i heads, __m256& low, __m256& high) {
    const __m256i split = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1, 4, 5, 8, 9,
                                           12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    const __m256i halves = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(heads, split), 0xd8);
    low = _mm256_cvtph_ps(_mm256_castsi256_si128(halves));
    high = _mm256_cvtph_ps(_mm256_extracti128_si256(halves, 1));
}

// Asks for the weights 2 KB ahead of the group about to be used (rows are
// contiguous, so that may be the next rows). The hardware prefetcher alone
// leaves a one-token step waiting on DRAM (measured: whole-model Q4_1 steps
// 10-20% faster with it). A prefetch never faults, so reading past the matrix is harmless.
inline void prefetchAhead(const void* group, size_t bytes) {
    const char* ahead = static_cast<const char*>(group) + 2048;
    for (size_t i = 0; i < bytes; i += 64) _mm_prefetch(ahead + i, _MM_HINT_T0);
}

// The weights of one block as bytes: Q8_0's signed quants; the others' unsigned u.
template <GgmlType Type>
inline __m256i blockQuants(const Block32<Type>* blk) {
    if constexpr (Type == GgmlType::Q8_0) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->qs));
    } else {
        // Both 128-bit lanes hold the 16 bytes; the high lane takes the high nibbles.
        const __m256i raw = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk->qs)));
        __m256i u = _mm256_and_si256(_mm256_srlv_epi64(raw, _mm256_setr_epi64x(0, 0, 4, 4)), _mm256_set1_epi8(0x0f));
        if constexpr (Type == GgmlType::Q5_0) u = _mm256_or_si256(u, highBits(blk->qh));
        return u;
    }
}

// acc[t] += scale[t][j] * dot(block, token t's quants at block b), in 8 lanes.
template <GgmlType Type, int T>
inline void addBlockProducts(const Block32<Type>* blk, const int8_t* const (&qs)[T], int64_t b,
                             const float (&scale)[T][kGroup], int j, __m256 (&acc)[T]) {
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i wv = blockQuants<Type>(blk);
    const __m256i wabs = Type == GgmlType::Q8_0 ? _mm256_abs_epi8(wv) : wv;
    for (int t = 0; t < T; ++t) {
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs[t] + b * kQK));
        const __m256i p = Type == GgmlType::Q8_0 ? _mm256_maddubs_epi16(wabs, _mm256_sign_epi8(xv, wv))
                                                 : _mm256_maddubs_epi16(wv, xv);
        const __m256 f = _mm256_cvtepi32_ps(_mm256_madd_epi16(p, ones));
        acc[t] = _mm256_fmadd_ps(f, _mm256_broadcast_ss(&scale[t][j]), acc[t]);
    }
}

template <GgmlType Type, int T>
void rowsTokens32(const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols, const QuantActivations& act,
                  const float* terms, int64_t t0, float* y, int64_t yStride) {
    using Block = Block32<Type>;
    const int64_t nb = cols / kQK, groupTerms = act.tokens * kTermsPerToken;
    const int8_t* qs[T];
    for (int t = 0; t < T; ++t) qs[t] = act.qs + (t0 + t) * act.colsPadded;
    alignas(32) float scale[T][kGroup];
    for (int64_t r = 0; r < rows; ++r) {
        const auto* row = reinterpret_cast<const Block*>(w + r * rowBytes);
        // Even blocks of a group go to acc0, odd ones to acc1: two FMA chains.
        __m256 acc0[T], acc1[T];
        for (int t = 0; t < T; ++t) acc0[t] = acc1[t] = _mm256_setzero_ps();
        const float* tokenTerms = terms + t0 * kTermsPerToken;
        for (int64_t g = 0; g < nb; g += kGroup, tokenTerms += groupTerms) {
            const int n = static_cast<int>(std::min<int64_t>(kGroup, nb - g));
            prefetchAhead(row + g, kGroup * sizeof(Block));
            __m256 dw, cw;
            halvesToFloat(blockHeads(row + g, n), dw, cw);
            if constexpr (Type != GgmlType::Q4_1) cw = dw;
            for (int t = 0; t < T; ++t) {
                const float* dxAndOffset = tokenTerms + t * kTermsPerToken;
                _mm256_store_ps(scale[t], _mm256_mul_ps(dw, _mm256_loadu_ps(dxAndOffset)));
                if constexpr (kHasOffset<Type>)
                    acc0[t] = _mm256_fmadd_ps(cw, _mm256_loadu_ps(dxAndOffset + kGroup), acc0[t]);
            }
            int j = 0;
            for (; j + 2 <= n; j += 2) {
                addBlockProducts<Type, T>(row + g + j, qs, g + j, scale, j, acc0);
                addBlockProducts<Type, T>(row + g + j + 1, qs, g + j + 1, scale, j + 1, acc1);
            }
            if (j < n) addBlockProducts<Type, T>(row + g + j, qs, g + j, scale, j, acc0);
        }
        for (int t = 0; t < T; ++t) y[(t0 + t) * yStride + r] = hsum(_mm256_add_ps(acc0[t], acc1[t]));
    }
}

template <GgmlType Type>
void rowsTokensType(const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols, const QuantActivations& act,
                    float* y, int64_t yStride) {
    if (rows <= 0) return;
    const float* terms = blockTerms<Type>(act, cols / kQK);
    int64_t t = 0;
    for (; t + 4 <= act.tokens; t += 4) rowsTokens32<Type, 4>(w, rowBytes, rows, cols, act, terms, t, y, yStride);
    switch (act.tokens - t) {
    case 3: rowsTokens32<Type, 3>(w, rowBytes, rows, cols, act, terms, t, y, yStride); break;
    case 2: rowsTokens32<Type, 2>(w, rowBytes, rows, cols, act, terms, t, y, yStride); break;
    case 1: rowsTokens32<Type, 1>(w, rowBytes, rows, cols, act, terms, t, y, yStride); break;
    default: break;
    }
}

// Q6_K rows for 1 to 8 tokens, one row at a time (16 ymm registers), tokens in passes of
// up to 4 that share the row's decoded super block: the AVX-512 kernel's scheme
// (gemm_avx512.cpp, rowsQ6_K) on 32-value vectors. Per half super block, ql's two 32-byte
// loads give values 0-31 and 32-63 (low nibbles) and 64-127 (high nibbles); qh's 32 bytes
// shifted by 4, 2, 0 and -2 bits (16-bit shifts, masked to bits 4-5) give their high bits.
// maddubs + madd leave a lane per 4 values inside one 16-value scale group, so a vector
// takes 2 of the super block's scales over 4 lanes each (the 16 int8 scales times d made
// once per super block); the -32 offset is (d * sc) . s16 per super block and token. Each
// (row, token) sees the same operations in the same order whatever the token count.
// Q6_K ran through the unpacked tiles before (16.6 GB/s for one token, in cache).
template <int T>
void rowQ6_KTokens(const uint8_t* row, int64_t cols, const QuantActivations& act, int64_t t0, float* y,
                   int64_t yStride) {
    const int64_t nb = cols / kQKK, cp = act.colsPadded;
    const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30), ones = _mm256_set1_epi16(1);
    const auto* blocks = reinterpret_cast<const BlockQ6_K*>(row);
    __m256 acc[T], corr[T];
    for (int t = 0; t < T; ++t) acc[t] = corr[t] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        const BlockQ6_K& b = blocks[i];
        const __m256 d = _mm256_set1_ps(_cvtsh_ss(b.d));
        const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
        const __m256 sd[2] = {_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sc)), d),
                              _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(sc, 8))), d)};
        for (int t = 0; t < T; ++t) {
            const float* s16 = act.s16 + (t0 + t) * cp / 16 + i * 16;
            corr[t] = _mm256_fmadd_ps(sd[0], _mm256_loadu_ps(s16), corr[t]);
            corr[t] = _mm256_fmadd_ps(sd[1], _mm256_loadu_ps(s16 + 8), corr[t]);
        }
        for (int h = 0; h < 2; ++h) {
            const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h));
            const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h + 32));
            const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * h));
            const __m256i u[4] = {
                _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30)),
                _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(qh, m30)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                                _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30))};
            for (int q = 0; q < 4; ++q) {
                const __m256i pick = _mm256_set_epi32(2 * q + 1, 2 * q + 1, 2 * q + 1, 2 * q + 1, 2 * q, 2 * q, 2 * q, 2 * q);
                const __m256 scale = _mm256_permutevar8x32_ps(sd[h], pick);
                const int64_t c = i * kQKK + h * 128 + q * 32;
                for (int t = 0; t < T; ++t) {
                    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act.qs + (t0 + t) * cp + c));
                    const __m256 dx = _mm256_loadu_ps(act.dx4 + (t0 + t) * cp / 4 + c / 4);
                    const __m256 p = _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(u[q], x), ones));
                    acc[t] = _mm256_fmadd_ps(p, _mm256_mul_ps(scale, dx), acc[t]);
                }
            }
        }
    }
    for (int t = 0; t < T; ++t) y[(t0 + t) * yStride] = hsum(acc[t]) - 32.0f * hsum(corr[t]);
}

void rowsQ6_KTokens(const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols, const QuantActivations& act,
                    float* y, int64_t yStride) {
    for (int64_t r = 0; r < rows; ++r) {
        const uint8_t* row = w + r * rowBytes;
        forLanesTokenPasses(act.tokens, [&](auto t, int64_t t0) {
            rowQ6_KTokens<decltype(t)::value>(row, cols, act, t0, y + r, yStride);
        });
    }
}

// Decode rows of 1..kFewTokensMax tokens (matmul.cpp); false for other types. A call
// with rows == 0 is the probe that asks whether the type has the kernel.
bool rowsFewTokensAvx2(GgmlType type, const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols,
                       const QuantActivations& act, float* y, int64_t yStride) {
    if (act.tokens < 1 || act.tokens > 8) return false;
    switch (type) {
    case GgmlType::Q4_0: rowsTokensType<GgmlType::Q4_0>(w, rowBytes, rows, cols, act, y, yStride); return true;
    case GgmlType::Q4_1: rowsTokensType<GgmlType::Q4_1>(w, rowBytes, rows, cols, act, y, yStride); return true;
    case GgmlType::Q5_0: rowsTokensType<GgmlType::Q5_0>(w, rowBytes, rows, cols, act, y, yStride); return true;
    case GgmlType::Q8_0: rowsTokensType<GgmlType::Q8_0>(w, rowBytes, rows, cols, act, y, yStride); return true;
    case GgmlType::Q6_K: rowsQ6_KTokens(w, rowBytes, rows, cols, act, y, yStride); return true;
    default: return false;
    }
}

bool rowsOneTokenAvx2(GgmlType type, const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols,
                      const QuantActivations& act, float* y) {
    QuantActivations one = act;
    one.tokens = 1;
    return rowsFewTokensAvx2(type, w, rowBytes, rows, cols, one, y, 0);
}

void floatTileAvx2(const float* w, int rows, const float* x, int64_t tokens, int64_t cols, float* y,
                   int64_t yStride) {
    for (int r = 0; r < rows; ++r)
        for (int64_t t = 0; t < tokens; ++t) y[t * yStride + r] = dotFloat(w + r * cols, x + t * cols, cols);
}

void toFloatAvx2(GgmlType type, const void* src, float* dst, int64_t n) {
    const auto* h = static_cast<const uint16_t*>(src);
    int64_t i = 0;
    if (type == GgmlType::F16) {
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
    } else if (type == GgmlType::BF16) {
        for (; i + 8 <= n; i += 8) {
            const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i)));
            _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(v, 16)));
        }
    }
    if (i < n) dequantizeRow(type, type == GgmlType::F32 ? static_cast<const void*>(static_cast<const float*>(src) + i)
                                                         : static_cast<const void*>(h + i),
                             dst + i, n - i);
}

const IsaKernels kAvx2{"avx2", unpackRowsAvx2, intTileAvx2, floatTileAvx2, toFloatAvx2, quantizeActivationsAvx2, rowsOneTokenAvx2, panelRowsAvx2, rowsFewTokensAvx2, panelRowsLanesAvx2};

}  // namespace

const IsaKernels* avx2Kernels() { return &kAvx2; }

}  // namespace kestrel::kernels
