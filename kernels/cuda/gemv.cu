// Matrix-vector products for decode (and, token-chunked, for prefill).
//
// One warp per output row (the row dot products are in gemv_dot.cuh). Up to
// NT tokens share each weight load: a prefill chunk reads the weights once per
// NT tokens. Activations are int8 per 32 (dp4a); the float scales are applied
// once per block.
#include "gemm_mma.cuh"
#include "gemm_tiled.cuh"
#include "gemv_dot.cuh"
#include "gemv_split.cuh"
#include "ops.cuh"
#include "ops_dev.cuh"

namespace kestrel::cuda {
namespace {

using gemvdev::kWarpsPerBlock;

// F16 weights with float activations: acc[t] += row r of W . x[t0 + t] (per lane).
template <int NT>
__device__ __forceinline__ void rowDotF16(const DevMatrix& w, int64_t r, const float* __restrict__ x, int64_t t0,
                                          int ntok, int lane, float (&acc)[NT]) {
    const int64_t cols = w.cols;
    pdlWait();
    const __half* wr = static_cast<const __half*>(w.qs) + r * cols;
    if ((cols & 7) == 0) {
        for (int64_t c = lane * 8; c < cols; c += 256) {
            const uint4 raw = __ldg(reinterpret_cast<const uint4*>(wr + c));
            const __half2* h = reinterpret_cast<const __half2*>(&raw);
            float wf[8];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const float2 f = __half22float2(h[i]);
                wf[2 * i] = f.x;
                wf[2 * i + 1] = f.y;
            }
#pragma unroll
            for (int t = 0; t < NT; ++t) {
                if (t < ntok) {
                    const float4* xp = reinterpret_cast<const float4*>(x + (t0 + t) * cols + c);
                    const float4 a = xp[0], b = xp[1];
                    acc[t] += wf[0] * a.x + wf[1] * a.y + wf[2] * a.z + wf[3] * a.w + wf[4] * b.x + wf[5] * b.y +
                              wf[6] * b.z + wf[7] * b.w;
                }
            }
        }
    } else {
        for (int64_t c = lane; c < cols; c += 32) {
            const float wv = __half2float(wr[c]);
#pragma unroll
            for (int t = 0; t < NT; ++t)
                if (t < ntok) acc[t] += wv * x[(t0 + t) * cols + c];
        }
    }
}

// acc[t] += row r of W . x[t0 + t], partial per lane (reduced by the caller).
template <DevFormat F, int NT, int CH = 4>
__device__ __forceinline__ void rowDot(const DevMatrix& w, int64_t r, const float* __restrict__ x, Q8Act xq,
                                       int64_t t0, int ntok, int lane, float (&acc)[NT]) {
    if constexpr (F == DevFormat::F16) {
        rowDotF16<NT>(w, r, x, t0, ntok, lane, acc);
    } else {
        gemvdev::rowDotInt<F, NT, 1, CH>(w, r, w, r, gemvdev::Q8In{xq}, t0, ntok, lane, &acc);
    }
}

struct Jobs {
    GemvJob j[3];
    int count;
};

// The job that row `row` of the jobs in turn falls in (row becomes the index
// within it); jobs.count when it is past the last.
__device__ __forceinline__ int jobOfRow(const Jobs& jobs, int64_t& row) {
    int j = 0;
    while (j < jobs.count && row >= jobs.j[j].w.rows) row -= jobs.j[j++].w.rows;
    return j;
}

template <DevFormat F, int NT, int CH>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    gemvKernel(Jobs jobs, const float* __restrict__ x, Q8Act xq, int64_t tokens) {
    const int lane = threadIdx.x & 31;
    int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
    const int j = jobOfRow(jobs, row);
    if (j >= jobs.count) return;
    pdlTrigger();
    const GemvJob& job = jobs.j[j];
    const int64_t t0 = static_cast<int64_t>(blockIdx.y) * NT;
    const int ntok = static_cast<int>(tokens - t0 < NT ? tokens - t0 : NT);
    float acc[NT];
#pragma unroll
    for (int t = 0; t < NT; ++t) acc[t] = 0.0f;
    rowDot<F, NT, CH>(job.w, row, x, xq, t0, ntok, lane, acc);
#pragma unroll
    for (int t = 0; t < NT; ++t) {
        const float s = warpSum(acc[t]);
        if (lane == t && t < ntok) {
            job.y[(t0 + t) * job.w.rows + row] = s;
            if (job.residual) job.residual[(t0 + t) * job.w.rows + row] += s;
        }
    }
}

// One token through the split-row kernel (gemv_split.cuh): task k is row k of the jobs in turn.
struct PlainTask {
    static constexpr int M = 1;
    Jobs jobs;
    int64_t count, cols;
    // k < count: jobOfRow finds a job.
    __device__ __forceinline__ void rows(int64_t k, DevMatrix (&w)[1], int64_t (&r)[1]) const {
        w[0] = jobs.j[jobOfRow(jobs, k)].w;
        r[0] = k;
    }
    __device__ __forceinline__ void finish(int64_t k, const float (&v)[1]) const {
        const int j = jobOfRow(jobs, k);
        jobs.j[j].y[k] = v[0];
        if (jobs.j[j].residual) jobs.j[j].residual[k] += v[0];
    }
};

// Task k: row k of gate and of up, then the activation product.
struct GluTask {
    static constexpr int M = 2;
    DevMatrix gate, up;
    float *gateOut, *upOut, *out;
    GluAct act;
    int64_t count, cols;
    __device__ __forceinline__ void rows(int64_t k, DevMatrix (&w)[2], int64_t (&r)[2]) const {
        w[0] = gate;
        w[1] = up;
        r[0] = r[1] = k;
    }
    __device__ __forceinline__ void finish(int64_t k, const float (&v)[2]) const {
        gateOut[k] = v[0];
        upOut[k] = v[1];
        out[k] = gluAct(v[0], act) * v[1];
    }
};

// Act: Q8In, or one token's NormIn (gemv_act.cuh), whose staging every thread of
// the block joins: so a warp past the last row multiplies the last row again
// instead of returning, and writes nothing.
template <DevFormat F, int NT, class Act = gemvdev::Q8In>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    gemvGluKernel(DevMatrix gate, DevMatrix up, const float* __restrict__ x, Act xq, int64_t tokens,
                  float* gateOut, float* upOut, float* out, GluAct act) {
    const int lane = threadIdx.x & 31;
    const int64_t warpRow = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
    const bool active = warpRow < gate.rows;
    const int64_t row = active ? warpRow : gate.rows - 1;
    const int64_t t0 = static_cast<int64_t>(blockIdx.y) * NT;
    const int ntok = static_cast<int>(tokens - t0 < NT ? tokens - t0 : NT);
    float both[2][NT];
#pragma unroll
    for (int t = 0; t < NT; ++t) both[0][t] = both[1][t] = 0.0f;
    pdlTrigger();
    if constexpr (F == DevFormat::F16) {
        rowDotF16<NT>(gate, row, x, t0, ntok, lane, both[0]);
        rowDotF16<NT>(up, row, x, t0, ntok, lane, both[1]);
    } else {
        gemvdev::rowDotInt<F, NT, 2, 4>(gate, row, up, row, xq, t0, ntok, lane, both);
    }
#pragma unroll
    for (int t = 0; t < NT; ++t) {
        const float g = warpSum(both[0][t]);
        const float u = warpSum(both[1][t]);
        if (active && lane == t && t < ntok) {
            const int64_t i = (t0 + t) * gate.rows + row;
            gateOut[i] = g;
            upOut[i] = u;
            out[i] = gluAct(g, act) * u;
        }
    }
}

template <int NT, int CH>
void gemvDispatchCH(const Jobs& jobs, int64_t totalRows, const float* x, Q8Act xq, int64_t tokens, cudaStream_t s) {
    const dim3 grid(ceilDiv(totalRows, kWarpsPerBlock), ceilDiv(tokens, NT));
    const dim3 block(kWarpsPerBlock * 32);
    switch (jobs.j[0].w.format) {
    case DevFormat::Q4_0: launchK(gemvKernel<DevFormat::Q4_0, NT, CH>, grid, block, s, jobs, x, xq, tokens); break;
    case DevFormat::Q4_1: launchK(gemvKernel<DevFormat::Q4_1, NT, CH>, grid, block, s, jobs, x, xq, tokens); break;
    case DevFormat::Q8_0: launchK(gemvKernel<DevFormat::Q8_0, NT, CH>, grid, block, s, jobs, x, xq, tokens); break;
    case DevFormat::Q8_16: launchK(gemvKernel<DevFormat::Q8_16, NT, CH>, grid, block, s, jobs, x, xq, tokens); break;
    case DevFormat::F16: launchK(gemvKernel<DevFormat::F16, NT, 4>, grid, block, s, jobs, x, xq, tokens); break;
    }
}

template <int NT>
void gemvDispatchNT(const Jobs& jobs, int64_t totalRows, const float* x, Q8Act xq, int64_t tokens, cudaStream_t s) {
    // CH = 8 was measured slower on an H200 (ffn down 12.2 -> 14.2 us per call in the eager profile):
    // its 72 registers fit 3 blocks per SM instead of 5, fewer bytes in flight overall. Kept at 4.
    gemvDispatchCH<NT, 4>(jobs, totalRows, x, xq, tokens, s);
}

template <int NT>
void gluDispatchNT(const DevMatrix& g, const DevMatrix& u, const float* x, Q8Act xq, int64_t tokens, float* go,
                   float* uo, float* out, GluAct act, cudaStream_t s) {
    const dim3 grid(ceilDiv(g.rows, kWarpsPerBlock), ceilDiv(tokens, NT)), block(kWarpsPerBlock * 32);
    const gemvdev::Q8In in{xq};
    switch (g.format) {
    case DevFormat::Q4_0: launchK(gemvGluKernel<DevFormat::Q4_0, NT>, grid, block, s, g, u, x, in, tokens, go, uo, out, act); break;
    case DevFormat::Q4_1: launchK(gemvGluKernel<DevFormat::Q4_1, NT>, grid, block, s, g, u, x, in, tokens, go, uo, out, act); break;
    case DevFormat::Q8_0: launchK(gemvGluKernel<DevFormat::Q8_0, NT>, grid, block, s, g, u, x, in, tokens, go, uo, out, act); break;
    case DevFormat::Q8_16: launchK(gemvGluKernel<DevFormat::Q8_16, NT>, grid, block, s, g, u, x, in, tokens, go, uo, out, act); break;
    case DevFormat::F16: launchK(gemvGluKernel<DevFormat::F16, NT>, grid, block, s, g, u, x, in, tokens, go, uo, out, act); break;
    }
}

// One token's gate, up and GLU on a NormIn's activations through the warp-per-row kernel.
template <class Norm>
void gluNormWarpPerRow(const DevMatrix& g, const DevMatrix& u, const Norm& in, float* go, float* uo, float* out,
                       GluAct act, cudaStream_t s) {
    const dim3 grid(ceilDiv(g.rows, kWarpsPerBlock)), block(kWarpsPerBlock * 32);
    const size_t smem = Norm::smemBytes(g.cols);
    forIntegerFormat(g.format, [&](auto format) {
        launchKSmem(gemvGluKernel<decltype(format)::value, 1, Norm>, grid, block, smem, s, g, u, nullptr, in,
                    int64_t{1}, go, uo, out, act);
    });
}

// One thread per 4 values, 8 lanes per 32-block: a wide grid instead of one
// thread walking a whole block (the vector is only tokens x cols floats).
__global__ void quantizeQ8Kernel(const float* __restrict__ x, int64_t quads, int8_t* __restrict__ q,
                                 float2* __restrict__ meta) {
    pdlEnter();
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const bool ok = i < quads;  // quads % 8 == 0: a whole 8-lane group is in or out
    const float4 f = ok ? reinterpret_cast<const float4*>(x)[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float amax = fmaxf(fmaxf(fabsf(f.x), fabsf(f.y)), fmaxf(fabsf(f.z), fabsf(f.w)));
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 4));
    const float d = amax / 127.0f;
    const float id = d > 0.0f ? 1.0f / d : 0.0f;
    const int q0 = __float2int_rn(f.x * id), q1 = __float2int_rn(f.y * id);
    const int q2 = __float2int_rn(f.z * id), q3 = __float2int_rn(f.w * id);
    int sum = q0 + q1 + q2 + q3;
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    sum += __shfl_xor_sync(0xffffffffu, sum, 4);
    if (!ok) return;
    reinterpret_cast<int*>(q)[i] = (q0 & 0xff) | ((q1 & 0xff) << 8) | ((q2 & 0xff) << 16) | ((q3 & 0xff) << 24);
    if ((threadIdx.x & 7) == 0) meta[i / 8] = make_float2(d, d * static_cast<float>(sum));
}

