// sync_probe.cu: what one dependent kernel boundary costs in a replayed graph,
// waited for the way every kernel of the step waits now (programmatic dependent
// launch: griddepcontrol.wait returns once the previous grid has completed and
// its memory is flushed) against blocks that wait on a counter the previous
// kernel's blocks release as each finishes (acquire/release at GPU scope, no
// wait for the grid's completion). Stand-alone (CUDA runtime + std only), not
// part of the build:
//
//   nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/sync_probe tests/engine/cuda/sync_probe.cu && /tmp/sync_probe
//
// Why: smollm2's step is ~6 dependent kernels a layer of ~2 us each, most of it
// latency (docs/PERFORMANCE.md); every fold tried to remove a boundary added
// more to each block's path than the boundary cost. If a counter releases the
// next kernel sooner than the grid's completion does, the boundaries themselves
// get cheaper, for every kernel at once, without folding anything.
//
// A chain of N kernels of G blocks x 256 threads, captured once, replayed R
// times. Each kernel either only writes its share of an n-float vector (work 0:
// the boundary alone) or first reads the whole n-float vector the previous
// kernel wrote and reduces it per block (work 1: an all-to-all dependency, as a
// norm or a GEMV's activations are). Modes:
//   plain  no programmatic launch: a graph edge between kernels
//   pdl    launch_dependents at entry, griddepcontrol.wait before the reads
//   flag   launch_dependents at entry; thread 0 spins (ld.acquire.gpu) until the
//          previous kernel's counter reaches G, a block barrier; at the end a
//          barrier, then thread 0 adds 1 to this kernel's counter (fence + atomic).
//          The counters are zeroed by a memset node at the start of the graph.
//   flagw  as flag, and griddepcontrol.wait too before exit (what a kernel that
//          mixes both would do: the grid's completion still orders later kernels)
// Prints us per kernel; the flag modes also check the values (a race would show).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(call)                                                                             \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

enum Mode { Plain, Pdl, Flag, FlagW };

__device__ __forceinline__ unsigned ldAcquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// out[i] = in[i] + (sum of in) * 1e-7 over this block's share of i (work 1), or
// out[i] = i + step (work 0). Counters: prev (nullptr for the first) and mine.
template <int M, int W>
__global__ void __launch_bounds__(256) chainKernel(const float* __restrict__ in, float* __restrict__ out, int n,
                                                   float step, const unsigned* prev, unsigned* mine, unsigned target) {
    if constexpr (M != Plain) asm volatile("griddepcontrol.launch_dependents;");
    if constexpr (M == Pdl) asm volatile("griddepcontrol.wait;" ::: "memory");
    if constexpr (M == Flag || M == FlagW) {
        if (threadIdx.x == 0 && prev)
            while (ldAcquire(prev) < target) {
            }
        __syncthreads();
    }
    __shared__ float part[8];
    float total = 0.0f;
    if constexpr (W == 1) {
        float s = 0.0f;
        for (int i = threadIdx.x * 4; i < n; i += 256 * 4) {
            const float4 v = *reinterpret_cast<const float4*>(in + i);
            s += v.x + v.y + v.z + v.w;
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
        __syncthreads();
#pragma unroll
        for (int w = 0; w < 8; ++w) total += part[w];
    }
    const int share = (n + gridDim.x - 1) / gridDim.x;
    for (int i = blockIdx.x * share + threadIdx.x; i < (blockIdx.x + 1) * share && i < n; i += 256)
        out[i] = W == 1 ? in[i] + total * 1e-7f : static_cast<float>(i) + step;
    if constexpr (M == Flag || M == FlagW) {
        __syncthreads();
        if (threadIdx.x == 0) {
            __threadfence();
            atomicAdd(mine, 1u);
        }
    }
    if constexpr (M == FlagW) asm volatile("griddepcontrol.wait;" ::: "memory");
}

template <int M, int W>
void launchOne(cudaStream_t s, int G, const float* in, float* out, int n, float step, const unsigned* prev,
               unsigned* mine) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(G);
    cfg.blockDim = dim3(256);
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = M == Plain ? 0 : 1;
    CK(cudaLaunchKernelEx(&cfg, chainKernel<M, W>, in, out, n, step, prev, mine, static_cast<unsigned>(G)));
}

