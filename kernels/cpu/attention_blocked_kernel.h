// Internal to kernels/cpu: the query-block attention kernel (attention_blocked.h)
// written once over a vector type V of 16 float lanes, included by
// attention_blocked_avx512.cpp (V: one zmm register, two of them a block) and
// attention_blocked_avx2.cpp (V: two ymm registers, one a block). Everything here is
// in an unnamed namespace, so each file's copy, compiled for its own ISA, stays its own.
//
// Lane i of the block's 16 * V::kGroups lanes is query i: token i / group, head
// kvHead * group + i % group (lanes past the block's queries repeat its last query
// and are not stored). Keys are taken in tiles of 2048 / D (8 KB of floats for K and
// as much for V, in the thread's scratch):
// - the tile's K and V rows are converted to floats once (f16 and 8-bit storage);
// - scores: per key, vectors over the queries, D FMAs of the queries' transposed
//   values (times cfg.scale, applied once) with the key's value d broadcast (one
//   broadcast feeds every vector of the block);
// - online softmax lane by lane; a key a query may not see (causal order, the
//   window, past the tile's end) gets weight 0 exactly;
// - values: the output is kept transposed as well (o[d] over the queries),
//   V::kValueDims dims at a time in registers, each key's weight vectors times its
//   value d broadcast.
// The sums run in another order than the per-query kernels', so results agree
// with theirs to rounding (tst_cpu_ops checks both against a double reference).
//
// V provides: F (16 floats), I (16 ints), M (a lane mask); kGroups (vectors a block),
// kScoredKeys and kValueDims (accumulators per vector the registers hold); zero, negInf,
// load, store, loadInts, add, sub, mul, max, exp, divide, broadcast(p) (*p in every lane,
// of the type fma takes), fma(a, b, acc) = acc + a * b; visible(pos, first, last) (lanes
// with first <= pos <= last), noLanes, keep(x, m, fill) (x where m, else fill),
// zeroUnless(x, m), anyDiffer(a, b), zeroWhereNegInf(x); convert16<Type>(slab, scales,
// e, dst): 16 values of a K or V slab from element e as floats at dst.
#pragma once

#include "attention_blocked.h"

#include <algorithm>
#include <limits>
#include <memory>

