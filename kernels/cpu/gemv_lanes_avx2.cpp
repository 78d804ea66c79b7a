// Products (GEMV) of Q4_0, Q4_1, Q8_0 and Q4_K rows in the lanes layout
// (lanes_layout.h) with 1 to 16 tokens, for AVX2 machines (Zen 2/3, Intel
// cores without AVX-512; compiled with -mavx2 -mfma -mf16c, called only after
// cpuid says so).
//
// The layout and activations of gemv_lanes_avx512.cpp, each 64-byte vector
// taken as two 32-byte halves (lanes 0-7 and 8-15; a half with no block
// present is skipped, so a short last group costs half). A lane is still one
// block's integer dot, by maddubs (u8 weights x s8 activations -> i16 pairs)
// instead of vpdpbusd: nibble weights (0..15) keep the i16 sum of a group's 8
// products within 8 x 2 x 15 x 128 = 30720, so one madd to i32 per group and
// token suffices. Q8_0's bytes (u = q + 128) would saturate maddubs, so they
// go back to q and multiply as |q| x sign(x, q), widened after each product.
// Then one convert + scale + FMA per 8 blocks and token, as on AVX-512.
//
// One row at a time (16 ymm registers), tokens in passes of 4 (a 4-token step
// took 5.9-6.0 ms against 6.4 in passes of 2; Zen 4 under KESTREL_CPU_ISA=avx2).
// Every (row, token) output sees the same operations in the same order
// whatever the token count, so a token's outputs are bit for bit those of a
// one-token call.
#include "lanes_activations.h"
#include "lanes_layout.h"
#include "quant_blocks.h"
#include "row_stream.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace kestrel::kernels {
namespace {

// f16 scales of lanes [8h, 8h + 8) as floats: 8 in order (16 slots), or
// blocks 2h and 2h + 1 each over 4 lanes (4 slots).
template <int Slots>
inline __m256 halfScales(const uint8_t* p, int h) {
    if constexpr (Slots == 16) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * h)));
    } else {
        int32_t two;
        std::memcpy(&two, p + 4 * h, sizeof two);
        const __m256 pair = _mm256_cvtph_ps(_mm_cvtsi32_si128(two));
        return _mm256_permutevar8x32_ps(pair, _mm256_set_epi32(1, 1, 1, 1, 0, 0, 0, 0));
    }
}

// Q4_K's factors of lanes [8h, 8h + 8) from a group's tail (lanes_layout.h): the scale
// d * sc, or with kMins the minimum -dmin * m. A 16-slot group's half h is super block h's
// 8 sub-blocks; a 4-slot group's half h is slots 2h and 2h + 1 (each over 4 lanes) of its
// one super block.
template <int Slots, bool kMins>
inline __m256 q4kHalfFactors(const uint8_t* tail, int h) {
    const int super = Slots == 16 ? h : 0;
    uint16_t half;
    std::memcpy(&half, tail + (kMins ? Q4KTail::dmin(super) : Q4KTail::d(super)), 2);
    const __m256 dd = _mm256_set1_ps(_cvtsh_ss(half));
    const uint8_t* fields = tail + (kMins ? Q4KTail::minimum(Slots, 0) : Q4KTail::scale(0));
    __m256i bytes;
    if constexpr (Slots == 16) {
        bytes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(fields + 8 * h)));
    } else {
        uint16_t two;
        std::memcpy(&two, fields + 2 * h, 2);
        bytes = _mm256_permutevar8x32_epi32(_mm256_cvtepu8_epi32(_mm_cvtsi32_si128(two)), _mm256_set_epi32(1, 1, 1, 1, 0, 0, 0, 0));
    }
    const __m256 f = _mm256_mul_ps(dd, _mm256_cvtepi32_ps(bytes));
    return kMins ? _mm256_sub_ps(_mm256_setzero_ps(), f) : f;
}

// 32 bytes of a weight vector from byte `from`; only `n` (a multiple of 4, 1..32) present.
inline __m256i loadHalf(const uint8_t* p, int n) {
    if (n == 32) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i dword = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
    return _mm256_maskload_epi32(reinterpret_cast<const int*>(p), _mm256_cmpgt_epi32(_mm256_set1_epi32(n / 4), dword));
}

