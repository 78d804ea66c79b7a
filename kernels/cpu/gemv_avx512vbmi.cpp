// One-token products (GEMV) of Q4_0, Q4_1 and Q8_0 rows for AVX-512 VBMI+VNNI
// (compiled with -mavx512vbmi; called only after cpuid says so).
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
#include "quant_blocks.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace kestrel::kernels {
namespace {

// Per-call activation layout for the nibble formats, per group of 4 blocks:
// lo[64]: values 0-15 of each block, hi[64]: values 16-31; dx[16] and sb[16]:
// the block scale and kCorr * dx * sum(xq) / 4, each repeated over its 4 lanes.
struct NibbleActivations {
    std::vector<unsigned char> storage;
    const int8_t* lo = nullptr;
    const int8_t* hi = nullptr;
    const float* dx = nullptr;
    const float* sb = nullptr;
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

void prepareNibble(const QuantActivations& act, int64_t nb, float kCorr, NibbleActivations& out) {
    const int64_t groups = (nb + 3) / 4;
    const size_t bytes = static_cast<size_t>(groups) * (128 + 128) + 64;
    if (out.storage.size() < bytes) out.storage.resize(bytes);
    const auto base = (reinterpret_cast<uintptr_t>(out.storage.data()) + 63) / 64 * 64;
    auto* lo = reinterpret_cast<int8_t*>(base);
    auto* hi = lo + groups * 64;
    auto* dx = reinterpret_cast<float*>(hi + groups * 64);
    auto* sb = dx + groups * 16;
    alignas(64) uint8_t idxLo[64], idxHi[64];
    for (int i = 0; i < 64; ++i) {
        idxLo[i] = static_cast<uint8_t>((i / 16) * 32 + i % 16);
        idxHi[i] = static_cast<uint8_t>(idxLo[i] + 16);
    }
    const __m512i vLo = _mm512_load_si512(idxLo), vHi = _mm512_load_si512(idxHi);
    const int64_t cols = nb * kQK;
    for (int64_t g = 0; g < groups; ++g) {
        const int64_t c0 = g * 128;
        const __m512i a = _mm512_maskz_loadu_epi8(byteMask(cols - c0), act.qs + c0);
        const __m512i b = _mm512_maskz_loadu_epi8(byteMask(cols - c0 - 64), act.qs + c0 + 64);
        _mm512_store_si512(lo + g * 64, _mm512_permutex2var_epi8(a, vLo, b));
        _mm512_store_si512(hi + g * 64, _mm512_permutex2var_epi8(a, vHi, b));
        for (int l = 0; l < 16; ++l) {
            const int64_t blk = 4 * g + l / 4;
            const bool in = blk < nb;
            dx[g * 16 + l] = in ? act.dx4[blk * 8] : 0.0f;
            sb[g * 16 + l] = in ? kCorr * 0.25f * (act.s16[2 * blk] + act.s16[2 * blk + 1]) : 0.0f;
        }
    }
    out.lo = lo;
    out.hi = hi;
    out.dx = dx;
    out.sb = sb;
}

int prefetchDistance() {
    static const int d = std::getenv("KESTREL_PF_DIST") ? std::atoi(std::getenv("KESTREL_PF_DIST")) : 4096;
    return d;
}

// The stream of one call's rows: every cache line is prefetched `distance`
// bytes before the kernel reads it. The first `distance` bytes are requested
// all at once on entry (a product's weights rarely follow the previous
// product's in memory, so nothing has brought them in), and nothing past the
// end is requested (that would be another thread's rows or another tensor).
class RowStream {
public:
    RowStream(const uint8_t* begin, size_t bytes) : end_(begin + bytes), d_(prefetchDistance()) {
        if (d_ > 0) prefetch(begin, std::min<size_t>(bytes, static_cast<size_t>(d_)));
    }
    // Called before reading [p, p + bytes).
    void ahead(const uint8_t* p, size_t bytes) const {
        if (d_ > 0 && end_ - p > d_) prefetch(p + d_, std::min<size_t>(bytes, static_cast<size_t>(end_ - p - d_)));
    }

private:
    static void prefetch(const uint8_t* p, size_t bytes) {
        for (size_t o = 0; o < bytes; o += 64) _mm_prefetch(reinterpret_cast<const char*>(p + o), _MM_HINT_T0);
    }
    const uint8_t* end_;
    int d_;
};

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

// Q4_0 (18-byte blocks, k = -8) and Q4_1 (20-byte blocks with m).
//   y = sum_blocks d * dx * dot(u, xq) + c * (dx * sum xq),  c = m (Q4_1) or -8 d (Q4_0).
template <int BlockBytes, bool HasMin, int R>
inline void nibbleRows(const uint8_t* w, size_t rowBytes, int64_t nb, const NibbleActivations& a, __m512i qIdx,
                       __m512i sIdx, float* y, int n) {
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    const int64_t groups = (nb + 3) / 4;
    for (int64_t g = 0; g < groups; ++g) {
        const int64_t bytes = std::min<int64_t>(4, nb - 4 * g) * BlockBytes;
        const __mmask64 k1 = byteMask(bytes), k2 = byteMask(bytes - 64);
        const __m512i xlo = _mm512_load_si512(a.lo + g * 64), xhi = _mm512_load_si512(a.hi + g * 64);
        const __m512 dx = _mm512_load_ps(a.dx + g * 16), sb = _mm512_load_ps(a.sb + g * 16);
        for (int r = 0; r < R; ++r) {
            const uint8_t* p = w + r * rowBytes + g * 4 * BlockBytes;
            const __m512i l1 = _mm512_maskz_loadu_epi8(k1, p), l2 = _mm512_maskz_loadu_epi8(k2, p + 64);
            const __m512i q = _mm512_permutex2var_epi8(l1, qIdx, l2);
            const __m512i s = _mm512_permutex2var_epi8(l1, sIdx, l2);
            const __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
            const __m512i dot = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, xlo), hi, xhi);
            const __m512 d = _mm512_cvtph_ps(_mm512_castsi512_si256(s));
            acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, dx), acc[r]);
            if constexpr (HasMin)
                acc[r] = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm512_extracti64x4_epi64(s, 1)), sb, acc[r]);
            else
                acc[r] = _mm512_fmadd_ps(d, sb, acc[r]);
        }
    }
    if constexpr (R == 4) {
        store4(acc, y, n);
    } else {
        for (int r = 0; r < R; ++r) y[r] = _mm512_reduce_add_ps(acc[r]);
    }
}

