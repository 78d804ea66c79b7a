// Causal grouped-query attention over a paged KV cache (f32, f16 or 8-bit).
//
// Each (token, head) pair is one task: keys are scored a run of contiguous
// rows at a time (at most kBlock, never crossing a KV block) with a running
// maximum and sum (online softmax), so memory use does not grow with the
// context and no scratch is needed. The inner dot products and
// axpys exist three times: AVX-512F (16 floats per op: a 64-wide head is 4
// vectors), AVX2+FMA+F16C intrinsics, and a portable scalar version; the
// choice is made once from cpuid. With 64-wide heads and 2-4 query heads per
// kv head, AVX-512 and AVX2 make a task of a (token, kv head) instead, so each
// K and V row is read once for its group (attendGroup64, attendGroup64Avx2);
// AVX-512 does the same for 256-wide heads (attendGroup256, Gemma 3).
//
// The kernels take K and V as "row pointers" P: const float*, const uint16_t*
// (f16) or Q8Ptr (8-bit codes with a scale per 32 values); every load converts
// to float, so one body serves the three storage types.
#include "ops.h"

#include "attention_blocked.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include "exp_avx512.h"
#include "fold_lanes_avx512.h"
#define KESTREL_X86 1
#endif

namespace kestrel::kernels {
namespace {

constexpr int kBlock = 64;
constexpr int kMaxValueDim = 1024;

// An element pointer into an 8-bit slab (KvType::Q8). Element e (counted from
// the slab's start) is codes[e] * scales[e / kKvQ8Block]; vector loads start at
// multiples of 8 or 16 from a row's start, so one load never spans two scales.
struct Q8Ptr {
    const int8_t* slab;
    const float* scales;
    int64_t e;
    Q8Ptr operator+(int64_t n) const { return {slab, scales, e + n}; }
    const int8_t* codes() const { return slab + e; }
    float scale() const { return scales[static_cast<uint64_t>(e) / kKvQ8Block]; }
};

inline float kvValue(const float* p, int64_t i) { return p[i]; }
inline float kvValue(const uint16_t* p, int64_t i) { return halfToFloat(p[i]); }
inline float kvValue(Q8Ptr p, int64_t i) { return static_cast<float>(p.codes()[i]) * (p + i).scale(); }

// Requests the cache lines of `values` elements from row (prefetch locality L:
// 3 = into L1, 2 = into L2).
// Always inlined: called from a lambda of another target (scoreKeys16), GCC kept
// such a helper out of line, judged it free of side effects and deleted its calls.
template <int L, typename T>
[[gnu::always_inline]] inline void prefetchKvRow(const T* row, int values) {
    const auto* b = reinterpret_cast<const char*>(row);
    for (size_t o = 0; o < static_cast<size_t>(values) * sizeof(T); o += 64) __builtin_prefetch(b + o, 0, L);
}
template <int L>
[[gnu::always_inline]] inline void prefetchKvRow(Q8Ptr row, int values) {
    for (int o = 0; o < values; o += 64) __builtin_prefetch(row.codes() + o, 0, L);
    __builtin_prefetch(&row.scales[static_cast<uint64_t>(row.e) / kKvQ8Block], 0, L);
}

struct ScalarIsa {
    static float dot(const float* q, const float* k, int n) {
        float acc[8] = {};
        int i = 0;
        for (; i + 8 <= n; i += 8)
            for (int l = 0; l < 8; ++l) acc[l] += q[i + l] * k[i + l];
        float s = 0.0f;
        for (; i < n; ++i) s += q[i] * k[i];
        for (float a : acc) s += a;
        return s;
    }
    template <typename P>
    static float dot(const float* q, P k, int n) {
        float s = 0.0f;
        for (int i = 0; i < n; ++i) s += q[i] * kvValue(k, i);
        return s;
    }
    template <typename P>
    static void axpy(float* out, P v, float w, int n) {
        for (int i = 0; i < n; ++i) out[i] += w * kvValue(v, i);
    }
    static void scaleVec(float* out, float s, int n) {
        for (int i = 0; i < n; ++i) out[i] *= s;
    }
};

#ifdef KESTREL_X86
#define KESTREL_AVX2 __attribute__((target("avx2,fma,f16c"))) inline
struct Avx2Isa {
    KESTREL_AVX2 static float hsum(__m256 v) {
        __m128 lo = _mm256_castps256_ps128(v);
        __m128 hi = _mm256_extractf128_ps(v, 1);
        lo = _mm_add_ps(lo, hi);
        lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
        lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
        return _mm_cvtss_f32(lo);
    }
    static __m256 load(const float* p) __attribute__((target("avx2,fma,f16c"))) { return _mm256_loadu_ps(p); }
    static __m256 load(const uint16_t* p) __attribute__((target("avx2,fma,f16c"))) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    static __m256 load(Q8Ptr p) __attribute__((target("avx2,fma,f16c"))) {
        const __m256i c = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p.codes())));
        return _mm256_mul_ps(_mm256_cvtepi32_ps(c), _mm256_set1_ps(p.scale()));
    }

    template <typename P>
    KESTREL_AVX2 static float dot(const float* q, P k, int n) {
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        int i = 0;
        for (; i + 16 <= n; i += 16) {
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load(k + i), a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), load(k + i + 8), a1);
        }
        for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load(k + i), a0);
        float s = hsum(_mm256_add_ps(a0, a1));
        for (; i < n; ++i) s += q[i] * kvValue(k, i);
        return s;
    }
    template <typename P>
    KESTREL_AVX2 static void axpy(float* out, P v, float w, int n) {
        const __m256 wv = _mm256_set1_ps(w);
        int i = 0;
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(out + i, _mm256_fmadd_ps(wv, load(v + i), _mm256_loadu_ps(out + i)));
        for (; i < n; ++i) out[i] += w * kvValue(v, i);
    }
    KESTREL_AVX2 static void scaleVec(float* out, float s, int n) {
        const __m256 sv = _mm256_set1_ps(s);
        int i = 0;
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_mul_ps(sv, _mm256_loadu_ps(out + i)));
        for (; i < n; ++i) out[i] *= s;
    }
};

