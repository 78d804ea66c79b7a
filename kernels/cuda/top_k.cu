// The k best values of each row (see top_k.cuh).
//
// One block of 1024 threads per row. Radix select on an order-preserving
// 32-bit key: three passes over the row histogram 12, 12 and 8 bits of the
// keys that share the digits found so far, which pins the k-th largest key
// exactly. A last pass gathers the keys above it, then those equal to it in
// index order (so ties go to the lower column, as argmax does), and a bitonic
// sort in shared memory puts the k in rank order. A 128k-value row is read
// four times, from L2. The histogram adds are aggregated per warp: logits share
// few bins, and one shared word taking up to 32 atomics per warp instruction
// made a 128k row cost ~0.1 ms. k = 1 (greedy) is a one-pass arg max. Both
// measured on an H100 (docs/PERFORMANCE.md, 2026-12-05): decode +1-4 %.
#include "cuda_common.cuh"
#include "top_k.cuh"

#include <cub/block/block_scan.cuh>

namespace kestrel::cuda {
namespace {

constexpr int kThreads = 1024;
constexpr int kBins = 4096;

// Larger float, larger key; NaN ranks below everything.
__device__ __forceinline__ uint32_t orderKey(float f) {
    if (f != f) return 0;
    const uint32_t u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ bool ranksAbove(float va, int32_t ia, float vb, int32_t ib) {
    return va > vb || (va == vb && ia < ib);
}

__global__ void __launch_bounds__(kThreads) topKKernel(const float* __restrict__ x, int64_t cols, int k,
                                                      float2* __restrict__ out) {
    using Scan = cub::BlockScan<int, kThreads>;
    __shared__ typename Scan::TempStorage scanTemp;
    __shared__ unsigned hist[kBins];
    __shared__ int sDigit, sAbove;
    __shared__ float sVal[kTopKMax];
    __shared__ int32_t sId[kTopKMax];
    __shared__ int sGreater;
    pdlEnter();
    const float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
    const int tid = threadIdx.x;

    uint32_t prefix = 0, known = 0;  // the digits of the k-th key found so far, and their bits
    int remaining = k;               // how many of the keys matching `prefix` still to take
    constexpr int kShift[3] = {20, 8, 0};
    constexpr int kWidth[3] = {12, 12, 8};
#pragma unroll
    for (int pass = 0; pass < 3; ++pass) {
        const uint32_t digitMask = (1u << kWidth[pass]) - 1u;
        const int bins = 1 << kWidth[pass];
        for (int i = tid; i < bins; i += kThreads) hist[i] = 0;
        __syncthreads();
        for (int64_t i = tid; i < cols; i += kThreads) {
            const uint32_t key = orderKey(row[i]);
            // Logits cluster in a few bins (similar exponents): lanes of a warp that share a bin
            // add once together, instead of queueing up to 32 atomics on one shared word.
            const int bin = (key & known) == prefix ? static_cast<int>((key >> kShift[pass]) & digitMask) : -1;
            const unsigned same = __match_any_sync(__activemask(), bin);
            if (bin >= 0 && (threadIdx.x & 31) == __ffs(same) - 1) atomicAdd(&hist[bin], __popc(same));
        }
        __syncthreads();
        // Counts from the top digit down: thread t sums digits bins-1-4t .. bins-4-4t.
        int local[4], sum = 0;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int d = bins - 1 - (4 * tid + j);
            local[j] = d >= 0 ? static_cast<int>(hist[d]) : 0;
            sum += local[j];
        }
        int before = 0;  // keys with a higher digit than this thread's first
        Scan(scanTemp).ExclusiveSum(sum, before);
        int above = before;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            if (local[j] > 0 && above < remaining && above + local[j] >= remaining) {
                sDigit = bins - 1 - (4 * tid + j);
                sAbove = above;
            }
            above += local[j];
        }
        __syncthreads();
        prefix |= static_cast<uint32_t>(sDigit) << kShift[pass];
        known |= digitMask << kShift[pass];
        remaining -= sAbove;
        __syncthreads();  // sDigit and sAbove are rewritten by the next pass
    }
    // prefix is the k-th key: every larger key, then the first `remaining` equal ones.
    const int greater = k - remaining;
    if (tid == 0) sGreater = 0;
    __syncthreads();
    for (int64_t i = tid; i < cols; i += kThreads) {
        const float v = row[i];
        if (orderKey(v) > prefix) {
            const int slot = atomicAdd(&sGreater, 1);
            sVal[slot] = v;
            sId[slot] = static_cast<int32_t>(i);
        }
    }
    int taken = 0;
    for (int64_t base = 0; base < cols && taken < remaining; base += kThreads) {
        const int64_t i = base + tid;
        const float v = i < cols ? row[i] : 0.0f;
        const int equal = i < cols && orderKey(v) == prefix ? 1 : 0;
        int before = 0, total = 0;
        Scan(scanTemp).ExclusiveSum(equal, before, total);
        if (equal && taken + before < remaining) {
            sVal[greater + taken + before] = v;
            sId[greater + taken + before] = static_cast<int32_t>(i);
        }
        taken += total;  // the same in every thread
        __syncthreads();  // scanTemp is reused
    }
    // Pad to a power of two with entries that rank last, then sort.
    int n = 1;
    while (n < k) n <<= 1;
    for (int i = k + tid; i < n; i += kThreads) {
        sVal[i] = -INFINITY;
        sId[i] = INT32_MAX;
    }
    __syncthreads();
    for (int size = 2; size <= n; size <<= 1)
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int i = tid; i < n; i += kThreads) {
                const int j = i ^ stride;
                if (j > i) {
                    const bool descending = (i & size) == 0;  // rank order within each run
                    const bool swap = descending ? ranksAbove(sVal[j], sId[j], sVal[i], sId[i])
                                                 : ranksAbove(sVal[i], sId[i], sVal[j], sId[j]);
                    if (swap) {
                        const float tv = sVal[i];
                        sVal[i] = sVal[j];
                        sVal[j] = tv;
                        const int32_t ti = sId[i];
                        sId[i] = sId[j];
                        sId[j] = ti;
                    }
                }
            }
            __syncthreads();
        }
    for (int i = tid; i < k; i += kThreads)
        out[static_cast<int64_t>(blockIdx.x) * k + i] = make_float2(sVal[i], __int_as_float(sId[i]));
}

