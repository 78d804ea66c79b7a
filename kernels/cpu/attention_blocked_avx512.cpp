// Prefill attention over query blocks (attention_blocked.h), AVX-512F.
//
// Lane i of every vector is query i of the block: token i / group, head
// kvHead * group + i % group (lanes past the block's queries repeat its last
// query and are not stored). Keys are taken in tiles of 2048 / D (8 KB of floats
// for K and as much for V, in the thread's scratch):
// - the tile's K and V rows are converted to floats once (f16 and 8-bit storage);
// - scores: a vector per key over the 16 queries, D FMAs of the queries'
//   transposed values (times cfg.scale, applied once) with the key's value d
//   broadcast from memory;
// - online softmax lane by lane; a key a query may not see (causal order, the
//   window, past the tile's end) gets weight 0 exactly;
// - values: the output is kept transposed as well (o[d] over the 16 queries),
//   16 dims at a time in registers, each key's weight vector times its value d
//   broadcast.
// The sums run in another order than the per-query kernels', so results agree
// with theirs to rounding (tst_cpu_ops checks both against a double reference).
#include "attention_blocked.h"

#include "exp_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <limits>
#include <memory>

namespace kestrel::kernels {
namespace {

constexpr int kLanes = kQueryBlockLanes;

template <int D>
struct BlockScratch {
    static constexpr int kKeys = 2048 / D;  // keys per tile: 32, 16 or 8
    alignas(64) float qt[D][kLanes];        // queries transposed, scaled
    alignas(64) float k[kKeys][D];
    alignas(64) float v[kKeys][D];
    alignas(64) float p[kKeys][kLanes];  // scores, then weights
    alignas(64) float o[D][kLanes];      // weighted sums, transposed
};

// The thread's scratch (26-48 KB, allocated on first use rather than as
// thread-local storage every thread of the process would carry).
template <int D>
BlockScratch<D>& blockScratch() {
    thread_local std::unique_ptr<BlockScratch<D>> s;
    if (!s) s = std::make_unique<BlockScratch<D>>();
    return *s;
}

// 16 values of a K or V row at element `e` of its slab, as floats.
template <KvType Type>
inline __m512 rowValues(const void* slab, const float* scales, int64_t e) {
    if constexpr (Type == KvType::F32) {
        return _mm512_loadu_ps(static_cast<const float*>(slab) + e);
    } else if constexpr (Type == KvType::F16) {
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(slab) + e)));
    } else {  // 16 codes never span two scales: rows and heads start at multiples of 32 (D >= 64)
        const __m128i codes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const int8_t*>(slab) + e));
        return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(codes)), _mm512_set1_ps(scales[e / kKvQ8Block]));
    }
}

// fn(i, e) for positions j + i, i in [0, n), of one kv head (columns from `col`): e is the
// element of the row's first column in a K or V slab. One offset computation per run of
// positions in the same KV block.
template <typename Fn>
[[gnu::always_inline]] inline void forEachRow(const KvView& c, const int32_t* table, int64_t j, int n, int64_t col, Fn&& fn) {
    for (int i = 0; i < n;) {
        const int64_t p = j + i;
        const int run = table ? static_cast<int>(std::min<int64_t>(n - i, c.blockTokens - p % c.blockTokens)) : n - i;
        int64_t e = KvView::rowOffset(table, c.blockTokens, c.rowStride, p) + col;
        for (int r = 0; r < run; ++r, ++i, e += c.rowStride) fn(i, e);
    }
}

// The rows of positions [j, j + n) of a K or V slab as floats, row i at dst + i * D.
template <int D, KvType Type>
void loadRows(const KvView& c, const void* slab, const float* scales, const int32_t* table, int64_t j, int n,
              int64_t col, float* dst) {
    forEachRow(c, table, j, n, col, [&](int i, int64_t e) {
#pragma GCC unroll 16
        for (int x = 0; x < D; x += 16) _mm512_store_ps(dst + i * D + x, rowValues<Type>(slab, scales, e + x));
    });
}

