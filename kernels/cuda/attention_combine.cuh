// Pass 2 of flash-decoding as device code: merging one (token, head)'s partial
// softmax states into its output row (and the row's int8 form). The combine
// kernel (attention.cu) runs combineHead; for one-token steps the last pass-1
// block of each (token, kv head) runs combineHeadWarp per head instead
// (lastBlockCombines), which saves the step a kernel boundary per layer.
// Included by .cu files only.
#pragma once

#include "attention.cuh"
#include "cuda_common.cuh"

namespace kestrel::cuda {

// Merges partials slot0 .. slot0 + active - 1 (head size d <= 32 NC) into
// out[row0 .. row0 + d) and, with q8 (d % 32 == 0), its int8 form. The whole
// block of W warps calls it: warp w merges ranges w, w + W, ... (independent
// loads, so a deep context's splits cost a few latencies), then the warps
// merge through shared memory.
template <int NC, int W>
__device__ __forceinline__ void combineHead(int64_t slot0, int64_t active, int d, int64_t row0,
                                            const float* __restrict__ scratchO, const float2* __restrict__ scratchML,
                                            const AttnOut& o) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    // One pass with online rescaling: a range's (max, sum) and output row are loaded together.
    float mw = -INFINITY, lw = 0.0f, ow[NC];
#pragma unroll
    for (int i = 0; i < NC; ++i) ow[i] = 0.0f;
#pragma unroll 4
    for (int64_t s = warp; s < active; s += W) {
        const float2 ml = scratchML[slot0 + s];
        float v[NC];
#pragma unroll
        for (int i = 0; i < NC; ++i) {
            const int c = lane + 32 * i;
            v[i] = c < d ? scratchO[(slot0 + s) * d + c] : 0.0f;
        }
        if (ml.x == -INFINITY) continue;  // a range without keys adds nothing
        const float mNew = fmaxf(mw, ml.x);
        const float keep = __expf(mw - mNew), add = __expf(ml.x - mNew);  // keep = 0 while mw = -inf
        lw = lw * keep + ml.y * add;
#pragma unroll
        for (int i = 0; i < NC; ++i) ow[i] = ow[i] * keep + v[i] * add;
        mw = mNew;
    }
    __shared__ float sm[W], sl[W];
    __shared__ float so[W][NC * 32];
    if (lane == 0) {
        sm[warp] = mw;
        sl[warp] = lw;
    }
#pragma unroll
    for (int i = 0; i < NC; ++i) so[warp][lane + 32 * i] = ow[i];
    __syncthreads();
    float mm = -INFINITY;
#pragma unroll
    for (int w = 0; w < W; ++w) mm = fmaxf(mm, sm[w]);
    float fw[W], ll = 0.0f;
#pragma unroll
    for (int w = 0; w < W; ++w) {
        fw[w] = sm[w] == -INFINITY ? 0.0f : __expf(sm[w] - mm);
        ll += sl[w] * fw[w];
    }
    // Every thread of a warp walks the padded columns together so the shuffles below see full warps.
    const int dPad = (d + 31) / 32 * 32;
    for (int c = threadIdx.x; c < dPad; c += blockDim.x) {
        float v = 0.0f;
        if (c < d) {
            float acc = 0.0f;
#pragma unroll
            for (int w = 0; w < W; ++w) acc += so[w][c] * fw[w];
            v = ll > 0.0f ? acc / ll : 0.0f;
            o.out[row0 + c] = v;
        }
        if (o.q8) {  // d % 32 == 0 here: one warp is one quant block
            const float amax = warpMax(fabsf(v));
            const float dq = amax / 127.0f;
            const int qv = __float2int_rn(dq > 0.0f ? v / dq : 0.0f);
            const int sum = static_cast<int>(warpSum(static_cast<float>(qv)));
            const int64_t i = row0 + c;
            o.q8[i] = static_cast<int8_t>(qv);
            if ((threadIdx.x & 31) == 0) o.q8meta[i / 32] = make_float2(dq, dq * static_cast<float>(sum));
        }
    }
    __syncthreads();  // the next call reuses sm, sl, so
}