// Half h of one group of one row for T tokens: acc[t] += its share of row . token t.
// w: the group's bytes; x: token 0's activation group (tokens tokenBytes apart).
template <GgmlType Type, int Slots, int T>
inline void halfProduct(const uint8_t* w, int vectorBytes, int h, const unsigned char* x, size_t tokenBytes,
                        __m256 (&acc)[T]) {
    constexpr bool kNibbles = Type != GgmlType::Q8_0;
    constexpr int V = kNibbles ? Slots / 4 : Slots / 2;  // weight vectors
    const int n = std::min(32, vectorBytes - 32 * h);
    const __m256i m4 = _mm256_set1_epi8(0x0f), ones = _mm256_set1_epi16(1);
    __m256i lo[V], hi[kNibbles ? V : 1];
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
        const __m256i q = loadHalf(w + v * vectorBytes + 32 * h, n);
        if constexpr (kNibbles) {
            lo[v] = _mm256_and_si256(q, m4);
            hi[v] = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
        } else {
            lo[v] = _mm256_xor_si256(q, _mm256_set1_epi8(static_cast<char>(0x80)));  // q = u - 128
        }
    }
    const uint8_t* scales = w + V * vectorBytes;
    constexpr bool kMinimum = lanesHasMinimum(Type);
    __m256 d, m = _mm256_setzero_ps();
    if constexpr (Type == GgmlType::Q4_K) {
        d = q4kHalfFactors<Slots, false>(scales, h);
        m = q4kHalfFactors<Slots, true>(scales, h);
    } else {
        d = halfScales<Slots>(scales, h);
        if constexpr (kMinimum) m = halfScales<Slots>(scales + 2 * Slots, h);
    }
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) {
        const unsigned char* a = x + t * tokenBytes + 32 * h;
        auto xv = [&](int k) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(a + k * 64)); };
        const __m256 dx = _mm256_load_ps(reinterpret_cast<const float*>(a + lanesScalesAt(Slots)));
        const __m256i sum = _mm256_load_si256(reinterpret_cast<const __m256i*>(a + lanesSumsAt(Slots)));
        __m256i dot;
        if constexpr (kNibbles) {
            __m256i s16 = _mm256_setzero_si256();
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) {
                s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(lo[v], xv(v)));
                s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(hi[v], xv(Slots / 4 + v)));
            }
            dot = _mm256_madd_epi16(s16, ones);
            // Q4_0's quants are u - 8.
            if constexpr (Type == GgmlType::Q4_0) dot = _mm256_sub_epi32(dot, _mm256_slli_epi32(sum, 3));
        } else {
            dot = _mm256_setzero_si256();
#pragma GCC unroll 8
            for (int v = 0; v < V; ++v) {
                const __m256i p = _mm256_maddubs_epi16(_mm256_abs_epi8(lo[v]), _mm256_sign_epi8(xv(v), lo[v]));
                dot = _mm256_add_epi32(dot, _mm256_madd_epi16(p, ones));
            }
        }
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(d, dx), acc[t]);
        // Q4_1's (Q4_K's) minimum: m * (dx * sum of the lane's quants), the product made with the activations.
        if constexpr (kMinimum)
            acc[t] = _mm256_fmadd_ps(m, _mm256_load_ps(reinterpret_cast<const float*>(a + lanesScaledSumsAt(Slots))), acc[t]);
    }
}

inline float sum8(__m256 v) {
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 s2 = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

// One row x T tokens (t0 .. t0 + T - 1) over the whole row.
template <GgmlType Type, int T>
void rowPass(const uint8_t* w, int64_t nb, const LanesActivations& a, int64_t t0, float* y, int64_t yStride) {
    __m256 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
    const unsigned char* x = a.base + t0 * a.tokenBytes;
    forEachLanesGroup(nb, [&](LanesGroup g, int64_t) {
        const int vectorBytes = lanesVectorBytes(g);
        for (int h = 0; h < 2 && 32 * h < vectorBytes; ++h) {
            if (g.slots == 16) halfProduct<Type, 16, T>(w, vectorBytes, h, x, a.tokenBytes, acc);
            else halfProduct<Type, 4, T>(w, vectorBytes, h, x, a.tokenBytes, acc);
        }
        w += lanesGroupBytes(Type, g);
        x += lanesActivationGroupBytes(g.slots);
    });
    for (int t = 0; t < T; ++t) y[(t0 + t) * yStride] = sum8(acc[t]);
}

template <GgmlType Type>
void lanesRows(const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols, const QuantActivations& act, float* y,
               int64_t yStride) {
    const int64_t nb = cols / kQK;
    LanesActivations& a = lanesActivationScratch();
    prepareLanesActivations(act, nb, a, prepareLanesGroupPortable);
    const RowStream stream(w, rows * rowBytes);
    for (int64_t r = 0; r < rows; ++r) {
        stream.ahead(w + r * rowBytes, rowBytes);
        forLanesTokenPasses(act.tokens, [&](auto t, int64_t t0) {
            rowPass<Type, decltype(t)::value>(w + r * rowBytes, nb, a, t0, y + r, yStride);
        });
    }
}

}  // namespace

// y[t * yStride + r] for t < act.tokens (1..kLanesMaxTokens) and rows in the
// lanes layout; false for types or token counts this file does not handle.
bool rowsLanesAvx2(GgmlType type, const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols,
                   const QuantActivations& act, float* y, int64_t yStride) {
    if (lanesAvx512Only(type)) return false;
    return withLanesCall(type, act.tokens, [&](auto t) {
        constexpr GgmlType T = decltype(t)::value;
        if constexpr (!lanesAvx512Only(T)) lanesRows<T>(w, rowBytes, rows, cols, act, y, yStride);
    });
}

}  // namespace kestrel::kernels
