// Where the one-token GEMVs' int8 activations come from (gemv_dot.cuh's
// rowDotInt and gemv_split.cuh's kernel take either). Included by .cu files only.
#pragma once

#include "cuda_common.cuh"
#include "gemv.cuh"

#include <cstddef>
#include <cstdint>

namespace kestrel::cuda::gemvdev {

// Where a one-token GEMV's int8 activations come from (the kernels' Act parameter):
//   void stage(cols);                   every thread of the block, once, right after its wait
//   void load(t, b, cols, a0, a1, am);  token t's block b: values 0-15, 16-31 and meta
// Q8In: their int8 form in global memory, written by the previous kernel.
struct Q8In {
    Q8Act xq;
    static size_t smemBytes(int64_t) { return 0; }
    __device__ __forceinline__ void stage(int64_t) const {}
    __device__ __forceinline__ void load(int64_t t, int64_t b, int64_t cols, int4& a0, int4& a1, float2& am) const {
        const int4* ap = reinterpret_cast<const int4*>(xq.q + t * cols + b * 32);
        a0 = ap[0];
        a1 = ap[1];
        am = xq.meta[t * (cols / 32) + b];
    }
};

// NormIn: rmsnorm(x) * gamma in its int8 form, made by every block right after
// its wait into shared memory (the add+rmsnorm kernel before the GEMV folded in,
// its residual add done by the GEMV before: GemvJob::residual); block 0 also
// writes the norm kernel's outputs, so the fold changes no result. Why: a
// separate norm kernel costs a launch and a grid completion on the step's
// critical path. Measured (H100, docs/PERFORMANCE.md, thirty-first session):
// on 576-wide rows (smollm2: 60-192 blocks reading 2.3 KB each) the step takes
// 1.2 % less GPU time, so it is on (gemvFoldFits); on 4096-wide rows every one
// of the split GEMVs' 264 blocks reads 32 KB after its wait and llama3-8b
// decodes 7.5 % slower, so there it is off. The arithmetic is rmsNormRegKernel's
// (ops.cu); only the order of the block's sum of squares differs. Shared
// memory: values 0-15 of every block (16 bytes each), then values 16-31, then
// the metas, so a warp's loads of consecutive blocks do not collide in banks.
// CPT: float4s of the row per thread (cols <= CPT * 4 * blockDim.x).
template <int CPT>
struct NormIn {
    NormQ8 n;
    static size_t smemBytes(int64_t cols) { return static_cast<size_t>(cols) + static_cast<size_t>(cols / 32) * 8; }
    __device__ static uint8_t* mem() {
        extern __shared__ __align__(16) uint8_t gemvStaged[];
        return gemvStaged;
    }
    // Every thread of the block calls it once.
    __device__ __forceinline__ void stage(int64_t cols) const {
        uint8_t* sm = mem();
        const int nch = static_cast<int>(cols / 4);
        const float4* xr = reinterpret_cast<const float4*>(n.x);
        const float4* gr = reinterpret_cast<const float4*>(n.gamma);
        float4 v[CPT], g[CPT];
        float ss = 0.0f;
#pragma unroll
        for (int k = 0; k < CPT; ++k) {
            const int c = k * blockDim.x + threadIdx.x;
            v[k] = g[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (c < nch) {
                v[k] = xr[c];
                g[k] = gr[c];
            }
            ss += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
        }
        __shared__ float partial[32];
        const float inv = rsqrtf(blockSum(ss, partial) / static_cast<float>(cols) + n.eps);
        float2* metas = reinterpret_cast<float2*>(sm + cols);
#pragma unroll
        for (int k = 0; k < CPT; ++k) {
            if (k * static_cast<int>(blockDim.x) >= nch) break;  // block-uniform: whole warps quantise together
            const int c = k * blockDim.x + threadIdx.x;
            const float4 o = make_float4(v[k].x * inv * g[k].x, v[k].y * inv * g[k].y, v[k].z * inv * g[k].z,
                                         v[k].w * inv * g[k].w);
            float2 meta;
            const int word = quantizeQuad(o, meta);  // nch % 8 == 0: an 8-lane group is one 32-block
            if (c < nch) {
                const int b = c >> 3, j = c & 7;
                *reinterpret_cast<int*>(sm + (j < 4 ? 0 : cols / 2) + b * 16 + (j & 3) * 4) = word;
                if (j == 0) metas[b] = meta;
                if (blockIdx.x == 0) {
                    reinterpret_cast<float4*>(n.y)[c] = o;
                    reinterpret_cast<int*>(n.q8)[c] = word;
                    if (j == 0) n.meta[b] = meta;
                }
            }
        }
        __syncthreads();
    }
    // One token: t is 0.
    __device__ __forceinline__ void load(int64_t, int64_t b, int64_t cols, int4& a0, int4& a1, float2& am) const {
        const uint8_t* sm = mem();
        a0 = *reinterpret_cast<const int4*>(sm + b * 16);
        a1 = *reinterpret_cast<const int4*>(sm + cols / 2 + b * 16);
        am = reinterpret_cast<const float2*>(sm + cols)[b];
    }
};
constexpr int kNormMaxCpt = 8;

// Whether a NormIn holds rows of `cols` at `threads` threads a block.
inline bool normFits(int64_t cols, int threads) {
    return cols % 32 == 0 && cols / 4 <= int64_t(kNormMaxCpt) * threads;
}

// fn(NormIn<CPT>{src}) with the smaller of the two sizes that holds rows of
// `cols` at `threads` threads a block (normFits must hold).
template <class Fn>
void withNormIn(int64_t cols, int threads, NormQ8 src, Fn&& fn) {
    if (cols / 4 <= int64_t(4) * threads) fn(NormIn<4>{src});
    else fn(NormIn<kNormMaxCpt>{src});
}

}  // namespace kestrel::cuda::gemvdev