#define KESTREL_AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma,f16c"))) inline
struct Avx512Isa {
    static __m512 load(const float* p) __attribute__((target("avx512f"))) { return _mm512_loadu_ps(p); }
    static __m512 load(const uint16_t* p) __attribute__((target("avx512f"))) {
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    }
    static __m512 loadTail(const float* p, __mmask16 m) __attribute__((target("avx512f"))) {
        return _mm512_maskz_loadu_ps(m, p);
    }
    static __m512 loadTail(const uint16_t* p, __mmask16 m) __attribute__((target("avx512f,avx512bw,avx512vl"))) {
        return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
    }
    static __m512 load(Q8Ptr p) __attribute__((target("avx512f"))) {
        const __m512i c = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p.codes())));
        return _mm512_mul_ps(_mm512_cvtepi32_ps(c), _mm512_set1_ps(p.scale()));
    }
    static __m512 loadTail(Q8Ptr p, __mmask16 m) __attribute__((target("avx512f,avx512bw,avx512vl"))) {
        const __m512i c = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, p.codes()));
        return _mm512_mul_ps(_mm512_cvtepi32_ps(c), _mm512_set1_ps(p.scale()));
    }
    static __mmask16 tailMask(int n) { return static_cast<__mmask16>((1u << n) - 1); }

    template <typename P>
    __attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c"))) static float dot(const float* q, P k, int n) {
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
        int i = 0;
        for (; i + 32 <= n; i += 32) {
            a0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), load(k + i), a0);
            a1 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + 16), load(k + i + 16), a1);
        }
        for (; i + 16 <= n; i += 16) a0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), load(k + i), a0);
        if (i < n) a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tailMask(n - i), q + i), loadTail(k + i, tailMask(n - i)), a1);
        return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
    }
    template <typename P>
    __attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c"))) static void axpy(float* out, P v, float w, int n) {
        const __m512 wv = _mm512_set1_ps(w);
        int i = 0;
        for (; i + 16 <= n; i += 16)
            _mm512_storeu_ps(out + i, _mm512_fmadd_ps(wv, load(v + i), _mm512_loadu_ps(out + i)));
        if (i < n) {
            const __mmask16 m = tailMask(n - i);
            _mm512_mask_storeu_ps(out + i, m, _mm512_fmadd_ps(wv, loadTail(v + i, m), _mm512_maskz_loadu_ps(m, out + i)));
        }
    }
    KESTREL_AVX512 static void scaleVec(float* out, float s, int n) {
        const __m512 sv = _mm512_set1_ps(s);
        int i = 0;
        for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, _mm512_mul_ps(sv, _mm512_loadu_ps(out + i)));
        for (; i < n; ++i) out[i] *= s;
    }
};
#endif

// How a kernel ends head h of its key range: without `stats`, the factor that
// normalises its weighted sum (1 / sum of weights); with them (a range of a
// split task), the factor 1 and (maximum score, sum of weights) in
// stats[2h], stats[2h + 1], for mergeRanges.
inline float rangeResult(float* stats, int h, float runMax, float runSum) {
    if (stats) {
        stats[2 * h] = runMax;
        stats[2 * h + 1] = runSum;
        return 1.0f;
    }
    return runSum > 0.0f ? 1.0f / runSum : 0.0f;
}

// The run of key rows from position b that are contiguous in memory: up to the
// end of b's KV block, at most kBlock rows, none past `last`.
struct KeyRun {
    int n;
    int64_t offset;  // of row b from the head's column base
};
inline KeyRun keyRun(int64_t b, int64_t last, const int32_t* table, int32_t blockTokens, int64_t rowStride) {
    const int64_t blockEnd = table ? (b / blockTokens + 1) * blockTokens : last + 1;
    return {static_cast<int>(std::min<int64_t>({kBlock, last - b + 1, blockEnd - b})),
            KvView::rowOffset(table, blockTokens, rowStride, b)};
}

// The running weighted sum of value rows, in memory (any value size).
template <typename Isa, typename P>
struct MemoryAcc {
    float acc[kMaxValueDim];
    int n;
    explicit MemoryAcc(int valueDim) : n(valueDim) { std::memset(acc, 0, sizeof(float) * n); }
    void scale(float r) { Isa::scaleVec(acc, r, n); }
    void axpy(P v, float p) { Isa::axpy(acc, v, p, n); }
    void store(float* out, float inv) const {
        for (int i = 0; i < n; ++i) out[i] = acc[i] * inv;
    }
};

#ifdef KESTREL_X86
// The same for 64 values in four zmm registers: in memory, every key's axpy
// was a load-FMA-store round trip on the same 256 bytes (store-forwarding
// latency per key), which made attention as slow with AVX-512 as with AVX2.
template <typename P>
struct Zmm64Acc {
    __m512 a[4];
    __attribute__((target("avx512f"))) explicit Zmm64Acc(int) {
        for (auto& v : a) v = _mm512_setzero_ps();
    }
    __attribute__((target("avx512f"))) void scale(float r) {
        for (auto& v : a) v = _mm512_mul_ps(v, _mm512_set1_ps(r));
    }
    __attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c"))) void axpy(P v, float p) {
        const __m512 pv = _mm512_set1_ps(p);
        for (int i = 0; i < 4; ++i) a[i] = _mm512_fmadd_ps(pv, Avx512Isa::load(v + 16 * i), a[i]);
    }
    __attribute__((target("avx512f"))) void store(float* out, float inv) const {
        for (int i = 0; i < 4; ++i) _mm512_storeu_ps(out + 16 * i, _mm512_mul_ps(a[i], _mm512_set1_ps(inv)));
    }
};
#endif

#ifdef KESTREL_X86
// And in eight ymm registers on AVX2 (the memory accumulator's per-key
// load-FMA-store round trips were a third of AVX2 attention in decode).
template <typename P>
struct Ymm64Acc {
    __m256 a[8];
    KESTREL_AVX2 explicit Ymm64Acc(int) {
        for (auto& v : a) v = _mm256_setzero_ps();
    }
    KESTREL_AVX2 void scale(float r) {
        for (auto& v : a) v = _mm256_mul_ps(v, _mm256_set1_ps(r));
    }
    KESTREL_AVX2 void axpy(P v, float p) {
        const __m256 pv = _mm256_set1_ps(p);
        for (int i = 0; i < 8; ++i) a[i] = _mm256_fmadd_ps(pv, Avx2Isa::load(v + 8 * i), a[i]);
    }
    KESTREL_AVX2 void store(float* out, float inv) const {
        for (int i = 0; i < 8; ++i) _mm256_storeu_ps(out + 8 * i, _mm256_mul_ps(a[i], _mm256_set1_ps(inv)));
    }
};
#endif

// Requests the K and V rows of the positions a kernel will read next into L2
// (locality 2: prefetcht1 on x86), kKvAhead positions ahead of the one it is
// on, the head's kValues of a K row and vValues of a V row. A decode step's KV rows come
// cold from DRAM (the step's weights streamed through the caches since the
// layer's last visit) and sit in blocks of the pool with no stride for the
// hardware prefetcher to follow, so without this attention waited on one run's
// rows at a time. 4 tokens of SmolLM2's 9/3 heads over 128 cold positions: 48
// -> 36 us on one thread; over 1024 positions on two threads 186 -> 146 us.
// The grouped kernels' requests into L1 a run ahead (GroupRun::prefetch) are
// not made redundant by this: without them the same case took 46 us, not 35.
// 32 positions rather than 64: where the cache sits in a large L3 (the Intel VM,
// docs/PERFORMANCE.md, twenty-first session) 64 ahead kept the line-fill buffers
// full of requests that were not needed yet (4 streams at ~100 positions, two
// threads: 15.5 -> 14.1 us); from DRAM the two distances measure the same.
constexpr int64_t kKvAhead = 32;
template <typename P>
struct KvAhead {
    P k, v;
    const int32_t* table;
    int32_t blockTokens;
    int64_t rowStride, next, last;
    int kValues, vValues;
    // Rows up to position p + kKvAhead (not past `last`) requested.
    void upTo(int64_t p) {
        for (const int64_t end = std::min(p + kKvAhead, last + 1); next < end;) {
            const KeyRun r = keyRun(next, last, table, blockTokens, rowStride);
            for (int j = 0; j < r.n; ++j) {
                prefetchKvRow<2>(k + (r.offset + j * rowStride), kValues);
                prefetchKvRow<2>(v + (r.offset + j * rowStride), vValues);
            }
            next += r.n;
        }
    }
};

