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
// Then a second table (stageKernel): the serial work a narrow product does after
// its wait, NormIn's block stage against the warp-staged float rows.
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

// kernel<<<G, 256>>> on s, as a programmatic dependent launch when pdl is set.
template <typename... KArgs, typename... Args>
void launchChained(void (*kernel)(KArgs...), int G, cudaStream_t s, bool pdl, Args... args) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(G);
    cfg.blockDim = dim3(256);
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pdl ? 1 : 0;
    CK(cudaLaunchKernelEx(&cfg, kernel, args...));
}

template <int M, int W>
void launchOne(cudaStream_t s, int G, const float* in, float* out, int n, float step, const unsigned* prev,
               unsigned* mine) {
    launchChained(chainKernel<M, W>, G, s, M != Plain, in, out, n, step, prev, mine, static_cast<unsigned>(G));
}

// Captures fn(stream, k) for k < N as one graph, replays it once to warm up and
// R times timed: us per kernel.
template <class Fn>
double timeGraph(int N, int R, Fn&& fn) {
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < N; ++k) fn(s, k);
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
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaStreamDestroy(s));
    return ms * 1000.0 / (static_cast<double>(R) * N);
}

// us per kernel of a replayed chain of N; for work 0 also checks the last output.
template <int M, int W>
double timeChain(int G, int N, int R, int n, float* a, float* b, unsigned* counters, bool& ok) {
    const double us = timeGraph(N, R, [&](cudaStream_t s, int k) {
        if (k == 0 && (M == Flag || M == FlagW)) CK(cudaMemsetAsync(counters, 0, sizeof(unsigned) * (N + 1), s));
        const float* in = (k % 2 == 0) ? a : b;
        float* out = (k % 2 == 0) ? b : a;
        launchOne<M, W>(s, G, in, out, n, static_cast<float>(k), k == 0 ? nullptr : counters + k - 1, counters + k);
    });
    ok = true;
    if (W == 0) {  // the last kernel wrote i + (N - 1) into the vector it wrote
        std::vector<float> h(n);
        CK(cudaMemcpy(h.data(), (N - 1) % 2 == 0 ? b : a, sizeof(float) * n, cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; ++i) ok = ok && h[i] == static_cast<float>(i) + static_cast<float>(N - 1);
    }
    return us;
}

// The serial work a narrow one-token product does after its wait, without its
// weights (a row of n <= 1024 floats, 8 warps a block, a warp an output):
// S = 0: NormIn's block stage (kernels/cuda/gemv_act.cuh: the block's sum of
//        squares over two barriers, the int8 quantise into shared memory, a
//        barrier), then each warp's lanes read their block's int8 form and meta;
// S = 1: the warp-staged float rows of narrow_float_staged.patch (each warp reads
//        x and gamma coalesced, stages x * gamma padded, a warp sum of squares,
//        each lane reads its 32-float block);
// then a warp sum and one store a warp. Asks whether S = 1 is cheaper, before the
// patch's own measurement.
template <int S>
__global__ void __launch_bounds__(256) stageKernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                                   float* __restrict__ out, int n) {
    asm volatile("griddepcontrol.launch_dependents;");
    asm volatile("griddepcontrol.wait;" ::: "memory");
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nq = n / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    float dot = 0.0f;
    if constexpr (S == 0) {
        __shared__ float part[8];
        __shared__ __align__(16) int q8[256];
        __shared__ float2 meta[32];
        const int c = threadIdx.x;
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f), g = v;
        if (c < nq) {
            v = x4[c];
            g = g4[c];
        }
        float ss = v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
        for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
        if (lane == 0) part[warp] = ss;
        __syncthreads();
        if (warp == 0) {
            float t = lane < 8 ? part[lane] : 0.0f;
            for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
            if (lane == 0) part[0] = t;
        }
        __syncthreads();
        const float inv = rsqrtf(part[0] / static_cast<float>(n) + 1e-5f);
        const float4 o = make_float4(v.x * inv * g.x, v.y * inv * g.y, v.z * inv * g.z, v.w * inv * g.w);
        float amax = fmaxf(fmaxf(fabsf(o.x), fabsf(o.y)), fmaxf(fabsf(o.z), fabsf(o.w)));
        for (int m = 1; m < 8; m <<= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, m));
        const float d = amax / 127.0f;
        const int q0 = __float2int_rn(d > 0.0f ? o.x / d : 0.0f), q1 = __float2int_rn(d > 0.0f ? o.y / d : 0.0f);
        const int q2 = __float2int_rn(d > 0.0f ? o.z / d : 0.0f), q3 = __float2int_rn(d > 0.0f ? o.w / d : 0.0f);
        int sum = q0 + q1 + q2 + q3;
        for (int m = 1; m < 8; m <<= 1) sum += __shfl_xor_sync(0xffffffffu, sum, m);
        if (c < nq) {
            q8[c] = (q0 & 0xff) | ((q1 & 0xff) << 8) | ((q2 & 0xff) << 16) | ((q3 & 0xff) << 24);
            if ((c & 7) == 0) meta[c >> 3] = make_float2(d, d * static_cast<float>(sum));
        }
        __syncthreads();
        if (lane < n / 32) {
            const int4 a0 = reinterpret_cast<const int4*>(q8)[lane * 2], a1 = reinterpret_cast<const int4*>(q8)[lane * 2 + 1];
            int t = __dp4a(a0.x, 0x01010101, 0);
            t = __dp4a(a0.y, 0x01010101, t) + __dp4a(a0.z, 0x01010101, 0) + __dp4a(a0.w, 0x01010101, 0);
            t += __dp4a(a1.x, 0x01010101, 0) + __dp4a(a1.y, 0x01010101, 0) + __dp4a(a1.z, 0x01010101, 0) +
                 __dp4a(a1.w, 0x01010101, 0);
            dot = meta[lane].x * static_cast<float>(t) + meta[lane].y;
        }
    } else {
        __shared__ __align__(16) float staged[8][32 * 36];
        float* row = staged[warp];
        float ss = 0.0f;
#pragma unroll
        for (int k = 0; k < 8; ++k)
            if (lane + 32 * k < nq) {
                const int c = lane + 32 * k;
                const float4 a = x4[c], g = g4[c];
                ss += a.x * a.x + a.y * a.y + a.z * a.z + a.w * a.w;
                *reinterpret_cast<float4*>(row + (c >> 3) * 36 + (c & 7) * 4) =
                    make_float4(a.x * g.x, a.y * g.y, a.z * g.z, a.w * g.w);
            }
        __syncwarp();
        for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
        const float inv = rsqrtf(ss / static_cast<float>(n) + 1e-5f);
        if (lane < n / 32) {
            float t = 0.0f;
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const float4 f = reinterpret_cast<const float4*>(row + lane * 36)[i];
                t += f.x + f.y + f.z + f.w;
            }
            dot = t * inv;
        }
    }
    for (int o = 16; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
    const int r = blockIdx.x * 8 + warp;
    if (lane == 0) out[r] = x[r % n] + dot * 1e-6f;  // the next kernel's row depends on this one's
}