// Requests positions [j, j + n) of the K and V rows into L1, a tile ahead of their
// conversion (rows of the pool's blocks have no stride the hardware could follow).
template <int D, KvType Type>
void prefetchRows(const KvView& c, const int32_t* table, int64_t j, int n, int64_t col) {
    constexpr int kElem = Type == KvType::F32 ? 4 : Type == KvType::F16 ? 2 : 1;
    forEachRow(c, table, j, n, col, [&](int, int64_t e) {
#pragma GCC unroll 16
        for (int x = 0; x < D * kElem; x += 64) {
            __builtin_prefetch(static_cast<const char*>(c.k) + e * kElem + x, 0, 3);
            __builtin_prefetch(static_cast<const char*>(c.v) + e * kElem + x, 0, 3);
        }
    });
}

template <int D, KvType Type>
void attendBlock(const float* q, const int32_t* positions, const KvView& c, const AttentionConfig& cfg,
                 const QueryBlock& b, float* out) {
    using Scratch = BlockScratch<D>;
    constexpr int kKeys = Scratch::kKeys;
    constexpr int kScored = kKeys < 16 ? kKeys : 16;  // keys scored at once (accumulators)
    Scratch& s = blockScratch<D>();
    const int group = cfg.heads / cfg.kvHeads;
    const int queries = b.tokens * group;
    alignas(64) int32_t lastOf[kLanes], firstOf[kLanes];
    for (int lane = 0; lane < kLanes; ++lane) {
        const int qi = std::min(lane, queries - 1), tb = qi / group, g = qi % group;
        const float* src = q + ((b.t0 + tb) * cfg.heads + b.kvHead * group + g) * D;
        for (int d = 0; d < D; ++d) s.qt[d][lane] = src[d] * cfg.scale;
        lastOf[lane] = positions[b.t0 + tb];
        firstOf[lane] = cfg.slidingWindow > 0 ? std::max(0, lastOf[lane] - cfg.slidingWindow + 1) : 0;
    }
    const __m512i lastV = _mm512_load_si512(lastOf), firstV = _mm512_load_si512(firstOf);
    // Positions grow along the block, so lane 0 has the smallest first and last, the last query the largest.
    const int64_t kFirst = firstOf[0], kLast = lastOf[queries - 1];
    const int64_t minLast = lastOf[0], maxFirst = firstOf[queries - 1];
    const int32_t* table = c.tableOf(b.t0);
    const int64_t col = int64_t(b.kvHead) * D;
    const __m512 negInf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    __m512 m = negInf, l = _mm512_setzero_ps();
    for (int d = 0; d < D; ++d) _mm512_store_ps(s.o[d], _mm512_setzero_ps());

    for (int64_t j = kFirst; j <= kLast; j += kKeys) {
        const int n = static_cast<int>(std::min<int64_t>(kKeys, kLast - j + 1));
        if (j + kKeys <= kLast)
            prefetchRows<D, Type>(c, table, j + kKeys, static_cast<int>(std::min<int64_t>(kKeys, kLast - j - kKeys + 1)), col);
        loadRows<D, Type>(c, c.k, c.kScales, table, j, n, col, &s.k[0][0]);
        loadRows<D, Type>(c, c.v, c.vScales, table, j, n, col, &s.v[0][0]);
        // Rows past n hold an earlier tile's values (or zeros): scored, then masked.
        const bool masked = n < kKeys || j + n - 1 > minLast || j < maxFirst;
        __mmask16 visible[kKeys];
        __m512 tileMax = negInf;
        for (int k0 = 0; k0 < kKeys; k0 += kScored) {
            __m512 sc[kScored];
#pragma GCC unroll 16
            for (int i = 0; i < kScored; ++i) sc[i] = _mm512_setzero_ps();
            // One base pointer: key i's value d is at a constant offset i * D from kd (16
            // separate row pointers spilled the general registers).
            const float* kd = s.k[k0];
#pragma GCC unroll 4
            for (int d = 0; d < D; ++d, ++kd) {
                const __m512 qd = _mm512_load_ps(s.qt[d]);
#pragma GCC unroll 16
                for (int i = 0; i < kScored; ++i) sc[i] = _mm512_fmadd_ps(qd, _mm512_set1_ps(kd[i * D]), sc[i]);
            }
#pragma GCC unroll 16
            for (int i = 0; i < kScored; ++i) {
                const int key = k0 + i;
                if (masked) {
                    const __m512i pos = _mm512_set1_epi32(static_cast<int32_t>(j + key));
                    visible[key] = key < n ? _mm512_cmple_epi32_mask(pos, lastV) & _mm512_cmpge_epi32_mask(pos, firstV) : 0;
                    sc[i] = _mm512_mask_mov_ps(negInf, visible[key], sc[i]);
                }
                tileMax = _mm512_max_ps(tileMax, sc[i]);
                _mm512_store_ps(s.p[key], sc[i]);
            }
        }
        // A lane that has seen no visible key yet keeps maximum -inf; it takes 0 as its
        // reference, and its weights are masked to 0.
        const __m512 mNew = _mm512_max_ps(m, tileMax);
        const __m512 ref = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(mNew, negInf, _CMP_NEQ_OQ), mNew);
        const bool grew = _mm512_cmp_ps_mask(mNew, m, _CMP_NEQ_OQ) != 0;
        const __m512 alpha = exp512(_mm512_sub_ps(m, ref));  // 1 where the maximum held; o and l are 0 where m was -inf
        if (grew) l = _mm512_mul_ps(l, alpha);
        for (int key = 0; key < n; ++key) {
            __m512 p = exp512(_mm512_sub_ps(_mm512_load_ps(s.p[key]), ref));
            if (masked) p = _mm512_maskz_mov_ps(visible[key], p);
            l = _mm512_add_ps(l, p);
            _mm512_store_ps(s.p[key], p);
        }
        for (int c0 = 0; c0 < D; c0 += 16) {
            __m512 o[16];
#pragma GCC unroll 16
            for (int i = 0; i < 16; ++i) {
                o[i] = _mm512_load_ps(s.o[c0 + i]);
                if (grew) o[i] = _mm512_mul_ps(o[i], alpha);
            }
            const float* vk = s.v[0] + c0;
            for (int key = 0; key < n; ++key, vk += D) {
                const __m512 p = _mm512_load_ps(s.p[key]);
#pragma GCC unroll 16
                for (int i = 0; i < 16; ++i) o[i] = _mm512_fmadd_ps(p, _mm512_set1_ps(vk[i]), o[i]);
            }
#pragma GCC unroll 16
            for (int i = 0; i < 16; ++i) _mm512_store_ps(s.o[c0 + i], o[i]);
        }
        m = mNew;
    }
    // Every query sees at least its own position, so l > 0 in the lanes stored.
    const __m512 inv = _mm512_div_ps(_mm512_set1_ps(1.0f), l);
    for (int d = 0; d < D; ++d) _mm512_store_ps(s.o[d], _mm512_mul_ps(_mm512_load_ps(s.o[d]), inv));
    for (int lane = 0; lane < queries; ++lane) {
        float* dst = out + ((b.t0 + lane / group) * cfg.heads + b.kvHead * group + lane % group) * D;
        for (int d = 0; d < D; ++d) dst[d] = s.o[d][lane];
    }
}

