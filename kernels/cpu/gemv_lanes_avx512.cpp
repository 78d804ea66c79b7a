// Products (GEMV) of Q4_0, Q4_1, Q5_0, Q8_0 and Q4_K rows in the lanes layout
// (lanes_layout.h) with 1 to 16 tokens, for AVX-512 VNNI (compiled with
// -mavx512bw/vnni; called only after cpuid says so).
//
// Per group of 16 blocks and row: 4 (nibbles) or 8 (Q8_0) plain vector loads,
// nibbles split with and/shift, the scales converted once; then per token 8
// vpdpbusd into one vector whose lane l is block l's integer dot, and one
// convert + scale + FMA (+ one FMA for Q4_1's minimum) for all 16 blocks.
// vpdpbusd is then most of the work, which is what a decode step of several
// sequences should cost: the weights are decoded once, only the multiply-adds
// repeat per token.
//
// Activations are rearranged once per call (per thread) into the same lane
// order: per token and group, the quant vectors that pair with the weight
// vectors, the block scale of each lane, the lane's sum of quants (for the
// zero points) and that sum times the scale (for Q4_1's minimum).
//
// Two rows at a time, tokens in passes of up to 4 (later passes find the rows in L1): the rows' decoded vectors
// (16 registers for a full group) are applied to each token in turn, so a
// token's activation vectors are loaded once per two rows. Every (row, token)
// output sees the same operations in the same order whatever the token count
// (and for a pair's first row whether or not it is paired; rows pair from even
// indices, so a second row is never alone), so a token's outputs are bit for bit
// those of a one-token call.
#include "lanes_activations.h"
#include "lanes_factors_avx512.h"
#include "lanes_layout.h"
#include "quant_blocks.h"
#include "row_stream.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