namespace kestrel::kernels {
namespace {

// L lanes: V::kGroups vectors of 16.
template <int D, int L>
struct BlockScratch {
    static constexpr int kKeys = 2048 / D;  // keys per tile: 32, 16 or 8
    alignas(64) float qt[D][L];             // queries transposed, scaled
    alignas(64) float k[kKeys][D];
    alignas(64) float v[kKeys][D];
    alignas(64) float p[kKeys][L];  // scores, then weights
    alignas(64) float o[D][L];      // weighted sums, transposed
};

// The thread's scratch (allocated on first use rather than as thread-local storage
// every thread of the process would carry).
template <int D, int L>
BlockScratch<D, L>& blockScratch() {
    thread_local std::unique_ptr<BlockScratch<D, L>> s;
    if (!s) s = std::make_unique<BlockScratch<D, L>>();
    return *s;
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
template <typename V, int D, KvType Type>
void loadRows(const KvView& c, const void* slab, const float* scales, const int32_t* table, int64_t j, int n,
              int64_t col, float* dst) {
    forEachRow(c, table, j, n, col, [&](int i, int64_t e) {
#pragma GCC unroll 16
        for (int x = 0; x < D; x += 16) V::template convert16<Type>(slab, scales, e + x, dst + i * D + x);
    });
}

// Requests positions [j, j + n) of the K and V rows into L1, a tile ahead of their
// conversion (rows of the pool's blocks have no stride the hardware could follow).
template <int D, KvType Type>
void prefetchRows(const KvView& c, const int32_t* table, int64_t j, int n, int64_t col) {
    constexpr int kElem = kvTypeBytes(Type);
    forEachRow(c, table, j, n, col, [&](int, int64_t e) {
#pragma GCC unroll 16
        for (int x = 0; x < D * kElem; x += 64) {
            __builtin_prefetch(static_cast<const char*>(c.k) + e * kElem + x, 0, 3);
            __builtin_prefetch(static_cast<const char*>(c.v) + e * kElem + x, 0, 3);
        }
    });
}

template <typename V, int D, KvType Type>
void attendBlock(const float* q, const int32_t* positions, const KvView& c, const AttentionConfig& cfg,
                 const QueryBlock& b, float* out) {
    using F = typename V::F;
    constexpr int G = V::kGroups;  // vectors of 16 lanes
    constexpr int L = 16 * G;
    using Scratch = BlockScratch<D, L>;
    constexpr int kKeys = Scratch::kKeys;
    constexpr int kScored = std::min(kKeys, V::kScoredKeys);  // keys scored at once (accumulators)
    constexpr int kDims = V::kValueDims;                      // output dims in registers at once
    Scratch& s = blockScratch<D, L>();
    const int group = cfg.heads / cfg.kvHeads;
    const int queries = b.tokens * group;
    alignas(64) int32_t lastOf[L], firstOf[L];
    for (int lane = 0; lane < L; ++lane) {
        const int qi = std::min(lane, queries - 1), tb = qi / group, g = qi % group;
        const float* src = q + ((b.t0 + tb) * cfg.heads + b.kvHead * group + g) * D;
        for (int d = 0; d < D; ++d) s.qt[d][lane] = src[d] * cfg.scale;
        lastOf[lane] = positions[b.t0 + tb];
        firstOf[lane] = cfg.slidingWindow > 0 ? std::max(0, lastOf[lane] - cfg.slidingWindow + 1) : 0;
    }
    typename V::I lastV[G], firstV[G];
    for (int x = 0; x < G; ++x) {
        lastV[x] = V::loadInts(lastOf + 16 * x);
        firstV[x] = V::loadInts(firstOf + 16 * x);
    }
    // Positions grow along the block, so lane 0 has the smallest first and last, the last query the largest.
    const int64_t kFirst = firstOf[0], kLast = lastOf[queries - 1];
    const int64_t minLast = lastOf[0], maxFirst = firstOf[queries - 1];
    const int32_t* table = c.tableOf(b.t0);
    const int64_t col = int64_t(b.kvHead) * D;
    const F negInf = V::negInf();
    F m[G], l[G];
    for (int x = 0; x < G; ++x) {
        m[x] = negInf;
        l[x] = V::zero();
    }
    for (int d = 0; d < D; ++d)
        for (int x = 0; x < G; ++x) V::store(s.o[d] + 16 * x, V::zero());

    // Tiles start at multiples of kKeys, so a lane meets the same tiles (the same online
    // softmax steps) whatever else its block holds: its result depends on its query alone.
    for (int64_t j = kFirst - kFirst % kKeys; j <= kLast; j += kKeys) {
        const int n = static_cast<int>(std::min<int64_t>(kKeys, kLast - j + 1));
        if (j + kKeys <= kLast)
            prefetchRows<D, Type>(c, table, j + kKeys, static_cast<int>(std::min<int64_t>(kKeys, kLast - j - kKeys + 1)), col);
        loadRows<V, D, Type>(c, c.k, c.kScales, table, j, n, col, &s.k[0][0]);
        loadRows<V, D, Type>(c, c.v, c.vScales, table, j, n, col, &s.v[0][0]);
        // Rows past n hold an earlier tile's values (or zeros): scored, then masked.
        const bool masked = n < kKeys || j + n - 1 > minLast || j < maxFirst;
        auto visible = [&](int key, int x) {
            return key < n ? V::visible(static_cast<int32_t>(j + key), firstV[x], lastV[x]) : V::noLanes();
        };
        F tileMax[G];
        for (int x = 0; x < G; ++x) tileMax[x] = negInf;
        for (int k0 = 0; k0 < kKeys; k0 += kScored) {
            F sc[kScored][G];
#pragma GCC unroll 16
            for (int i = 0; i < kScored; ++i)
#pragma GCC unroll 2
                for (int x = 0; x < G; ++x) sc[i][x] = V::zero();
            // One base pointer: key i's value d is at a constant offset i * D from kd (16
            // separate row pointers spilled the general registers). Each broadcast key value
            // feeds the G vectors of queries.
            const float* kd = s.k[k0];
#pragma GCC unroll 4
            for (int d = 0; d < D; ++d, ++kd) {
                F qd[G];
#pragma GCC unroll 2
                for (int x = 0; x < G; ++x) qd[x] = V::load(s.qt[d] + 16 * x);
#pragma GCC unroll 16
                for (int i = 0; i < kScored; ++i) {
                    const auto kv = V::broadcast(kd + i * D);
#pragma GCC unroll 2
                    for (int x = 0; x < G; ++x) sc[i][x] = V::fma(qd[x], kv, sc[i][x]);
                }
            }
#pragma GCC unroll 16
            for (int i = 0; i < kScored; ++i)
#pragma GCC unroll 2
                for (int x = 0; x < G; ++x) {
                    if (masked) sc[i][x] = V::keep(sc[i][x], visible(k0 + i, x), negInf);
                    tileMax[x] = V::max(tileMax[x], sc[i][x]);
                    V::store(s.p[k0 + i] + 16 * x, sc[i][x]);
                }
        }
        // A lane that has seen no visible key yet keeps maximum -inf; it takes 0 as its
        // reference, and its weights are masked to 0.
        F ref[G], alpha[G];
        bool grew = false;
        for (int x = 0; x < G; ++x) {
            const F mNew = V::max(m[x], tileMax[x]);
            ref[x] = V::zeroWhereNegInf(mNew);
            grew = grew || V::anyDiffer(mNew, m[x]);
            alpha[x] = V::exp(V::sub(m[x], ref[x]));  // 1 where the maximum held; o and l are 0 where m was -inf
            m[x] = mNew;
        }
        for (int x = 0; x < G; ++x) {
            if (grew) l[x] = V::mul(l[x], alpha[x]);
            for (int key = 0; key < n; ++key) {
                F p = V::exp(V::sub(V::load(s.p[key] + 16 * x), ref[x]));
                if (masked) p = V::zeroUnless(p, visible(key, x));
                l[x] = V::add(l[x], p);
                V::store(s.p[key] + 16 * x, p);
            }
        }
        for (int c0 = 0; c0 < D; c0 += kDims) {
            F o[kDims][G];
#pragma GCC unroll 16
            for (int i = 0; i < kDims; ++i)
#pragma GCC unroll 2
                for (int x = 0; x < G; ++x) {
                    o[i][x] = V::load(s.o[c0 + i] + 16 * x);
                    if (grew) o[i][x] = V::mul(o[i][x], alpha[x]);
                }
            const float* vk = s.v[0] + c0;
            for (int key = 0; key < n; ++key, vk += D) {
                F p[G];
#pragma GCC unroll 2
                for (int x = 0; x < G; ++x) p[x] = V::load(s.p[key] + 16 * x);
#pragma GCC unroll 16
                for (int i = 0; i < kDims; ++i) {
                    const auto vv = V::broadcast(vk + i);
#pragma GCC unroll 2
                    for (int x = 0; x < G; ++x) o[i][x] = V::fma(p[x], vv, o[i][x]);
                }
            }
#pragma GCC unroll 16
            for (int i = 0; i < kDims; ++i)
#pragma GCC unroll 2
                for (int x = 0; x < G; ++x) V::store(s.o[c0 + i] + 16 * x, o[i][x]);
        }
    }
    // Every query sees at least its own position, so l > 0 in the lanes stored.
    for (int d = 0; d < D; ++d)
        for (int x = 0; x < G; ++x) V::store(s.o[d] + 16 * x, V::divide(V::load(s.o[d] + 16 * x), l[x]));
    for (int lane = 0; lane < queries; ++lane) {
        float* dst = out + ((b.t0 + lane / group) * cfg.heads + b.kvHead * group + lane % group) * D;
        for (int d = 0; d < D; ++d) dst[d] = s.o[d][lane];
    }
}

template <typename V, int D>
void attendBlockOfWidth(const float* q, const int32_t* positions, const KvView& c, const AttentionConfig& cfg,
                        const QueryBlock& b, float* out) {
    switch (c.type) {
        case KvType::F32: return attendBlock<V, D, KvType::F32>(q, positions, c, cfg, b, out);
        case KvType::F16: return attendBlock<V, D, KvType::F16>(q, positions, c, cfg, b, out);
        case KvType::Q8: return attendBlock<V, D, KvType::Q8>(q, positions, c, cfg, b, out);
    }
}

// The block's attention with vector type V (queryBlocksFit(cfg) holds).
template <typename V>
void attendQueryBlock(const float* q, const int32_t* positions, const KvView& cache, const AttentionConfig& cfg,
                      const QueryBlock& block, float* out) {
    switch (cfg.headDim) {
        case 64: return attendBlockOfWidth<V, 64>(q, positions, cache, cfg, block, out);
        case 128: return attendBlockOfWidth<V, 128>(q, positions, cache, cfg, block, out);
        default: return attendBlockOfWidth<V, 256>(q, positions, cache, cfg, block, out);
    }
}


}  // namespace
}  // namespace kestrel::kernels
