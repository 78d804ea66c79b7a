// The one-token GEMV of decode with each row split over several warps (device
// code and its host launcher; included by gemv.cu and gemv_rope.cu only).
//
// Why: at one token a step reads every weight once, so the GEMVs should run at
// DRAM bandwidth. The warp-per-row kernel (gemv.cu) walks a 14336-wide row
// (llama3-8b's ffn down) in four rounds of load, wait, multiply: 4096 warps,
// one wave, 1.8 TB/s under ncu on an H200, where the logits GEMV (4096-wide
// rows, one round per warp, many waves) reaches 3.9 TB/s. A software-pipelined
// version (a ring of register buffers per warp, activations staged in shared
// memory) was measured no faster (docs/PERFORMANCE.md): the kernels are bound
// by latency per warp, not by bytes requested. So here every warp does one
// round: row k's blocks are dealt to SPLIT warps of one block (CH blocks per
// lane each), all of a warp's weight loads are issued before pdlWait() and all
// of its activation loads right after it, and the SPLIT partial sums meet in
// shared memory. Measured: +1-4 % on llama3-8b decode; the ffn-down kernel went
// from 18.5 to 17.2 us at 79 % occupancy, so something other than warps in flight
// still holds it (docs/PERFORMANCE.md).
//
// Rows per warp: launchSplitRows deals 2 (or 4) tasks to each warp (RowsTask),
// so every activation load a lane makes serves 2 (or 4) rows' weights. Two
// measured +3-4 % on llama3-8b and llama2-7b decode on an H100 for the one-row
// GEMVs and gate/up together (docs/PERFORMANCE.md, thirteenth session).
//
// Grid: at most two blocks per SM, each looping over its row groups (gridCap):
// +5-6 % on llama3-8b and llama2-7b decode on an H100 (sixteenth session).
//
// A Task says which rows a warp multiplies and what happens to the result:
//   static constexpr int M;            rows multiplied together (1, or 2 for gate
//                                      and up, or RoPE's two partner rows)
//   int64_t count, cols;               tasks, and the activation's length
//   void rows(k, DevMatrix (&w)[M], int64_t (&r)[M]) const;   task k's rows
//   void finish(k, const float (&v)[M]) const;  called once per task with the sums
#pragma once

#include "gemv_dot.cuh"

#include <algorithm>
#include <cstdlib>