// combineHead for one warp alone (the fused tail: one warp per head, so the
// group's heads merge side by side): the warp walks every range itself, its
// partials read through L2 (ld.cg: this block's L1 may hold none of them).
template <int NC>
__device__ __forceinline__ void combineHeadWarp(int64_t slot0, int64_t active, int d, int64_t row0,
                                                const float* __restrict__ scratchO,
                                                const float2* __restrict__ scratchML, const AttnOut& o) {
    const int lane = threadIdx.x & 31;
    float mw = -INFINITY, lw = 0.0f, ow[NC];
#pragma unroll
    for (int i = 0; i < NC; ++i) ow[i] = 0.0f;
    // Ranges in flight: fewer for wide heads, so the tail does not make the
    // pass-1 kernel it ends spill.
    constexpr int kInFlight = NC >= 8 ? 1 : NC >= 4 ? 2 : 4;
#pragma unroll kInFlight
    for (int64_t s = 0; s < active; ++s) {
        const float2 ml = __ldcg(scratchML + slot0 + s);
        float v[NC];
#pragma unroll
        for (int i = 0; i < NC; ++i) {
            const int c = lane + 32 * i;
            v[i] = c < d ? __ldcg(scratchO + (slot0 + s) * d + c) : 0.0f;
        }
        if (ml.x == -INFINITY) continue;
        const float mNew = fmaxf(mw, ml.x);
        const float keep = __expf(mw - mNew), add = __expf(ml.x - mNew);
        lw = lw * keep + ml.y * add;
#pragma unroll
        for (int i = 0; i < NC; ++i) ow[i] = ow[i] * keep + v[i] * add;
        mw = mNew;
    }
    const float inv = lw > 0.0f ? 1.0f / lw : 0.0f;
#pragma unroll
    for (int i = 0; i < NC; ++i) {
        const int c = lane + 32 * i;
        if (32 * i >= d) break;  // uniform across the warp
        const float v = c < d ? ow[i] * inv : 0.0f;
        if (c < d) o.out[row0 + c] = v;
        if (o.q8) {  // d % 32 == 0 here: columns 32 i .. 32 i + 31 are one quant block
            const float amax = warpMax(fabsf(v));
            const float dq = amax / 127.0f;
            const int qv = __float2int_rn(dq > 0.0f ? v / dq : 0.0f);
            const int sum = static_cast<int>(warpSum(static_cast<float>(qv)));
            o.q8[row0 + c] = static_cast<int8_t>(qv);
            if (lane == 0) o.q8meta[(row0 + 32 * i) / 32] = make_float2(dq, dq * static_cast<float>(sum));
        }
    }
}

// The end of a one-token pass-1 kernel when o.arrivals is set: the block
// counts itself done, and the last of the gridDim.y blocks of its (token t,
// column) merges the ranges of query heads h0 .. h0 + ng - 1, one warp per
// head. Call with the whole block of W warps, after its last partial is written.
template <int NC, int W>
__device__ __forceinline__ void lastBlockCombines(const AttnOut& o, const AttentionDev& p, int t, int h0, int ng,
                                                  int64_t active, const float* __restrict__ scratchO,
                                                  const float2* __restrict__ scratchML) {
    if (!o.arrivals) return;
    // A block without ranges never waited: the counter is only touched once the
    // kernels before (the previous layer's pass 1 among them) have completed.
    pdlWait();
    __threadfence();  // this thread's partials before the arrival
    __syncthreads();
    __shared__ bool last;
    if (threadIdx.x == 0) {
        unsigned* a = o.arrivals + static_cast<int64_t>(t) * gridDim.x + blockIdx.x;
        last = atomicAdd(a, 1u) == gridDim.y - 1;
        if (last) *a = 0;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();  // the other blocks' partials after their arrivals
    for (int g = threadIdx.x >> 5; g < ng; g += W) {
        const int64_t row = static_cast<int64_t>(t) * p.heads + h0 + g;
        combineHeadWarp<NC>(row * p.maxSplits, active, p.headDim, row * p.headDim, scratchO, scratchML, o);
    }
}

}  // namespace kestrel::cuda
