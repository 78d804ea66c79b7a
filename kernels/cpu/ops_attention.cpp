// Causal grouped-query attention over a paged KV cache (f32 or f16).
//
// Each (token, head) pair is one task: keys are scored a run of contiguous
// rows at a time (at most kBlock, never crossing a KV block) with a running
// maximum and sum (online softmax), so memory use does not grow with the
// context and no scratch is needed. The inner dot products and
// axpys exist twice: AVX2+FMA+F16C intrinsics, and a portable scalar version;
// the choice is made once from cpuid.
#include "ops.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KESTREL_X86 1
#endif

namespace kestrel::kernels {
namespace {

constexpr int kBlock = 64;
constexpr int kMaxValueDim = 1024;

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
    static float dot(const float* q, const uint16_t* k, int n) {
        float s = 0.0f;
        for (int i = 0; i < n; ++i) s += q[i] * halfToFloat(k[i]);
        return s;
    }
    static void axpy(float* out, const float* v, float w, int n) {
        for (int i = 0; i < n; ++i) out[i] += w * v[i];
    }
    static void axpy(float* out, const uint16_t* v, float w, int n) {
        for (int i = 0; i < n; ++i) out[i] += w * halfToFloat(v[i]);
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
    static float toFloat(float x) { return x; }
    static float toFloat(uint16_t x) { return halfToFloat(x); }

    template <typename T>
    KESTREL_AVX2 static float dot(const float* q, const T* k, int n) {
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        int i = 0;
        for (; i + 16 <= n; i += 16) {
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load(k + i), a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), load(k + i + 8), a1);
        }
        for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load(k + i), a0);
        float s = hsum(_mm256_add_ps(a0, a1));
        for (; i < n; ++i) s += q[i] * toFloat(k[i]);
        return s;
    }
    template <typename T>
    KESTREL_AVX2 static void axpy(float* out, const T* v, float w, int n) {
        const __m256 wv = _mm256_set1_ps(w);
        int i = 0;
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(out + i, _mm256_fmadd_ps(wv, load(v + i), _mm256_loadu_ps(out + i)));
        for (; i < n; ++i) out[i] += w * toFloat(v[i]);
    }
    KESTREL_AVX2 static void scaleVec(float* out, float s, int n) {
        const __m256 sv = _mm256_set1_ps(s);
        int i = 0;
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_mul_ps(sv, _mm256_loadu_ps(out + i)));
        for (; i < n; ++i) out[i] *= s;
    }
};
#endif

// One query head against its kv head's keys [first, last]; kBase/vBase point
// at the head's columns of the layer's slabs.
template <typename Isa, typename T>
[[gnu::always_inline]] inline void attendHead(const float* q, const T* kBase, const T* vBase, const int32_t* table,
                                             int32_t blockTokens, int64_t rowStride, int64_t first, int64_t last,
                                             const AttentionConfig& cfg, float* out) {
    float scores[kBlock];
    float acc[kMaxValueDim];
    std::memset(acc, 0, sizeof(float) * cfg.valueDim);
    float runMax = -std::numeric_limits<float>::infinity();
    float runSum = 0.0f;
    for (int64_t b = first; b <= last;) {
        // A run of rows that are contiguous in memory: up to the end of b's KV block.
        const int64_t blockEnd = table ? (b / blockTokens + 1) * blockTokens : last + 1;
        const int n = static_cast<int>(std::min<int64_t>({kBlock, last - b + 1, blockEnd - b}));
        const int64_t off = KvView::rowOffset(table, blockTokens, rowStride, b);
        const T* kRun = kBase + off;
        const T* vRun = vBase + off;
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
            Isa::scaleVec(acc, r, cfg.valueDim);
            runMax = blockMax;
        }
        for (int j = 0; j < n; ++j) {
            const float p = std::exp(scores[j] - runMax);
            runSum += p;
            Isa::axpy(acc, vRun + j * rowStride, p, cfg.valueDim);
        }
        b += n;
    }
    const float inv = runSum > 0.0f ? 1.0f / runSum : 0.0f;
    for (int i = 0; i < cfg.valueDim; ++i) out[i] = acc[i] * inv;
}

