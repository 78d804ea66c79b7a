// Internal to kernels/cpu: the transposed reduction of 16 vectors for AVX-512 code
// (ops_attention.cpp: 16 keys' scores; gemm_avx512.cpp: 16 half blocks' maxima and
// sums). The target attribute lets files built without -mavx512f inline it into
// their AVX-512 functions.
//
// One step: x holds N vectors' partials, y the next N vectors'; the result holds 2N
// vectors' with half as many partial lanes each. After the steps for N = 1, 2, 4, 8
// (pairs in order), lane i holds vector i's 16 lanes folded by op: 15 steps of two
// shuffles and one op for 16 vectors, where 16 horizontal reductions take 4 of each
// per vector.
#pragma once

#include <immintrin.h>

namespace kestrel::kernels {

template <int N, typename Op>
[[gnu::always_inline]] __attribute__((target("avx512f"))) inline __m512 foldLanes(__m512 x, __m512 y, Op op) {
    if constexpr (N == 1)  // in each 128-bit lane: x's partials at 0 and 2, y's at 1 and 3
        return op(_mm512_unpacklo_ps(x, y), _mm512_unpackhi_ps(x, y));
    else if constexpr (N == 2)  // in each 128-bit lane: vectors 0..3, one partial each
        return op(_mm512_shuffle_ps(x, y, 0x44), _mm512_shuffle_ps(x, y, 0xee));
    else  // 128-bit lanes: x's pairs (0,1) and (2,3) folded, then y's
        return op(_mm512_shuffle_f32x4(x, y, 0x88), _mm512_shuffle_f32x4(x, y, 0xdd));
}

struct AddLanes {
    [[gnu::always_inline]] __attribute__((target("avx512f"))) __m512 operator()(__m512 a, __m512 b) const {
        return _mm512_add_ps(a, b);
    }
};

}  // namespace kestrel::kernels
