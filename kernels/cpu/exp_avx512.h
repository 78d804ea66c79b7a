// Internal to kernels/cpu: exp of 16 floats for AVX-512 code (ops_avx512.cpp,
// ops_attention.cpp, attention_blocked_avx512.cpp): exp_poly.h's formula. The target attribute lets files built without -mavx512f inline it
// into their AVX-512 functions.
#pragma once

#include "exp_poly.h"

#include <immintrin.h>

namespace kestrel::kernels {

__attribute__((target("avx512f"))) inline __m512 exp512(__m512 x) {
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(kExpMin)), _mm512_set1_ps(kExpMax));
    const __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(kLog2e));
    const __m512 fi = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 y = _mm512_mul_ps(_mm512_sub_ps(t, fi), _mm512_set1_ps(kLn2));
    __m512 p = _mm512_set1_ps(kExpHorner[0]);
#pragma GCC unroll 8
    for (int i = 1; i < kExpTerms; ++i) p = _mm512_fmadd_ps(p, y, _mm512_set1_ps(kExpHorner[i]));
    const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(fi), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}

}  // namespace kestrel::kernels
