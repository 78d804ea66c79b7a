// Internal to kernels/cpu: prefill attention with several queries at once
// (attention_blocked_kernel.h, for AVX-512 and AVX2), called by ops_attention.cpp's attention().
//
// Why: a prefill of n tokens does n^2 / 2 key-query products per head, and the
// per-query kernels (built for decode) spent ~18 cycles on each at 2048 tokens:
// every query summed each key's 64 products across a vector's lanes and
// converted every K and V row again for itself. A query block puts 32 (AVX-512) or
// 16 (AVX2) (token, head) queries of one kv head in the lanes of its vectors: a
// score is 64 FMAs of the queries' transposed values with one broadcast key value
// each, the softmax is lane-wise (no horizontal reductions), and a value row is
// converted once for all of them.
#pragma once

#include "ops.h"

#include <cstdint>

namespace kestrel::kernels {

// Queries per block: 16 lanes of floats per vector group; AVX-512 takes two groups (32
// queries), AVX2 one (two ymm registers).
constexpr int kQueryBlockLanes = 16;
constexpr int kQueryBlockLanesAvx512 = 32, kQueryBlockLanesAvx2 = 16;

// A block: `tokens` consecutive tokens from t0 (consecutive positions, one block
// table) times the query heads of kv head kvHead, lane tb * group + g.
struct QueryBlock {
    int64_t t0;
    int32_t tokens;
    int32_t kvHead;
};

// Whether blocks can take this attention: head sizes 64, 128 or 256 (values as
// wide as keys), at most 16 query heads per kv head, no softcap.
inline bool queryBlocksFit(const AttentionConfig& cfg) {
    const int d = cfg.headDim;
    return (d == 64 || d == 128 || d == 256) && cfg.valueDim == d && cfg.heads % cfg.kvHeads == 0 &&
           cfg.heads / cfg.kvHeads <= kQueryBlockLanes && cfg.softcap <= 0.0f;
}
// Tokens per block of `lanes` queries, each token taking its group's heads (SmolLM2's 3
// heads per kv head: 10 tokens on AVX-512, 5 on AVX2).
inline int queryBlockTokens(const AttentionConfig& cfg, int lanes) { return lanes / (cfg.heads / cfg.kvHeads); }

// Write the block's outputs (normalised) into out ([tokens, heads * valueDim]). Each
// only after cpuid says its ISA is there (AVX-512F; AVX2 with FMA and F16C).
void attendQueryBlockAvx512(const float* q, const int32_t* positions, const KvView& cache,
                            const AttentionConfig& cfg, const QueryBlock& block, float* out);
void attendQueryBlockAvx2(const float* q, const int32_t* positions, const KvView& cache,
                          const AttentionConfig& cfg, const QueryBlock& block, float* out);

}  // namespace kestrel::kernels
