// Internal to kernels/cpu: the fifth bits of a Q5 block (its 32-bit qh) spread to
// one byte per value, for the AVX2 and AVX-512 unpackers and GEMMs. In an unnamed
// namespace so each file keeps its own copy, built with that file's ISA flags (an
// inline function with external linkage could be merged with a copy built for a
// wider ISA).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace kestrel::kernels {
namespace {

// Bit j of a block's 32-bit qh, as 0x10 in byte j.
inline __m256i highBits(const uint8_t* qhBytes) {
    uint32_t qh;
    std::memcpy(&qh, qhBytes, 4);
    const __m256i shuf = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3,
                                          3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
    const __m256i bytes = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)), shuf), bit);
    return _mm256_and_si256(_mm256_cmpeq_epi8(bytes, bit), _mm256_set1_epi8(0x10));
}

}  // namespace
}  // namespace kestrel::kernels
