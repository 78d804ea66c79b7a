// Device helpers shared by the kernels of kernels/cuda (included by .cu files only).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
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
__device__ __forceinline__ float smallIntToFloat(int v) { return __int_as_float(v + 0x4B400000) - 12582912.0f; }

__device__ __forceinline__ float halfBits(uint16_t h) { return __half2float(__ushort_as_half(h)); }

// Programmatic dependent launch (on unless KESTREL_CUDA_PDL=0): a kernel may start while
// the one before it drains; everything that reads the previous kernel's output
// sits after pdlWait(). Weight loads (constant during a step) may come before.
// Without the launch attribute both instructions are no-ops.
__device__ __forceinline__ void pdlWait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdlTrigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

inline bool pdlEnabled() {
    static const bool on = [] {
        const char* v = std::getenv("KESTREL_CUDA_PDL");
        return !(v && v[0] == '0');
    }();
    return on;
}

// Every kernel of this library launches through here so that PDL is one switch.
// smemBytes: dynamic shared memory (above 48 KB the kernel must have opted in).
template <typename... KArgs, typename... Args>
inline void launchKSmem(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smemBytes, cudaStream_t s,
                        Args&&... args) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smemBytes;
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pdlEnabled() ? 1 : 0;
    cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
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