namespace kestrel::kernels {
namespace {


// Whether a row pair shares one vector for this group (pairedTail): a 4-slot group of 1-2
// blocks fills only lanes 0-7. The activation preparation and the product both ask.
inline bool pairsTail(int slots, int blocks) { return slots == 4 && blocks <= 2; }

template <int Slots>
void prepareGroup(const int8_t* qs, const float* dx4, int blocks, unsigned char* out) {
    constexpr int L = 16 / Slots;
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i block = _mm512_srli_epi32(lane, L == 1 ? 0 : 2);  // l / L
    const __m512i sub = _mm512_and_si512(lane, _mm512_set1_epi32(L - 1));
    const __mmask16 present = static_cast<__mmask16>(blocks * L >= 16 ? 0xffff : (1u << (blocks * L)) - 1);
    const __m512i first = _mm512_add_epi32(_mm512_slli_epi32(block, 3), sub);  // dword of k = 0
    const __m512i ones = _mm512_set1_epi8(1);
    // A group of at most 2 blocks (lanes 0-7) repeats its lanes in 8-15, where a row pair's
    // second row keeps its blocks (pairedTail); a lone row's lanes 8-15 have zero scales.
    const bool paired = pairsTail(Slots, blocks);
    auto spread = [paired](__m512i v) { return paired ? _mm512_shuffle_i64x2(v, v, 0x44) : v; };
    __m512i sum = _mm512_setzero_si512();
    for (int k = 0; k < lanesActivationVectors(Slots); ++k) {
        const __m512i idx = _mm512_add_epi32(first, _mm512_set1_epi32(k * L));
        const __m512i v = spread(_mm512_mask_i32gather_epi32(_mm512_setzero_si512(), present, idx, qs, 4));
        _mm512_storeu_si512(out + k * 64, v);
        sum = _mm512_dpbusd_epi32(sum, ones, v);
    }
    const __m512 dx = _mm512_castsi512_ps(
        spread(_mm512_castps_si512(_mm512_mask_i32gather_ps(_mm512_setzero_ps(), present, _mm512_slli_epi32(block, 3), dx4, 4))));
    _mm512_storeu_ps(reinterpret_cast<float*>(out + lanesScalesAt(Slots)), dx);
    _mm512_storeu_si512(out + lanesSumsAt(Slots), sum);
    _mm512_storeu_ps(reinterpret_cast<float*>(out + lanesScaledSumsAt(Slots)), _mm512_mul_ps(dx, _mm512_cvtepi32_ps(sum)));
}

// The group rearranged with gathers (lanes_activations.h has the layout).
void prepareGroupAvx512(const int8_t* qs, const float* dx4, int slots, int blocks, unsigned char* out) {
    if (slots == 16) prepareGroup<16>(qs, dx4, blocks, out);
    else prepareGroup<4>(qs, dx4, blocks, out);
}

inline __mmask64 byteMask(int n) { return n >= 64 ? ~0ull : (1ull << n) - 1; }

// A lane's integer dot before its products: the zero points' share, from the lane's sum of
// activation quants at `sums` (Q4_0 weights are u - 8, Q5_0's u - 16, Q8_0's are stored as u = q + 128).
template <GgmlType Type>
inline __m512i zeroPointStart(const unsigned char* sums) {
    if constexpr (lanesZeroPoint(Type) == 0) {
        return _mm512_setzero_si512();
    } else {
        constexpr int shift = std::countr_zero(static_cast<unsigned>(lanesZeroPoint(Type)));  // x 8, 16 or 128
        return _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(_mm512_loadu_si512(sums), shift));
    }
}

// 16 floats of a group's activation bytes (its scales, or its scaled sums).
inline __m512 laneFloats(const unsigned char* p) { return _mm512_loadu_ps(reinterpret_cast<const float*>(p)); }

// Q5_0's fifth bits. Quant vector v of a group holds, in dword d of each 128-bit lane, the
// quant bytes 4u .. 4u + 3 of its block, u = v for 16-slot groups (one lane a block) and
// u = d for 4-slot groups (four lanes a block): values 4u + i in the low nibbles, 4u + i + 16
// in the high ones, whose fifth bits are bits 4 (u % 2) + i of byte u / 2 (+ 2 for the high
// nibbles) of the lane's 32 high bits. vpshufb puts that byte in each of the dword's bytes,
// vptestmb picks each byte's bit, and 16 is added where it is set.
struct HighBitTable {
    uint8_t shuffle[64], test[64];
};
constexpr HighBitTable highBitTable(int slots, int v, bool high) {
    HighBitTable t{};
    for (int b = 0; b < 64; ++b) {
        const int d = (b / 4) % 4, i = b % 4, u = slots == 16 ? v : d;
        t.shuffle[b] = static_cast<uint8_t>(4 * d + u / 2 + (high ? 2 : 0));
        t.test[b] = static_cast<uint8_t>(1u << (4 * (u % 2) + i));
    }
    return t;
}
constexpr HighBitTable kHighBits16[4][2] = {
    {highBitTable(16, 0, false), highBitTable(16, 0, true)}, {highBitTable(16, 1, false), highBitTable(16, 1, true)},
    {highBitTable(16, 2, false), highBitTable(16, 2, true)}, {highBitTable(16, 3, false), highBitTable(16, 3, true)}};
constexpr HighBitTable kHighBits4[2] = {highBitTable(4, 0, false), highBitTable(4, 0, true)};

// Four dwords (a 4-slot group's high bits, one a block), each repeated over its block's 4 lanes.
inline __m512i fourWordsOverLanes(__m128i words) {
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    return _mm512_permutexvar_epi32(_mm512_srli_epi32(lane, 2), _mm512_castsi128_si512(words));
}
// The high bits of a group's first `blocks` blocks (1-4) at p, zero past them.
inline __m128i blockWords(const uint8_t* p, int blocks) {
    return _mm_maskz_loadu_epi32(static_cast<__mmask8>((1u << blocks) - 1), p);
}

template <int Slots>
inline __m512i withHighBits(__m512i nibbles, __m512i highBits, int v, bool high) {
    const HighBitTable& t = Slots == 16 ? kHighBits16[v][high] : kHighBits4[high];
    return addFifthBits(nibbles, highBits, _mm512_loadu_si512(t.shuffle), _mm512_loadu_si512(t.test));
}

// One group for R rows and T tokens: acc[t][r] += the group's share of row r . token t.
// w: the group's bytes in row 0; x: token 0's activation group (tokens tokenBytes apart).
template <GgmlType Type, int Slots, int R, int T>
inline void groupProduct(const uint8_t* w, size_t rowBytes, int blocks, const unsigned char* x, size_t tokenBytes,
                         __m512 (&acc)[T][R]) {
    constexpr bool kNibbles = Type != GgmlType::Q8_0;
    constexpr int V = kNibbles ? Slots / 4 : Slots / 2;  // weight vectors
    const int vectorBytes = 4 * (16 / Slots) * blocks;
    const int scalesAt = lanesScalesOffset(Type, LanesGroup{Slots, blocks});
    const __mmask64 k = byteMask(vectorBytes);
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    __m512i lo[R][V], hi[R][kNibbles ? V : 1];
    __m512 d[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
        const uint8_t* p = w + r * rowBytes;
        [[maybe_unused]] __m512i qh = _mm512_setzero_si512();  // Q5_0's high bits, lane by lane
        if constexpr (Type == GgmlType::Q5_0)
            qh = Slots == 16 ? _mm512_loadu_si512(p + V * 64) : fourWordsOverLanes(blockWords(p + V * vectorBytes, blocks));
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) {
            const __m512i q = Slots == 16 ? _mm512_loadu_si512(p + v * 64) : _mm512_maskz_loadu_epi8(k, p + v * vectorBytes);
            if constexpr (kNibbles) {
                lo[r][v] = _mm512_and_si512(q, m4);
                hi[r][v] = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
            } else {
                lo[r][v] = q;
            }
            if constexpr (Type == GgmlType::Q5_0) {
                lo[r][v] = withHighBits<Slots>(lo[r][v], qh, v, false);
                hi[r][v] = withHighBits<Slots>(hi[r][v], qh, v, true);
            }
        }
        d[r] = laneScale<Type, Slots>(p + scalesAt);
    }
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) {
        const unsigned char* a = x + t * tokenBytes;
        const __m512 dx = laneFloats(a + lanesScalesAt(Slots));
        const __m512i start = zeroPointStart<Type>(a + lanesSumsAt(Slots));
        __m512i dot[R];
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) dot[r] = start;
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) {
            __m512i xl = _mm512_loadu_si512(a + v * 64);
            // With several tokens all 32 registers are taken (16 decoded weight vectors, 8
            // accumulators, scales), and GCC then folds this load into each row's vpdpbusd:
            // two loads per vector, which made the loads, not the multiplies, the limit. The
            // empty asm pins the vector in a register: a whole-model 4-token step 6.3-6.4 ->
            // 4.7-5.9 ms (kestrel-bench-matmul). One token keeps the folded form: pinned there
            // too, the whole-model one-token rate from DRAM fell from 281-295 to 250-269 tok/s.
            if constexpr (R > 1 && T > 1) asm("" : "+v"(xl));
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) dot[r] = _mm512_dpbusd_epi32(dot[r], lo[r][v], xl);
            if constexpr (kNibbles) {
                __m512i xh = _mm512_loadu_si512(a + (Slots / 4 + v) * 64);
                if constexpr (R > 1 && T > 1) asm("" : "+v"(xh));
#pragma GCC unroll 8
                for (int r = 0; r < R; ++r) dot[r] = _mm512_dpbusd_epi32(dot[r], hi[r][v], xh);
            }
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r)
            acc[t][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r]), _mm512_mul_ps(d[r], dx), acc[t][r]);
    }
    // Q4_1's minimum, m * (dx * sum of the lane's quants), once the decoded weights are dead:
    // with the rows' minima live through the token loop as well, the accumulators spilled
    // (4 tokens of 576-wide rows ~15 % slower). Each (row, token) still adds its product
    // term and then its minimum term, the one-token order.
    if constexpr (lanesHasMinimum(Type)) {
        __m512 m[R];
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) m[r] = laneMinimum<Type, Slots>(w + r * rowBytes + scalesAt);
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
            const __m512 sx = laneFloats(x + t * tokenBytes + lanesScaledSumsAt(Slots));
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) acc[t][r] = _mm512_fmadd_ps(m[r], sx, acc[t][r]);
        }
    }
}