// One query head against its kv head's keys [first, last]; kBase/vBase point
// at the head's columns of the layer's slabs.
template <typename Isa, typename P, typename Acc = MemoryAcc<Isa, P>>
[[gnu::always_inline]] inline void attendHead(const float* q, P kBase, P vBase, const int32_t* table,
                                             int32_t blockTokens, int64_t rowStride, int64_t first, int64_t last,
                                             const AttentionConfig& cfg, float* out, float* stats) {
    float scores[kBlock];
    Acc acc(cfg.valueDim);
    float runMax = -std::numeric_limits<float>::infinity();
    float runSum = 0.0f;
    KvAhead<P> ahead{kBase, vBase, table, blockTokens, rowStride, first, last, cfg.headDim, cfg.valueDim};
    for (int64_t b = first; b <= last;) {
        ahead.upTo(b);
        const auto [n, off] = keyRun(b, last, table, blockTokens, rowStride);
        const P kRun = kBase + off;
        const P vRun = vBase + off;
        float blockMax = -std::numeric_limits<float>::infinity();
        for (int j = 0; j < n; ++j) {
            float s = Isa::dot(q, kRun + j * rowStride, cfg.headDim) * cfg.scale;
            if (cfg.softcap > 0.0f) s = cfg.softcap * std::tanh(s / cfg.softcap);
            scores[j] = s;
            blockMax = std::max(blockMax, s);
        }
        if (blockMax > runMax) {
            const float r = std::exp(runMax - blockMax);  // 0 on the first block
            runSum *= r;
            acc.scale(r);
            runMax = blockMax;
        }
        // The weights first, then the value rows: a call to exp between two axpys
        // would spill and reload register accumulators around it for every key.
        for (int j = 0; j < n; ++j) {
            scores[j] = std::exp(scores[j] - runMax);
            runSum += scores[j];
        }
        for (int j = 0; j < n; ++j) acc.axpy(vRun + j * rowStride, scores[j]);
        b += n;
    }
    acc.store(out, rangeResult(stats, 0, runMax, runSum));
}

#ifdef KESTREL_X86
// GQA with 64-wide heads on AVX-512: the G query heads of one kv head at once,
// so each key and value row is loaded and converted once for all of them
// (SmolLM2: 3 heads per kv head). The scores of 16 keys are summed together
// (scoreKeys16), not one horizontal reduction per key and head, and the
// softmax's exp is vectorised (exp_avx512.h, ~1e-7 relative to std::exp):
// rounding differs from attendHead<Avx512Isa, P, Zmm64Acc<P>> by summation order.
constexpr int kMaxGroup = 4;
// 64-wide heads group on AVX-512 and AVX2, 256-wide ones (Gemma 3) on AVX-512 (attendGroup256).
inline bool groupedShape(const AttentionConfig& cfg, bool avx512) {
    const int g = cfg.heads / cfg.kvHeads;
    if (g < 2 || g > kMaxGroup || cfg.headDim != cfg.valueDim) return false;
    return cfg.headDim == 64 || (avx512 && cfg.headDim == 256);
}

// A run of keys for the grouped kernels: its K and V rows, and the next run's
// key rows, which sit in another block of the pool (no stride for the hardware
// to follow): each key of this run requests its value row and the next run's
// key row of the same index while the keys are scored.
template <typename P>
struct GroupRun {
    int n;
    P k, v;
    P kNext;
    int nextN;
    int values;  // of a K or V row of the head
    [[gnu::always_inline]] void prefetch(int j, int64_t rowStride) const {
        prefetchKvRow<3>(v + j * rowStride, values);
        if (j < nextN) prefetchKvRow<3>(kNext + j * rowStride, values);
    }
};
template <typename P>
inline GroupRun<P> groupRun(int64_t b, int64_t last, P kBase, P vBase, const int32_t* table,
                            int32_t blockTokens, int64_t rowStride, int values = 64) {
    const auto [n, off] = keyRun(b, last, table, blockTokens, rowStride);
    const KeyRun next = b + n <= last ? keyRun(b + n, last, table, blockTokens, rowStride) : KeyRun{0, 0};
    return {n, kBase + off, vBase + off, kBase + next.offset, next.n, values};
}

// The online softmax state of a group's G heads: running maximum and sum,
// and the current run's scores and maximum.
template <int G>
struct GroupSoftmax {
    float runMax[G], runSum[G], blockMax[G];
    float scores[G][kBlock];
    GroupSoftmax() {
        for (int h = 0; h < G; ++h) {
            runMax[h] = -std::numeric_limits<float>::infinity();
            runSum[h] = 0.0f;
        }
    }
    void beginRun() {
        for (int h = 0; h < G; ++h) blockMax[h] = -std::numeric_limits<float>::infinity();
    }
    // Head h's step over a chunk of n scores whose maximum is chunkMax: the scores become
    // weights exp(s - running maximum), their sum joins the running sum, and the result
    // is the factor (1 when the maximum stayed) by which the head's weighted sums must
    // be rescaled before the chunk's values are added.
    __attribute__((target("avx512f"))) float raise(int h, float chunkMax, int n) {
        float r = 1.0f;
        if (chunkMax > runMax[h]) {
            r = std::exp(runMax[h] - chunkMax);
            runSum[h] *= r;
            runMax[h] = chunkMax;
        }
        // 16 exps per instruction (a scalar exp per key and head was most of this loop),
        // summed per lane and then across the lanes: a scalar sum in key order was a
        // chain of dependent adds per head, 4 cycles a key.
        const __m512 m = _mm512_set1_ps(runMax[h]);
        __m512 sum = _mm512_setzero_ps();
        for (int j = 0; j < n; j += 16) {
            const __mmask16 k = n - j >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (n - j)) - 1);
            const __m512 e = exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, scores[h] + j), m));
            _mm512_mask_storeu_ps(scores[h] + j, k, e);
            sum = _mm512_mask_add_ps(sum, k, sum, e);
        }
        runSum[h] += _mm512_reduce_add_ps(sum);
        return r;
    }
};

// The G heads' partial sums of one or more keys.
template <int G>
struct HeadSums {
    __m512 v[G];
};

// Lane i of the result is the sum of keyProducts(j0 + i)'s 16 lanes, for N keys
// (a power of two) from j0 (fold_lanes_avx512.h's tree). Depth first, so that at
// most one vector per head and level waits for its partner.
template <int N, int G, typename Products>
[[gnu::always_inline]] __attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c"))) inline HeadSums<G> sumKeys(
    const Products& keyProducts, int j0) {
    if constexpr (N == 1) {
        return keyProducts(j0);
    } else {
        const HeadSums<G> x = sumKeys<N / 2, G>(keyProducts, j0);
        const HeadSums<G> y = sumKeys<N / 2, G>(keyProducts, j0 + N / 2);
        HeadSums<G> r;
#pragma GCC unroll 4
        for (int h = 0; h < G; ++h) r.v[h] = foldLanes<N / 2>(x.v[h], y.v[h], AddLanes{});
        return r;
    }
}

// Softcap per score, scalar: no 64-wide GQA model we run uses it.
__attribute__((target("avx512f"))) inline __m512 softcap16(__m512 s, float cap) {
    alignas(64) float v[16];
    _mm512_store_ps(v, s);
    for (float& x : v) x = cap * std::tanh(x / cap);
    return _mm512_load_ps(v);
}