__global__ void embedKernel(DevMatrix table, const int32_t* __restrict__ ids, int64_t tokens, float* __restrict__ out) {
    pdlEnter();
    const int64_t t = blockIdx.y;
    const int64_t id = ids[t];
    const int64_t cols = table.cols;
    for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols;
         c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        float v;
        const int64_t b = c / 32, k = c % 32, nb = cols / 32;
        switch (table.format) {
        case DevFormat::F16: v = __half2float(static_cast<const __half*>(table.qs)[id * cols + c]); break;
        case DevFormat::Q8_0:
            v = __half2float(static_cast<const __half*>(table.scales)[id * nb + b]) *
                static_cast<float>(static_cast<const int8_t*>(table.qs)[(id * nb + b) * 32 + k]);
            break;
        case DevFormat::Q8_16: {
            const __half* sc = static_cast<const __half*>(table.scales) + (id * nb + b) * 4;
            v = __half2float(sc[k < 16 ? 0 : 1]) * static_cast<float>(static_cast<const int8_t*>(table.qs)[(id * nb + b) * 32 + k]) +
                __half2float(sc[2]);
            break;
        }
        default: {
            const uint8_t byte = static_cast<const uint8_t*>(table.qs)[(id * nb + b) * 16 + (k & 15)];
            const int qv = k < 16 ? (byte & 15) : (byte >> 4);
            if (table.format == DevFormat::Q4_0) {
                v = __half2float(static_cast<const __half*>(table.scales)[id * nb + b]) * static_cast<float>(qv - 8);
            } else {
                const float2 dm = __half22float2(static_cast<const __half2*>(table.scales)[id * nb + b]);
                v = dm.x * static_cast<float>(qv) + dm.y;
            }
        }
        }
        out[t * cols + c] = v;
    }
}

}  // namespace

