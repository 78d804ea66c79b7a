// Attention pass 1 for the rows of prefill chunks, on tensor cores.
//
// The one-token kernels (attention.cu) read a token's keys once per token: a
// 64-token turn after 8k of history read each layer's 8k keys 64 times (38 ms
// of its 64 ms on an H200). Here a block takes 64 query rows of one kv head
// (the GQA group's heads of 64 / group consecutive tokens) and one absolute
// key range, streams the range's K and V through shared memory once for all
// 64 rows, and multiplies with mma.m16n8k16 in F16 (F32 accumulation, an
// online softmax in registers, as FlashAttention-2 does). Each row writes one
// partial state per range into the same scratch slots the one-token kernels
// use, and the same combine pass merges them (attention_splits.cuh).
//
// Rows of one tile may belong to different sequences (two prompts in one
// step): the block walks each sequence's keys in turn with the other rows
// masked.
#pragma once

#include "attention.cuh"

namespace kestrel::cuda {

// Whether the tile kernel runs this cache and shape: an F16 cache with 16-byte
// aligned rows, head size 64, 128 or 256, a GQA group of at most 64, sm_80+.
bool attentionTileFits(const KvDev& kv, const AttentionDev& p, const float* q);

// Pass 1 for tokens [p.tileFrom, tokens); p.maxSplits ranges of p.tileKeys keys.
void launchAttentionTile(const float* q, int64_t tokens, const int32_t* positions, const KvDev& kv,
                         const AttentionDev& p, float* scratchO, float2* scratchML, cudaStream_t stream);

}  // namespace kestrel::cuda