// The scores of the `count` (1 to 16) keys of a run from key j into scores[h] + j,
// and their maximum into maxv. Lanes past `count` score the last key again (a row
// already loaded, no branch per key) and are neither stored nor in the maximum,
// so one copy of the code serves whole and partial groups. Each key requests its
// value row and the next run's key row (GroupRun::prefetch).
template <typename P, int G>
__attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c"))) inline void scoreKeys16(
    const __m512 (&qv)[G][4], const GroupRun<P>& run, int64_t rowStride, int j, int count,
    const AttentionConfig& cfg, float (&scores)[G][kBlock], int at, __m512 (&maxv)[G]) {
    auto keyProducts = [&](int i) __attribute__((always_inline, target("avx512f,avx512bw,avx512vl,fma,f16c"))) {
        HeadSums<G> p;
        const int key = j + std::min(i, count - 1);
        if (i < count) run.prefetch(key, rowStride);
        const P row = run.k + key * rowStride;
        __m512 k[4];
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) k[c] = Avx512Isa::load(row + 16 * c);
#pragma GCC unroll 4
        for (int h = 0; h < G; ++h) {
            // One chain per head and key: 16 keys' chains run side by side.
            __m512 a = _mm512_mul_ps(qv[h][0], k[0]);
            a = _mm512_fmadd_ps(qv[h][1], k[1], a);
            a = _mm512_fmadd_ps(qv[h][2], k[2], a);
            p.v[h] = _mm512_fmadd_ps(qv[h][3], k[3], a);
        }
        return p;
    };
    const HeadSums<G> sums = sumKeys<16, G>(keyProducts, 0);
    const __mmask16 live = Avx512Isa::tailMask(count);
    const __m512 scale = _mm512_set1_ps(cfg.scale);
#pragma GCC unroll 4
    for (int h = 0; h < G; ++h) {
        __m512 s = _mm512_mul_ps(sums.v[h], scale);
        if (cfg.softcap > 0.0f) s = softcap16(s, cfg.softcap);
        _mm512_mask_storeu_ps(scores[h] + at + j, live, s);
        maxv[h] = _mm512_mask_max_ps(maxv[h], live, maxv[h], s);  // dead lanes keep -inf
    }
}

// The softmax of the grouped AVX-512 kernels steps over chunks of up to kBlock keys
// made of whole runs: with the pool's 16-token blocks a run is at most 16 keys, and a
// step per run (a maximum, a rescale and a sum per head) cost as much as scoring its
// keys. A chunk of kBlock keys holds at most kBlock / 16 + 1 runs of 16-token blocks
// (partial first and last); with smaller blocks it ends after that many runs, with
// fewer keys.
constexpr int kRunsPerChunk = kBlock / 16 + 1;
template <typename P>
struct KeyChunk {
    GroupRun<P> runs[kRunsPerChunk];
    int at[kRunsPerChunk];  // run r's first score in the chunk
    int nRuns = 0, n = 0;   // runs and keys
};

// The chunk from position b: score(run, at) for each of its runs in order.
template <typename P, typename Score>
[[gnu::always_inline]] inline KeyChunk<P> gatherChunk(int64_t b, int64_t last, P kBase, P vBase, const int32_t* table,
                                                      int32_t blockTokens, int64_t rowStride, int values,
                                                      Score&& score) {
    KeyChunk<P> ch;
    for (int64_t c = b; c <= last && ch.nRuns < kRunsPerChunk;) {
        const GroupRun<P> run = groupRun(c, last, kBase, vBase, table, blockTokens, rowStride, values);
        if (ch.n + run.n > kBlock) break;
        score(run, ch.n);
        ch.runs[ch.nRuns] = run;
        ch.at[ch.nRuns++] = ch.n;
        ch.n += run.n;
        c += run.n;
    }
    return ch;
}

template <typename P, int G>
__attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c"))) inline void attendGroup64(
    const float* q, P kBase, P vBase, const int32_t* table, int32_t blockTokens, int64_t rowStride,
    int64_t first, int64_t last, const AttentionConfig& cfg, float* out, float* stats) {
    __m512 qv[G][4], acc[G][4];
    GroupSoftmax<G> sm;
#pragma GCC unroll 4
    for (int h = 0; h < G; ++h) {
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {
            qv[h][i] = _mm512_loadu_ps(q + h * 64 + 16 * i);
            acc[h][i] = _mm512_setzero_ps();
        }
    }
    KvAhead<P> ahead{kBase, vBase, table, blockTokens, rowStride, first, last, 64, 64};
    for (int64_t b = first; b <= last;) {
        ahead.upTo(b);
        __m512 maxv[G];
#pragma GCC unroll 4
        for (int h = 0; h < G; ++h) maxv[h] = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
        const KeyChunk<P> ch = gatherChunk(b, last, kBase, vBase, table, blockTokens, rowStride, 64,
                                           [&](const GroupRun<P>& run, int at) {
            for (int j = 0; j < run.n; j += 16)
                scoreKeys16<P, G>(qv, run, rowStride, j, std::min(16, run.n - j), cfg, sm.scores, at, maxv);
        });
#pragma GCC unroll 4
        for (int h = 0; h < G; ++h) {
            const float r = sm.raise(h, _mm512_reduce_max_ps(maxv[h]), ch.n);
            if (r != 1.0f) {
#pragma GCC unroll 4
                for (int i = 0; i < 4; ++i) acc[h][i] = _mm512_mul_ps(acc[h][i], _mm512_set1_ps(r));
            }
        }
        for (int r = 0; r < ch.nRuns; ++r) {
            const P vRun = ch.runs[r].v;
            const int at = ch.at[r];
            for (int j = 0; j < ch.runs[r].n; ++j) {
                __m512 v[4];
#pragma GCC unroll 4
                for (int i = 0; i < 4; ++i) v[i] = Avx512Isa::load(vRun + j * rowStride + 16 * i);
#pragma GCC unroll 4
                for (int h = 0; h < G; ++h) {
                    const __m512 p = _mm512_set1_ps(sm.scores[h][at + j]);
#pragma GCC unroll 4
                    for (int i = 0; i < 4; ++i) acc[h][i] = _mm512_fmadd_ps(p, v[i], acc[h][i]);
                }
            }
        }
        b += ch.n;
    }
#pragma GCC unroll 4
    for (int h = 0; h < G; ++h) {
        const __m512 inv = _mm512_set1_ps(rangeResult(stats, h, sm.runMax[h], sm.runSum[h]));
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) _mm512_storeu_ps(out + h * 64 + 16 * i, _mm512_mul_ps(acc[h][i], inv));
    }
}

// GQA with 256-wide heads on AVX-512 (Gemma 3: 4 query heads per kv head): as
// attendGroup64, each K and V row loaded and converted once for the G heads (the
// per-head kernel read and converted them once per head and kept its weighted sum
// in memory, a load-FMA-store round trip per key). The G x 256 query values and
// weighted sums do not fit in registers, so:
// - scores take 4 keys at a time over the rows' 16 slices of 16 values: per slice
//   4 key vectors and G query loads (from L1) feed 4G FMAs into G x 4 sums, which
//   one transposed reduction turns into the 4G scores (lane 4h + i: key i, head h);
// - values are applied run by run in 4 slices of 64: a slice's G x 4 sums stay in
//   registers over the run's keys and live in memory (L1) between slices.
constexpr int kWide = 256;