template <int BlockBytes, bool HasMin>
void rowsNibble(const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols, const QuantActivations& act, float* y) {
    const int64_t nb = cols / kQK;
    NibbleActivations& a = nibbleScratch();
    prepareNibble(act, nb, HasMin ? 1.0f : -8.0f, a);
    const __m512i qIdx = quantIndex<BlockBytes, HasMin ? 4 : 2>();
    const __m512i sIdx = scaleIndex<BlockBytes, 4>(0, HasMin ? 2 : 0);
    const RowStream stream(w, rows * rowBytes);
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4) {
        stream.ahead(w + r * rowBytes, 4 * rowBytes);
        nibbleRows<BlockBytes, HasMin, 4>(w + r * rowBytes, rowBytes, nb, a, qIdx, sIdx, y + r, 4);
    }
    for (; r < rows; ++r) nibbleRows<BlockBytes, HasMin, 1>(w + r * rowBytes, rowBytes, nb, a, qIdx, sIdx, y + r, 1);
}

// Q8_0: two 34-byte blocks per zmm, activations in their natural order.
// u = w + 128 for dpbusd; the shift comes back as -128 * d * (dx * sum xq).
template <int R>
inline void q8Rows(const uint8_t* w, size_t rowBytes, int64_t nb, const QuantActivations& act, const float* sb,
                   __m512i qIdx, __m512i sIdx, float* y, int n) {
    constexpr int BlockBytes = 34;
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    const int64_t groups = (nb + 1) / 2;
    for (int64_t g = 0; g < groups; ++g) {
        const int64_t bytes = std::min<int64_t>(2, nb - 2 * g) * BlockBytes;
        const __mmask64 k1 = byteMask(bytes), k2 = byteMask(bytes - 64);
        const __m512i xv = _mm512_loadu_si512(act.qs + g * 64);
        const __m512 dx = _mm512_loadu_ps(act.dx4 + g * 16), sv = _mm512_load_ps(sb + g * 16);
        for (int r = 0; r < R; ++r) {
            const uint8_t* p = w + r * rowBytes + g * 2 * BlockBytes;
            const __m512i l1 = _mm512_maskz_loadu_epi8(k1, p), l2 = _mm512_maskz_loadu_epi8(k2, p + 64);
            const __m512i u = _mm512_xor_si512(_mm512_permutex2var_epi8(l1, qIdx, l2), flip);
            const __m512 d = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutex2var_epi8(l1, sIdx, l2)));
            const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, xv);
            acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, dx), acc[r]);
            acc[r] = _mm512_fmadd_ps(d, sv, acc[r]);
        }
    }
    if constexpr (R == 4) {
        store4(acc, y, n);
    } else {
        for (int r = 0; r < R; ++r) y[r] = _mm512_reduce_add_ps(acc[r]);
    }
}

void rowsQ8_0(const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols, const QuantActivations& act, float* y) {
    const int64_t nb = cols / kQK;
    // -128 * s16 / 4 per lane (lane l of a 64-value group covers values 4l..4l+3: s16 index l/4).
    thread_local std::vector<float> sbStore;
    const int64_t lanes = (nb + 1) / 2 * 16;
    if (static_cast<int64_t>(sbStore.size()) < lanes + 16) sbStore.resize(static_cast<size_t>(lanes + 16));
    float* sb = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(sbStore.data()) + 63) / 64 * 64);
    for (int64_t i = 0; i < lanes; ++i) sb[i] = i / 4 < nb * 2 ? -32.0f * act.s16[i / 4] : 0.0f;
    alignas(64) uint8_t qIdxBytes[64];
    for (int i = 0; i < 64; ++i) qIdxBytes[i] = static_cast<uint8_t>((i / 32) * 34 + 2 + i % 32);
    const __m512i qIdx = _mm512_load_si512(qIdxBytes);
    const __m512i sIdx = scaleIndex<34, 2>(0, 0);
    const RowStream stream(w, rows * rowBytes);
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4) {
        stream.ahead(w + r * rowBytes, 4 * rowBytes);
        q8Rows<4>(w + r * rowBytes, rowBytes, nb, act, sb, qIdx, sIdx, y + r, 4);
    }
    for (; r < rows; ++r) q8Rows<1>(w + r * rowBytes, rowBytes, nb, act, sb, qIdx, sIdx, y + r, 1);
}

}  // namespace

// Declared in gemm_avx512.cpp's dispatcher; false for types this file does not handle.
bool rowsOneTokenVbmi(GgmlType type, const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols,
                      const QuantActivations& act, float* y) {
    switch (type) {
    case GgmlType::Q4_0: rowsNibble<18, false>(w, rowBytes, rows, cols, act, y); return true;
    case GgmlType::Q4_1: rowsNibble<20, true>(w, rowBytes, rows, cols, act, y); return true;
    case GgmlType::Q8_0: rowsQ8_0(w, rowBytes, rows, cols, act, y); return true;
    default: return false;
    }
}

}  // namespace kestrel::kernels
