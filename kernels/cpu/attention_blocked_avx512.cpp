// Prefill attention over query blocks (attention_blocked.h) on AVX-512F: the
// kernel of attention_blocked_kernel.h with 16 lanes in a zmm register, two a block.
#include "attention_blocked_kernel.h"
#include "exp_avx512.h"

#include <immintrin.h>

#include <limits>

namespace kestrel::kernels {
namespace {

struct Zmm16 {
    using F = __m512;
    using I = __m512i;
    using M = __mmask16;
    // Two vectors of 16 lanes (32 queries): each broadcast key or value feeds two FMAs, so
    // loads (a broadcast is one) stay under the two FMAs a cycle. 16 accumulators.
    static constexpr int kGroups = 2;
    static constexpr int kScoredKeys = 8;
    static constexpr int kValueDims = 8;

    static F zero() { return _mm512_setzero_ps(); }
    static F negInf() { return _mm512_set1_ps(-std::numeric_limits<float>::infinity()); }
    static F load(const float* p) { return _mm512_load_ps(p); }
    static void store(float* p, F v) { _mm512_store_ps(p, v); }
    static I loadInts(const int32_t* p) { return _mm512_load_si512(p); }
    static F add(F a, F b) { return _mm512_add_ps(a, b); }
    static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
    static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
    static F max(F a, F b) { return _mm512_max_ps(a, b); }
    static F divide(F a, F b) { return _mm512_div_ps(a, b); }
    static F exp(F x) { return exp512(x); }
    static F broadcast(const float* p) { return _mm512_set1_ps(*p); }
    static F fma(F a, F b, F acc) { return _mm512_fmadd_ps(a, b, acc); }
    static M visible(int32_t pos, I first, I last) {
        const I p = _mm512_set1_epi32(pos);
        return _mm512_cmple_epi32_mask(p, last) & _mm512_cmpge_epi32_mask(p, first);
    }
    static M noLanes() { return 0; }
    static F keep(F x, M m, F fill) { return _mm512_mask_mov_ps(fill, m, x); }
    static F zeroUnless(F x, M m) { return _mm512_maskz_mov_ps(m, x); }
    static bool anyDiffer(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_NEQ_OQ) != 0; }
    static F zeroWhereNegInf(F x) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, negInf(), _CMP_NEQ_OQ), x); }

    template <KvType Type>
    static void convert16(const void* slab, const float* scales, int64_t e, float* dst) {
        if constexpr (Type == KvType::F32) {
            _mm512_store_ps(dst, _mm512_loadu_ps(static_cast<const float*>(slab) + e));
        } else if constexpr (Type == KvType::F16) {
            const auto* h = static_cast<const uint16_t*>(slab) + e;
            _mm512_store_ps(dst, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(h))));
        } else {  // 16 codes never span two scales: rows and heads start at multiples of 32 (D >= 64)
            const auto* codes = static_cast<const int8_t*>(slab) + e;
            const __m512i c = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes)));
            _mm512_store_ps(dst, _mm512_mul_ps(_mm512_cvtepi32_ps(c), _mm512_set1_ps(scales[e / kKvQ8Block])));
        }
    }
};

}  // namespace

void attendQueryBlockAvx512(const float* q, const int32_t* positions, const KvView& cache,
                            const AttentionConfig& cfg, const QueryBlock& block, float* out) {
    attendQueryBlock<Zmm16>(q, positions, cache, cfg, block, out);
}

}  // namespace kestrel::kernels
