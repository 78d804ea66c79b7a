// AVX-512 VNNI kernels (compiled with -mavx512f/bw/vl/vnni; called only after
// cpuid says so). One zmm holds a pair of 32-element groups; vpdpbusd does 64
// u8 x s8 products per instruction. Register tiles are 4 rows x 4 tokens: 16
// accumulators, 4 weight vectors, the activation vectors, within 32 registers.
#include "matmul.h"
#include "quant_blocks.h"

#include <immintrin.h>

namespace kestrel::kernels {
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

const IsaKernels kAvx512{"avx512vnni", intTileAvx512, floatTileAvx512, toFloatAvx512};

}  // namespace

const IsaKernels* avx512Kernels() { return &kAvx512; }

}  // namespace kestrel::kernels