template <typename P, int G>
__attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c"))) inline void scoreKeys4Wide(
    const float* q, const GroupRun<P>& run, int64_t rowStride, int j, int count, const AttentionConfig& cfg,
    float (&scores)[G][kBlock], int at, float (&maxs)[G]) {
    P rows[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        rows[i] = run.k + (j + std::min(i, count - 1)) * rowStride;  // past count: the last key again, not stored
        if (i < count) run.prefetch(j + i, rowStride);
    }
    __m512 v[16];  // v[4h + i]: head h, key i (zero past G)
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) v[i] = _mm512_setzero_ps();
#pragma GCC unroll 2
    for (int c = 0; c < kWide / 16; ++c) {
        __m512 k[4];
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) k[i] = Avx512Isa::load(rows[i] + 16 * c);
#pragma GCC unroll 4
        for (int h = 0; h < G; ++h) {
            const __m512 qc = _mm512_loadu_ps(q + h * kWide + 16 * c);
#pragma GCC unroll 4
            for (int i = 0; i < 4; ++i) v[4 * h + i] = _mm512_fmadd_ps(qc, k[i], v[4 * h + i]);
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) v[i] = foldLanes<1>(v[2 * i], v[2 * i + 1], AddLanes{});
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) v[i] = foldLanes<2>(v[2 * i], v[2 * i + 1], AddLanes{});
#pragma GCC unroll 2
    for (int i = 0; i < 2; ++i) v[i] = foldLanes<4>(v[2 * i], v[2 * i + 1], AddLanes{});
    __m512 sums = _mm512_mul_ps(foldLanes<8>(v[0], v[1], AddLanes{}), _mm512_set1_ps(cfg.scale));
    if (cfg.softcap > 0.0f) sums = softcap16(sums, cfg.softcap);
    alignas(64) float s[16];
    _mm512_store_ps(s, sums);
#pragma GCC unroll 4
    for (int h = 0; h < G; ++h)
        for (int i = 0; i < count; ++i) {
            scores[h][at + j + i] = s[4 * h + i];
            maxs[h] = std::max(maxs[h], s[4 * h + i]);
        }
}

template <typename P, int G>
__attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c"))) inline void attendGroup256(
    const float* q, P kBase, P vBase, const int32_t* table, int32_t blockTokens, int64_t rowStride,
    int64_t first, int64_t last, const AttentionConfig& cfg, float* out, float* stats) {
    GroupSoftmax<G> sm;
    alignas(64) float acc[G][kWide] = {};
    KvAhead<P> ahead{kBase, vBase, table, blockTokens, rowStride, first, last, kWide, kWide};
    for (int64_t b = first; b <= last;) {
        ahead.upTo(b);
        float maxs[G];
        for (int h = 0; h < G; ++h) maxs[h] = -std::numeric_limits<float>::infinity();
        const KeyChunk<P> ch = gatherChunk(b, last, kBase, vBase, table, blockTokens, rowStride, kWide,
                                           [&](const GroupRun<P>& run, int at) {
            for (int j = 0; j < run.n; j += 4)
                scoreKeys4Wide<P, G>(q, run, rowStride, j, std::min(4, run.n - j), cfg, sm.scores, at, maxs);
        });
        for (int h = 0; h < G; ++h) {
            const float r = sm.raise(h, maxs[h], ch.n);
            if (r != 1.0f)
                for (int i = 0; i < kWide; i += 16)
                    _mm512_store_ps(acc[h] + i, _mm512_mul_ps(_mm512_load_ps(acc[h] + i), _mm512_set1_ps(r)));
        }
        for (int r = 0; r < ch.nRuns; ++r) {
            const P vRun = ch.runs[r].v;
            const int at = ch.at[r];
            for (int slice = 0; slice < kWide; slice += 64) {
                __m512 a[G][4];
#pragma GCC unroll 4
                for (int h = 0; h < G; ++h)
#pragma GCC unroll 4
                    for (int i = 0; i < 4; ++i) a[h][i] = _mm512_load_ps(acc[h] + slice + 16 * i);
                for (int j = 0; j < ch.runs[r].n; ++j) {
                    __m512 v[4];
#pragma GCC unroll 4
                    for (int i = 0; i < 4; ++i) v[i] = Avx512Isa::load(vRun + j * rowStride + slice + 16 * i);
#pragma GCC unroll 4
                    for (int h = 0; h < G; ++h) {
                        const __m512 p = _mm512_set1_ps(sm.scores[h][at + j]);
#pragma GCC unroll 4
                        for (int i = 0; i < 4; ++i) a[h][i] = _mm512_fmadd_ps(p, v[i], a[h][i]);
                    }
                }
#pragma GCC unroll 4
                for (int h = 0; h < G; ++h)
#pragma GCC unroll 4
                    for (int i = 0; i < 4; ++i) _mm512_store_ps(acc[h] + slice + 16 * i, a[h][i]);
            }
        }
        b += ch.n;
    }
    for (int h = 0; h < G; ++h) {
        const __m512 inv = _mm512_set1_ps(rangeResult(stats, h, sm.runMax[h], sm.runSum[h]));
        for (int i = 0; i < kWide; i += 16) _mm512_storeu_ps(out + h * kWide + i, _mm512_mul_ps(_mm512_load_ps(acc[h] + i), inv));
    }
}

// The same grouping on AVX2: each key and value row loaded once for the G
// query heads of its kv head. Per head, the operations and their order are
// attendHead<Avx2Isa, P, Ymm64Acc<P>>'s (a0 over the even 8-value chunks of
// the dot, a1 over the odd ones; exp per key; one FMA per key and value), so
// the results are the same bit for bit. Sixteen ymm registers do not hold G
// heads' 64 accumulators, so the value rows are applied in slices of W
// vectors, the accumulators living in memory between slices.
template <typename P, int G>
KESTREL_AVX2 void attendGroup64Avx2(const float* q, P kBase, P vBase, const int32_t* table,
                                    int32_t blockTokens, int64_t rowStride, int64_t first, int64_t last,
                                    const AttentionConfig& cfg, float* out, float* stats) {
    constexpr int W = G <= 3 ? 4 : 2;  // value vectors (of 8) per slice
    alignas(32) float acc[G][64] = {};
    GroupSoftmax<G> sm;
    auto& [runMax, runSum, blockMax, scores] = sm;
    KvAhead<P> ahead{kBase, vBase, table, blockTokens, rowStride, first, last, 64, 64};
    for (int64_t b = first; b <= last;) {
        ahead.upTo(b);
        const GroupRun<P> run = groupRun(b, last, kBase, vBase, table, blockTokens, rowStride);
        const int n = run.n;
        const P kRun = run.k, vRun = run.v;
        sm.beginRun();
        for (int j = 0; j < n; ++j) {
            run.prefetch(j, rowStride);
            __m256 k[8];
            for (int i = 0; i < 8; ++i) k[i] = Avx2Isa::load(kRun + j * rowStride + 8 * i);
            for (int h = 0; h < G; ++h) {
                const float* qh = q + h * 64;
                __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
                for (int i = 0; i < 8; i += 2) {
                    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(qh + 8 * i), k[i], a0);
                    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(qh + 8 * i + 8), k[i + 1], a1);
                }
                float s = Avx2Isa::hsum(_mm256_add_ps(a0, a1)) * cfg.scale;
                if (cfg.softcap > 0.0f) s = cfg.softcap * std::tanh(s / cfg.softcap);
                scores[h][j] = s;
                blockMax[h] = std::max(blockMax[h], s);
            }
        }
        for (int h = 0; h < G; ++h) {
            if (blockMax[h] > runMax[h]) {
                const float r = std::exp(runMax[h] - blockMax[h]);  // 0 on the first run
                runSum[h] *= r;
                const __m256 rv = _mm256_set1_ps(r);
                for (int i = 0; i < 64; i += 8) _mm256_store_ps(acc[h] + i, _mm256_mul_ps(_mm256_load_ps(acc[h] + i), rv));
                runMax[h] = blockMax[h];
            }
            for (int j = 0; j < n; ++j) {
                scores[h][j] = std::exp(scores[h][j] - runMax[h]);
                runSum[h] += scores[h][j];
            }
        }
        for (int c = 0; c < 64; c += 8 * W) {
            __m256 a[G][W];
            for (int h = 0; h < G; ++h)
                for (int i = 0; i < W; ++i) a[h][i] = _mm256_load_ps(acc[h] + c + 8 * i);
            for (int j = 0; j < n; ++j) {
                for (int i = 0; i < W; ++i) {
                    const __m256 v = Avx2Isa::load(vRun + j * rowStride + c + 8 * i);
                    for (int h = 0; h < G; ++h) a[h][i] = _mm256_fmadd_ps(_mm256_set1_ps(scores[h][j]), v, a[h][i]);
                }
            }
            for (int h = 0; h < G; ++h)
                for (int i = 0; i < W; ++i) _mm256_store_ps(acc[h] + c + 8 * i, a[h][i]);
        }
        b += n;
    }
    for (int h = 0; h < G; ++h) {
        const __m256 inv = _mm256_set1_ps(rangeResult(stats, h, runMax[h], runSum[h]));
        for (int i = 0; i < 64; i += 8) _mm256_storeu_ps(out + h * 64 + i, _mm256_mul_ps(_mm256_load_ps(acc[h] + i), inv));
    }
}
#endif

