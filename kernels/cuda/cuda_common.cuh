// Device helpers shared by the kernels of kernels/cuda (included by .cu files only).
#pragma once

#include "step_trace.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <set>
#include <tuple>
#include <utility>

namespace kestrel::cuda {

constexpr int kWarp = 32;

__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warpMax(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// An int32 with |v| < 2^22 (an int8 dot of a 32-block) as a float, exactly:
// the bits of 1.5 * 2^23 + v less 1.5 * 2^23. An IADD and an FADD, where I2F
// runs on a slower pipe that the tensor-core epilogues saturate.
// An integer accumulator (an mma's) started at kBiasedZero already holds those
// bits, so only the FADD is left: biasedIntToFloat.
constexpr int kBiasedZero = 0x4B400000;
__device__ __forceinline__ float biasedIntToFloat(int bits) { return __int_as_float(bits) - 12582912.0f; }
__device__ __forceinline__ float smallIntToFloat(int v) { return biasedIntToFloat(v + kBiasedZero); }

// The sum of v over the block (every thread gets it); `partial` is 32 floats of
// shared memory. Two barriers.
__device__ __forceinline__ float blockSum(float v, float* partial) {
    v = warpSum(v);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        float t = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f;
        t = warpSum(t);
        if (threadIdx.x == 0) partial[0] = t;
    }
    __syncthreads();
    return partial[0];
}

// The int8 form of 4 values of a 32-block whose 8 quads are held by 8
// consecutive lanes (all 8 call this together): the 4 quants packed in an int,
// and in meta (d, d * the block's quant sum), d = absmax / 127; values are
// divided by d, as the CPU reference does.
__device__ __forceinline__ int quantizeQuad(float4 o, float2& meta) {
    float amax = fmaxf(fmaxf(fabsf(o.x), fabsf(o.y)), fmaxf(fabsf(o.z), fabsf(o.w)));
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 4));
    const float d = amax / 127.0f;
    const int q0 = __float2int_rn(d > 0.0f ? o.x / d : 0.0f);
    const int q1 = __float2int_rn(d > 0.0f ? o.y / d : 0.0f);
    const int q2 = __float2int_rn(d > 0.0f ? o.z / d : 0.0f);
    const int q3 = __float2int_rn(d > 0.0f ? o.w / d : 0.0f);
    int sum = q0 + q1 + q2 + q3;
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    sum += __shfl_xor_sync(0xffffffffu, sum, 4);
    meta = make_float2(d, d * static_cast<float>(sum));
    return (q0 & 0xff) | ((q1 & 0xff) << 8) | ((q2 & 0xff) << 16) | ((q3 & 0xff) << 24);
}

__device__ __forceinline__ float halfBits(uint16_t h) { return __half2float(__ushort_as_half(h)); }

#ifdef KESTREL_CUDA_STEP_TRACE
// The in-graph timeline (step_trace.h). Each .cu file is its own module, with its
// own copy of the pointer, and registers a setter for it.
namespace steptrace {
void registerModule(void (*setter)(unsigned long long*));
void countLaunch();
static __device__ unsigned long long* gBuffer = nullptr;
static void setThisModule(unsigned long long* dev) { cudaMemcpyToSymbol(gBuffer, &dev, sizeof dev); }
[[maybe_unused]] static const bool gRegistered = (registerModule(&setThisModule), true);

__device__ __forceinline__ unsigned long long globalTimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
}  // namespace steptrace
#endif

// Programmatic dependent launch (on unless KESTREL_CUDA_PDL=0): a kernel may start while
// the one before it drains; everything that reads the previous kernel's output
// sits after pdlWait(). Weight loads (constant during a step) may come before.
// Without the launch attribute both instructions are no-ops.
// Every kernel's thread 0 of block 0 calls it exactly once (the step trace relies on it).
__device__ __forceinline__ void pdlWait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#ifdef KESTREL_CUDA_STEP_TRACE
    // The slot's atomic is issued before the wait so that its round trip hides behind it.
    unsigned long long* trace = nullptr;
    unsigned long long slot = 0, arrived = 0;
    if (threadIdx.x == 0 && threadIdx.y == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0) {
        trace = steptrace::gBuffer;
        if (trace) {
            arrived = steptrace::globalTimer();
            slot = atomicAdd(trace, 1ull);
        }
    }
#endif
    asm volatile("griddepcontrol.wait;" ::: "memory");