template <typename Isa, typename T>
[[gnu::always_inline]] inline void attendRange(const float* q, const int32_t* positions, const KvView& cache,
                                              const AttentionConfig& cfg, float* out, int64_t tokens, int64_t begin,
                                              int64_t end) {
    const T* kAll = static_cast<const T*>(cache.k);
    const T* vAll = static_cast<const T*>(cache.v);
    const int group = cfg.heads / cfg.kvHeads;
    for (int64_t task = begin; task < end; ++task) {
        // Causal work grows with the position: interleave early and late tokens so that
        // each thread's contiguous range of tasks costs about the same.
        const int64_t ti = task / cfg.heads;
        const int64_t t = (ti % 2 == 0) ? ti / 2 : tokens - 1 - ti / 2;
        const int h = static_cast<int>(task % cfg.heads);
        const int kvh = h / group;
        const int64_t last = positions[t];
        const int64_t first = cfg.slidingWindow > 0 ? std::max<int64_t>(0, last - cfg.slidingWindow + 1) : 0;
        // K and V rows share the stride; V of kv head h sits at h * valueDim.
        attendHead<Isa, T>(q + (t * cfg.heads + h) * cfg.headDim, kAll + kvh * cfg.headDim,
                           vAll + kvh * cfg.valueDim, cache.tableOf(t), cache.blockTokens, cache.rowStride, first,
                           last, cfg, out + (t * cfg.heads + h) * cfg.valueDim);
    }
}

void attendScalar(const float* q, const int32_t* positions, const KvView& cache, const AttentionConfig& cfg,
                  float* out, int64_t tokens, int64_t begin, int64_t end) {
    if (cache.type == KvType::F16)
        attendRange<ScalarIsa, uint16_t>(q, positions, cache, cfg, out, tokens, begin, end);
    else
        attendRange<ScalarIsa, float>(q, positions, cache, cfg, out, tokens, begin, end);
}

#ifdef KESTREL_X86
__attribute__((target("avx2,fma,f16c"))) void attendAvx2(const float* q, const int32_t* positions,
                                                          const KvView& cache, const AttentionConfig& cfg,
                                                          float* out, int64_t tokens, int64_t begin,
                                                          int64_t end) {
    if (cache.type == KvType::F16)
        attendRange<Avx2Isa, uint16_t>(q, positions, cache, cfg, out, tokens, begin, end);
    else
        attendRange<Avx2Isa, float>(q, positions, cache, cfg, out, tokens, begin, end);
}
#endif

using AttendFn = void (*)(const float*, const int32_t*, const KvView&, const AttentionConfig&, float*, int64_t,
                          int64_t, int64_t);

// KESTREL_CPU_ISA=scalar forces the portable path, as for the matmul kernels (tests run both).
AttendFn pickAttend() {
    const char* force = std::getenv("KESTREL_CPU_ISA");
    if (force && std::strcmp(force, "scalar") == 0) return attendScalar;
#ifdef KESTREL_X86
    __builtin_cpu_init();  // runs during static initialisation, before cpuid data is guaranteed
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
        return attendAvx2;
#endif
    return attendScalar;
}

const AttendFn kAttend = pickAttend();

}  // namespace

void storeKv(const float* k, const float* v, int64_t tokens, const int32_t* positions, int64_t rowWidth,
             const KvView& cache) {
    for (int64_t t = 0; t < tokens; ++t) {
        const int64_t off = KvView::rowOffset(cache.tableOf(t), cache.blockTokens, cache.rowStride, positions[t]);
        if (cache.type == KvType::F32) {
            std::memcpy(static_cast<float*>(cache.k) + off, k + t * rowWidth, sizeof(float) * rowWidth);
            std::memcpy(static_cast<float*>(cache.v) + off, v + t * rowWidth, sizeof(float) * rowWidth);
        } else {
            uint16_t* kd = static_cast<uint16_t*>(cache.k) + off;
            uint16_t* vd = static_cast<uint16_t*>(cache.v) + off;
            for (int64_t i = 0; i < rowWidth; ++i) {
                kd[i] = floatToHalf(k[t * rowWidth + i]);
                vd[i] = floatToHalf(v[t * rowWidth + i]);
            }
        }
    }
}

void attention(const float* q, int64_t tokens, const int32_t* positions, const KvView& cache,
               const AttentionConfig& cfg, float* out, ThreadPool& pool) {
    const int64_t tasks = tokens * cfg.heads;
    // One captured pointer keeps the std::function in its small buffer: no allocation per call.
    struct Args {
        const float* q;
        const int32_t* positions;
        const KvView* cache;
        const AttentionConfig* cfg;
        float* out;
        int64_t tokens;
    } args{q, positions, &cache, &cfg, out, tokens};
    pool.parallelFor(tasks, [a = &args](int64_t b, int64_t e, int) {
        kAttend(a->q, a->positions, *a->cache, *a->cfg, a->out, a->tokens, b, e);
    });
}

}  // namespace kestrel::kernels