#ifdef KESTREL_X86
// An ISA's kernels for 64-wide heads: the grouped one and the register accumulator.
template <typename Isa>
struct Wide64;
template <>
struct Wide64<Avx512Isa> {
    template <typename P, int G, typename... A>
    static void group(A... a) { attendGroup64<P, G>(a...); }
    template <typename P>
    using Acc = Zmm64Acc<P>;
};
template <>
struct Wide64<Avx2Isa> {
    template <typename P, int G, typename... A>
    static void group(A... a) { attendGroup64Avx2<P, G>(a...); }
    template <typename P>
    using Acc = Ymm64Acc<P>;
};
#endif

// Keys per work item. A (token, head) task over more keys is split into ranges
// of this many, computed in parallel and merged (flash-decoding): a decode step
// of SmolLM2 has 3 tasks (kv heads) for the threads, and at 4096 positions one
// thread took two of them (194 us per layer on two threads) while the other
// idled after one. The split depends only on the token's own key range, so a
// token's result is the same whatever else its batch holds.
constexpr int64_t kSplitKeys = 256;

// The keys [first, last] of token t's query head h (or the group of heads from
// h), written normalised to the output or, as a range of a split task (slot >=
// 0), unnormalised to partial slot `slot` with its statistics (mergeRanges).
struct AttnItem {
    int64_t t, first, last;
    int32_t h, slot;
};

// A split task: its ranges are the slots [firstSlot, firstSlot + ranges).
struct AttnMerge {
    int64_t t;
    int32_t h, firstSlot, ranges;
};

struct AttnWork {
    const float* q;
    const KvView* cache;
    const AttentionConfig* cfg;
    float* out;
    const AttnItem* items;
    const AttnMerge* merges;
    float* partial;    // per slot: headsPerItem x valueDim
    float* stats;      // per slot: headsPerItem x (maximum score, sum of weights)
    int headsPerItem;  // the group size when grouped, else 1
    bool grouped;
};

// The ranges of split task m into the output: each range's sum and weights
// rescaled to the largest maximum, then normalised once.
void mergeRanges(const AttnWork& w, const AttnMerge& m) {
    const int n = w.cfg->valueDim;
    for (int g = 0; g < w.headsPerItem; ++g) {
        float top = -std::numeric_limits<float>::infinity();
        for (int r = 0; r < m.ranges; ++r) top = std::max(top, w.stats[(int64_t(m.firstSlot + r) * w.headsPerItem + g) * 2]);
        float* o = w.out + (m.t * w.cfg->heads + m.h + g) * n;
        std::fill(o, o + n, 0.0f);
        float sum = 0.0f;
        for (int r = 0; r < m.ranges; ++r) {
            const int64_t slot = int64_t(m.firstSlot + r) * w.headsPerItem + g;
            const float f = std::exp(w.stats[slot * 2] - top);
            sum += f * w.stats[slot * 2 + 1];
            const float* p = w.partial + slot * n;
            for (int i = 0; i < n; ++i) o[i] += f * p[i];
        }
        const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
        for (int i = 0; i < n; ++i) o[i] *= inv;
    }
}

// Element 0 of a K or V slab as the row pointer type P.
template <typename P>
P slabStart(const void* slab, const float* scales) {
    if constexpr (std::is_same_v<P, Q8Ptr>) return Q8Ptr{static_cast<const int8_t*>(slab), scales, 0};
    else return static_cast<P>(slab);
}

template <typename Isa, typename P>
[[gnu::always_inline]] inline void attendRange(const AttnWork& w, int64_t begin, int64_t end) {
    const AttentionConfig& cfg = *w.cfg;
    const KvView& cache = *w.cache;
    const P kAll = slabStart<P>(cache.k, cache.kScales);
    const P vAll = slabStart<P>(cache.v, cache.vScales);
    const int group = cfg.heads / cfg.kvHeads;
    // The first kKvAhead rows of the first kItemsAhead items requested before the first
    // item starts: a decode step of several sequences is a dozen short items (4 streams of
    // SmolLM2: 12 of ~100 keys), and each began by waiting on its own first rows from DRAM.
    // 4 streams: attention 16.9 -> 15.3 us per layer (docs/PERFORMANCE.md, sixteenth
    // session). Bounded so that a prefill's thousands of items (whose tokens share rows)
    // do not issue a request per row and item.
    constexpr int64_t kItemsAhead = 32;
    for (int64_t i = begin; i < std::min(end, begin + kItemsAhead); ++i) {
        const AttnItem& it = w.items[i];
        const int kvh = it.h / group;
        KvAhead<P>{kAll + kvh * cfg.headDim, vAll + kvh * cfg.valueDim, cache.tableOf(it.t), cache.blockTokens,
                   cache.rowStride, it.first, it.last, cfg.headDim, cfg.valueDim}
            .upTo(it.first);
    }
    for (int64_t i = begin; i < end; ++i) {
        const AttnItem& it = w.items[i];
        const int h = it.h, kvh = h / group;
        const int64_t t = it.t, first = it.first, last = it.last;
        // K and V rows share the stride; V of kv head h sits at h * valueDim.
        const float* qh = w.q + (t * cfg.heads + h) * cfg.headDim;
        float* oh = it.slot < 0 ? w.out + (t * cfg.heads + h) * cfg.valueDim
                                : w.partial + int64_t(it.slot) * w.headsPerItem * cfg.valueDim;
        float* st = it.slot < 0 ? nullptr : w.stats + int64_t(it.slot) * w.headsPerItem * 2;
#ifdef KESTREL_X86
        if constexpr (std::is_same_v<Isa, Avx512Isa> || std::is_same_v<Isa, Avx2Isa>) {
            using Wide = Wide64<Isa>;
            if (w.grouped) {
                auto run = [&](auto g) {
                    constexpr int G = decltype(g)::value;
                    const P k = kAll + kvh * cfg.headDim, v = vAll + kvh * cfg.valueDim;
                    if constexpr (std::is_same_v<Isa, Avx512Isa>) {
                        if (cfg.headDim == kWide) {  // groupedShape: only AVX-512 groups 256-wide heads
                            attendGroup256<P, G>(qh, k, v, cache.tableOf(t), cache.blockTokens, cache.rowStride, first,
                                                 last, cfg, oh, st);
                            return;
                        }
                    }
                    Wide::template group<P, G>(qh, k, v, cache.tableOf(t), cache.blockTokens, cache.rowStride, first,
                                               last, cfg, oh, st);
                };
                if (group == 2) run(std::integral_constant<int, 2>{});
                else if (group == 3) run(std::integral_constant<int, 3>{});
                else run(std::integral_constant<int, 4>{});
                continue;
            }
            if (cfg.valueDim == 64) {
                attendHead<Isa, P, typename Wide::template Acc<P>>(qh, kAll + kvh * cfg.headDim,
                                                                   vAll + kvh * cfg.valueDim, cache.tableOf(t),
                                                                   cache.blockTokens, cache.rowStride, first, last,
                                                                   cfg, oh, st);
                continue;
            }
        }
#endif
        attendHead<Isa, P>(qh, kAll + kvh * cfg.headDim, vAll + kvh * cfg.valueDim, cache.tableOf(t),
                           cache.blockTokens, cache.rowStride, first, last, cfg, oh, st);
    }
}

