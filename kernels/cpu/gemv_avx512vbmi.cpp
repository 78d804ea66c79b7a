// Products (GEMV) of Q4_0, Q4_1 and Q8_0 rows with 1 to 8 tokens for AVX-512
// VBMI+VNNI (compiled with -mavx512vbmi; called only after cpuid says so).
//
// Why a separate kernel: decode streams every weight byte once per token, so the
// product must keep up with DRAM (~8-10 GB/s per core here), i.e. spend only a
// few instructions per 32-value block. The block-at-a-time kernel in
// gemm_avx512.cpp spends ~25 (scalar f16 scale conversions, broadcasts, a
// horizontal sum per row). Here each zmm holds whole blocks (four 20-byte Q4_1
// blocks, two 34-byte Q8_0 blocks): one vpermt2b gathers their quants out of
// two loads, another their f16 scales (each repeated over the 4 lanes of
// dpbusd results that belong to that block), so the scale work is vectorised
// across blocks and four rows run side by side sharing the activation vectors.
//
// The nibble formats put value j in the low nibble of byte j and value j+16 in
// the high nibble; rather than interleave nibbles per row, the activations are
// reordered once per call into "low halves" and "high halves" of each block.
//
// The zero points of Q4_0 (-8) and Q8_0 (-128, undoing u = w + 128) are folded
// into the integer dot: it starts from -k * (the lane's sum of activation
// quants), exact in int32, so per block only the scale is applied in float.
// Q4_1's minimum is a float: m * dx * sum(xq) is accumulated in its own vector
// whose 16 lanes are (block, token) pairs, one FMA per row and 4 blocks for up
// to 4 tokens.
//
// Several tokens (a decode step of several sequences): each row's blocks are
// loaded and decoded once and applied to every token's activations, so the
// weights stream from memory once per step. Each (row, token) output sees
// exactly the operations, in the same order, that a one-token call performs
// (one code path, templated on the token count; a token's min-term lanes and
// their reduction do not depend on its slot among the 4), so a token's outputs
// are bit for bit the same whether it is computed alone or in a batch. More
// than 4 tokens run in passes of up to 4 over the same rows (the row quad is
// then in L1): 4 rows x 4 tokens of accumulators is what 32 zmm registers hold.
#include "quant_blocks.h"
#include "row_stream.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace kestrel::kernels {
namespace {

constexpr int kMaxTokens = 8;  // the most tokens one call takes (act.tokens)
constexpr int kTokensPerPass = 4;

// Per-call activation layout for the nibble formats, per token and group of 4
// blocks: lo[64]: values 0-15 of each block, hi[64]: values 16-31; dx[16]: the
// block scale repeated over its 4 lanes; init[16]: -8 * the lane's sum of its
// 8 quants (Q4_0's zero point). Token t's arrays start t * groups groups after
// token 0's. Per pass of 4 tokens and group: sb[16], lane 4b + s = dx * sum(xq)
// of block b for token 4 * pass + s (Q4_1's minimum).
// The kernels take this view by value: reached through the thread_local
// scratch, the pointers were re-read via __tls_get_addr in every iteration
// (a call, with every zmm register spilled around it).
struct NibbleView {
    int64_t groups = 0;
    const int8_t* lo = nullptr;
    const int8_t* hi = nullptr;
    const float* dx = nullptr;
    const int32_t* init = nullptr;
    const float* sb = nullptr;
};
struct NibbleActivations {
    std::vector<unsigned char> storage;
    NibbleView view;
    uint64_t serial = 0;  // QuantActivations::serial of the call it was prepared for
    int64_t nb = 0;
};

template <int BlockBytes, int Header>
__m512i quantIndex() {
    alignas(64) uint8_t idx[64];
    for (int i = 0; i < 64; ++i) idx[i] = static_cast<uint8_t>((i / 16) * BlockBytes + Header + i % 16);
    return _mm512_load_si512(idx);
}

// Bytes 0-31: the f16 at offset `first` of block l/4 for lane l; bytes 32-63:
// the f16 at offset `second` (Q4_1's m).
template <int BlockBytes, int BlocksPerVector>
__m512i scaleIndex(int first, int second) {
    alignas(64) uint8_t idx[64];
    constexpr int lanesPerBlock = 16 / BlocksPerVector;
    for (int l = 0; l < 16; ++l) {
        const int k = l / lanesPerBlock;
        idx[2 * l] = static_cast<uint8_t>(k * BlockBytes + first);
        idx[2 * l + 1] = static_cast<uint8_t>(k * BlockBytes + first + 1);
        idx[32 + 2 * l] = static_cast<uint8_t>(k * BlockBytes + second);
        idx[32 + 2 * l + 1] = static_cast<uint8_t>(k * BlockBytes + second + 1);
    }
    return _mm512_load_si512(idx);
}

inline __mmask64 byteMask(int64_t n) { return n >= 64 ? ~0ull : (n <= 0 ? 0ull : (1ull << n) - 1); }

void prepareNibble(const QuantActivations& act, int64_t nb, NibbleActivations& out) {
    // A call is split into several chunks of rows per thread; prepare once per call.
    if (act.serial != 0 && act.serial == out.serial && nb == out.nb) return;
    out.serial = act.serial;
    out.nb = nb;
    const int64_t groups = (nb + 3) / 4, tokens = act.tokens;
    const int64_t passes = (tokens + kTokensPerPass - 1) / kTokensPerPass;
    const size_t bytes = static_cast<size_t>(tokens * groups) * (64 + 64 + 64 + 64) + passes * groups * 64 + 64;
    if (out.storage.size() < bytes) out.storage.resize(bytes);
    const auto base = (reinterpret_cast<uintptr_t>(out.storage.data()) + 63) / 64 * 64;
    auto* lo = reinterpret_cast<int8_t*>(base);
    auto* hi = lo + tokens * groups * 64;
    auto* dx = reinterpret_cast<float*>(hi + tokens * groups * 64);
    auto* init = reinterpret_cast<int32_t*>(dx + tokens * groups * 16);
    auto* sb = reinterpret_cast<float*>(init + tokens * groups * 16);
    std::fill(sb, sb + passes * groups * 16, 0.0f);  // slots past the last token
    const __m512i eights = _mm512_set1_epi8(8);
    alignas(64) uint8_t idxLo[64], idxHi[64];
    for (int i = 0; i < 64; ++i) {
        idxLo[i] = static_cast<uint8_t>((i / 16) * 32 + i % 16);
        idxHi[i] = static_cast<uint8_t>(idxLo[i] + 16);
    }
    const __m512i vLo = _mm512_load_si512(idxLo), vHi = _mm512_load_si512(idxHi);
    const int64_t cols = nb * kQK, cp = act.colsPadded;
    for (int64_t t = 0; t < tokens; ++t) {
        const int8_t* qs = act.qs + t * cp;
        const float* dx4 = act.dx4 + t * cp / 4;
        const float* s16 = act.s16 + t * cp / 16;
        for (int64_t g = 0; g < groups; ++g) {
            const int64_t c0 = g * 128, o = t * groups + g;
            const __m512i a = _mm512_maskz_loadu_epi8(byteMask(cols - c0), qs + c0);
            const __m512i b = _mm512_maskz_loadu_epi8(byteMask(cols - c0 - 64), qs + c0 + 64);
            const __m512i l = _mm512_permutex2var_epi8(a, vLo, b), h = _mm512_permutex2var_epi8(a, vHi, b);
            _mm512_store_si512(lo + o * 64, l);
            _mm512_store_si512(hi + o * 64, h);
            const __m512i sum8 = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), eights, l), eights, h);
            _mm512_store_si512(init + o * 16, _mm512_sub_epi32(_mm512_setzero_si512(), sum8));
            float* sbPass = sb + ((t / kTokensPerPass) * groups + g) * 16;
            for (int l16 = 0; l16 < 16; ++l16) {
                const int64_t blk = 4 * g + l16 / 4;
                const bool in = blk < nb;
                dx[o * 16 + l16] = in ? dx4[blk * 8] : 0.0f;
                if (l16 % 4 == 0 && in) sbPass[l16 + t % kTokensPerPass] = s16[2 * blk] + s16[2 * blk + 1];
            }
        }
    }
    out.view = NibbleView{groups, lo, hi, dx, init, sb};
}