#ifdef KESTREL_CUDA_STEP_TRACE
    if (trace && slot < static_cast<unsigned long long>(steptrace::kCapacity)) {
        trace[2 + 2 * slot] = arrived;
        trace[3 + 2 * slot] = steptrace::globalTimer();
    }
#endif
#endif
}
__device__ __forceinline__ void pdlTrigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// The start of a kernel that reads its predecessor's output from the first
// instruction: lets the next kernel launch, then waits. Triggering first lets
// the next kernel's blocks take slots as this kernel's predecessor drains and
// request their weights (the one-token GEMVs do that before their pdlWait()),
// instead of launching only once the predecessor has completed. Safe because
// every kernel writes only after its own pdlWait(), and a kernel's wait returns
// only once its predecessor (which waited on its own) has completed.
// -DKESTREL_PDL_LATE_TRIGGER restores wait-then-trigger (to compare: measured
// the same speed on an H200, docs/PERFORMANCE.md; kept as never slower).
__device__ __forceinline__ void pdlEnter() {
#ifdef KESTREL_PDL_LATE_TRIGGER
    pdlWait();
    pdlTrigger();
#else
    pdlTrigger();
    pdlWait();
#endif
}

// A comparison switch: on unless the environment sets `name` to 0 (read once per call
// site: keep the result in a static).
inline bool switchedOn(const char* name) {
    const char* v = std::getenv(name);
    return !(v && v[0] == '0');
}

inline bool pdlEnabled() {
    static const bool on = switchedOn("KESTREL_CUDA_PDL");
    return on;
}

// How a launch relates to the kernels around it: PDL (the default for every
// kernel of this library, so that it is one switch), or cooperative (all blocks
// resident at once, for grid-wide barriers; the launch fails instead of hanging
// when they cannot be).
enum class Launch { Pdl, Cooperative };

// smemBytes: dynamic shared memory (above 48 KB the kernel must have opted in).
template <typename... KArgs, typename... Args>
inline cudaError_t launchKernel(Launch mode, void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smemBytes,
                                cudaStream_t s, Args&&... args) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smemBytes;
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    if (mode == Launch::Cooperative) {
        attr[0].id = cudaLaunchAttributeCooperative;
        attr[0].val.cooperative = 1;
    } else {
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
    }
    cfg.attrs = attr;
    cfg.numAttrs = mode == Launch::Cooperative || pdlEnabled() ? 1 : 0;
#ifdef KESTREL_CUDA_STEP_TRACE
    steptrace::countLaunch();
#endif
    return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

// Lets `kernel` use `bytes` of dynamic shared memory: above 48 KB a kernel must opt in,
// once per (kernel, device, size).
inline void optInSharedMemory(const void* kernel, size_t bytes) {
    if (bytes <= 48 * 1024) return;
    int dev = 0;
    cudaGetDevice(&dev);
    static std::mutex mu;
    static std::set<std::tuple<const void*, int, size_t>> done;
    const std::lock_guard<std::mutex> lock(mu);
    if (done.emplace(kernel, dev, bytes).second)
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

template <typename... KArgs, typename... Args>
inline void launchKSmem(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smemBytes, cudaStream_t s,
                        Args&&... args) {
    optInSharedMemory(reinterpret_cast<const void*>(kernel), smemBytes);
    launchKernel(Launch::Pdl, kernel, grid, block, smemBytes, s, std::forward<Args>(args)...);
}

template <typename... KArgs, typename... Args>
inline void launchK(void (*kernel)(KArgs...), dim3 grid, dim3 block, cudaStream_t s, Args&&... args) {
    launchKSmem(kernel, grid, block, 0, s, std::forward<Args>(args)...);
}

// A current-device attribute, read once per device.
template <cudaDeviceAttr A>
inline int deviceAttribute() {
    static int values[16] = {};
    int dev = 0;
    cudaGetDevice(&dev);
    int& v = values[dev & 15];
    if (v == 0) cudaDeviceGetAttribute(&v, A, dev);
    return v;
}
// Compute capability major (tensor-core paths need 8+) and SM count (grid sizing).
inline int deviceMajor() { return deviceAttribute<cudaDevAttrComputeCapabilityMajor>(); }
inline int smCount() { return deviceAttribute<cudaDevAttrMultiProcessorCount>(); }

inline unsigned ceilDiv(int64_t a, int64_t b) { return static_cast<unsigned>((a + b - 1) / b); }

}  // namespace kestrel::cuda
