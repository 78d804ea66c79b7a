// Flash-decoding attention over the block-table KV cache.
//
// Pass 1 splits each token's visible keys into at most `maxSplits` ranges (of
// a multiple of 64 positions, sized from the token's position read on the
// device, so a captured graph stays valid as the context grows); one block
// takes one kv head, up to 8 of its query heads (grouped-query attention reads
// each key once for the whole group) and one range, with an online softmax.
// Pass 2 merges the ranges of each (token, head) and, when headDim % 32 == 0,
// also writes the int8 form of the output for the next GEMV.
// A short context (AttentionDev::whole) may skip the split where that measured
// faster: on the tensor-core kernel one block per (token, kv head) walks every
// key and writes the output itself, so a layer has one attention kernel, not two.
#pragma once

#include "ops.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace kestrel::cuda {

struct AttentionDev {
    int heads = 0;
    int kvHeads = 0;
    int headDim = 0;  // <= 256
    float scale = 1.0f;
    int slidingWindow = 0;
    float softcap = 0.0f;
    int maxSplits = 1;
    // Set by launchAttention: once a token sees >= 1024 keys, ranges of at
    // least this many keys (0: only maxSplits decides), so a deep context
    // runs fewer, longer blocks.
    int deepSplitKeys = 0;
    // Set by launchAttention: a one-token-kernel token's ranges, at most (0: maxSplits
    // decides). The blocks that walk one (token, kv head)'s ranges, so each takes one:
    // a range costs a dependent round trip and a merge, whatever its length.
    int rangeCap = 0;
    // Rows [0, distinctRows) are each the only row of their sequence in the step (the
    // decode rows): the step writes only their own position, so pass 1 may load their
    // earlier keys before waiting on the KV write.
    int distinctRows = 0;
    // Tokens from tileFrom on (the rows of prefill chunks) run the tensor-core
    // tile kernel (attention_tile.cu), which splits keys at absolute multiples
    // of tileKeys; 0: every token runs the one-token kernels. Set by the backend
    // (tileKeys * maxSplits >= the cache's capacity); launchAttention clears
    // tileKeys where the tile kernel does not apply.
    int tileFrom = 0;
    int tileKeys = 0;
    // Set by the backend when no token of the step sees more than a few hundred keys
    // (Backend::setKeyBound): with the tensor-core pass 1, no tile rows and where it
    // pays (attention.cu's wholePays), one block per (token, kv head) walks the keys
    // whole and writes the output, and the combine kernel is not launched. Correct at
    // any depth, only slower on a long one.
    bool whole = false;
};

// Scratch floats pass 1 needs for `tokens` tokens.
int64_t attentionScratchFloats(const AttentionDev& p, int64_t tokens);

// q: [tokens, heads * headDim]; out: [tokens, heads * headDim]. q8/q8meta may be null.
void launchAttention(const float* q, int64_t tokens, const int32_t* positions, KvDev kv, const AttentionDev& p,
                     float* scratch, float* out, int8_t* q8, float2* q8meta, cudaStream_t stream);

}  // namespace kestrel::cuda
