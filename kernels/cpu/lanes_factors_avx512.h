// Internal to kernels/cpu (AVX-512 files only): a lanes-layout group's float
// factors per lane (lanes_layout.h) and Q5_0's fifth bits, for the lanes GEMV
// (gemv_lanes_avx512.cpp) and for prefill's panels built straight from the lanes
// layout (gemm_panel_avx512.cpp). Lane l belongs to block l / L (L = 16 / Slots). In an
// unnamed namespace, as high_bits_avx2.h, so each file keeps its own copy built with
// its own ISA flags.
#pragma once

#include "ggml_types.h"
#include "lanes_layout.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace kestrel::kernels {
namespace {

// Four f16 scales (the low 8 bytes of `four`) as floats, each repeated over 4 lanes.
inline __m512 fourScalesOverLanes(__m128i four) {
    const __m256i idx = _mm256_set_epi16(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    return _mm512_cvtph_ps(_mm256_permutexvar_epi16(idx, _mm256_castsi128_si256(four)));
}

// f16 scales of a group, one per lane: 16 in order, or 4 each repeated over its 4 lanes.
template <int Slots>
inline __m512 laneScales(const uint8_t* p) {
    if constexpr (Slots == 16)
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    else
        return fourScalesOverLanes(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// Q4_K's per-lane factors from a group's tail (lanes_layout.h): the scale d * sc, or with
// kMins the minimum -dmin * m; d and dmin are the f16 values of the lane's super block
// (lanes 0-7 the first, 8-15 the second in a 16-slot group; one in a 4-slot group), sc and
// m the slot's 6-bit fields, a byte each.
template <int Slots, bool kMins>
inline __m512 q4kLaneFactors(const uint8_t* tail) {
    // The tail's first 8 bytes as floats: d of super blocks 0 and 1, then their dmin (Q4KTail).
    const __m512 dd = _mm512_cvtph_ps(_mm256_castsi128_si256(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(tail))));
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i super = Slots == 16 ? _mm512_srli_epi32(lane, 3) : _mm512_setzero_si512();
    const uint8_t* fields = tail + (kMins ? Q4KTail::minimum(Slots, 0) : Q4KTail::scale(0));
    __m512i bytes;  // slot s's byte in lane s (16 slots) or lanes 4s .. 4s + 3 (4 slots)
    if constexpr (Slots == 16) {
        bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(fields)));
    } else {
        int32_t four;
        std::memcpy(&four, fields, 4);
        bytes = _mm512_permutexvar_epi32(_mm512_srli_epi32(lane, 2), _mm512_cvtepu8_epi32(_mm_cvtsi32_si128(four)));
    }
    const __m512 f = _mm512_mul_ps(_mm512_permutexvar_ps(kMins ? _mm512_add_epi32(super, _mm512_set1_epi32(Q4KTail::dmin(0) / 2)) : super, dd),
                                   _mm512_cvtepi32_ps(bytes));
    return kMins ? _mm512_sub_ps(_mm512_setzero_ps(), f) : f;
}

// A lane's weight scale: the block's d (Q4_K: d * sc); `tail` is the group's scales.
template <GgmlType Type, int Slots>
inline __m512 laneScale(const uint8_t* tail) {
    if constexpr (Type == GgmlType::Q4_K) return q4kLaneFactors<Slots, false>(tail);
    else return laneScales<Slots>(tail);
}

// A lane's minimum, for the types with one: Q4_1's m, Q4_K's -dmin * m.
template <GgmlType Type, int Slots>
inline __m512 laneMinimum(const uint8_t* tail) {
    static_assert(lanesHasMinimum(Type));
    if constexpr (Type == GgmlType::Q4_K) return q4kLaneFactors<Slots, true>(tail);
    else return laneScales<Slots>(tail + 2 * Slots);
}

// Q5_0's fifth bits added to 5-bit values' low four: `pick` (a vpshufb control) copies into
// each byte the byte of `bits` that holds its value's fifth bit, `test` selects that bit,
// and 16 is added where it is set.
inline __m512i addFifthBits(__m512i values, __m512i bits, __m512i pick, __m512i test) {
    const __mmask64 set = _mm512_test_epi8_mask(_mm512_shuffle_epi8(bits, pick), test);
    return _mm512_mask_add_epi8(values, set, values, _mm512_set1_epi8(16));
}

}  // namespace
}  // namespace kestrel::kernels
