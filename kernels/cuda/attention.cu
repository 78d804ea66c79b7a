#include "attention.cuh"
#include "cuda_common.cuh"

namespace kestrel::cuda {
namespace {

constexpr int kAttnWarps = 4;
constexpr int kMaxGroup = 8;
// Small ranges: at short depth the keys are few, and more blocks each walking
// fewer keys beat a few blocks walking them serially.
constexpr int kSplitQuantum = 16;

struct Range {
    int64_t first, len, splitLen, active;
};

__device__ __forceinline__ Range visibleRange(int pos, const AttentionDev& p) {
    Range r;
    r.first = p.slidingWindow > 0 ? max(0, pos - p.slidingWindow + 1) : 0;
    r.len = pos - r.first + 1;
    const int64_t per = (r.len + p.maxSplits - 1) / p.maxSplits;
    r.splitLen = (per + kSplitQuantum - 1) / kSplitQuantum * kSplitQuantum;
    r.active = (r.len + r.splitLen - 1) / r.splitLen;
    return r;
}

template <int EPL>
__device__ __forceinline__ void loadRow(const KvDev& kv, const void* base, int64_t off, int c0, int d, float (&out)[EPL]) {
    if (kv.f16) {
        const __half* h = static_cast<const __half*>(base) + off + c0;
        if (c0 + EPL <= d) {
            if constexpr (EPL == 8) {
                const uint4 raw = *reinterpret_cast<const uint4*>(h);
                const __half2* h2 = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const float2 f = __half22float2(h2[i]);
                    out[2 * i] = f.x;
                    out[2 * i + 1] = f.y;
                }
            } else if constexpr (EPL == 4) {
                const uint2 raw = *reinterpret_cast<const uint2*>(h);
                const __half2* h2 = reinterpret_cast<const __half2*>(&raw);
                const float2 a = __half22float2(h2[0]), b = __half22float2(h2[1]);
                out[0] = a.x; out[1] = a.y; out[2] = b.x; out[3] = b.y;
            } else if constexpr (EPL == 2) {
                const float2 a = __half22float2(*reinterpret_cast<const __half2*>(h));
                out[0] = a.x; out[1] = a.y;
            } else {
                out[0] = __half2float(h[0]);
            }
        } else {
#pragma unroll
            for (int e = 0; e < EPL; ++e) out[e] = c0 + e < d ? __half2float(h[e]) : 0.0f;
        }
    } else {
        const float* f = static_cast<const float*>(base) + off + c0;
#pragma unroll
        for (int e = 0; e < EPL; ++e) out[e] = c0 + e < d ? f[e] : 0.0f;
    }
}

template <int EPL>
__global__ void __launch_bounds__(kAttnWarps * 32)
    attnSplitKernel(const float* __restrict__ q, const int32_t* __restrict__ positions, KvDev kv, AttentionDev p,
                    float* __restrict__ scratchO, float2* __restrict__ scratchML) {
    pdlWait();
    pdlTrigger();
    const int t = blockIdx.z, split = blockIdx.y;
    const int group = p.heads / p.kvHeads;
    const int chunks = (group + kMaxGroup - 1) / kMaxGroup;
    const int kvh = blockIdx.x / chunks;
    const int h0 = kvh * group + (blockIdx.x % chunks) * kMaxGroup;
    const int ng = min(kMaxGroup, kvh * group + group - h0);
    const int pos = positions[t];
    const Range r = visibleRange(pos, p);
    if (split >= r.active) return;
    const int64_t start = r.first + split * r.splitLen;
    const int64_t end = (start + r.splitLen < static_cast<int64_t>(pos) + 1) ? start + r.splitLen : static_cast<int64_t>(pos) + 1;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int d = p.headDim, c0 = lane * EPL;

    float qr[kMaxGroup][EPL];
#pragma unroll
    for (int g = 0; g < kMaxGroup; ++g)
#pragma unroll
        for (int e = 0; e < EPL; ++e)
            qr[g][e] = (g < ng && c0 + e < d) ? q[(static_cast<int64_t>(t) * p.heads + h0 + g) * d + c0 + e] * p.scale : 0.0f;
    float m[kMaxGroup], l[kMaxGroup], acc[kMaxGroup][EPL];
#pragma unroll
    for (int g = 0; g < kMaxGroup; ++g) {
        m[g] = -INFINITY;
        l[g] = 0.0f;
#pragma unroll
        for (int e = 0; e < EPL; ++e) acc[g][e] = 0.0f;
    }
    const int64_t headOff = static_cast<int64_t>(kvh) * d;
    // Two keys per step: their loads and reductions are independent, which
    // halves the latency chain of a warp's walk over its keys.
    for (int64_t j = start + warp; j < end; j += 2 * kAttnWarps) {
        const int64_t j1 = j + kAttnWarps;
        const bool has1 = j1 < end;
        const int64_t p0 = static_cast<int64_t>(kv.table[j / kv.blockSize]) * kv.blockSize + j % kv.blockSize;
        const int64_t p1 = has1 ? static_cast<int64_t>(kv.table[j1 / kv.blockSize]) * kv.blockSize + j1 % kv.blockSize : p0;
        float k0[EPL], v0[EPL], k1[EPL], v1[EPL];
        loadRow<EPL>(kv, kv.k, p0 * kv.rowStride + headOff, c0, d, k0);
        loadRow<EPL>(kv, kv.k, p1 * kv.rowStride + headOff, c0, d, k1);
        loadRow<EPL>(kv, kv.v, p0 * kv.rowStride + headOff, c0, d, v0);
        loadRow<EPL>(kv, kv.v, p1 * kv.rowStride + headOff, c0, d, v1);
#pragma unroll
        for (int g = 0; g < kMaxGroup; ++g) {
            if (g >= ng) break;
            float s0 = 0.0f, s1 = 0.0f;
#pragma unroll
            for (int e = 0; e < EPL; ++e) {
                s0 += qr[g][e] * k0[e];
                s1 += qr[g][e] * k1[e];
            }
            s0 = warpSum(s0);
            s1 = warpSum(s1);
            if (p.softcap > 0.0f) {
                s0 = p.softcap * tanhf(s0 / p.softcap);
                s1 = p.softcap * tanhf(s1 / p.softcap);
            }
            if (!has1) s1 = -INFINITY;
            const float mNew = fmaxf(m[g], fmaxf(s0, s1));
            const float corr = __expf(m[g] - mNew);
            const float w0 = __expf(s0 - mNew);
            const float w1 = has1 ? __expf(s1 - mNew) : 0.0f;
            l[g] = l[g] * corr + w0 + w1;
#pragma unroll
            for (int e = 0; e < EPL; ++e) acc[g][e] = acc[g][e] * corr + w0 * v0[e] + w1 * v1[e];
            m[g] = mNew;
        }
    }
    // Merge the warps of the block.
    __shared__ float sm[kAttnWarps][kMaxGroup], sl[kAttnWarps][kMaxGroup];
    __shared__ float so[kAttnWarps][kMaxGroup][EPL * 32];
#pragma unroll
    for (int g = 0; g < kMaxGroup; ++g) {
        if (lane == 0) {
            sm[warp][g] = m[g];
            sl[warp][g] = l[g];
        }
#pragma unroll
        for (int e = 0; e < EPL; ++e) so[warp][g][c0 + e] = acc[g][e];
    }
    __syncthreads();
    const int nsplit = p.maxSplits;
    for (int idx = threadIdx.x; idx < ng * d; idx += blockDim.x) {
        const int g = idx / d, c = idx % d;
        float mm = -INFINITY;
        for (int w = 0; w < kAttnWarps; ++w) mm = fmaxf(mm, sm[w][g]);
        float ll = 0.0f, o = 0.0f;
        for (int w = 0; w < kAttnWarps; ++w) {
            const float f = sm[w][g] == -INFINITY ? 0.0f : __expf(sm[w][g] - mm);
            ll += sl[w][g] * f;
            o += so[w][g][c] * f;
        }
        const int64_t slot = (static_cast<int64_t>(t) * p.heads + h0 + g) * nsplit + split;
        scratchO[slot * d + c] = o;
        if (c == 0) scratchML[slot] = make_float2(mm, ll);
    }
}

__global__ void attnCombineKernel(const int32_t* __restrict__ positions, AttentionDev p, const float* __restrict__ scratchO,
                                  const float2* __restrict__ scratchML, float* __restrict__ out, int8_t* q8, float2* q8meta) {
    pdlWait();
    pdlTrigger();
    const int h = blockIdx.x, t = blockIdx.y;
    const Range r = visibleRange(positions[t], p);
    const int d = p.headDim;
    const int64_t slot0 = (static_cast<int64_t>(t) * p.heads + h) * p.maxSplits;
    float mm = -INFINITY;
    for (int s = 0; s < r.active; ++s) mm = fmaxf(mm, scratchML[slot0 + s].x);
    // Every thread walks all d (padded to whole warps) so warp shuffles below see full warps.
    const int dPad = (d + 31) / 32 * 32;
    for (int c = threadIdx.x; c < dPad; c += blockDim.x) {
        float v = 0.0f;
        if (c < d) {
            float ll = 0.0f, o = 0.0f;
#pragma unroll 8
            for (int s = 0; s < r.active; ++s) {
                const float2 ml = scratchML[slot0 + s];
                const float f = __expf(ml.x - mm);
                ll += ml.y * f;
                o += scratchO[(slot0 + s) * d + c] * f;
            }
            v = ll > 0.0f ? o / ll : 0.0f;
            out[(static_cast<int64_t>(t) * p.heads + h) * d + c] = v;
        }
        if (q8) {  // d % 32 == 0 here: one warp is one quant block
            const float amax = warpMax(fabsf(v));
            const float dq = amax / 127.0f;
            const int qv = __float2int_rn(dq > 0.0f ? v / dq : 0.0f);
            const int sum = static_cast<int>(warpSum(static_cast<float>(qv)));
            const int64_t i = (static_cast<int64_t>(t) * p.heads + h) * d + c;
            q8[i] = static_cast<int8_t>(qv);
            if ((threadIdx.x & 31) == 0) q8meta[i / 32] = make_float2(dq, dq * static_cast<float>(sum));
        }
    }
}

}  // namespace

