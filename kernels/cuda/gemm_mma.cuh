// Products of a quantised weight with a few to a few hundred tokens on the
// tensor cores: batched decode (several chats at once), prefill chunks and,
// later, speculative verification.
//
// Why: the dp4a GEMV applies each weight block to 8 tokens with ~14 lane
// instructions per token, so a 16-token step was compute-bound at ~12x the
// one-token time. One int8 mma.m16n8k32 multiplies a whole 32-block of 16
// rows with 8 tokens; GGML's Q4_0/Q4_1 nibble order (byte j holds elements j
// and j + 16) is exactly the A-fragment order, so a lane's 4-byte load of a
// block gives two fragment registers with one mask and one shift.
//
// Same arithmetic as the GEMV: int8 activations per 32 (Q8Act), one int32
// dot per (row, token, block), scaled in float per block.
#pragma once

#include "gemv.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace kestrel::cuda {

// Whether launchGemmMma takes this weight for `tokens` tokens: an integer
// format (every DevFormat but F16), tensor cores with int8 mma (sm_80+), and tokens
// at or above the crossover: 8, or 3 for a weight the tiled kernel takes
// (gemmTiledFits). KESTREL_CUDA_MMA_MIN=N sets one crossover for all (0 turns it off).
bool gemmMmaFits(const DevMatrix& w, int64_t tokens);

// y_j[t] = W_j x[t] for up to 3 jobs of one format and equal cols; x as int8
// per 32 (xq, [tokens, cols]); each y_j is [tokens, rows_j].
void launchGemmMma(const GemvJob* jobs, int count, Q8Act xq, int64_t tokens, cudaStream_t stream);

}  // namespace kestrel::cuda