void launchQuantizeQ8(const float* x, int64_t tokens, int64_t cols, int8_t* q, float2* meta, cudaStream_t stream) {
    const int64_t nb = cols / 32, blocks = tokens * nb;
    if (blocks == 0) return;
    const int64_t quads = blocks * 8;  // rows are contiguous and cols % 32 == 0: one flat array
    launchK(quantizeQ8Kernel, dim3(ceilDiv(quads, 256)), dim3(256), stream, x, quads, q, meta);
}

void launchGemv(const GemvJob* list, int count, const float* x, Q8Act xq, int64_t tokens, cudaStream_t stream) {
    if (tokens <= 0 || count <= 0) return;
    if (gemmMmaFits(list[0].w, tokens)) {
        launchGemmMma(list, count, xq, tokens, stream);
        return;
    }
    Jobs jobs{};
    int64_t total = 0;
    for (int i = 0; i < count && i < 3; ++i) {
        jobs.j[i] = list[i];
        total += list[i].w.rows;
    }
    jobs.count = count < 3 ? count : 3;
    // The jobs share format and cols (the launcher's contract): the first one decides.
    if (tokens == 1 && gemvsplit::splitFits(list[0].w.format, list[0].w.cols)) {
        // Two rows per warp (four measured slower on llama3-8b).
        static const int per = gemvsplit::rowsFromEnv("KESTREL_CUDA_GEMV_ROWS", 2);
        gemvsplit::launchSplitRows(PlainTask{jobs, total, list[0].w.cols}, per, list[0].w.format, xq, stream);
    }
    else if (tokens == 1) gemvDispatchNT<1>(jobs, total, x, xq, tokens, stream);
    else if (tokens == 2) gemvDispatchNT<2>(jobs, total, x, xq, tokens, stream);
    else if (tokens <= 4) gemvDispatchNT<4>(jobs, total, x, xq, tokens, stream);
    else gemvDispatchNT<8>(jobs, total, x, xq, tokens, stream);
}

