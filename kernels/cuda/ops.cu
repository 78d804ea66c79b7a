// Norms, RoPE, KV writes, GLU and vector helpers.
#include "cuda_common.cuh"
#include "ops.cuh"
#include "ops_dev.cuh"

#include <algorithm>

namespace kestrel::cuda {
namespace {

__device__ __forceinline__ int64_t kvOffset(const KvDev& kv, int64_t token, int64_t p) {
    return kvRowOffset(kv, kvTableOf(kv, token), p);
}

constexpr int kNormThreads = 512;

__global__ void rmsNormKernel(const float* x, const float* addB, float* sumOut, const float* __restrict__ gamma,
                              float eps, float* y, int64_t groupSize, int8_t* q8, float2* q8meta) {
    pdlEnter();
    const int64_t g = blockIdx.x;
    const float* xr = x + g * groupSize;
    float ss = 0.0f;
    for (int64_t i = threadIdx.x; i < groupSize; i += blockDim.x) {
        float v = xr[i];
        if (addB) {
            v += addB[g * groupSize + i];
            sumOut[g * groupSize + i] = v;
        }
        ss += v * v;
    }
    __shared__ float partial[32];
    const float inv = rsqrtf(blockSum(ss, partial) / static_cast<float>(groupSize) + eps);
    const float* src = addB ? sumOut + g * groupSize : xr;
    float* yr = y + g * groupSize;
    if (!q8) {
        for (int64_t i = threadIdx.x; i < groupSize; i += blockDim.x) yr[i] = src[i] * inv * gamma[i];
        return;
    }
    // One warp per 32-block, one lane per value: coalesced, and the block's
    // absmax and sum are warp reductions.
    const int64_t nb = groupSize / 32;
    const int lane = threadIdx.x & 31;
    for (int64_t b = threadIdx.x >> 5; b < nb; b += blockDim.x >> 5) {
        const int64_t c = b * 32 + lane;
        const float v = src[c] * inv * gamma[c];
        yr[c] = v;
        const float amax = warpMax(fabsf(v));
        const float d = amax / 127.0f;
        const int qv = __float2int_rn(d > 0.0f ? v / d : 0.0f);
        const float sum = warpSum(static_cast<float>(qv));
        q8[g * groupSize + c] = static_cast<int8_t>(qv);
        if (lane == 0) q8meta[g * nb + b] = make_float2(d, d * sum);
    }
}

// One pass for rows that fit in registers: each thread holds CPT float4 of the
// row, so x (and addB) are read once, the block reduces once, and the int8 form
// is made from registers (8 lanes per 32-block, 3-step shuffles). Latency is one
// load round plus one reduction instead of three passes over memory.
template <int CPT>
__global__ void __launch_bounds__(1024)
    rmsNormRegKernel(const float* x, const float* addB, float* sumOut, const float* __restrict__ gamma, float eps,
                     float* y, int64_t groupSize, int8_t* q8, float2* q8meta) {
    const int64_t g = blockIdx.x;
    const int nch = static_cast<int>(groupSize / 4);
    // gamma is a weight: read before the wait, its latency under the previous kernel's tail.
    const float4* gr = reinterpret_cast<const float4*>(gamma);
    float4 gm[CPT];
#pragma unroll
    for (int k = 0; k < CPT; ++k) {
        const int c = k * blockDim.x + threadIdx.x;
        gm[k] = c < nch ? gr[c] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    pdlEnter();
    const float4* xr = reinterpret_cast<const float4*>(x + g * groupSize);
    const float4* br = addB ? reinterpret_cast<const float4*>(addB + g * groupSize) : nullptr;
    float4 v[CPT];
    float ss = 0.0f;
#pragma unroll
    for (int k = 0; k < CPT; ++k) {
        const int c = k * blockDim.x + threadIdx.x;
        v[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (c < nch) {
            v[k] = xr[c];
            if (br) {
                const float4 b = br[c];
                v[k].x += b.x;
                v[k].y += b.y;
                v[k].z += b.z;
                v[k].w += b.w;
            }
        }
        ss += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
    }
    __shared__ float partial[32];
    const float inv = rsqrtf(blockSum(ss, partial) / static_cast<float>(groupSize) + eps);
    float4* yr = reinterpret_cast<float4*>(y + g * groupSize);
    float4* sr = addB ? reinterpret_cast<float4*>(sumOut + g * groupSize) : nullptr;
#pragma unroll
    for (int k = 0; k < CPT; ++k) {
        const int c = k * blockDim.x + threadIdx.x;
        const bool ok = c < nch;
        float4 o = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (ok) {
            o = make_float4(v[k].x * inv * gm[k].x, v[k].y * inv * gm[k].y, v[k].z * inv * gm[k].z, v[k].w * inv * gm[k].w);
            if (sr) sr[c] = v[k];
            yr[c] = o;
        }
        if (q8) {  // nch % 8 == 0 and blockDim % 32 == 0: an 8-lane group is one 32-block, all valid or not
            float2 meta;
            const int word = quantizeQuad(o, meta);
            if (ok) {
                reinterpret_cast<int*>(q8 + g * groupSize)[c] = word;
                if ((threadIdx.x & 7) == 0) q8meta[g * (groupSize / 32) + c / 8] = meta;
            }
        }
    }
}

// RoPE + KV write with one block per (head, token): thread e owns element e of
// the head, so no block walks all heads serially. K heads go to the cache
// rotated, and the same block copies the V head.
__global__ void ropeStoreHeadKernel(float* q, int64_t qCols, float* k, const float* __restrict__ v, int64_t kvCols,
                                    int headDim, const int32_t* __restrict__ positions, RopeDev r, KvDev kv) {
    pdlEnter();
    const int64_t t = blockIdx.y;
    const int h = blockIdx.x;
    const int qHeads = static_cast<int>(qCols / headDim);
    const bool isK = h >= qHeads;
    float* head = isK ? k + t * kvCols + static_cast<int64_t>(h - qHeads) * headDim : q + t * qCols + static_cast<int64_t>(h) * headDim;
    const int e = threadIdx.x;
    const int p = positions[t];
    float out = 0.0f;
    if (e < headDim) {
        out = head[e];
        const int pairs = r.dims / 2;
        if (e < r.dims) {
            const int i = r.neox ? e % pairs : e / 2;
            const int i0 = r.neox ? i : 2 * i;
            const int i1 = r.neox ? i + pairs : 2 * i + 1;
            float s, c;
            sincosf(static_cast<float>(p) * r.invFreq[i], &s, &c);
            s *= r.mscale;
            c *= r.mscale;
            const float x0 = head[i0], x1 = head[i1];
            out = e == i0 ? x0 * c - x1 * s : x0 * s + x1 * c;
        }
    }
    __syncthreads();  // every thread has read its pair before any writes back
    if (e >= headDim) return;
    head[e] = out;
    if (isK) {
        const int64_t off = kvOffset(kv, t, p) + static_cast<int64_t>(h - qHeads) * headDim + e;
        kvStoreValue(kv, kv.k, off, out);
        kvStoreValue(kv, kv.v, off, v[t * kvCols + static_cast<int64_t>(h - qHeads) * headDim + e]);
    }
}

__global__ void ropeKernel(float* x, int64_t cols, int headDim, const int32_t* __restrict__ positions, RopeDev r) {
    pdlEnter();
    const int64_t row = blockIdx.x;
    const float pos = static_cast<float>(positions[row]);
    const int pairs = r.dims / 2;
    const int64_t heads = cols / headDim;
    for (int64_t w = threadIdx.x; w < heads * pairs; w += blockDim.x)
        rotatePair(x + row * cols + (w / pairs) * headDim, static_cast<int>(w % pairs), pos, r);
}

__global__ void storeKvKernel(const float* __restrict__ k, const float* __restrict__ v, int64_t rowWidth,
                              const int32_t* __restrict__ positions, KvDev kv) {
    pdlEnter();
    const int64_t t = blockIdx.x;
    const int64_t off = kvOffset(kv, t, positions[t]);
    for (int64_t c = threadIdx.x; c < rowWidth; c += blockDim.x) {
        kvStoreValue(kv, kv.k, off + c, k[t * rowWidth + c]);
        kvStoreValue(kv, kv.v, off + c, v[t * rowWidth + c]);
    }
}

__global__ void ropeStoreKernel(float* q, int64_t qCols, float* k, const float* __restrict__ v, int64_t kvCols,
                                int headDim, const int32_t* __restrict__ positions, RopeDev r, KvDev kv) {
    pdlEnter();
    const int64_t t = blockIdx.x;
    const int p = positions[t];
    const float pos = static_cast<float>(p);
    const int pairs = r.dims / 2;
    const int64_t qHeads = qCols / headDim, kHeads = kvCols / headDim;
    for (int64_t w = threadIdx.x; w < (qHeads + kHeads) * pairs; w += blockDim.x) {
        const int64_t h = w / pairs;
        float* head = h < qHeads ? q + t * qCols + h * headDim : k + t * kvCols + (h - qHeads) * headDim;
        rotatePair(head, static_cast<int>(w % pairs), pos, r);
    }
    __syncthreads();  // the block's global writes are visible to the block after the barrier
    const int64_t off = kvOffset(kv, t, p);
    for (int64_t c = threadIdx.x; c < kvCols; c += blockDim.x) {
        kvStoreValue(kv, kv.k, off + c, k[t * kvCols + c]);
        kvStoreValue(kv, kv.v, off + c, v[t * kvCols + c]);
    }
}

__global__ void gluKernel(const float* gate, const float* up, float* out, int64_t n, GluAct act) {
    pdlEnter();
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = gluAct(gate[i], act) * up[i];
}

__global__ void addKernel(const float* a, const float* b, float* out, int64_t n) {
    pdlEnter();
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

__global__ void scaleKernel(float* x, float s, int64_t n) {
    pdlEnter();
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}

__global__ void softcapKernel(float* x, float cap, int64_t n) {
    pdlEnter();
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) x[i] = cap * tanhf(x[i] / cap);
}

__global__ void addBiasKernel(float* x, const float* __restrict__ bias, int64_t cols, int64_t n) {
    pdlEnter();
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) x[i] += bias[i % cols];
}

unsigned blocksFor(int64_t n, int threads = 256) { return ceilDiv(n, threads); }

}  // namespace

void launchRmsNorm(const float* x, const float* addB, float* sumOut, const float* gamma, float eps, float* y,
                   int64_t rows, int64_t cols, int64_t groupSize, int8_t* q8, float2* q8meta, cudaStream_t stream) {
    const int64_t groups = rows * (cols / groupSize);
    if (groups == 0) return;
    if (q8 && (groupSize != cols || cols % 32 != 0)) q8 = nullptr;
    const auto aligned = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; };
    const int64_t nch = groupSize / 4;
    const int64_t threads = std::min<int64_t>(1024, (nch + 31) / 32 * 32);
    const int64_t cpt = threads > 0 ? (nch + threads - 1) / threads : 0;
    if (groupSize % 4 == 0 && cpt >= 1 && cpt <= 8 && aligned(x) && aligned(gamma) && aligned(y) &&
        (!addB || (aligned(addB) && aligned(sumOut)))) {
        const dim3 grid(static_cast<unsigned>(groups)), block(static_cast<unsigned>(threads));
        if (cpt == 1) launchK(rmsNormRegKernel<1>, grid, block, stream, x, addB, sumOut, gamma, eps, y, groupSize, q8, q8meta);
        else if (cpt == 2) launchK(rmsNormRegKernel<2>, grid, block, stream, x, addB, sumOut, gamma, eps, y, groupSize, q8, q8meta);
        else if (cpt <= 4) launchK(rmsNormRegKernel<4>, grid, block, stream, x, addB, sumOut, gamma, eps, y, groupSize, q8, q8meta);
        else launchK(rmsNormRegKernel<8>, grid, block, stream, x, addB, sumOut, gamma, eps, y, groupSize, q8, q8meta);
        return;
    }
    launchK(rmsNormKernel, dim3(static_cast<unsigned>(groups)), dim3(kNormThreads), stream, x, addB, sumOut, gamma, eps,
            y, groupSize, q8, q8meta);
}

void launchRope(float* x, int64_t rows, int64_t cols, int headDim, const int32_t* positions, RopeDev rope,
                cudaStream_t stream) {
    if (rows == 0) return;
    launchK(ropeKernel, dim3(static_cast<unsigned>(rows)), dim3(256), stream, x, cols, headDim, positions, rope);
}

void launchStoreKv(const float* k, const float* v, int64_t tokens, int64_t rowWidth, const int32_t* positions,
                   KvDev kv, cudaStream_t stream) {
    if (tokens == 0) return;
    launchK(storeKvKernel, dim3(static_cast<unsigned>(tokens)), dim3(256), stream, k, v, rowWidth, positions, kv);
}

void launchRopeStore(float* q, int64_t qCols, float* k, const float* v, int64_t kvCols, int64_t tokens, int headDim,
                     const int32_t* positions, RopeDev rope, KvDev kv, cudaStream_t stream) {
    if (tokens == 0) return;
    if (headDim <= 1024 && qCols % headDim == 0 && kvCols % headDim == 0 && tokens <= 65535) {
        const unsigned heads = static_cast<unsigned>((qCols + kvCols) / headDim);
        launchK(ropeStoreHeadKernel, dim3(heads, static_cast<unsigned>(tokens)), dim3((headDim + 31) / 32 * 32), stream,
                q, qCols, k, v, kvCols, headDim, positions, rope, kv);
        return;
    }
    launchK(ropeStoreKernel, dim3(static_cast<unsigned>(tokens)), dim3(1024), stream, q, qCols, k, v, kvCols, headDim,
            positions, rope, kv);
}

void launchGlu(const float* gate, const float* up, float* out, int64_t n, GluAct act, cudaStream_t stream) {
    if (n > 0) launchK(gluKernel, dim3(blocksFor(n)), dim3(256), stream, gate, up, out, n, act);
}
void launchAdd(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream) {
    if (n > 0) launchK(addKernel, dim3(blocksFor(n)), dim3(256), stream, a, b, out, n);
}
void launchScale(float* x, float s, int64_t n, cudaStream_t stream) {
    if (n > 0) launchK(scaleKernel, dim3(blocksFor(n)), dim3(256), stream, x, s, n);
}
void launchSoftcap(float* x, float cap, int64_t n, cudaStream_t stream) {
    if (n > 0) launchK(softcapKernel, dim3(blocksFor(n)), dim3(256), stream, x, cap, n);
}
void launchAddBias(float* x, const float* bias, int64_t rows, int64_t cols, cudaStream_t stream) {
    const int64_t n = rows * cols;
    if (n > 0) launchK(addBiasKernel, dim3(blocksFor(n)), dim3(256), stream, x, bias, cols, n);
}
}  // namespace kestrel::cuda

namespace kestrel::cuda {
cudaError_t probeKernelAttributes(cudaFuncAttributes* attr) { return cudaFuncGetAttributes(attr, addKernel); }
}  // namespace kestrel::cuda
