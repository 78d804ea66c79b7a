// Norms, RoPE, KV writes, GLU and vector helpers.
#include "cuda_common.cuh"
#include "ops.cuh"

namespace kestrel::cuda {
namespace {

__device__ __forceinline__ int64_t kvOffset(const KvDev& kv, int64_t p) {
    const int64_t phys = static_cast<int64_t>(kv.table[p / kv.blockSize]) * kv.blockSize + p % kv.blockSize;
    return phys * kv.rowStride;
}

__device__ __forceinline__ void kvWrite(const KvDev& kv, void* base, int64_t off, float v) {
    if (kv.f16) static_cast<__half*>(base)[off] = __float2half_rn(v);
    else static_cast<float*>(base)[off] = v;
}

constexpr int kNormThreads = 512;

__global__ void rmsNormKernel(const float* x, const float* addB, float* sumOut, const float* __restrict__ gamma,
                              float eps, float* y, int64_t groupSize, int8_t* q8, float2* q8meta) {
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
    __shared__ float partial[kNormThreads / 32];
    ss = warpSum(ss);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = ss;
    __syncthreads();
    if (threadIdx.x < 32) {
        float v = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f;
        v = warpSum(v);
        if (threadIdx.x == 0) partial[0] = v;
    }
    __syncthreads();
    const float inv = rsqrtf(partial[0] / static_cast<float>(groupSize) + eps);
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

__global__ void ropeKernel(float* x, int64_t cols, int headDim, const int32_t* __restrict__ positions, RopeDev r) {
    const int64_t row = blockIdx.x;
    const float pos = static_cast<float>(positions[row]);
    const int pairs = r.dims / 2;
    const int64_t heads = cols / headDim;
    for (int64_t w = threadIdx.x; w < heads * pairs; w += blockDim.x)
        rotatePair(x + row * cols + (w / pairs) * headDim, static_cast<int>(w % pairs), pos, r);
}

__global__ void storeKvKernel(const float* __restrict__ k, const float* __restrict__ v, int64_t rowWidth,
                              const int32_t* __restrict__ positions, KvDev kv) {
    const int64_t t = blockIdx.x;
    const int64_t off = kvOffset(kv, positions[t]);
    for (int64_t c = threadIdx.x; c < rowWidth; c += blockDim.x) {
        kvWrite(kv, kv.k, off + c, k[t * rowWidth + c]);
        kvWrite(kv, kv.v, off + c, v[t * rowWidth + c]);
    }
}

__global__ void ropeStoreKernel(float* q, int64_t qCols, float* k, const float* __restrict__ v, int64_t kvCols,
                                int headDim, const int32_t* __restrict__ positions, RopeDev r, KvDev kv) {
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
    const int64_t off = kvOffset(kv, p);
    for (int64_t c = threadIdx.x; c < kvCols; c += blockDim.x) {
        kvWrite(kv, kv.k, off + c, k[t * kvCols + c]);
        kvWrite(kv, kv.v, off + c, v[t * kvCols + c]);
    }
}

__global__ void gluKernel(const float* gate, const float* up, float* out, int64_t n, GluAct act) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float g = gate[i];
    float a;
    if (act == GluAct::Silu) {
        a = g / (1.0f + __expf(-g));
    } else {
        const float u = 1.5957691216057308f * (g + 0.044715f * g * g * g);
        a = g / (1.0f + __expf(-u));
    }
    out[i] = a * up[i];
}

__global__ void addKernel(const float* a, const float* b, float* out, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

__global__ void scaleKernel(float* x, float s, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}

__global__ void softcapKernel(float* x, float cap, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) x[i] = cap * tanhf(x[i] / cap);
}

__global__ void addBiasKernel(float* x, const float* __restrict__ bias, int64_t cols, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) x[i] += bias[i % cols];
}

__global__ void argmaxKernel(const float* __restrict__ x, int64_t n, int32_t* out) {
    float best = -INFINITY;
    int64_t bestI = n;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        if (x[i] > best) {  // strictly greater: keeps the first of equal values per thread
            best = x[i];
            bestI = i;
        }
    __shared__ float sv[1024];
    __shared__ int64_t si[1024];
    sv[threadIdx.x] = best;
    si[threadIdx.x] = bestI;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            const float o = sv[threadIdx.x + s];
            const int64_t oi = si[threadIdx.x + s];
            if (o > sv[threadIdx.x] || (o == sv[threadIdx.x] && oi < si[threadIdx.x])) {
                sv[threadIdx.x] = o;
                si[threadIdx.x] = oi;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = static_cast<int32_t>(si[0] < n ? si[0] : 0);
}

unsigned blocksFor(int64_t n, int threads = 256) { return ceilDiv(n, threads); }

}  // namespace

void launchRmsNorm(const float* x, const float* addB, float* sumOut, const float* gamma, float eps, float* y,
                   int64_t rows, int64_t cols, int64_t groupSize, int8_t* q8, float2* q8meta, cudaStream_t stream) {
    const int64_t groups = rows * (cols / groupSize);
    if (groups == 0) return;
    if (q8 && (groupSize != cols || cols % 32 != 0)) q8 = nullptr;
    rmsNormKernel<<<static_cast<unsigned>(groups), kNormThreads, 0, stream>>>(x, addB, sumOut, gamma, eps, y,
                                                                              groupSize, q8, q8meta);
}

void launchRope(float* x, int64_t rows, int64_t cols, int headDim, const int32_t* positions, RopeDev rope,
                cudaStream_t stream) {
    if (rows == 0) return;
    ropeKernel<<<static_cast<unsigned>(rows), 256, 0, stream>>>(x, cols, headDim, positions, rope);
}

void launchStoreKv(const float* k, const float* v, int64_t tokens, int64_t rowWidth, const int32_t* positions,
                   KvDev kv, cudaStream_t stream) {
    if (tokens == 0) return;
    storeKvKernel<<<static_cast<unsigned>(tokens), 256, 0, stream>>>(k, v, rowWidth, positions, kv);
}

void launchRopeStore(float* q, int64_t qCols, float* k, const float* v, int64_t kvCols, int64_t tokens, int headDim,
                     const int32_t* positions, RopeDev rope, KvDev kv, cudaStream_t stream) {
    if (tokens == 0) return;
    ropeStoreKernel<<<static_cast<unsigned>(tokens), 1024, 0, stream>>>(q, qCols, k, v, kvCols, headDim, positions,
                                                                       rope, kv);
}

void launchGlu(const float* gate, const float* up, float* out, int64_t n, GluAct act, cudaStream_t stream) {
    if (n > 0) gluKernel<<<blocksFor(n), 256, 0, stream>>>(gate, up, out, n, act);
}
void launchAdd(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream) {
    if (n > 0) addKernel<<<blocksFor(n), 256, 0, stream>>>(a, b, out, n);
}
void launchScale(float* x, float s, int64_t n, cudaStream_t stream) {
    if (n > 0) scaleKernel<<<blocksFor(n), 256, 0, stream>>>(x, s, n);
}
void launchSoftcap(float* x, float cap, int64_t n, cudaStream_t stream) {
    if (n > 0) softcapKernel<<<blocksFor(n), 256, 0, stream>>>(x, cap, n);
}
void launchAddBias(float* x, const float* bias, int64_t rows, int64_t cols, cudaStream_t stream) {
    const int64_t n = rows * cols;
    if (n > 0) addBiasKernel<<<blocksFor(n), 256, 0, stream>>>(x, bias, cols, n);
}
void launchArgmax(const float* x, int64_t n, int32_t* out, cudaStream_t stream) {
    argmaxKernel<<<1, 1024, 0, stream>>>(x, n, out);
}

}  // namespace kestrel::cuda

namespace kestrel::cuda {
cudaError_t probeKernelAttributes(cudaFuncAttributes* attr) { return cudaFuncGetAttributes(attr, addKernel); }
}  // namespace kestrel::cuda
