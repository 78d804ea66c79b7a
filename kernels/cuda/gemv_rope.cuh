// Q, K and V of one decode token with RoPE and the KV-cache write folded into
// the GEMV: each warp computes the two rows RoPE rotates together, so the
// rotation and the cache write are its epilogue, and the attention half of a
// layer starts with one launch instead of two.
#pragma once

#include "gemv.cuh"
#include "ops.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace kestrel::cuda {

// What follows the Q, K, V GEMVs (jobs 0, 1, 2): q and k rotated by the
// token's position, then k and v stored at that position of the cache.
struct QkvRope {
    const int32_t* positions = nullptr;  // [1]
    RopeDev rope;
    int headDim = 0;
    KvDev kv;
};

// Whether launchGemvQkvRope takes these: one token, three jobs of one integer
// format and equal cols, q and k rows whole heads, v rows == k rows, headDim
// and rope.dims even, rope.dims <= headDim.
bool gemvQkvRopeFits(const GemvJob (&jobs)[3], int64_t tokens, const QkvRope& rope);

// y_j = W_j x for q, k, v (x as int8, xq), then RoPE on q and k and the KV
// write, as launchGemv + launchRopeStore would do for one token.
void launchGemvQkvRope(const GemvJob (&jobs)[3], Q8Act xq, const QkvRope& rope, cudaStream_t stream);
// The same on rmsnorm(src.x) * src.gamma (gemvFoldFits(jobs[0].w, 1, true) must hold too).
void launchGemvQkvRope(const GemvJob (&jobs)[3], NormQ8 src, const QkvRope& rope, cudaStream_t stream);

}  // namespace kestrel::cuda
