// Products of a quantised weight with 8 to a few hundred tokens, streamed
// through shared memory (the path under launchGemmMma for weights whose rows
// hold a multiple of 128 values).
//
// Why: the first tensor-core kernel (gemm_mma.cu) fed each mma from global
// memory, 4 bytes per lane, and re-read the 16 tokens' activations for every
// 16 weight rows: a 16-token step took ~24 ms where one weight pass is ~1 ms.
// Here a block owns 128 weight rows and all of a tile's tokens; stages of 4 or 8
// blocks of 32 columns (weights, their scales, the tokens' int8 activations
// and their scales) arrive by 16-byte cp.async, several stages ahead, and
// every warp takes its fragments from shared memory. The activations are the
// mma's A operand (16 tokens) and the weights its B operand (8 rows), so one
// A fragment serves 4 weight fragments, and a Q4 weight fragment is one
// 32-bit shared load (GGML's nibble order is the fragment order). When the
// row tiles are fewer than the GPU has room for, the columns are split over
// blocks and the last block of a tile sums the partials in a fixed order
// (deterministic results).
#pragma once

#include "gemv.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace kestrel::cuda {

// An integer format with cols % 128 == 0, 16-byte aligned data, sm_80+.
bool gemmTiledFits(const DevMatrix& w);

// As launchGemmMma (gemm_mma.cuh).
void launchGemmTiled(const GemvJob* jobs, int count, Q8Act xq, int64_t tokens, cudaStream_t stream);

// out = act(gate x) * up x and its int8 form (the next product's input), [tokens, cols] each
// (meta: one (d, d * sum) per 32 values), straight from the product: no gate and up outputs.
struct GluQ8Out {
    float* out = nullptr;
    int8_t* q8 = nullptr;  // null: a plain product
    float2* meta = nullptr;
    int64_t cols = 0;      // gate rows
    GluAct act = GluAct::Silu;
};

// Up to 16 tokens; both fit gemmTiledFits, share format and shape, and have a multiple of 64 rows.
bool gemmTiledGluFits(const DevMatrix& gate, const DevMatrix& up, int64_t tokens);
void launchGemmTiledGlu(const DevMatrix& gate, const DevMatrix& up, Q8Act xq, int64_t tokens, const GluQ8Out& out,
                        cudaStream_t stream);

}  // namespace kestrel::cuda
