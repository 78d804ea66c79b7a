// Hopper's bulk copy engine (cp.async.bulk, sm_90) with mbarrier completion:
// one lane asks for a contiguous global range to land in shared memory, and any
// thread waits for it on the stage's mbarrier. The copy runs in the async proxy,
// so a warp can keep many kilobytes in flight without holding them in registers.
// Included by .cu files only; every function compiles to nothing below sm_90
// (the callers are dispatched only on sm_90 devices).
#pragma once

#include <cstdint>

namespace kestrel::cuda::bulk {

__device__ __forceinline__ uint32_t smemAddr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Before first use; `count` arrivals complete a phase (ours: 1, the issuing lane).
__device__ __forceinline__ void barrierInit(uint64_t* bar, uint32_t count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smemAddr(bar)), "r"(count) : "memory");
#endif
}

// Makes initialised barriers visible to the async proxy (the copy engine).
__device__ __forceinline__ void fenceBarrierInit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

// Orders this thread's earlier shared-memory reads before a later bulk copy
// that overwrites the same bytes (stage reuse).
__device__ __forceinline__ void fenceProxyAsync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

// The issuing lane's arrival, announcing `bytes` of copies that complete this phase.
__device__ __forceinline__ void arriveExpectTx(uint64_t* bar, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smemAddr(bar)), "r"(bytes) : "memory");
#endif
}

// A plain arrival (a consumer done with a stage): counts toward the phase's `count`.
__device__ __forceinline__ void arrive(uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smemAddr(bar)) : "memory");
#endif
}

// dst, src 16-byte aligned; bytes a multiple of 16.
__device__ __forceinline__ void copy(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smemAddr(dst)),
                 "l"(src), "r"(bytes), "r"(smemAddr(bar))
                 : "memory");
#endif
}

// Blocks until the barrier's phase `parity` (0, 1, 0, ...) has completed.
__device__ __forceinline__ void wait(uint64_t* bar, uint32_t parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint32_t done = 0;
    do {
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
            : "=r"(done)
            : "r"(smemAddr(bar)), "r"(parity)
            : "memory");
    } while (!done);
#endif
}

}  // namespace kestrel::cuda::bulk
