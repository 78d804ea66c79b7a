// One decoding token through whole llama-style layers in one persistent launch.
//
// Why: a one-token step reads every weight once, so it should run at DRAM
// bandwidth, but as a chain of ~10 kernels per layer it does not: each kernel
// starts its weight loads only once it runs, and the norms, the quantise and
// attention between the GEMVs leave DRAM idle (docs/PERFORMANCE.md: with those
// kernels left out the step is 38 % faster). Here one block per SM stays
// resident for the whole step. In each block a producer warp streams every
// weight byte the block will multiply, for all layers in order, through a ring
// of shared-memory stages with the bulk copy engine (cp.async.bulk). Weights do
// not depend on activations, so the producer never waits for the step's data
// flow, only for a free stage: DRAM keeps working while the consumer warps sit
// at a grid barrier, normalise, or run attention. Consumers take each phase's
// rows (every block owns a contiguous share of each matrix), with grid-wide
// barriers only where data flows between blocks:
//
//   norm + Q,K,V | attention (RoPE, KV write) | out + residual | norm + gate/up/GLU | down + residual | ... | norm + logits
//
// Norms are computed redundantly by every block from the residual (16 KB), so
// no phase needs a separate launch. Attention is flash-decoding over (kv head,
// key range) items with the last arriving block of a head merging the ranges.
//
// Same maths as the per-op kernels (int8 activations per 32, dp4a, F16 KV);
// sums are taken in a different order, so results agree to rounding.
//
// Status: correct (the end-to-end GPU checks pass with it), but slower than the
// per-op graph on an H200 (llama3-8b 354 against 522 tok/s, smollm2 978 against
// 1630), so it is opt-in: KESTREL_CUDA_MEGA=1. The weights stream at DRAM rate
// while chunks are consumed; what loses is ~40 us per layer of serial work
// (grid barriers, the norms' and quantises' L2 round trips, attention) that a
// 192 KB ring cannot cover. KESTREL_CUDA_MEGA_TRACE=1 prints where block 0's
// time goes. docs/PERFORMANCE.md has the measurements. A cooperative launch
// needs every SM: two models decoding at once on one GPU take turns.
#pragma once

#include "gemv.cuh"
#include "ops.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace kestrel::cuda {

// Layers per launch: the plan travels as a kernel parameter (at most 32 KB).
constexpr int kDecodeMaxLayers = 32;

struct DecodeLayerDev {
    const float* attnNorm = nullptr;
    const float* ffnNorm = nullptr;
    DevMatrix wq, wk, wv, wo, gate, up, down;
    void* kCache = nullptr;  // this layer's K and V slabs
    void* vCache = nullptr;
    const float* invFreq = nullptr;  // RoPE speeds (dims / 2)
    float ropeMscale = 1.0f;
};

struct DecodeStepDev {
    int layers = 0;
    int hidden = 0, heads = 0, kvHeads = 0, headDim = 0, ffn = 0;
    float eps = 1e-5f;
    float attnScale = 1.0f;
    int ropeDims = 0;
    bool ropeNeox = false;
    GluAct act = GluAct::Silu;
    const int32_t* positions = nullptr;  // [1]: the token's position
    KvDev kv;                            // table, seqRows, blockSize, rowStride (k, v per layer)
    float* x = nullptr;                  // residual stream [hidden], updated in place
    float *q = nullptr, *k = nullptr, *v = nullptr;  // raw projections
    float* attn = nullptr;               // attention output [heads * headDim]
    float* h = nullptr;                  // GLU output [ffn]
    float* attnScratch = nullptr;        // heads * maxSplits * (headDim + 2) floats
    int maxSplits = 1;
    unsigned* sync = nullptr;            // zeroed words: grid barrier, exit count, per-kv-head arrivals
    // Optional tail: final norm and the logits GEMV.
    bool logits = false;
    const float* outNorm = nullptr;
    DevMatrix out;
    float* logitsOut = nullptr;
    bool trace = false;  // KESTREL_CUDA_MEGA_TRACE=1 (printDecodeStepTrace)
    DecodeLayerDev layer[kDecodeMaxLayers];
};

// Words of DecodeStepDev::sync the launch needs (zero before the first launch;
// every launch leaves them zero).
constexpr int kDecodeSyncWords = 2 + 256;

// KESTREL_CUDA_MEGA=1 (read once): the executor looks for layers to run this way.
bool decodeStepEnabled();

// Whether the persistent step can run this plan on the current device: sm_90,
// integer formats with rows that fit a stage, F16 KV, headDim 64 or 128, up to
// 8 query heads per kv head, and the shared memory it needs.
bool decodeStepFits(const DecodeStepDev& plan);

// Runs the plan (decodeStepFits must hold). Not launched with PDL.
cudaError_t launchDecodeStep(const DecodeStepDev& plan, cudaStream_t stream);

// KESTREL_CUDA_MEGA_TRACE=1 (read once): launches set plan.trace, and the
// backend prints block 0's time per phase at exit (printDecodeStepTrace).
bool decodeStepTraced();
void printDecodeStepTrace();

}  // namespace kestrel::cuda