int64_t attentionScratchFloats(const AttentionDev& p, int64_t tokens) {
    return tokens * p.heads * p.maxSplits * (static_cast<int64_t>(p.headDim) + 2);
}

void launchAttention(const float* q, int64_t tokens, const int32_t* positions, KvDev kv, const AttentionDev& p,
                     float* scratch, float* out, int8_t* q8, float2* q8meta, cudaStream_t stream) {
    if (tokens == 0) return;
    const int group = p.heads / p.kvHeads;
    const int chunks = (group + kMaxGroup - 1) / kMaxGroup;
    const dim3 grid(static_cast<unsigned>(p.kvHeads * chunks), static_cast<unsigned>(p.maxSplits),
                    static_cast<unsigned>(tokens));
    float* scratchO = scratch;
    auto* scratchML = reinterpret_cast<float2*>(scratch + tokens * p.heads * p.maxSplits * p.headDim);
    if (p.headDim <= 32) launchK(attnSplitKernel<1>, grid, dim3(kAttnWarps * 32), stream, q, positions, kv, p, scratchO, scratchML);
    else if (p.headDim <= 64) launchK(attnSplitKernel<2>, grid, dim3(kAttnWarps * 32), stream, q, positions, kv, p, scratchO, scratchML);
    else if (p.headDim <= 128) launchK(attnSplitKernel<4>, grid, dim3(kAttnWarps * 32), stream, q, positions, kv, p, scratchO, scratchML);
    else launchK(attnSplitKernel<8>, grid, dim3(kAttnWarps * 32), stream, q, positions, kv, p, scratchO, scratchML);
    if (p.headDim % 32 != 0) q8 = nullptr;
    launchK(attnCombineKernel, dim3(static_cast<unsigned>(p.heads), static_cast<unsigned>(tokens)), dim3(128), stream,
            positions, p, scratchO, scratchML, out, q8, q8meta);
}

}  // namespace kestrel::cuda