// Gate, up and the activation in float (the path without the int8 epilogue).
static void gemvGluFloat(const DevMatrix& gate, const DevMatrix& up, const float* x, Q8Act xq, int64_t tokens,
                         float* gateOut, float* upOut, float* out, GluAct act, cudaStream_t stream) {
    if (gemmMmaFits(gate, tokens)) {
        // Gate and up as two jobs of one tensor-core launch, then the activation.
        const GemvJob jobs[2] = {{gate, gateOut}, {up, upOut}};
        launchGemmMma(jobs, 2, xq, tokens, stream);
        launchGlu(gateOut, upOut, out, tokens * gate.rows, act, stream);
        return;
    }
    if (tokens == 1 && gemvsplit::splitFits(gate.format, gate.cols)) {
        // Two rows of gate and two of up per warp: +3-4 % on llama3-8b and llama2-7b (H100).
        static const int per = gemvsplit::rowsFromEnv("KESTREL_CUDA_GLU_ROWS", 2);
        gemvsplit::launchSplitRows(GluTask{gate, up, gateOut, upOut, out, act, gate.rows, gate.cols}, per, gate.format, xq,
                                   stream);
    } else if (tokens == 1) gluDispatchNT<1>(gate, up, x, xq, tokens, gateOut, upOut, out, act, stream);
    else if (tokens == 2) gluDispatchNT<2>(gate, up, x, xq, tokens, gateOut, upOut, out, act, stream);
    else if (tokens <= 4) gluDispatchNT<4>(gate, up, x, xq, tokens, gateOut, upOut, out, act, stream);
    else gluDispatchNT<8>(gate, up, x, xq, tokens, gateOut, upOut, out, act, stream);
}