// The last group of a row pair when it holds 1 or 2 blocks (SmolLM2's 576-wide rows: 16 + 2):
// row 0's blocks in lanes 0-7 and row 1's in lanes 8-15 of one vector, so the pair costs one
// set of integer dots and one float scaling per token instead of two sets of half-empty
// vectors (it cost as much as a full group: 1536 x 576 took 31 % longer than x 512). Row 0
// adds only its lanes, as groupProduct<R = 1> adds them for a lone row (whose lanes 8-15 have
// zero scales), so a row's sum does not depend on its pairing; row 1 is always paired.
template <GgmlType Type, int T>
inline void pairedTail(const uint8_t* w, size_t rowBytes, int blocks, const unsigned char* x, size_t tokenBytes,
                       __m512 (&acc)[T][2]) {
    constexpr bool kNibbles = Type != GgmlType::Q8_0;
    constexpr int V = kNibbles ? 1 : 2;  // weight vectors of a 4-slot group
    const int vectorBytes = 16 * blocks;  // 4 lanes of 4 bytes per block
    const __mmask32 k = static_cast<__mmask32>((1ull << vectorBytes) - 1);
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    constexpr __mmask16 kRow0 = 0x00ff, kRow1 = 0xff00;
    auto both = [&](int offset) {  // 32 bytes of each row, row 1's in the upper half
        return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_maskz_loadu_epi8(k, w + offset)),
                                  _mm256_maskz_loadu_epi8(k, w + rowBytes + offset), 1);
    };
    // f16 slot scales 0 and 1 of each row (4 bytes at `offset`), each over its 4 lanes.
    auto scales = [&](int offset) {
        int32_t r0, r1;
        std::memcpy(&r0, w + offset, 4);
        std::memcpy(&r1, w + rowBytes + offset, 4);
        return fourScalesOverLanes(_mm_insert_epi32(_mm_cvtsi32_si128(r0), r1, 1));
    };
    const int scalesAt = lanesScalesOffset(Type, LanesGroup{4, blocks});
    __m512i lo[V], hi[kNibbles ? V : 1];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) {
        const __m512i q = both(v * vectorBytes);
        if constexpr (kNibbles) {
            lo[v] = _mm512_and_si512(q, m4);
            hi[v] = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
        } else {
            lo[v] = q;
        }
        if constexpr (Type == GgmlType::Q5_0) {  // lanes 8-15 are row 1's, 4 lanes a block as in a 4-slot group
            const __m512i qh = fourWordsOverLanes(
                _mm_unpacklo_epi64(blockWords(w + V * vectorBytes, blocks), blockWords(w + rowBytes + V * vectorBytes, blocks)));
            lo[v] = withHighBits<4>(lo[v], qh, v, false);
            hi[v] = withHighBits<4>(hi[v], qh, v, true);
        }
    }
    const __m512 d = scales(scalesAt);
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) {
        const unsigned char* a = x + t * tokenBytes;
        const __m512 dx = laneFloats(a + lanesScalesAt(4));
        __m512i dot = zeroPointStart<Type>(a + lanesSumsAt(4));
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) {
            dot = _mm512_dpbusd_epi32(dot, lo[v], _mm512_loadu_si512(a + v * 64));
            if constexpr (kNibbles) dot = _mm512_dpbusd_epi32(dot, hi[v], _mm512_loadu_si512(a + (1 + v) * 64));
        }
        const __m512 p = _mm512_cvtepi32_ps(dot), s = _mm512_mul_ps(d, dx);
        acc[t][0] = _mm512_mask3_fmadd_ps(p, s, acc[t][0], kRow0);
        acc[t][1] = _mm512_mask3_fmadd_ps(p, s, acc[t][1], kRow1);
    }
    if constexpr (Type == GgmlType::Q4_1) {
        const __m512 m = scales(scalesAt + 8);
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
            const __m512 sx = laneFloats(x + t * tokenBytes + lanesScaledSumsAt(4));
            acc[t][0] = _mm512_mask3_fmadd_ps(m, sx, acc[t][0], kRow0);
            acc[t][1] = _mm512_mask3_fmadd_ps(m, sx, acc[t][1], kRow1);
        }
    }
}

