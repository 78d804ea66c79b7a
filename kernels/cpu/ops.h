// Element-wise and per-row operations of a transformer step, on the CPU:
// RMS norm, rotary position embedding, gated linear units, causal attention
// over a KV cache, and the small vector helpers around them.
//
// Every function works on float32 row-major activations ([rows, cols], row
// stride = cols unless stated), never allocates, and takes a ThreadPool where
// splitting the work over rows or heads pays. The hot loops are compiled
// twice (baseline x86-64 and AVX2+FMA+F16C, picked once from cpuid), glu also
// for AVX-512 (ops_avx512.cpp), so the library runs on any x86-64 CPU.
// Thread-safety: functions are pure over their arguments; one call per
// ThreadPool at a time.
#pragma once

#include "thread_pool.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kestrel::kernels {

// y = x / rms(x) * gamma for each group of `groupSize` values of each row.
// groupSize == cols: the usual per-token norm; groupSize == headDim: the
// per-head Q/K norm of qwen3/gemma3 (gamma then holds headDim values).
// `y` may alias `x`.
void rmsNorm(const float* x, const float* gamma, float eps, float* y, int64_t rows, int64_t cols,
             int64_t groupSize, ThreadPool& pool);

// How RoPE stretches its frequencies for long contexts.
enum class RopeScaling { None, Linear, Llama3, Yarn };

struct RopeConfig {
    int dims = 0;             // rotated dims per head (<= headDim); the rest pass through
    float base = 10000.0f;    // theta base
    bool neox = false;        // pairs (i, i + dims/2) instead of (2i, 2i + 1)
    RopeScaling scaling = RopeScaling::None;
    float factor = 1.0f;      // context stretch factor (linear, llama3, yarn)
    float lowFreqFactor = 1.0f;   // llama3
    float highFreqFactor = 4.0f;  // llama3
    float originalContext = 0.0f; // llama3, yarn: training context before stretching
    float yarnBetaFast = 32.0f;
    float yarnBetaSlow = 1.0f;
    float yarnExtFactor = 1.0f;   // 0 disables the yarn ramp (pure interpolation)
    float attnFactor = 1.0f;      // multiplies cos/sin (yarn's magnitude correction on top)
    const float* freqFactors = nullptr;  // optional per-pair divisors (GGUF rope_freqs.weight), dims/2 values
};

// Fills invFreq[dims/2] with each pair's angular speed after scaling, and
// returns the magnitude multiplier for cos/sin (1 unless yarn/attnFactor).
// Yarn's blend of interpolated and extrapolated frequencies is linear in the
// position, so it folds into the per-pair speed.
float ropeFrequencies(const RopeConfig& cfg, float* invFreq);

// The cos and sin (times mscale) of each row's position for each rotated pair:
// what rope() applies. A decode step rotates the same positions in every layer
// (Q and K of each), so a caller that keeps the table computes the angles once
// per step instead of twice per layer (CpuBackend keeps two, for models that
// alternate two RoPE bases).
class RopeAngles {
public:
    // Whether the table is that of these positions, frequencies and mscale.
    bool holds(const int32_t* positions, int64_t rows, const float* invFreq, int pairs, float mscale) const;
    void fill(const int32_t* positions, int64_t rows, const float* invFreq, int pairs, float mscale);
    int pairs() const { return pairs_; }
    const float* cosOf(int64_t row) const { return cos_.data() + row * pairs_; }
    const float* sinOf(int64_t row) const { return sin_.data() + row * pairs_; }

private:
    std::vector<int32_t> positions_;
    std::vector<float> invFreq_, cos_, sin_;
    float mscale_ = 0.0f;
    int pairs_ = 0;
};

// Rotates, in place, every head of each row of x ([rows, cols], cols = heads * headDim)
// by the angles of its row (angles.pairs() pairs; the rest of a head passes through).
void rope(float* x, int64_t rows, int64_t cols, int headDim, const RopeAngles& angles, bool neox, ThreadPool& pool);
// The same from positions: invFreq/mscale from ropeFrequencies.
void rope(float* x, int64_t rows, int64_t cols, int headDim, const int32_t* positions, int dims, bool neox,
          const float* invFreq, float mscale, ThreadPool& pool);

enum class GluKind { Silu, GeluTanh };

// out = act(gate) * up, n values. `out` may alias gate or up.
void glu(const float* gate, const float* up, float* out, int64_t n, GluKind kind, ThreadPool& pool);

// Vector helpers (n values; out may alias an input).
void add(const float* a, const float* b, float* out, int64_t n);
void scale(const float* x, float s, float* out, int64_t n);