NibbleActivations& nibbleScratch() {
    thread_local NibbleActivations a;
    return a;
}

// Four rows at a time, reduced together: y[r..r+3].
inline void store4(const __m512* acc, float* y, int n) {
    // Pairwise adds of 256-bit halves, then 128-bit, then a 4x4 transpose-add.
    __m256 h[4];
    for (int r = 0; r < 4; ++r)
        h[r] = _mm256_add_ps(_mm512_castps512_ps256(acc[r]),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[r]), 1)));
    __m128 q[4];
    for (int r = 0; r < 4; ++r) q[r] = _mm_add_ps(_mm256_castps256_ps128(h[r]), _mm256_extractf128_ps(h[r], 1));
    const __m128 s01 = _mm_hadd_ps(q[0], q[1]), s23 = _mm_hadd_ps(q[2], q[3]);
    const __m128 s = _mm_hadd_ps(s01, s23);
    if (n == 4) {
        _mm_storeu_ps(y, s);
    } else {
        alignas(16) float t[4];
        _mm_store_ps(t, s);
        for (int i = 0; i < n; ++i) y[i] = t[i];
    }
}

// acc[t][r] holds row r of token t; token t's outputs go to y + t * yStride.
// mins[r] (when HasMin): row r's min-term lanes, token t in slot t (lanes
// 4b + t); they are moved to lanes 4b and added before the reduction (the
// other lanes get +0), the same operations whatever the slot. The one place a
// (row, token) accumulator becomes an output, for every token count (part of
// what makes batched results equal lone ones).
template <int R, int T, bool HasMin>
inline void storeRows(__m512 (&acc)[T][R], const __m512* mins, float* y, int64_t yStride, int n) {
    if constexpr (HasMin) {
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
            const __m512i fromSlot = _mm512_add_epi32(
                _mm512_set_epi32(12, 12, 12, 12, 8, 8, 8, 8, 4, 4, 4, 4, 0, 0, 0, 0), _mm512_set1_epi32(t));
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r)
                acc[t][r] = _mm512_add_ps(acc[t][r], _mm512_maskz_permutexvar_ps(0x1111, fromSlot, mins[r]));
        }
    }
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
        if constexpr (R == 4) {
            store4(acc[t], y + t * yStride, n);
        } else {
            for (int r = 0; r < R; ++r) y[t * yStride + r] = _mm512_reduce_add_ps(acc[t][r]);
        }
    }
}

