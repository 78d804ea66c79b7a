// Device helpers shared by the per-op kernels (ops.cu, gemv.cu) and the
// persistent decode step (decode_step.cu). Included by .cu files only.
#pragma once

#include "cuda_common.cuh"
#include "ops.cuh"

namespace kestrel::cuda {

// The gate's activation of a gated linear unit (SiLU, or GeLU's tanh form).
__device__ __forceinline__ float gluAct(float g, GluAct act) {
    if (act == GluAct::Silu) return g / (1.0f + __expf(-g));
    const float u = 1.5957691216057308f * (g + 0.044715f * g * g * g);  // 2 sqrt(2/pi) (..)
    return g / (1.0f + __expf(-u));
}

// RoPE on pair i of one head (in place) at position pos.
__device__ __forceinline__ void rotatePair(float* head, int i, float pos, const RopeDev& r) {
    float s, c;
    sincosf(pos * r.invFreq[i], &s, &c);
    s *= r.mscale;
    c *= r.mscale;
    const int pairs = r.dims / 2;
    const int i0 = r.neox ? i : 2 * i;
    const int i1 = r.neox ? i + pairs : 2 * i + 1;
    const float x0 = head[i0], x1 = head[i1];
    head[i0] = x0 * c - x1 * s;
    head[i1] = x0 * s + x1 * c;
}

}  // namespace kestrel::cuda
