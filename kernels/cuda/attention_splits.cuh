// How attention's pass 1 divides each token's visible keys into ranges: shared
// by the kernels that write one partial softmax state per range (attention.cu,
// attention_tile.cu) and the combine that merges them. Partial `s` of query
// head h of token t sits in slot (t * heads + h) * maxSplits + s.
#pragma once

#include "attention.cuh"

namespace kestrel::cuda {

// Small ranges: at short depth the keys are few, and more blocks each walking
// fewer keys beat a few blocks walking them serially. 32, not 16: the tensor-core
// pass 1 walks a range in 16-key chunks over 4 warps, so a 16-key range left 3 of
// them idle and gave the merge twice the partials; on an H100 smollm2 decoded
// 3-4 % faster at depth 0-512 and llama3-8b the same (64: +4 % and -0.4 %),
// docs/PERFORMANCE.md, twenty-eighth session.
constexpr int kSplitQuantum = 32;

struct Range {
    int64_t first, len, splitLen, active;
};

__device__ __forceinline__ int64_t firstVisible(int pos, const AttentionDev& p) {
    return p.slidingWindow > 0 ? max(0, pos - p.slidingWindow + 1) : 0;
}

// The one-token kernels' ranges: sized from the token's own position, so a
// captured graph stays valid as the context grows.
__device__ __forceinline__ Range visibleRange(int pos, const AttentionDev& p) {
    Range r;
    r.first = firstVisible(pos, p);
    r.len = pos - r.first + 1;
    const int64_t ranges = p.rangeCap > 0 && p.rangeCap < p.maxSplits ? p.rangeCap : p.maxSplits;
    int64_t per = (r.len + ranges - 1) / ranges;
    if (p.deepSplitKeys > 0 && r.len >= 1024 && per < p.deepSplitKeys) per = p.deepSplitKeys;
    r.splitLen = (per + kSplitQuantum - 1) / kSplitQuantum * kSplitQuantum;
    r.active = (r.len + r.splitLen - 1) / r.splitLen;
    return r;
}

// A short context walked by one block (AttentionDev::whole): every visible key, one range.
__device__ __forceinline__ Range wholeRange(int pos, const AttentionDev& p) {
    Range r;
    r.first = firstVisible(pos, p);
    r.len = pos - r.first + 1;
    r.splitLen = r.len;
    r.active = 1;
    return r;
}

__device__ __forceinline__ bool isTileToken(int64_t t, const AttentionDev& p) {
    return p.tileKeys > 0 && t >= p.tileFrom;
}

// A tile token's ranges are the absolute key ranges [s * tileKeys, (s + 1) * tileKeys)
// that meet its visible keys, so the tokens of one tile share them; its slot
// for range s is s - first / tileKeys.
__device__ __forceinline__ int64_t activeSplits(int64_t t, int pos, const AttentionDev& p) {
    if (isTileToken(t, p)) return pos / p.tileKeys - firstVisible(pos, p) / p.tileKeys + 1;
    return visibleRange(pos, p).active;
}

}  // namespace kestrel::cuda
