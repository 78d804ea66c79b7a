// Launchers of the per-row and element-wise kernels of a transformer step.
// Float32 activations, row-major [rows, cols]. Asynchronous on `stream`;
// every launcher may be captured into a CUDA graph (no allocation, no sync).
#pragma once

#include "gemv.cuh"

#include <cuda_runtime.h>
#ifdef __CUDACC__
#include <cuda_fp16.h>
#endif

#include <cstdint>

namespace kestrel::cuda {

// The KV cache as kernels see it: positions are grouped in blocks of
// `blockSize`; token t's sequence has block table
// table + seqRows[t] * tableWidth (row 0 when seqRows is null), whose entry i
// is the physical block of positions [i * bs, (i + 1) * bs). Position p of kv
// head h starts at element (table[p / bs] * bs + p % bs) * rowStride + h * headDim.
struct KvDev {
    void* k = nullptr;
    void* v = nullptr;
    const int32_t* table = nullptr;
    const int32_t* seqRows = nullptr;
    int64_t tableWidth = 0;
    int32_t blockSize = 16;
    int64_t rowStride = 0;
    bool f16 = true;
};

#ifdef __CUDACC__
__device__ __forceinline__ const int32_t* kvTableOf(const KvDev& kv, int64_t token) {
    return kv.table + (kv.seqRows ? static_cast<int64_t>(kv.seqRows[token]) : 0) * kv.tableWidth;
}
// Element offset of position p (>= 0) in the sequence with block table `table`. Every
// key row attention reads goes through here: positions fit 32 bits, and a power-of-two
// block size (the default 16) makes the division a shift instead of a 64-bit division.
__device__ __forceinline__ int64_t kvRowOffset(const KvDev& kv, const int32_t* table, int64_t p) {
    const auto pos = static_cast<uint32_t>(p), size = static_cast<uint32_t>(kv.blockSize);
    uint32_t block, off;
    if ((size & (size - 1)) == 0) {
        block = pos >> (__ffs(static_cast<int>(size)) - 1);
        off = pos & (size - 1);
    } else {
        block = pos / size;
        off = pos - block * size;
    }
    return (static_cast<int64_t>(table[block]) * size + off) * kv.rowStride;
}
// Stores one value into the K or V slab `base` in the cache's element type.
__device__ __forceinline__ void kvStoreValue(const KvDev& kv, void* base, int64_t off, float v) {
    if (kv.f16) static_cast<__half*>(base)[off] = __float2half_rn(v);
    else static_cast<float*>(base)[off] = v;
}
#endif

// y = x / rms(x) * gamma per group of groupSize values. With `addB`: x is
// first replaced by sum = x + addB (written to sumOut, which may be x).
// With q8 (groupSize == cols, cols % 32 == 0): y is also quantised for the GEMV.
void launchRmsNorm(const float* x, const float* addB, float* sumOut, const float* gamma, float eps, float* y,
                   int64_t rows, int64_t cols, int64_t groupSize, int8_t* q8, float2* q8meta, cudaStream_t stream);

struct RopeDev {
    const float* invFreq = nullptr;  // dims/2 angular speeds (after scaling)
    float mscale = 1.0f;
    int dims = 0;
    bool neox = false;
};

// Rotates every head of x in place by its token's position.
void launchRope(float* x, int64_t rows, int64_t cols, int headDim, const int32_t* positions, RopeDev rope,
                cudaStream_t stream);

// Writes rows of k and v ([tokens, rowWidth]) at their positions.
void launchStoreKv(const float* k, const float* v, int64_t tokens, int64_t rowWidth, const int32_t* positions,
                   KvDev kv, cudaStream_t stream);

// RoPE on q and k, then k and v into the cache: one launch for the three.
void launchRopeStore(float* q, int64_t qCols, float* k, const float* v, int64_t kvCols, int64_t tokens, int headDim,
                     const int32_t* positions, RopeDev rope, KvDev kv, cudaStream_t stream);

void launchGlu(const float* gate, const float* up, float* out, int64_t n, GluAct act, cudaStream_t stream);
void launchAdd(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream);
void launchScale(float* x, float s, int64_t n, cudaStream_t stream);
void launchSoftcap(float* x, float cap, int64_t n, cudaStream_t stream);
void launchAddBias(float* x, const float* bias, int64_t rows, int64_t cols, cudaStream_t stream);


}  // namespace kestrel::cuda

namespace kestrel::cuda {
// Attributes of one of this library's kernels: fails with
// cudaErrorInvalidDeviceFunction (or NoKernelImageForDevice) when the build
// has no code for the current GPU.
cudaError_t probeKernelAttributes(cudaFuncAttributes* attr);
}  // namespace kestrel::cuda