// Q4_0 (18-byte blocks, k = -8) and Q4_1 (20-byte blocks with m), R rows x
// T tokens (tokens t0 .. t0 + T - 1 of `a`; t0 is a multiple of 4).
//   Q4_0: y = sum_blocks d * dx * dot(u - 8, xq)
//   Q4_1: y = sum_blocks d * dx * dot(u, xq) + m * (dx * sum xq)
template <int BlockBytes, bool HasMin, int R, int T>
inline void nibbleRows(const uint8_t* w, size_t rowBytes, int64_t nb, NibbleView a, int64_t t0,
                       __m512i qIdx, __m512i sIdx, float* y, int64_t yStride, int n) {
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    __m512 acc[T][R], mins[R];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t)
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) acc[t][r] = _mm512_setzero_ps();
    for (int r = 0; r < R; ++r) mins[r] = _mm512_setzero_ps();
    const int64_t groups = (nb + 3) / 4;
    const float* sbPass = a.sb + (t0 / kTokensPerPass) * groups * 16;
    for (int64_t g = 0; g < groups; ++g) {
        const int64_t bytes = std::min<int64_t>(4, nb - 4 * g) * BlockBytes;
        const __mmask64 k1 = byteMask(bytes), k2 = byteMask(bytes - 64);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const uint8_t* p = w + r * rowBytes + g * 4 * BlockBytes;
            const __m512i l1 = _mm512_maskz_loadu_epi8(k1, p), l2 = _mm512_maskz_loadu_epi8(k2, p + 64);
            const __m512i q = _mm512_permutex2var_epi8(l1, qIdx, l2);
            const __m512i s = _mm512_permutex2var_epi8(l1, sIdx, l2);
            const __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
            const __m512 d = _mm512_cvtph_ps(_mm512_castsi512_si256(s));
            if constexpr (HasMin)
                mins[r] = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm512_extracti64x4_epi64(s, 1)),
                                          _mm512_load_ps(sbPass + g * 16), mins[r]);
#pragma GCC unroll 8
            for (int t = 0; t < T; ++t) {
                const int64_t o = (t0 + t) * a.groups + g;
                const __m512i xlo = _mm512_load_si512(a.lo + o * 64), xhi = _mm512_load_si512(a.hi + o * 64);
                const __m512 dx = _mm512_load_ps(a.dx + o * 16);
                const __m512i start = HasMin ? _mm512_setzero_si512() : _mm512_load_si512(a.init + o * 16);
                const __m512i dot = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(start, lo, xlo), hi, xhi);
                acc[t][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, dx), acc[t][r]);
            }
        }
    }
    storeRows<R, T, HasMin>(acc, mins, y + t0 * yStride, yStride, n);
}