template <int S>
double timeStage(int G, int N, int R, int n, float* a, float* b, const float* gamma) {
    return timeGraph(N, R, [&](cudaStream_t s, int k) {
        launchChained(stageKernel<S>, G, s, true, static_cast<const float*>(k % 2 == 0 ? a : b), gamma,
                      k % 2 == 0 ? b : a, n);
    });
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
    // The serial work of a narrow product after its wait (stageKernel), smollm2's rows:
    // 576 values; 72 blocks (its 576-row products) and 192 (its 1536-row gate/up).
    {
        const int nn = 576;
        float* gamma;
        CK(cudaMalloc(&gamma, sizeof(float) * nn));
        std::vector<float> ones(nn, 1.0f);
        CK(cudaMemcpy(gamma, ones.data(), sizeof(float) * nn, cudaMemcpyHostToDevice));
        std::printf("%-8s %5s | %12s %12s %12s  (us per kernel, rows of %d, PDL)\n", "narrow", "G", "read+red",
                    "block stage", "warp stage", nn);
        for (int G : {72, 192}) {
            bool ok;
            const double t0 = timeChain<Pdl, 1>(G, N, R, nn, a, b, counters, ok);
            const double t1 = timeStage<0>(G, N, R, nn, a, b, gamma);
            const double t2 = timeStage<1>(G, N, R, nn, a, b, gamma);
            std::printf("%-8s %5d | %12.3f %12.3f %12.3f\n", "", G, t0, t1, t2);
        }
        CK(cudaFree(gamma));
    }
    return 0;
}
