// The in-graph kernel timeline: builds configured with -DKESTREL_CUDA_STEP_TRACE=ON
// only (never the default: it changes every kernel's code around its wait).
//
// Why: the eager per-kernel profile (KESTREL_CUDA_PROFILE=1) times each kernel
// alone between events, without programmatic dependent launch, so it charges a
// kernel boundary 2-3 us where a replayed graph pays ~1 us (docs/PERFORMANCE.md,
// seventeenth session). In a trace build, block 0 of every kernel stamps
// %globaltimer when it reaches pdlWait() (arrived) and when the wait returns
// (released). A wait returns once the previous kernel has completed, so the
// releases in order are the step's critical path, and the gap from one release
// to the next is what that kernel costs the step with every overlap included.
// engine/backend/cuda/cuda_step_trace.cpp reads them after each replayed step.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kestrel::cuda::steptrace {

// %globaltimer nanoseconds of one kernel's block 0.
struct Stamp {
    unsigned long long arrived, released;
};

// Stamps per step; the buffer is a counter word, a pad word, then the stamps.
constexpr int64_t kCapacity = 4096;
constexpr size_t kBufferWords = 2 + 2 * kCapacity;

// Whether the kernels were built with KESTREL_CUDA_STEP_TRACE.
bool compiledIn();
// Points every kernel module's trace pointer at `dev` (kBufferWords words; null: off).
void setBuffer(unsigned long long* dev);
// Kernels launched through launchKernel so far (0 unless compiled in).
int64_t launches();

}  // namespace kestrel::cuda::steptrace