// All act.tokens tokens of R rows, in passes of up to kTokensPerPass tokens.
template <int BlockBytes, bool HasMin, int R>
inline void nibbleRowsAllTokens(const uint8_t* w, size_t rowBytes, int64_t nb, int64_t tokens,
                                NibbleView a, __m512i qIdx, __m512i sIdx, float* y, int64_t yStride,
                                int n) {
    for (int64_t t0 = 0; t0 < tokens; t0 += kTokensPerPass) {
        switch (std::min<int64_t>(kTokensPerPass, tokens - t0)) {
        case 4: nibbleRows<BlockBytes, HasMin, R, 4>(w, rowBytes, nb, a, t0, qIdx, sIdx, y, yStride, n); break;
        case 3: nibbleRows<BlockBytes, HasMin, R, 3>(w, rowBytes, nb, a, t0, qIdx, sIdx, y, yStride, n); break;
        case 2: nibbleRows<BlockBytes, HasMin, R, 2>(w, rowBytes, nb, a, t0, qIdx, sIdx, y, yStride, n); break;
        default: nibbleRows<BlockBytes, HasMin, R, 1>(w, rowBytes, nb, a, t0, qIdx, sIdx, y, yStride, n); break;
        }
    }
}

template <int BlockBytes, bool HasMin>
void rowsNibble(const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols, const QuantActivations& act, float* y,
                int64_t yStride) {
    const int64_t nb = cols / kQK;
    NibbleActivations& scratch = nibbleScratch();
    prepareNibble(act, nb, scratch);
    const NibbleView a = scratch.view;
    const __m512i qIdx = quantIndex<BlockBytes, HasMin ? 4 : 2>();
    const __m512i sIdx = scaleIndex<BlockBytes, 4>(0, HasMin ? 2 : 0);
    const RowStream stream(w, rows * rowBytes);
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4) {
        stream.ahead(w + r * rowBytes, 4 * rowBytes);
        nibbleRowsAllTokens<BlockBytes, HasMin, 4>(w + r * rowBytes, rowBytes, nb, act.tokens, a, qIdx, sIdx, y + r,
                                                   yStride, 4);
    }
    for (; r < rows; ++r)
        nibbleRowsAllTokens<BlockBytes, HasMin, 1>(w + r * rowBytes, rowBytes, nb, act.tokens, a, qIdx, sIdx, y + r,
                                                   yStride, 1);
}

// Q8_0: two 34-byte blocks per zmm, activations in their natural order.
// u = w + 128 for dpbusd; the dot starts from init = -128 * (the lane's sum of
// its 4 quants), which takes the shift back out. init: per token, `lanes` apart.
template <int R, int T>
inline void q8Rows(const uint8_t* w, size_t rowBytes, int64_t nb, const QuantActivations& act, const int32_t* init,
                   int64_t lanes, int64_t t0, __m512i qIdx, __m512i sIdx, float* y, int64_t yStride, int n) {
    constexpr int BlockBytes = 34;
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
    const int64_t cp = act.colsPadded;
    __m512 acc[T][R];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t)
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) acc[t][r] = _mm512_setzero_ps();
    const int64_t groups = (nb + 1) / 2;
    for (int64_t g = 0; g < groups; ++g) {
        const int64_t bytes = std::min<int64_t>(2, nb - 2 * g) * BlockBytes;
        const __mmask64 k1 = byteMask(bytes), k2 = byteMask(bytes - 64);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const uint8_t* p = w + r * rowBytes + g * 2 * BlockBytes;
            const __m512i l1 = _mm512_maskz_loadu_epi8(k1, p), l2 = _mm512_maskz_loadu_epi8(k2, p + 64);
            const __m512i u = _mm512_xor_si512(_mm512_permutex2var_epi8(l1, qIdx, l2), flip);
            const __m512 d = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutex2var_epi8(l1, sIdx, l2)));
#pragma GCC unroll 8
            for (int t = 0; t < T; ++t) {
                const int64_t tok = t0 + t;
                const __m512i xv = _mm512_loadu_si512(act.qs + tok * cp + g * 64);
                const __m512 dx = _mm512_loadu_ps(act.dx4 + tok * cp / 4 + g * 16);
                const __m512i dot = _mm512_dpbusd_epi32(_mm512_load_si512(init + tok * lanes + g * 16), u, xv);
                acc[t][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, dx), acc[t][r]);
            }
        }
    }
    storeRows<R, T, false>(acc, nullptr, y + t0 * yStride, yStride, n);
}