// us per kernel of a replayed chain of N; for work 0 also checks the last output.
template <int M, int W>
double timeChain(int G, int N, int R, int n, float* a, float* b, unsigned* counters, bool& ok) {
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    if (M == Flag || M == FlagW) CK(cudaMemsetAsync(counters, 0, sizeof(unsigned) * (N + 1), s));
    for (int k = 0; k < N; ++k) {
        const float* in = (k % 2 == 0) ? a : b;
        float* out = (k % 2 == 0) ? b : a;
        launchOne<M, W>(s, G, in, out, n, static_cast<float>(k), k == 0 ? nullptr : counters + k - 1, counters + k);
    }
    CK(cudaStreamEndCapture(s, &g));
    cudaGraphExec_t ge;
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphLaunch(ge, s));  // warm-up
    CK(cudaStreamSynchronize(s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0, s));
    for (int r = 0; r < R; ++r) CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(e1, s));
    CK(cudaStreamSynchronize(s));
    float ms = 0.0f;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    ok = true;
    if (W == 0) {  // the last kernel wrote i + (N - 1) into the vector it wrote
        std::vector<float> h(n);
        CK(cudaMemcpy(h.data(), (N - 1) % 2 == 0 ? b : a, sizeof(float) * n, cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; ++i) ok = ok && h[i] == static_cast<float>(i) + static_cast<float>(N - 1);
    }
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaStreamDestroy(s));
    return ms * 1000.0 / (static_cast<double>(R) * N);
}

// Work 1 with every mode must give the same vector: the flag modes' ordering is
// checked against the pdl result (bitwise: same kernels, same order of sums).
template <int M>
std::vector<float> resultOf(int G, int N, int n, float* a, float* b, unsigned* counters) {
    std::vector<float> init(n);
    for (int i = 0; i < n; ++i) init[i] = static_cast<float>((i * 37) % 101) * 0.01f;
    CK(cudaMemcpy(a, init.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
    bool ok;
    timeChain<M, 1>(G, N, 1, n, a, b, counters, ok);  // warm-up + one replay: N * 2 kernels run on a
    std::vector<float> h(n);
    CK(cudaMemcpy(h.data(), (N - 1) % 2 == 0 ? b : a, sizeof(float) * n, cudaMemcpyDeviceToHost));
    return h;
}

int main() {
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    cudaDeviceProp p{};
    CK(cudaGetDeviceProperties(&p, dev));
    std::printf("sync_probe on %s (%d SMs)\n", p.name, sms);
    const int N = 240, R = 40, n = 4096;
    float *a, *b;
    unsigned* counters;
    CK(cudaMalloc(&a, sizeof(float) * n));
    CK(cudaMalloc(&b, sizeof(float) * n));
    CK(cudaMalloc(&counters, sizeof(unsigned) * (N + 1)));
    CK(cudaMemset(a, 0, sizeof(float) * n));
    CK(cudaMemset(b, 0, sizeof(float) * n));
    const int grids[] = {48, sms, 2 * sms};
    std::printf("%-8s %5s | %12s %12s %12s %12s  (us per kernel, chain of %d, %d replays)\n", "work", "G", "plain",
                "pdl", "flag", "flag+wait", N, R);
    for (int w = 0; w < 2; ++w) {
        for (int G : grids) {
            bool ok0, ok1, ok2, ok3;
            double t0, t1, t2, t3;
            if (w == 0) {
                t0 = timeChain<Plain, 0>(G, N, R, n, a, b, counters, ok0);
                t1 = timeChain<Pdl, 0>(G, N, R, n, a, b, counters, ok1);
                t2 = timeChain<Flag, 0>(G, N, R, n, a, b, counters, ok2);
                t3 = timeChain<FlagW, 0>(G, N, R, n, a, b, counters, ok3);
            } else {
                t0 = timeChain<Plain, 1>(G, N, R, n, a, b, counters, ok0);
                t1 = timeChain<Pdl, 1>(G, N, R, n, a, b, counters, ok1);
                t2 = timeChain<Flag, 1>(G, N, R, n, a, b, counters, ok2);
                t3 = timeChain<FlagW, 1>(G, N, R, n, a, b, counters, ok3);
            }
            std::printf("%-8s %5d | %12.3f %12.3f %12.3f %12.3f  %s\n", w == 0 ? "write" : "read+red", G, t0, t1, t2,
                        t3, ok0 && ok1 && ok2 && ok3 ? "" : "WRONG VALUES");
        }
    }
    // Ordering check with real dependencies: every mode's result after a chain of reads.
    for (int G : grids) {
        const std::vector<float> ref = resultOf<Pdl>(G, N, n, a, b, counters);
        const std::vector<float> f = resultOf<Flag>(G, N, n, a, b, counters);
        const std::vector<float> fw = resultOf<FlagW>(G, N, n, a, b, counters);
        int bad = 0;
        for (int i = 0; i < n; ++i) bad += (f[i] != ref[i]) + (fw[i] != ref[i]);
        std::printf("ordering G=%d: %s (%d values differ from pdl's)\n", G, bad ? "DIFFERS" : "same", bad);
    }
    return 0;
}
