// AVX2 + FMA kernels (compiled with -mavx2 -mfma -mf16c; called only after cpuid says so).
// Register tiles of 2 weight rows x 4 tokens: each unpacked weight vector is
// loaded once and used for 4 tokens, each activation vector for 2 rows.
#include "matmul.h"
#include "quant_blocks.h"

#include <immintrin.h>

namespace kestrel::kernels {
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

const IsaKernels kAvx2{"avx2", unpackRowsAvx2, intTileAvx2, floatTileAvx2, toFloatAvx2, quantizeActivationsAvx2, nullptr};

}  // namespace

const IsaKernels* avx2Kernels() { return &kAvx2; }

}  // namespace kestrel::kernels