template <int R>
inline void q8RowsAllTokens(const uint8_t* w, size_t rowBytes, int64_t nb, const QuantActivations& act,
                            const int32_t* sb, int64_t lanes, __m512i qIdx, __m512i sIdx, float* y, int64_t yStride,
                            int n) {
    for (int64_t t0 = 0; t0 < act.tokens; t0 += kTokensPerPass) {
        switch (std::min<int64_t>(kTokensPerPass, act.tokens - t0)) {
        case 4: q8Rows<R, 4>(w, rowBytes, nb, act, sb, lanes, t0, qIdx, sIdx, y, yStride, n); break;
        case 3: q8Rows<R, 3>(w, rowBytes, nb, act, sb, lanes, t0, qIdx, sIdx, y, yStride, n); break;
        case 2: q8Rows<R, 2>(w, rowBytes, nb, act, sb, lanes, t0, qIdx, sIdx, y, yStride, n); break;
        default: q8Rows<R, 1>(w, rowBytes, nb, act, sb, lanes, t0, qIdx, sIdx, y, yStride, n); break;
        }
    }
}

void rowsQ8_0(const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols, const QuantActivations& act, float* y,
              int64_t yStride) {
    const int64_t nb = cols / kQK;
    // -128 * (x[4l] + .. + x[4l+3]) per lane l, per token (padding quants are zero).
    // Once per call per thread (see prepareNibble).
    thread_local std::vector<int32_t> initStore;
    thread_local uint64_t initSerial = 0;
    thread_local int64_t initNb = 0;
    const int64_t groups = (nb + 1) / 2, lanes = groups * 16;
    const int64_t need = act.tokens * lanes + 16;
    const bool fresh = act.serial == 0 || act.serial != initSerial || nb != initNb;
    if (static_cast<int64_t>(initStore.size()) < need) initStore.resize(static_cast<size_t>(need));
    int32_t* sb = reinterpret_cast<int32_t*>((reinterpret_cast<uintptr_t>(initStore.data()) + 63) / 64 * 64);
    initSerial = act.serial;
    initNb = nb;
    const __m512i k128 = _mm512_set1_epi8(static_cast<char>(0x80));
    for (int64_t t = 0; fresh && t < act.tokens; ++t)
        for (int64_t g = 0; g < groups; ++g) {
            const __m512i sum = _mm512_dpbusd_epi32(_mm512_setzero_si512(), k128, _mm512_loadu_si512(act.qs + t * act.colsPadded + g * 64));
            _mm512_store_si512(sb + t * lanes + g * 16, _mm512_sub_epi32(_mm512_setzero_si512(), sum));
        }
    alignas(64) uint8_t qIdxBytes[64];
    for (int i = 0; i < 64; ++i) qIdxBytes[i] = static_cast<uint8_t>((i / 32) * 34 + 2 + i % 32);
    const __m512i qIdx = _mm512_load_si512(qIdxBytes);
    const __m512i sIdx = scaleIndex<34, 2>(0, 0);
    const RowStream stream(w, rows * rowBytes);
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4) {
        stream.ahead(w + r * rowBytes, 4 * rowBytes);
        q8RowsAllTokens<4>(w + r * rowBytes, rowBytes, nb, act, sb, lanes, qIdx, sIdx, y + r, yStride, 4);
    }
    for (; r < rows; ++r) q8RowsAllTokens<1>(w + r * rowBytes, rowBytes, nb, act, sb, lanes, qIdx, sIdx, y + r, yStride, 1);
}

}  // namespace

// Declared in gemm_avx512.cpp's dispatcher: y[t * yStride + r] for t < act.tokens
// (1..kMaxTokens); false for types or token counts this file does not handle.
bool rowsFewTokensVbmi(GgmlType type, const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols,
                       const QuantActivations& act, float* y, int64_t yStride) {
    if (act.tokens < 1 || act.tokens > kMaxTokens) return false;
    switch (type) {
    case GgmlType::Q4_0: rowsNibble<18, false>(w, rowBytes, rows, cols, act, y, yStride); return true;
    case GgmlType::Q4_1: rowsNibble<20, true>(w, rowBytes, rows, cols, act, y, yStride); return true;
    case GgmlType::Q8_0: rowsQ8_0(w, rowBytes, rows, cols, act, y, yStride); return true;
    default: return false;
    }
}

}  // namespace kestrel::kernels
