// Internal to kernels/cpu: exp of 16 floats for AVX-512 code (ops_avx512.cpp,
// ops_attention.cpp). The formula of ops.cpp's fastExp: exp(x) = 2^i * p(f)
// with a degree-6 polynomial, relative error ~1e-7; inputs clamped to
// [-87, 88]. The target attribute lets files built without -mavx512f inline it
// into their AVX-512 functions.
#pragma once

#include <immintrin.h>

namespace kestrel::kernels {

__attribute__((target("avx512f"))) inline __m512 exp512(__m512 x) {
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
    const __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f));
    const __m512 fi = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 y = _mm512_mul_ps(_mm512_sub_ps(t, fi), _mm512_set1_ps(0.693147180559945f));
    __m512 p = _mm512_set1_ps(1.0f / 720.0f);
    p = _mm512_fmadd_ps(p, y, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, y, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, y, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, y, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, y, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, y, _mm512_set1_ps(1.0f));
    const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(fi), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}

}  // namespace kestrel::kernels
