// Prefetching weights into L2 (see l2_prefetch.cuh).
#include "cuda_common.cuh"
#include "dev_format.cuh"
#include "l2_prefetch.cuh"

namespace kestrel::cuda {
namespace {

// Each thread issues whole chunks (prefetchL2), many threads on many SMs.
constexpr uint64_t kChunk = 4096;
constexpr int kThreads = 64;

__global__ void __launch_bounds__(kThreads) l2PrefetchKernel(L2Ranges r) {
    const uint64_t tid = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const uint64_t threads = static_cast<uint64_t>(gridDim.x) * blockDim.x;
    for (int i = 0; i < r.count; ++i) {
        const uint64_t bytes = r.bytes[i] & ~uint64_t{15};  // bulk sizes are multiples of 16
        const uint8_t* base = static_cast<const uint8_t*>(r.p[i]);
        for (uint64_t c = tid; c * kChunk < bytes; c += threads) {
            const uint64_t left = bytes - c * kChunk;
            prefetchL2(base + c * kChunk, static_cast<uint32_t>(left < kChunk ? left : kChunk));
        }
    }
}

}  // namespace

uint64_t matrixRowBytes(const DevMatrix& w) {
    if (w.format == DevFormat::F16) return static_cast<uint64_t>(w.cols) * 2;
    return static_cast<uint64_t>(w.cols / 32) * (quantBytesOf(w.format) + scaleBytesOf(w.format));
}

bool appendMatrixRows(L2Ranges& r, const DevMatrix& w, int64_t rows) {
    rows = rows < w.rows ? rows : w.rows;
    if (rows <= 0) return true;
    const bool f16 = w.format == DevFormat::F16;
    if (r.count + (f16 ? 1 : 2) > L2Ranges::kMax) return false;
    const uint64_t blocks = static_cast<uint64_t>(rows) * static_cast<uint64_t>(w.cols / 32);
    r.p[r.count] = w.qs;
    r.bytes[r.count++] = f16 ? static_cast<uint64_t>(rows) * w.cols * 2 : blocks * quantBytesOf(w.format);
    if (!f16) {
        r.p[r.count] = w.scales;
        r.bytes[r.count++] = blocks * scaleBytesOf(w.format);
    }
    return true;
}

void launchL2Prefetch(const L2Ranges& r, cudaStream_t stream) {
    uint64_t chunks = 0;
    for (int i = 0; i < r.count; ++i) chunks += (r.bytes[i] + kChunk - 1) / kChunk;
    if (chunks == 0) return;
    // Spread over many SMs: one SM's copy engine alone would not keep DRAM busy.
    const uint64_t blocks = (chunks + kThreads - 1) / kThreads;
    const unsigned grid = static_cast<unsigned>(blocks < 128 ? (blocks < 1 ? 1 : blocks) : 128);
    // A plain launch: this kernel sits on a side branch and overlaps whatever runs.
    l2PrefetchKernel<<<grid, kThreads, 0, stream>>>(r);
}

}  // namespace kestrel::cuda
