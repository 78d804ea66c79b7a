// Pass 1 of one-token attention on tensor cores (attention_mma.cu): the same
// grid, ranges and partials as the F16 key-stream kernel of attention.cu, for
// an F16 cache with head size 64 or 128 and query-head groups of 2 to 8.
// S = Q K^T and O = P V as mma.m16n8k16 with the group as M, so a key costs
// no shuffle reduction per query head.
#pragma once

#include "attention.cuh"

namespace kestrel::cuda {

// Whether the kernel applies (KESTREL_CUDA_ATTN_MMA=0 turns it off, to compare).
bool attentionMmaFits(const KvDev& kv, const AttentionDev& p, const float* q);

// Tokens [0, tokens), blocksY blocks per (token, kv head), as launchOneTokenPass.
void launchAttentionMma(const float* q, int64_t tokens, const int32_t* positions, const KvDev& kv,
                        const AttentionDev& p, int64_t blocksY, float* scratchO, float2* scratchML,
                        cudaStream_t stream);

// Tokens [0, tokens), one block of 8 warps per (token, kv head) walking every
// visible key and writing out (and q8 / q8meta when set): AttentionDev::whole.
void launchAttentionMmaWhole(const float* q, int64_t tokens, const int32_t* positions, const KvDev& kv,
                             const AttentionDev& p, float* out, int8_t* q8, float2* q8meta, cudaStream_t stream);

}  // namespace kestrel::cuda