// The index of the largest of x[0..n) (n >= 1), the lowest index among equals:
// greedy sampling's token. A value wins only by being greater than the best so
// far, so a NaN never wins unless it is x[0] (runtime::argmax's and selectTop's
// order, bit for bit).
int64_t argmaxRow(const float* x, int64_t n);
// x[r][c] += bias[c] for each of `rows` rows.
void addBias(float* x, const float* bias, int64_t rows, int64_t cols);
// In-place numerically stable softmax of n values.
void softmax(float* x, int64_t n);
// x = cap * tanh(x / cap).
void softcap(float* x, int64_t n, float cap);

// Storage of one layer's K or V: blocks of blockTokens positions. Token t's
// sequence has block table tables + seqRows[t] * tableWidth; position p of kv
// head h starts at element (table[p / blockTokens] * blockTokens + p % blockTokens)
// * rowStride + h * headDim. With tables == nullptr the cache is one
// contiguous slab (element p * rowStride), as tests use it.
//
// Q8: element e is the int8 code k[e] times kScales[e / kKvQ8Block] (one scale
// per 32 values of a head's row; needs headDim % 32 == 0), as
// runtime/kv_cache.h lays an 8-bit slab out.
enum class KvType { F32, F16, Q8 };
constexpr int kKvQ8Block = 32;
// Bytes of one K or V value in the cache (Q8: its code; the scales lie apart).
constexpr int kvTypeBytes(KvType t) { return t == KvType::F32 ? 4 : t == KvType::F16 ? 2 : 1; }

struct KvView {
    KvType type = KvType::F32;
    void* k = nullptr;
    void* v = nullptr;
    int64_t rowStride = 0;  // elements between consecutive positions (kvHeads * headDim)
    int32_t blockTokens = 1;
    const int32_t* tables = nullptr;
    const int32_t* seqRows = nullptr;  // nullptr: every token uses row 0
    int64_t tableWidth = 0;
    float* kScales = nullptr;  // Q8 only
    float* vScales = nullptr;

    const int32_t* tableOf(int64_t token) const {
        return tables ? tables + (seqRows ? seqRows[token] : 0) * tableWidth : nullptr;
    }
    // Element offset of position p in a sequence with block table `table`.
    static int64_t rowOffset(const int32_t* table, int32_t blockTokens, int64_t rowStride, int64_t p) {
        if (!table) return p * rowStride;
        return (static_cast<int64_t>(table[p / blockTokens]) * blockTokens + p % blockTokens) * rowStride;
    }
};

// Writes rows of k and v ([tokens, kvHeads * headDim]) at their positions
// (Q8: each 32 values as codes round(x / d) with d = max |x| / 127).
void storeKv(const float* k, const float* v, int64_t tokens, const int32_t* positions, int64_t rowWidth,
             const KvView& cache);

struct AttentionConfig {
    int heads = 0;
    int kvHeads = 0;       // heads % kvHeads == 0 (grouped-query attention)
    int headDim = 0;       // of Q and K
    int valueDim = 0;      // of V and the output
    float scale = 1.0f;    // applied to q.k
    int slidingWindow = 0; // > 0: key j visible from position p only if p - j < window
    float softcap = 0.0f;  // > 0: scores = softcap * tanh(scores / softcap)
};

// Causal attention: out[t][h] = sum_j softmax_j(q[t][h] . K[j][h/g]) V[j][h/g]
// over cached positions j <= positions[t] (and inside the window). q is
// [tokens, heads * headDim]; out is [tokens, heads * valueDim]. Keys are
// consumed in blocks with a running maximum (online softmax), so no score
// buffer is needed whatever the context length.
// The first `decodeTokens` tokens are decode steps (one token of a sequence each):
// the per-query kernels take them. The others (prefill) go to the query-block
// kernels where the ISA has them (attention_blocked.h), whose rounding differs, so
// the split must depend on a token's role, never on what else its batch holds:
// a token's result is then the same whatever it is batched with.
void attention(const float* q, int64_t tokens, const int32_t* positions, const KvView& cache,
               const AttentionConfig& cfg, float* out, ThreadPool& pool, int64_t decodeTokens);

// IEEE half conversions (round to nearest even), for caches and tests.
uint16_t floatToHalf(float f);
float halfToFloat(uint16_t h);
void floatsToHalves(const float* src, uint16_t* dst, int64_t n);  // floatToHalf of each, bit for bit

}  // namespace kestrel::kernels