template <int D>
void attendBlockOfWidth(const float* q, const int32_t* positions, const KvView& c, const AttentionConfig& cfg,
                        const QueryBlock& b, float* out) {
    switch (c.type) {
        case KvType::F32: return attendBlock<D, KvType::F32>(q, positions, c, cfg, b, out);
        case KvType::F16: return attendBlock<D, KvType::F16>(q, positions, c, cfg, b, out);
        case KvType::Q8: return attendBlock<D, KvType::Q8>(q, positions, c, cfg, b, out);
    }
}

}  // namespace

bool queryBlocksFit(const AttentionConfig& cfg) {
    const int d = cfg.headDim;
    return (d == 64 || d == 128 || d == 256) && cfg.valueDim == d && cfg.heads % cfg.kvHeads == 0 &&
           cfg.heads / cfg.kvHeads <= kQueryBlockLanes && cfg.softcap <= 0.0f;
}

void attendQueryBlockAvx512(const float* q, const int32_t* positions, const KvView& cache,
                            const AttentionConfig& cfg, const QueryBlock& block, float* out) {
    switch (cfg.headDim) {
        case 64: return attendBlockOfWidth<64>(q, positions, cache, cfg, block, out);
        case 128: return attendBlockOfWidth<128>(q, positions, cache, cfg, block, out);
        default: return attendBlockOfWidth<256>(q, positions, cache, cfg, block, out);
    }
}

}  // namespace kestrel::kernels