bool gemvFoldFits(const DevMatrix& w, int64_t tokens, bool norm) {
    // KESTREL_CUDA_FOLD: 0 off, 1 the warp-per-row products only (rows under
    // gemvsplit::kMinCols), 2 the split-row ones too (measured 7.5 % slower on
    // llama3-8b: docs/PERFORMANCE.md, thirty-first session).
    static const int mode = [] {
        const char* v = std::getenv("KESTREL_CUDA_FOLD");
        return v && (v[0] == '0' || v[0] == '2') ? v[0] - '0' : 1;
    }();
    if (mode == 0 || tokens != 1 || w.format == DevFormat::F16 || w.cols % 32 != 0 || gemmMmaFits(w, tokens)) return false;
    const bool split = gemvsplit::splitFits(w.format, w.cols);
    if (split && mode < 2) return false;
    if (!norm) return true;
    return gemvdev::normFits(w.cols, split ? gemvsplit::blockThreads(w.cols) : kWarpsPerBlock * 32);
}

void launchGemvGluNorm(const DevMatrix& gate, const DevMatrix& up, NormQ8 src, float* gateOut, float* upOut, float* out,
                       GluAct act, cudaStream_t stream, int8_t* q8, float2* q8meta) {
    if (gemvsplit::splitFits(gate.format, gate.cols)) {
        static const int per = gemvsplit::rowsFromEnv("KESTREL_CUDA_GLU_ROWS", 2);
        gemvsplit::launchSplitRows(GluTask{gate, up, gateOut, upOut, out, act, gate.rows, gate.cols}, per, gate.format,
                                   src, stream);
    } else {
        gemvdev::withNormIn(gate.cols, kWarpsPerBlock * 32, src, [&](const auto& in) {
            gluNormWarpPerRow(gate, up, in, gateOut, upOut, out, act, stream);
        });
    }
    if (q8) launchQuantizeQ8(out, 1, gate.rows, q8, q8meta, stream);
}

void launchGemvGlu(const DevMatrix& gate, const DevMatrix& up, const float* x, Q8Act xq, int64_t tokens,
                   float* gateOut, float* upOut, float* out, GluAct act, cudaStream_t stream, int8_t* q8,
                   float2* q8meta) {
    if (tokens <= 0) return;
    if (q8 && gemmMmaFits(gate, tokens) && gemmTiledGluFits(gate, up, tokens)) {
        // The activation and the int8 form in the product's epilogue: no gate and up outputs.
        launchGemmTiledGlu(gate, up, xq, tokens, GluQ8Out{out, q8, q8meta, gate.rows, act}, stream);
        return;
    }
    gemvGluFloat(gate, up, x, xq, tokens, gateOut, upOut, out, act, stream);
    if (q8) launchQuantizeQ8(out, tokens, gate.rows, q8, q8meta, stream);
}

void launchEmbed(const DevMatrix& table, const int32_t* ids, int64_t tokens, float* out, cudaStream_t stream) {
    if (tokens <= 0) return;
    const dim3 grid(ceilDiv(table.cols, 256) < 64 ? ceilDiv(table.cols, 256) : 64, static_cast<unsigned>(tokens));
    launchK(embedKernel, grid, dim3(256), stream, table, ids, tokens, out);
}

}  // namespace kestrel::cuda
