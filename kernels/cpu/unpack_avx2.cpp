// AVX2 versions of the weight unpackers for the formats real models use most
// (compiled with -mavx2 -mfma -mf16c). With one token the unpack is most of a
// matmul's work, so these decide decode speed; other formats fall back to the
// portable unpackers in unpack.cpp, which produce the same tile.
#include "high_bits_avx2.h"
#include "quant_blocks.h"

#include <immintrin.h>

#include <cstring>

namespace kestrel::kernels {
namespace {

inline float half(uint16_t h) { return _cvtsh_ss(h); }

inline void setGroup32(float* s4, float* c16, int64_t c, float scale, float corr) {
    _mm256_storeu_ps(s4 + c / 4, _mm256_set1_ps(scale));
    c16[c / 16] = corr;
    c16[c / 16 + 1] = corr;
}

inline void storeNibbles16(const uint8_t* qs, uint8_t* u) {
    const __m128i m4 = _mm_set1_epi8(0x0f);
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(u), _mm_and_si128(raw, m4));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(u + 16), _mm_and_si128(_mm_srli_epi16(raw, 4), m4));
}

void rowQ4_0(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const BlockQ4_0*>(row);
    for (int64_t i = 0; i < nb; ++i) {
        storeNibbles16(b[i].qs, u + i * 32);
        const float d = half(b[i].d);
        setGroup32(s4, c16, i * 32, d, -8.0f * d);
    }
}

void rowQ4_1(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const BlockQ4_1*>(row);
    for (int64_t i = 0; i < nb; ++i) {
        storeNibbles16(b[i].qs, u + i * 32);
        setGroup32(s4, c16, i * 32, half(b[i].d), half(b[i].m));
    }
}

void rowQ5_0(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const BlockQ5_0*>(row);
    const __m128i m4 = _mm_set1_epi8(0x0f);
    for (int64_t i = 0; i < nb; ++i) {
        const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].qs));
        const __m256i lohi = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(raw, 4), m4), _mm_and_si128(raw, m4));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(u + i * 32), _mm256_or_si256(lohi, highBits(b[i].qh)));
        const float d = half(b[i].d);
        setGroup32(s4, c16, i * 32, d, -16.0f * d);
    }
}

void rowQ8_0(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(row);
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
    for (int64_t i = 0; i < nb; ++i) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qs));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(u + i * 32), _mm256_xor_si256(q, flip));  // w + 128
        const float d = half(b[i].d);
        setGroup32(s4, c16, i * 32, d, -128.0f * d);
    }
}

void rowQ4_K(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const BlockQ4_K*>(row);
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    for (int64_t i = 0; i < nb; ++i) {
        uint8_t* o = u + i * kQKK;
        for (int c = 0; c < 4; ++c) {
            const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qs + c * 32));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + c * 64), _mm256_and_si256(raw, m4));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + c * 64 + 32), _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4));
        }
        const float d = half(b[i].d), dmin = half(b[i].dmin);
        for (int j = 0; j < 8; ++j) {
            uint8_t sc, m;
            kScaleMin(b[i].scales, j, sc, m);
            setGroup32(s4, c16, i * kQKK + j * 32, d * sc, -dmin * m);
        }
    }
}

void rowQ6_K(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const BlockQ6_K*>(row);
    const __m256i m4 = _mm256_set1_epi8(0x0f), m3 = _mm256_set1_epi8(0x03);
    for (int64_t i = 0; i < nb; ++i) {
        for (int h = 0; h < 2; ++h) {
            const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].ql + h * 64));
            const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].ql + h * 64 + 32));
            const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qh + h * 32));
            auto hi = [&](int shift) {
                return _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, shift), m3), 4);
            };
            uint8_t* o = u + i * kQKK + h * 128;
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), _mm256_or_si256(_mm256_and_si256(l0, m4), hi(0)));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + 32), _mm256_or_si256(_mm256_and_si256(l1, m4), hi(2)));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + 64),
                                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), hi(4)));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + 96),
                                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), hi(6)));
        }
        const float d = half(b[i].d);
        for (int k = 0; k < 16; ++k) {
            const float dl = d * static_cast<float>(b[i].scales[k]);
            _mm_storeu_ps(s4 + i * 64 + k * 4, _mm_set1_ps(dl));
            c16[i * 16 + k] = -32.0f * dl;
        }
    }
}

}  // namespace

bool unpackRowsAvx2(GgmlType type, const uint8_t* w, size_t rowBytes, int rows, int64_t cols, UnpackedTile& tile) {
    UnpackRowFn fn = nullptr;
    int blockSize = kQK;
    switch (type) {
    case GgmlType::Q4_0: fn = rowQ4_0; break;
    case GgmlType::Q4_1: fn = rowQ4_1; break;
    case GgmlType::Q5_0: fn = rowQ5_0; break;
    case GgmlType::Q8_0: fn = rowQ8_0; break;
    case GgmlType::Q4_K: fn = rowQ4_K; blockSize = kQKK; break;
    case GgmlType::Q6_K: fn = rowQ6_K; blockSize = kQKK; break;
    default: return unpackRows(type, w, rowBytes, rows, cols, tile);
    }
    unpackRowsWith(fn, blockSize, type, w, rowBytes, rows, cols, tile);
    return true;
}

}  // namespace kestrel::kernels

namespace kestrel::kernels {

void quantizeActivationBlocksAvx2(const float* xr, int64_t c0, int64_t c1, int8_t* q, float* d4, float* s) {
    const __m256 absMask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int64_t c = c0; c < c1; c += kQK) {
        __m256 v[4];
        for (int i = 0; i < 4; ++i) v[i] = _mm256_loadu_ps(xr + c + 8 * i);
        __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_and_ps(v[0], absMask), _mm256_and_ps(v[1], absMask)),
                                 _mm256_max_ps(_mm256_and_ps(v[2], absMask), _mm256_and_ps(v[3], absMask)));
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        const float d = _mm_cvtss_f32(m4) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        const __m256 idv = _mm256_set1_ps(id);
        __m256i qi[4];
        // cvtps rounds to nearest even, as nearbyint in the portable quantiser.
        for (int i = 0; i < 4; ++i) qi[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], idv));
        const __m256i p16a = _mm256_packs_epi32(qi[0], qi[1]);
        const __m256i p16b = _mm256_packs_epi32(qi[2], qi[3]);
        const __m256i p8 = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p16a, p16b), order);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + c), p8);
        _mm256_storeu_ps(d4 + c / 4, _mm256_set1_ps(d));
        const __m256i sa = _mm256_add_epi32(qi[0], qi[1]), sbv = _mm256_add_epi32(qi[2], qi[3]);
        auto hsum = [](__m256i a) {
            __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
            s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
            s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
            return _mm_cvtsi128_si32(s4);
        };
        s[c / 16] = d * static_cast<float>(hsum(sa));
        s[c / 16 + 1] = d * static_cast<float>(hsum(sbv));
    }
}

void quantizeActivationsAvx2(const float* x, int64_t cols, int64_t t0, int64_t t1, int8_t* qs, float* dx4, float* s16,
                             int64_t colsPadded) {
    for (int64_t t = t0; t < t1; ++t) {
        int8_t* q = qs + t * colsPadded;
        float* d4 = dx4 + t * colsPadded / 4;
        float* s = s16 + t * colsPadded / 16;
        quantizeActivationBlocksAvx2(x + t * cols, 0, cols, q, d4, s);
        zeroActivationPadding(q, d4, s, cols, colsPadded);
    }
}

}  // namespace kestrel::kernels