// k = 1 (greedy decoding): one pass over the row and a block reduction, no
// histograms. A candidate is (orderKey << 32) | ~column: the larger wins, and
// of equal values the lower column.
__device__ __forceinline__ uint64_t candidate(float v, int64_t i) {
    return (static_cast<uint64_t>(orderKey(v)) << 32) | static_cast<uint32_t>(~static_cast<uint32_t>(i));
}
__device__ __forceinline__ uint64_t better(uint64_t a, uint64_t b) { return a > b ? a : b; }

__global__ void __launch_bounds__(kThreads) argMaxKernel(const float* __restrict__ x, int64_t cols,
                                                         float2* __restrict__ out) {
    pdlEnter();
    const float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
    uint64_t best = 0;
    if ((cols & 3) == 0 && (reinterpret_cast<uintptr_t>(row) & 15) == 0) {
        const float4* row4 = reinterpret_cast<const float4*>(row);
#pragma unroll 4
        for (int64_t i = threadIdx.x; i < cols / 4; i += kThreads) {
            const float4 v = row4[i];
            best = better(best, better(better(candidate(v.x, 4 * i), candidate(v.y, 4 * i + 1)),
                                       better(candidate(v.z, 4 * i + 2), candidate(v.w, 4 * i + 3))));
        }
    } else {
#pragma unroll 4
        for (int64_t i = threadIdx.x; i < cols; i += kThreads) best = better(best, candidate(row[i], i));
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) best = better(best, __shfl_xor_sync(0xffffffffu, best, o));
    __shared__ uint64_t warpBest[kThreads / 32];
    if ((threadIdx.x & 31) == 0) warpBest[threadIdx.x >> 5] = best;
    __syncthreads();
    if (threadIdx.x >= 32) return;
    best = warpBest[threadIdx.x];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) best = better(best, __shfl_xor_sync(0xffffffffu, best, o));
    if (threadIdx.x == 0) {
        const auto column = static_cast<int32_t>(~static_cast<uint32_t>(best));
        out[blockIdx.x] = make_float2(row[column], __int_as_float(column));
    }
}

}  // namespace

void launchTopK(const float* x, int64_t rows, int64_t cols, int k, float2* out, cudaStream_t stream) {
    if (rows <= 0 || k <= 0 || k > kTopKMax || k > cols) return;
    const dim3 grid(static_cast<unsigned>(rows)), block(kThreads);
    if (k == 1)
        launchK(argMaxKernel, grid, block, stream, x, cols, out);
    else
        launchK(topKKernel, grid, block, stream, x, cols, k, out);
}

}  // namespace kestrel::cuda