// y[t * yStride + r] = the sum of acc[t][r]'s 16 lanes. Several sums at once
// reduce through shuffles that carry two, four, then eight accumulators per
// vector (about 3 operations per accumulator instead of 8), adding the lanes
// in _mm512_reduce_add_ps's order ([i] + [i + 8], then + 4, + 2, + 1), so the
// sums are bit for bit those of the one-at-a-time reduction.
template <int R, int T>
inline void storeRowSums(__m512 (&acc)[T][R], float* y, int64_t yStride) {
    if constexpr (R * T < 4) {
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t)
#pragma GCC unroll 2
            for (int r = 0; r < R; ++r) y[t * yStride + r] = _mm512_reduce_add_ps(acc[t][r]);
    } else {
        // Token t's row r as a tile of 4 tokens x 2 rows (zeros past T or R); its sum lands in out[4 t + r].
        auto at = [&](int t, int r) { return t < T && r < R ? acc[t][r] : _mm512_setzero_ps(); };
        // Halves: pair (a, b) -> [a.lo + a.hi | b.lo + b.hi] (8 lanes each).
        auto halves = [](__m512 a, __m512 b) {
            return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xee));
        };
        // Quarters: ([a | b], [c | d]) -> 4 lanes each of a, b, c, d in 128-bit lanes 0-3.
        auto quarters = [](__m512 ab, __m512 cd) {
            return _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, 0x88), _mm512_shuffle_f32x4(ab, cd, 0xdd));
        };
        const __m512 row0 = quarters(halves(at(0, 0), at(1, 0)), halves(at(2, 0), at(3, 0)));
        const __m512 row1 = quarters(halves(at(0, 1), at(1, 1)), halves(at(2, 1), at(3, 1)));
        // 128-bit lane t: [row0 (0+2), row1 (0+2), row0 (1+3), row1 (1+3)], then the two pairs added.
        const __m512 pairs = _mm512_add_ps(_mm512_unpacklo_ps(row0, row1), _mm512_unpackhi_ps(row0, row1));
        const __m512 sums = _mm512_add_ps(pairs, _mm512_permute_ps(pairs, 0x4e));
        alignas(64) float out[16];
        _mm512_store_ps(out, sums);
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t)
#pragma GCC unroll 2
            for (int r = 0; r < R; ++r) y[t * yStride + r] = out[4 * t + r];
    }
}