// Runs F<P> for the cache's storage type: f(P{}) with P its row pointer type.
template <typename F>
[[gnu::always_inline]] inline void withRowPointer(KvType type, F&& f) {
    switch (type) {
        case KvType::F32: return f(static_cast<const float*>(nullptr));
        case KvType::F16: return f(static_cast<const uint16_t*>(nullptr));
        case KvType::Q8: return f(Q8Ptr{});
    }
}

void attendScalar(const AttnWork& w, int64_t begin, int64_t end) {
    withRowPointer(w.cache->type, [&](auto p) { attendRange<ScalarIsa, decltype(p)>(w, begin, end); });
}

#ifdef KESTREL_X86
__attribute__((target("avx2,fma,f16c"))) void attendAvx2(const AttnWork& w, int64_t begin, int64_t end) {
    withRowPointer(w.cache->type, [&](auto p) { attendRange<Avx2Isa, decltype(p)>(w, begin, end); });
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"))) void attendAvx512(const AttnWork& w,
                                                                                       int64_t begin, int64_t end) {
    withRowPointer(w.cache->type, [&](auto p) { attendRange<Avx512Isa, decltype(p)>(w, begin, end); });
}
#endif

using AttendFn = void (*)(const AttnWork&, int64_t, int64_t);

// KESTREL_CPU_ISA=scalar forces the portable path, as for the matmul kernels (tests run both).
AttendFn pickAttend() {
    const char* force = std::getenv("KESTREL_CPU_ISA");
    if (force && std::strcmp(force, "scalar") == 0) return attendScalar;
#ifdef KESTREL_X86
    __builtin_cpu_init();  // runs during static initialisation, before cpuid data is guaranteed
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl");
    if (avx512 && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("fma") &&
        !(force && std::strcmp(force, "avx2") == 0))
        return attendAvx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
        return attendAvx2;
#endif
    return attendScalar;
}

const AttendFn kAttend = pickAttend();

// The query-block kernel of kAttend's ISA and its queries per block (attention_blocked.h);
// none where kAttend is the scalar path.
struct BlockKernel {
    void (*attend)(const float*, const int32_t*, const KvView&, const AttentionConfig&, const QueryBlock&, float*);
    int lanes;
};
BlockKernel pickBlockKernel() {
#ifdef KESTREL_X86
    if (kAttend == attendAvx512) return {attendQueryBlockAvx512, kQueryBlockLanesAvx512};
    if (kAttend == attendAvx2) return {attendQueryBlockAvx2, kQueryBlockLanesAvx2};
#endif
    return {nullptr, 0};
}
const BlockKernel kBlockKernel = pickBlockKernel();

// 8-bit storage: `blocks` blocks of 32 values as codes round(x / d), d = max |x| / 127
// (d = 0 and codes 0 for a block of zeros). Both versions round half to even and
// multiply by the same reciprocal, so they store the same bytes.
inline float kvQ8Scale(float amax) { return amax / 127.0f; }
inline float kvQ8Inverse(float d) { return d > 0.0f ? 1.0f / d : 0.0f; }

void quantizeKvScalar(const float* x, int8_t* codes, float* scales, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b, x += kKvQ8Block, codes += kKvQ8Block) {
        float amax = 0.0f;
        for (int i = 0; i < kKvQ8Block; ++i) amax = std::max(amax, std::fabs(x[i]));
        const float d = kvQ8Scale(amax), id = kvQ8Inverse(d);
        for (int i = 0; i < kKvQ8Block; ++i) codes[i] = static_cast<int8_t>(std::nearbyint(x[i] * id));
        scales[b] = d;
    }
}

#ifdef KESTREL_X86
__attribute__((target("avx512f,avx512bw,avx512vl"))) void quantizeKvAvx512(const float* x, int8_t* codes,
                                                                             float* scales, int64_t blocks) {
    static_assert(kKvQ8Block == 32);
    for (int64_t b = 0; b < blocks; ++b, x += 32, codes += 32) {
        const __m512 lo = _mm512_loadu_ps(x), hi = _mm512_loadu_ps(x + 16);
        const float d = kvQ8Scale(_mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(lo), _mm512_abs_ps(hi))));
        const __m512 id = _mm512_set1_ps(kvQ8Inverse(d));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(codes), _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(lo, id))));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + 16),
                         _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(hi, id))));
        scales[b] = d;
    }
}
#endif

using QuantizeKvFn = void (*)(const float*, int8_t*, float*, int64_t);
QuantizeKvFn pickQuantizeKv() {
#ifdef KESTREL_X86
    if (kAttend == attendAvx512) return quantizeKvAvx512;
#endif
    return quantizeKvScalar;
}
const QuantizeKvFn kQuantizeKv = pickQuantizeKv();


// The i-th of n items in an order that alternates early and late ones: causal work grows
// with the position, so each thread's contiguous range of work then costs about the same.
inline int64_t interleavedIndex(int64_t i, int64_t n) { return i % 2 == 0 ? i / 2 : n - 1 - i / 2; }

// Decode tokens [0, firstPrefill) to `single` (the per-query kernels) in order; the prefill
// tokens after them to query blocks: runs of consecutive positions of one sequence, at most a
// block's tokens each (a lone token too: its result must not depend on its neighbours), one
// block per kv head; `blocks` holds them interleaved (interleavedIndex).
void splitByRole(int64_t tokens, const int32_t* positions, const KvView& cache, const AttentionConfig& cfg,
                 int64_t firstPrefill, int lanes, std::vector<int64_t>& single, std::vector<QueryBlock>& runs,
                 std::vector<QueryBlock>& blocks) {
    for (int64_t t = 0; t < firstPrefill; ++t) single.push_back(t);
    const int most = firstPrefill < tokens ? queryBlockTokens(cfg, lanes) : 1;
    for (int64_t t = firstPrefill; t < tokens;) {
        int64_t e = t + 1;
        while (e < tokens && e - t < most && cache.tableOf(e) == cache.tableOf(t) && positions[e] == positions[e - 1] + 1) ++e;
        for (int32_t kvh = 0; kvh < cfg.kvHeads; ++kvh) runs.push_back({t, static_cast<int32_t>(e - t), kvh});
        t = e;
    }
    const auto n = static_cast<int64_t>(runs.size());
    for (int64_t i = 0; i < n; ++i) blocks.push_back(runs[size_t(interleavedIndex(i, n))]);
}

