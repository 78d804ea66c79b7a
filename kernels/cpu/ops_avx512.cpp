// AVX-512 versions of the element-wise activations (compiled with -mavx512f;
// called only after cpuid says so). GCC does not vectorise the portable
// loops in ops.cpp (the clamp in fastExp is control flow to it), and a
// scalar exp per value was ~4% of a decode step and ~7% of prefill.
// Same formulas as ops.cpp: exp(x) = 2^i * p(f) with a degree-6 polynomial.
#include "exp_avx512.h"
#include "ops.h"

#include <immintrin.h>

#include <cmath>
#include <numbers>

namespace kestrel::kernels {
namespace {

// g * sigmoid(s) * u
inline __m512 gated(__m512 g, __m512 s, __m512 u) {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 sig = _mm512_div_ps(one, _mm512_add_ps(one, exp512(_mm512_sub_ps(_mm512_setzero_ps(), s))));
    return _mm512_mul_ps(_mm512_mul_ps(g, sig), u);
}

}  // namespace

// out[i] = act(gate[i]) * up[i] for i in [begin, end); see glu() in ops.h.
void gluRangeAvx512(const float* gate, const float* up, float* out, int64_t begin, int64_t end, GluKind kind) {
    // gelu_tanh(g) = g * sigmoid(2u), u = sqrt(2/pi) (g + 0.044715 g^3)
    const __m512 c = _mm512_set1_ps(2.0f * std::sqrt(2.0f / std::numbers::pi_v<float>));
    const __m512 k = _mm512_set1_ps(0.044715f);
    for (int64_t i = begin; i < end; i += 16) {
        const __mmask16 m = end - i >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (end - i)) - 1);
        const __m512 g = _mm512_maskz_loadu_ps(m, gate + i), u = _mm512_maskz_loadu_ps(m, up + i);
        __m512 s = g;
        if (kind == GluKind::GeluTanh) s = _mm512_mul_ps(c, _mm512_fmadd_ps(_mm512_mul_ps(k, g), _mm512_mul_ps(g, g), g));
        _mm512_mask_storeu_ps(out + i, m, gated(g, s, u));
    }
}

// argmaxRow (ops.h): 16 running maxima with the index where each was first
// reached (a lane takes a value only when it is greater, in the ordered sense:
// NaNs never), then the largest lane, the lowest index among equal lanes.
// For 32 <= n < 2^31 and x[0] not a NaN (ops.cpp takes the others).
int64_t argmaxRowAvx512(const float* x, int64_t n) {
    __m512 best = _mm512_set1_ps(-INFINITY);
    __m512i at = _mm512_setzero_si512();  // all -inf (or NaN) after x[0]: index 0 wins
    __m512i idx = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    auto take = [&](__m512 v) {
        const __mmask16 gt = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ);
        best = _mm512_mask_mov_ps(best, gt, v);
        at = _mm512_mask_mov_epi32(at, gt, idx);
        idx = _mm512_add_epi32(idx, _mm512_set1_epi32(16));
    };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) take(_mm512_loadu_ps(x + i));
    if (i < n) take(_mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), static_cast<__mmask16>((1u << (n - i)) - 1), x + i));
    const float top = _mm512_reduce_max_ps(best);
    const __mmask16 tops = _mm512_cmp_ps_mask(best, _mm512_set1_ps(top), _CMP_EQ_OQ);
    return _mm512_mask_reduce_min_epi32(tops, at);
}

}  // namespace kestrel::kernels