// R rows x T tokens (tokens t0 .. t0 + T - 1) over the whole row.
template <GgmlType Type, int R, int T>
void rowsPass(const uint8_t* w, size_t rowBytes, int64_t nb, const LanesActivations& a, int64_t t0, float* y,
              int64_t yStride) {
    __m512 acc[T][R];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t)
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) acc[t][r] = _mm512_setzero_ps();
    const unsigned char* x = a.base + t0 * a.tokenBytes;
    forEachLanesGroup(nb, [&](LanesGroup g, int64_t) {
        if (g.slots == 16) {
            groupProduct<Type, 16, R, T>(w, rowBytes, g.blocks, x, a.tokenBytes, acc);
        } else if constexpr (R == 2 && Type != GgmlType::Q4_K) {  // Q4_K's 4-slot groups are always full
            if (pairsTail(g.slots, g.blocks)) pairedTail<Type, T>(w, rowBytes, g.blocks, x, a.tokenBytes, acc);
            else groupProduct<Type, 4, R, T>(w, rowBytes, g.blocks, x, a.tokenBytes, acc);
        } else {
            groupProduct<Type, 4, R, T>(w, rowBytes, g.blocks, x, a.tokenBytes, acc);
        }
        w += lanesGroupBytes(Type, g);
        x += lanesActivationGroupBytes(g.slots);
    });
    storeRowSums<R, T>(acc, y + t0 * yStride, yStride);
}

template <GgmlType Type, int R>
void rowsAllTokens(const uint8_t* w, size_t rowBytes, int64_t nb, int64_t tokens, const LanesActivations& a, float* y,
                   int64_t yStride) {
    forLanesTokenPasses(tokens, [&](auto t, int64_t t0) {
        rowsPass<Type, R, decltype(t)::value>(w, rowBytes, nb, a, t0, y, yStride);
    });
}

template <GgmlType Type>
void lanesRows(const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols, const QuantActivations& act, float* y,
               int64_t yStride) {
    const int64_t nb = cols / kQK;
    LanesActivations& a = lanesActivationScratch();
    prepareLanesActivations(act, nb, a, prepareGroupAvx512);
    const RowStream stream(w, rows * rowBytes);
    int64_t r = 0;
    for (; r + 2 <= rows; r += 2) {
        stream.ahead(w + r * rowBytes, 2 * rowBytes);
        rowsAllTokens<Type, 2>(w + r * rowBytes, rowBytes, nb, act.tokens, a, y + r, yStride);
    }
    if (r < rows) rowsAllTokens<Type, 1>(w + r * rowBytes, rowBytes, nb, act.tokens, a, y + r, yStride);
}

}  // namespace

// y[t * yStride + r] for t < act.tokens (1..kLanesMaxTokens) and rows in the
// lanes layout; false for types or token counts this file does not handle.
bool rowsLanesAvx512(GgmlType type, const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols,
                     const QuantActivations& act, float* y, int64_t yStride) {
    return withLanesCall(type, act.tokens, [&](auto t) { lanesRows<decltype(t)::value>(w, rowBytes, rows, cols, act, y, yStride); });
}

}  // namespace kestrel::kernels
