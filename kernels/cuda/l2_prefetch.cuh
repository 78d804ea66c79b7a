// Prefetching weights into L2 ahead of the GEMV that reads them.
//
// Why: a one-token GEMV's first wave requests its weights before its
// griddepcontrol.wait, but every later wave (and every weight past the first
// wave) is requested only once earlier blocks retire, and between two GEMVs
// sit small latency-bound kernels (norm, attention, quantise) during which
// DRAM idles. A prefetch launched on a side branch of the step, when the GEMV
// before those kernels completes, keeps DRAM streaming the next GEMV's first
// bytes while they run (docs/PERFORMANCE.md has what it measured).
#pragma once

#include "gemv.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace kestrel::cuda {

// Byte ranges of device memory to pull into L2 (starts 16-byte aligned).
struct L2Ranges {
    static constexpr int kMax = 6;
    const void* p[kMax] = {};
    uint64_t bytes[kMax] = {};
    int count = 0;
};

// Appends the first `rows` rows of w (quants and scales) to r; false when r is full.
bool appendMatrixRows(L2Ranges& r, const DevMatrix& w, int64_t rows);

// Bytes one row of w occupies (quants and scales together).
uint64_t matrixRowBytes(const DevMatrix& w);

// Asynchronous on `stream`; returns at once when r is empty.
void launchL2Prefetch(const L2Ranges& r, cudaStream_t stream);

}  // namespace kestrel::cuda