namespace kestrel::cuda::gemvsplit {

using gemvdev::Q8In;
using gemvdev::WBlock;

constexpr int kMaxWarps = 8;  // per block

template <class Task, DevFormat F, int CH, class Act>
__global__ void __launch_bounds__(kMaxWarps * 32)
    gemvSplitKernel(Task task, Act act, int split) {
    constexpr int M = Task::M;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int perBlock = blockDim.x / 32 / split;  // tasks per block and pass
    const int nb = static_cast<int>(task.cols / 32);
    const int part = warp % split;
    pdlTrigger();
    __shared__ float partial[kMaxWarps][M];
    bool waited = false;
    // Grid-stride over groups of perBlock tasks: several passes under the launch's cap
    // (gridCap), one when the grid covers them all (small matrices, or no cap).
    for (int64_t k0 = static_cast<int64_t>(blockIdx.x) * perBlock; k0 < task.count;
         k0 += static_cast<int64_t>(gridDim.x) * perBlock) {
        const int64_t k = k0 + warp / split;
        const bool active = k < task.count;
        // Lane's blocks: part * 32 + lane + 32 * split * c for c < CH.
        WBlock w[M][CH];
        bool has[CH];
#pragma unroll
        for (int c = 0; c < CH; ++c) has[c] = active && part * 32 + lane + 32 * split * c < nb;
        if (active) {
            DevMatrix mats[M];
            int64_t rows[M];
            task.rows(k, mats, rows);
#pragma unroll
            for (int mi = 0; mi < M; ++mi) {
                const uint8_t *q, *sc;
                gemvdev::rowStart<F>(mats[mi], rows[mi], q, sc);
#pragma unroll
                for (int c = 0; c < CH; ++c)
                    gemvdev::loadBlockAt<F, gemvdev::Src::Stream>(w[mi][c], q, sc, part * 32 + lane + 32 * split * c,
                                                                  has[c]);
            }
        }
        if (!waited) {
            pdlWait();  // the activations come from the previous kernel
            act.stage(task.cols);
            waited = true;
        }
        int4 a0[CH], a1[CH];
        float2 am[CH];
#pragma unroll
        for (int c = 0; c < CH; ++c) {
            a0[c] = a1[c] = make_int4(0, 0, 0, 0);
            am[c] = make_float2(0.0f, 0.0f);
            if (has[c]) act.load(0, part * 32 + lane + 32 * split * c, task.cols, a0[c], a1[c], am[c]);
        }
        float acc[M];
#pragma unroll
        for (int mi = 0; mi < M; ++mi) {
            acc[mi] = 0.0f;
#pragma unroll
            for (int c = 0; c < CH; ++c) acc[mi] += gemvdev::dotBlock<F>(w[mi][c], a0[c], a1[c], am[c]);
            acc[mi] = warpSum(acc[mi]);
        }
        if (split > 1) {
            if (lane == 0)
#pragma unroll
                for (int mi = 0; mi < M; ++mi) partial[warp][mi] = acc[mi];
            __syncthreads();
            if (part == 0 && lane == 0 && active) {
#pragma unroll
                for (int mi = 0; mi < M; ++mi) {
                    float s = 0.0f;
                    for (int p = 0; p < split; ++p) s += partial[warp + p][mi];
                    acc[mi] = s;
                }
                task.finish(k, acc);
            }
            __syncthreads();  // the next pass writes partial again
        } else if (lane == 0 && active) {
            task.finish(k, acc);
        }
    }
}

// R consecutive tasks of Inner as one (M = Inner::M * R rows per warp): the
// warp's activation loads serve R times the weight bytes. Past the end, a
// slot repeats the last task's rows and is not finished.
template <class Inner, int R>
struct RowsTask {
    static constexpr int M = Inner::M * R;
    Inner in;
    int64_t count, cols;
    RowsTask(const Inner& inner) : in(inner), count((inner.count + R - 1) / R), cols(inner.cols) {}
    __device__ __forceinline__ void rows(int64_t k, DevMatrix (&w)[M], int64_t (&r)[M]) const {
#pragma unroll
        for (int i = 0; i < R; ++i) {
            DevMatrix wi[Inner::M];
            int64_t ri[Inner::M];
            in.rows(min(k * R + i, in.count - 1), wi, ri);
#pragma unroll
            for (int j = 0; j < Inner::M; ++j) {
                w[i * Inner::M + j] = wi[j];
                r[i * Inner::M + j] = ri[j];
            }
        }
    }
    __device__ __forceinline__ void finish(int64_t k, const float (&v)[M]) const {
#pragma unroll
        for (int i = 0; i < R; ++i) {
            if (k * R + i >= in.count) return;
            float vi[Inner::M];
#pragma unroll
            for (int j = 0; j < Inner::M; ++j) vi[j] = v[i * Inner::M + j];
            in.finish(k * R + i, vi);
        }
    }
};

// Tasks per warp: `fallback`, or 1, 2 or 4 from the environment variable `name` (to compare).
inline int rowsFromEnv(const char* name, int fallback) {
    const char* e = std::getenv(name);
    return e && (e[0] == '1' || e[0] == '2' || e[0] == '4') ? e[0] - '0' : fallback;
}

// KESTREL_CUDA_GEMV_SPLIT: "0" turns the split kernel off (gemv.cu's warp-per-row
// kernels serve), "2" deals 2 blocks per lane instead of 4 (to compare: 4 measured
// +2-4 % on llama3-8b against 2).
inline int splitBlocksPerLane() {
    static const int v = [] {
        const char* e = std::getenv("KESTREL_CUDA_GEMV_SPLIT");
        return e && (e[0] == '0' || e[0] == '2') ? e[0] - '0' : 4;
    }();
    return v;
}

// Warps per row for `cols` at `ch` blocks per lane (0: more than one block holds).
inline int warpsPerRow(int64_t cols, int ch) {
    const int64_t s = (cols / 32 + 32 * ch - 1) / (32 * ch);
    return s <= kMaxWarps ? static_cast<int>(s) : 0;
}

// Rows under kMinCols keep the warp-per-row kernel: a 576-wide row (smollm2) fills
// 18 lanes of one warp either way, and measured 1-3 % slower here.
constexpr int64_t kMinCols = 4096;

inline bool splitFits(DevFormat f, int64_t cols) {
    const int ch = splitBlocksPerLane();
    return ch > 0 && f != DevFormat::F16 && cols % 32 == 0 && cols >= kMinCols && warpsPerRow(cols, ch) > 0;
}

// The split GEMVs' grid is capped at kBlocksPerSm blocks per SM, the blocks looping
// over their row groups. Why: the bandwidth probe (tests/engine/cuda/bw_probe.cu) read
// a chain at 83 % of the peak with a block per row group and 92 % with a few blocks
// per SM looping over the matrix. The likely reason two is best (from the register
// counts, not a trace): on sm_90 the one-row kernel (116 registers a thread) keeps
// exactly two 256-thread blocks per SM resident, so two makes each launch one resident
// wave with no partial second wave; three or four add one, one leaves half the SM idle. Measured on an H100
// (docs/PERFORMANCE.md, sixteenth session), tok/s uncapped / 1 / 2 / 3 per SM:
// llama3-8b 485.7 / 427.7 / 512.9 / 492.3, llama2-7b 520.3 / 446.8 / 550.0 / 521.8.
// KESTREL_CUDA_GEMV_BLOCKS_PER_SM=N overrides (0: one block per row group, uncapped).
constexpr int kBlocksPerSm = 2;
inline int64_t gridCap() {
    static const int64_t v = [] {
        const char* e = std::getenv("KESTREL_CUDA_GEMV_BLOCKS_PER_SM");
        const int perSm = e ? std::atoi(e) : kBlocksPerSm;
        if (perSm <= 0) return int64_t(0);
        int dev = 0, sms = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        return int64_t(perSm) * sms;
    }();
    return v;
}

// Threads of a block for rows of `cols` (splitFits must hold).
inline int blockThreads(int64_t cols) {
    const int split = warpsPerRow(cols, splitBlocksPerLane());
    return kMaxWarps / split * split * 32;
}


template <class Task, DevFormat F, class Act>
void launchSplitFormat(const Task& task, const Act& act, cudaStream_t stream) {
    const int ch = splitBlocksPerLane();
    const int split = warpsPerRow(task.cols, ch);
    const int perBlock = kMaxWarps / split;
    int64_t blocks = ceilDiv(task.count, perBlock);
    if (const int64_t cap = gridCap(); cap > 0) blocks = std::min(blocks, cap);
    const dim3 grid(static_cast<unsigned>(blocks)), block(perBlock * split * 32);
    const size_t smem = Act::smemBytes(task.cols);
    if (ch == 4) launchKSmem(gemvSplitKernel<Task, F, 4, Act>, grid, block, smem, stream, task, act, split);
    else launchKSmem(gemvSplitKernel<Task, F, 2, Act>, grid, block, smem, stream, task, act, split);
}

// Runs `task` (splitFits must hold for its format and cols) on activations from `act`.
template <class Task, class Act>
void launchSplit(const Task& task, DevFormat f, const Act& act, cudaStream_t stream) {
    if (task.count <= 0) return;
    forIntegerFormat(f, [&](auto format) { launchSplitFormat<Task, decltype(format)::value>(task, act, stream); });
}

template <class Task>
void launchSplit(const Task& task, DevFormat f, Q8Act xq, cudaStream_t stream) {
    launchSplit(task, f, Q8In{xq}, stream);
}

// Runs `task` on rmsnorm(src.x) * src.gamma, made by each block
// (gemvdev::normFits(task.cols, blockThreads(task.cols)) must hold).
template <class Task>
void launchSplit(const Task& task, DevFormat f, NormQ8 src, cudaStream_t stream) {
    gemvdev::withNormIn(task.cols, blockThreads(task.cols), src, [&](const auto& in) { launchSplit(task, f, in, stream); });
}

// Runs `task` with `per` (1, 2 or 4) of its tasks to a warp; Src is Q8Act or NormQ8.
template <class Task, class Src>
void launchSplitRows(const Task& task, int per, DevFormat f, Src src, cudaStream_t stream) {
    if constexpr (Task::M == 1) {  // tasks of 2 rows go at most 2 to a warp: 8 rows was not tried
        if (per == 4) return launchSplit(RowsTask<Task, 4>(task), f, src, stream);
    }
    if (per >= 2) launchSplit(RowsTask<Task, 2>(task), f, src, stream);
    else launchSplit(task, f, src, stream);
}

}  // namespace kestrel::cuda::gemvsplit
