// Prefill attention over query blocks (attention_blocked.h) on AVX2 with FMA and
// F16C: the kernel of attention_blocked_kernel.h with the 16 lanes in two ymm
// registers. Sixteen registers hold 4 keys' scores (8 accumulators, the queries and
// a broadcast) and 4 output dims at a time. Lane masks are vectors of the lanes a
// key must not reach (all ones there), applied with blends.
#include "attention_blocked_kernel.h"
#include "exp_poly.h"

#include <immintrin.h>

#include <limits>

namespace kestrel::kernels {
namespace {

// exp of 8 floats: exp_poly.h's formula, as exp512 on 16.
inline __m256 exp256(__m256 x) {
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(kExpMin)), _mm256_set1_ps(kExpMax));
    const __m256 t = _mm256_mul_ps(x, _mm256_set1_ps(kLog2e));
    const __m256 fi = _mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 y = _mm256_mul_ps(_mm256_sub_ps(t, fi), _mm256_set1_ps(kLn2));
    __m256 p = _mm256_set1_ps(kExpHorner[0]);
#pragma GCC unroll 8
    for (int i = 1; i < kExpTerms; ++i) p = _mm256_fmadd_ps(p, y, _mm256_set1_ps(kExpHorner[i]));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fi), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

struct Ymm2x8 {
    struct F {
        __m256 lo, hi;
    };
    struct I {
        __m256i lo, hi;
    };
    using M = F;  // all ones in the lanes a key must not reach
    static constexpr int kGroups = 1;  // each broadcast already feeds two FMAs (the halves)
    static constexpr int kScoredKeys = 4;
    static constexpr int kValueDims = 4;

    template <typename Op>
    static F each(F a, F b, Op op) { return {op(a.lo, b.lo), op(a.hi, b.hi)}; }
    static F zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
    static F negInf() {
        const __m256 v = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
        return {v, v};
    }
    static F load(const float* p) { return {_mm256_load_ps(p), _mm256_load_ps(p + 8)}; }
    static void store(float* p, F v) {
        _mm256_store_ps(p, v.lo);
        _mm256_store_ps(p + 8, v.hi);
    }
    static I loadInts(const int32_t* p) {
        return {_mm256_load_si256(reinterpret_cast<const __m256i*>(p)), _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 8))};
    }
    static F add(F a, F b) { return each(a, b, [](__m256 x, __m256 y) { return _mm256_add_ps(x, y); }); }
    static F sub(F a, F b) { return each(a, b, [](__m256 x, __m256 y) { return _mm256_sub_ps(x, y); }); }
    static F mul(F a, F b) { return each(a, b, [](__m256 x, __m256 y) { return _mm256_mul_ps(x, y); }); }
    static F max(F a, F b) { return each(a, b, [](__m256 x, __m256 y) { return _mm256_max_ps(x, y); }); }
    static F divide(F a, F b) { return each(a, b, [](__m256 x, __m256 y) { return _mm256_div_ps(x, y); }); }
    static F exp(F x) { return {exp256(x.lo), exp256(x.hi)}; }
    static __m256 broadcast(const float* p) { return _mm256_broadcast_ss(p); }
    static F fma(F a, __m256 b, F acc) { return {_mm256_fmadd_ps(a.lo, b, acc.lo), _mm256_fmadd_ps(a.hi, b, acc.hi)}; }
    static M visible(int32_t pos, I first, I last) {  // hidden: pos > last or first > pos
        const __m256i p = _mm256_set1_epi32(pos);
        auto hidden = [&](__m256i f, __m256i l) {
            return _mm256_castsi256_ps(_mm256_or_si256(_mm256_cmpgt_epi32(p, l), _mm256_cmpgt_epi32(f, p)));
        };
        return {hidden(first.lo, last.lo), hidden(first.hi, last.hi)};
    }
    static M noLanes() {
        const __m256 ones = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
        return {ones, ones};
    }
    static F keep(F x, M hidden, F fill) { return {_mm256_blendv_ps(x.lo, fill.lo, hidden.lo), _mm256_blendv_ps(x.hi, fill.hi, hidden.hi)}; }
    static F zeroUnless(F x, M hidden) { return {_mm256_andnot_ps(hidden.lo, x.lo), _mm256_andnot_ps(hidden.hi, x.hi)}; }
    static bool anyDiffer(F a, F b) {
        return (_mm256_movemask_ps(_mm256_cmp_ps(a.lo, b.lo, _CMP_NEQ_OQ)) | _mm256_movemask_ps(_mm256_cmp_ps(a.hi, b.hi, _CMP_NEQ_OQ))) != 0;
    }
    static F zeroWhereNegInf(F x) {
        const F n = negInf();
        return {_mm256_andnot_ps(_mm256_cmp_ps(x.lo, n.lo, _CMP_EQ_OQ), x.lo), _mm256_andnot_ps(_mm256_cmp_ps(x.hi, n.hi, _CMP_EQ_OQ), x.hi)};
    }

    template <KvType Type>
    static void convert16(const void* slab, const float* scales, int64_t e, float* dst) {
        if constexpr (Type == KvType::F32) {
            const float* f = static_cast<const float*>(slab) + e;
            _mm256_store_ps(dst, _mm256_loadu_ps(f));
            _mm256_store_ps(dst + 8, _mm256_loadu_ps(f + 8));
        } else if constexpr (Type == KvType::F16) {
            const auto* h = reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(slab) + e);
            _mm256_store_ps(dst, _mm256_cvtph_ps(_mm_loadu_si128(h)));
            _mm256_store_ps(dst + 8, _mm256_cvtph_ps(_mm_loadu_si128(h + 1)));
        } else {  // 16 codes never span two scales: rows and heads start at multiples of 32 (D >= 64)
            const auto* codes = static_cast<const int8_t*>(slab) + e;
            const __m256 d = _mm256_set1_ps(scales[e / kKvQ8Block]);
            for (int h = 0; h < 2; ++h) {
                const __m256i c = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + 8 * h)));
                _mm256_store_ps(dst + 8 * h, _mm256_mul_ps(_mm256_cvtepi32_ps(c), d));
            }
        }
    }
};

}  // namespace

void attendQueryBlockAvx2(const float* q, const int32_t* positions, const KvView& cache, const AttentionConfig& cfg,
                          const QueryBlock& block, float* out) {
    attendQueryBlock<Ymm2x8>(q, positions, cache, cfg, block, out);
}

}  // namespace kestrel::kernels