// Asks for the cache lines storeKv will write for these tokens, for writing: one
// request per line, so their misses overlap.
void prefetchKvRows(int64_t tokens, const int32_t* positions, int64_t rowWidth, const KvView& cache) {
    const int64_t bytes = kvTypeBytes(cache.type);
    const auto lines = [](const void* base, int64_t from, int64_t n) {
        const char* p = static_cast<const char*>(base) + from;
        for (int64_t b = 0; b < n; b += 64) __builtin_prefetch(p + b, 1, 3);
        __builtin_prefetch(p + n - 1, 1, 3);  // a row that ends past its first line's boundary
    };
    for (int64_t t = 0; t < tokens; ++t) {
        const int64_t off = KvView::rowOffset(cache.tableOf(t), cache.blockTokens, cache.rowStride, positions[t]);
        lines(cache.k, off * bytes, rowWidth * bytes);
        lines(cache.v, off * bytes, rowWidth * bytes);
        if (cache.type == KvType::Q8) {
            const int64_t scales = rowWidth / kKvQ8Block * int64_t(sizeof(float));
            lines(cache.kScales, off / kKvQ8Block * int64_t(sizeof(float)), scales);
            lines(cache.vScales, off / kKvQ8Block * int64_t(sizeof(float)), scales);
        }
    }
}

}  // namespace

void storeKv(const float* k, const float* v, int64_t tokens, const int32_t* positions, int64_t rowWidth,
             const KvView& cache) {
    // Every row's lines requested at once: written one after another, each row's stores
    // would wait for their lines in turn (~40 % of this op at four decode tokens). Up to a
    // batch of decode rows (a prefill's consecutive rows stream on their own, and lines
    // asked for thousands of rows ahead would be gone again before their stores).
    prefetchKvRows(std::min<int64_t>(tokens, 16), positions, rowWidth, cache);
    for (int64_t t = 0; t < tokens; ++t) {
        const int64_t off = KvView::rowOffset(cache.tableOf(t), cache.blockTokens, cache.rowStride, positions[t]);
        switch (cache.type) {
            case KvType::F32:
                std::memcpy(static_cast<float*>(cache.k) + off, k + t * rowWidth, sizeof(float) * rowWidth);
                std::memcpy(static_cast<float*>(cache.v) + off, v + t * rowWidth, sizeof(float) * rowWidth);
                break;
            case KvType::F16:
                floatsToHalves(k + t * rowWidth, static_cast<uint16_t*>(cache.k) + off, rowWidth);
                floatsToHalves(v + t * rowWidth, static_cast<uint16_t*>(cache.v) + off, rowWidth);
                break;
            case KvType::Q8:
                kQuantizeKv(k + t * rowWidth, static_cast<int8_t*>(cache.k) + off, cache.kScales + off / kKvQ8Block,
                            rowWidth / kKvQ8Block);
                kQuantizeKv(v + t * rowWidth, static_cast<int8_t*>(cache.v) + off, cache.vScales + off / kKvQ8Block,
                            rowWidth / kKvQ8Block);
                break;
        }
    }
}

void attention(const float* q, int64_t tokens, const int32_t* positions, const KvView& cache,
               const AttentionConfig& cfg, float* out, ThreadPool& pool, int64_t decodeTokens) {
#ifdef KESTREL_X86
    const bool grouped = (kAttend == attendAvx512 || kAttend == attendAvx2) && groupedShape(cfg, kAttend == attendAvx512);
#else
    const bool grouped = false;
#endif
    const int headsPerItem = grouped ? cfg.heads / cfg.kvHeads : 1;
    // Reused across calls (one layer after another on the caller's thread): no allocation per step.
    thread_local std::vector<AttnItem> items;
    thread_local std::vector<AttnMerge> merges;
    thread_local std::vector<QueryBlock> runs, blocks;
    thread_local std::vector<int64_t> single;
    thread_local std::vector<float> partial, stats;
    items.clear();
    merges.clear();
    runs.clear();
    blocks.clear();
    single.clear();
    // Decode tokens take the per-query kernels, prefill tokens the query blocks where the ISA
    // has them (by role: ops.h says why).
    const bool byBlocks = kBlockKernel.attend && queryBlocksFit(cfg);
    splitByRole(tokens, positions, cache, cfg, byBlocks ? std::clamp<int64_t>(decodeTokens, 0, tokens) : tokens,
                kBlockKernel.lanes, single, runs, blocks);
    int32_t slots = 0;
    for (size_t ti = 0; ti < single.size(); ++ti) {
        const int64_t t = single[size_t(interleavedIndex(int64_t(ti), int64_t(single.size())))];  // early and late
        const int64_t last = positions[t];
        const int64_t first = cfg.slidingWindow > 0 ? std::max<int64_t>(0, last - cfg.slidingWindow + 1) : 0;
        const auto ranges = static_cast<int32_t>((last - first + kSplitKeys) / kSplitKeys);
        for (int h = 0; h < cfg.heads; h += headsPerItem) {
            if (ranges > 1) merges.push_back({t, h, slots, ranges});
            for (int32_t r = 0; r < ranges; ++r)
                items.push_back({t, first + r * kSplitKeys, std::min(last, first + (r + 1) * kSplitKeys - 1), h,
                                 ranges > 1 ? slots++ : -1});
        }
    }
    partial.resize(size_t(slots) * size_t(headsPerItem) * size_t(cfg.valueDim));
    stats.resize(size_t(slots) * size_t(headsPerItem) * 2);
    const AttnWork work{q,     &cache,         &cfg,          out, items.data(), merges.data(), partial.data(),
                        stats.data(), headsPerItem, grouped};
    // One captured pointer keeps the std::function in its small buffer: no allocation per call.
    // Work [0, blocks) are the query blocks, then the per-query items.
    struct Call {
        const AttnWork* work;
        const int32_t* positions;
        const QueryBlock* block;  // the caller's thread_local vector: workers must not name it
        int64_t blocks;
    } call{&work, positions, blocks.data(), static_cast<int64_t>(blocks.size())};
    pool.parallelFor(call.blocks + static_cast<int64_t>(items.size()), [c = &call](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < std::min(e, c->blocks); ++i)
            kBlockKernel.attend(c->work->q, c->positions, *c->work->cache, *c->work->cfg, c->block[i], c->work->out);
        if (e > c->blocks) kAttend(*c->work, std::max(b, c->blocks) - c->blocks, e - c->blocks);
    });
    if (!merges.empty())
        pool.parallelFor(static_cast<int64_t>(merges.size()), [w = &work](int64_t b, int64_t e, int) {
            for (int64_t i = b; i < e; ++i) mergeRanges(*w, w->merges[i]);
        });
}

}  // namespace kestrel::kernels
