// The k best values of each row of a matrix, for sampling a batch's logits
// without sending whole rows to the host (a 16-row step of a 128k vocabulary
// is 8 MB of logits; its 16 x 64 best are 8 KB).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kestrel::cuda {

constexpr int kTopKMax = 256;

// x: [rows, cols]; out[r * k + i] = (value, column as int bits) of row r's i-th
// best (ties: lower column first). k <= min(cols, kTopKMax).
void launchTopK(const float* x, int64_t rows, int64_t cols, int k, float2* out, cudaStream_t stream);

}  // namespace kestrel::cuda
