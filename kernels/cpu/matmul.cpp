// matmul: quantise the activations once, then give each thread contiguous
// ranges of weight tiles (4 rows, or 16-row panels where the ISA has them); a
// tile is unpacked once and multiplied with all tokens, so prefill reads each
// weight row from memory once per call.
#include "matmul.h"

#include "fp16.h"
#include "lanes_layout.h"
#include "quant_blocks.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

namespace kestrel::kernels {

bool rowsLanesAvx512(GgmlType type, const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols,
                     const QuantActivations& act, float* y, int64_t yStride);
bool rowsLanesAvx2(GgmlType type, const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols,
                   const QuantActivations& act, float* y, int64_t yStride);

namespace {

bool cpuHasAvx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
bool cpuHasAvx512Vnni() {
    return cpuHasAvx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

const IsaKernels* kernelsFor(CpuIsa isa) {
    switch (isa) {
    case CpuIsa::Scalar: return &scalarKernels();
    case CpuIsa::Avx2: return cpuHasAvx2() ? avx2Kernels() : nullptr;
    case CpuIsa::Avx512Vnni: return cpuHasAvx512Vnni() ? avx512Kernels() : nullptr;
    }
    return nullptr;
}

const IsaKernels& pickKernels() {
    const char* env = std::getenv("KESTREL_CPU_ISA");
    const std::string_view want = env ? env : "";
    if (want == "scalar") return scalarKernels();
    if (want == "avx2" && kernelsFor(CpuIsa::Avx2)) return *kernelsFor(CpuIsa::Avx2);
    if (want == "avx512" || want == "avx512vnni" || want.empty() || want == "auto")
        if (const IsaKernels* k = kernelsFor(CpuIsa::Avx512Vnni)) return *k;
    if (want != "scalar")
        if (const IsaKernels* k = kernelsFor(CpuIsa::Avx2)) return *k;
    return scalarKernels();
}

const IsaKernels& activeKernels() {
    static const IsaKernels& k = pickKernels();
    return k;
}

// Scratch grows to the largest shape seen and is then reused: no allocation per call.
std::vector<unsigned char>& threadScratch(size_t bytes) {
    thread_local std::vector<unsigned char> buf;
    if (buf.size() < bytes) buf.resize(bytes);
    return buf;
}

// Rows [r0, r0 + n) of w in GGML's block layout: w's own bytes, or for a matrix
// in the lanes layout a copy restored into per-thread scratch (prefill and the
// float paths; decode reads the lanes layout directly). Valid until the next call
// on this thread.
struct GgmlRows {
    const uint8_t* data;
    size_t rowBytes;
};
GgmlRows ggmlRows(const WeightMatrix& w, int64_t r0, int64_t n) {
    const auto* src = static_cast<const uint8_t*>(w.data) + r0 * w.rowBytes;
    if (!w.lanes) return {src, w.rowBytes};
    const size_t rowBytes = *ggmlRowBytes(w.type, static_cast<uint64_t>(w.cols));
    thread_local std::vector<uint8_t> restored;
    if (restored.size() < rowBytes * n) restored.resize(rowBytes * n);
    for (int64_t r = 0; r < n; ++r) fromLanesRow(w.type, src + r * w.rowBytes, w.cols, restored.data() + r * rowBytes);
    return {restored.data(), rowBytes};
}

struct ActivationBuffer {
    std::vector<unsigned char> storage;
    std::vector<float> s32;
};

// Decode steps of a few sequences (matmulDecode, 2..kFewTokensMax tokens) take
// the GEMV kernel where the ISA has one for the type: it reads each weight
// block once for all tokens, and each token's arithmetic is the one-token
// GEMV's, so a sequence's logits do not depend on how many others share its
// decode step. Prefill rows keep the panels even when there are few of them:
// a prompt's KV then does not depend on how it was chunked or how much of it
// came from the prefix cache. Measured crossover (docs/PERFORMANCE.md, issue
// 5; whole-model steps, best of 3): the GEMV wins up to 5 tokens (9.9 vs
// 10.9 ms), ties at 6, loses at 8 (13.7 vs 12.2 ms); on AVX2 (Zen 2) it wins up to 5
// as well (5 tokens 18.6 vs 22.1 ms, 4 tokens 13.8 vs 18.6). KESTREL_GEMV_MAX_TOKENS
// (1-8) overrides it, for measuring only.
constexpr int64_t kFewTokensMax = 5;

// KESTREL_GEMV_MAX_TOKENS (clamped to [1, limit]) or `fallback`.
int64_t gemvMaxTokens(int64_t limit, int64_t fallback) {
    const char* env = std::getenv("KESTREL_GEMV_MAX_TOKENS");
    return env ? std::clamp<int64_t>(std::atoi(env), 1, limit) : fallback;
}

// Weights in the lanes layout take the lanes GEMV up to its limit (kLanesMaxTokens):
// measured whole-model steps (kestrel-bench-matmul, Zen 4, 2 threads) cost 2.0-2.1x
// a one-token step at 8 tokens, against 3.9-4.5x for the panels.
int64_t lanesMaxTokens() {
    static const int64_t n = gemvMaxTokens(kLanesMaxTokens, kLanesMaxTokens);
    return n;
}

int64_t fewTokensMax() {
    static const int64_t n = gemvMaxTokens(8, kFewTokensMax);
    return n;
}

// Does `k` have a direct kernel for `tokens` tokens of `type`? (A probe on an empty row range.)
bool hasFewTokensKernel(const IsaKernels& k, GgmlType type, int64_t tokens) {
    if (!k.rowsFewTokens || tokens > fewTokensMax()) return false;
    const QuantActivations probe{tokens, 0, nullptr, nullptr, nullptr};
    return k.rowsFewTokens(type, nullptr, 0, 0, 0, probe, nullptr, 0);
}

// Other products of two or more tokens take the panel kernel where the ISA has
// one (already at 2 tokens its cheaper inner loop pays for building the
// panels). One path for all larger calls keeps a row's result independent of
// how many other rows share the call.
constexpr int64_t kPanelMinTokens = 2;

ActivationBuffer& callerActivations() {
    thread_local ActivationBuffer buf;
    return buf;
}

bool isFloatType(GgmlType t) { return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16; }

void matmulFloat(const IsaKernels& k, const WeightMatrix& w, const float* x, int64_t tokens, float* y,
                 ThreadPool& pool) {
    const int64_t tiles = (w.rows + kTileRows - 1) / kTileRows;
    pool.parallelFor(tiles, [&](int64_t b, int64_t e, int) {
        auto& scratch = threadScratch(static_cast<size_t>(w.cols) * kTileRows * sizeof(float));
        auto* wf = reinterpret_cast<float*>(scratch.data());
        for (int64_t tile = b; tile < e; ++tile) {
            const int64_t r0 = tile * kTileRows;
            const int rows = static_cast<int>(std::min<int64_t>(kTileRows, w.rows - r0));
            const GgmlRows src = ggmlRows(w, r0, rows);
            const float* rowsF = wf;
            if (w.type == GgmlType::F32 && w.rowBytes == static_cast<size_t>(w.cols) * 4) {
                rowsF = reinterpret_cast<const float*>(src.data);
            } else if (!isFloatType(w.type)) {
                for (int r = 0; r < rows; ++r) dequantizeRow(w.type, src.data + r * src.rowBytes, wf + r * w.cols, w.cols);
            } else {
                for (int r = 0; r < rows; ++r) k.toFloat(w.type, src.data + r * src.rowBytes, wf + r * w.cols, w.cols);
            }
            k.floatTile(rowsF, rows, x, tokens, w.cols, y + r0, w.rows);
        }
    });
}

// x (tokens rows of `cols` floats) quantised to int8 into the caller's
// per-thread buffer: valid until this thread's next call.
QuantActivations quantizeActivationsFor(const IsaKernels& k, const float* x, int64_t cols, int64_t tokens,
                                        ThreadPool& pool) {
    const int64_t cp = padCols(cols);
    ActivationBuffer& ab = callerActivations();
    const size_t qsBytes = static_cast<size_t>(tokens * cp);
    const size_t need = qsBytes + static_cast<size_t>(tokens * cp / 4 + tokens * cp / 16) * sizeof(float) + 128;
    if (ab.storage.size() < need) ab.storage.resize(need);
    auto base = (reinterpret_cast<uintptr_t>(ab.storage.data()) + 63) / 64 * 64;
    auto* qs = reinterpret_cast<int8_t*>(base);
    auto* dx4 = reinterpret_cast<float*>(base + (qsBytes + 63) / 64 * 64);
    float* s16 = dx4 + tokens * cp / 4;
    // Quantising is cheap next to the product; split it only when there are several tokens.
    if (tokens >= 8)
        pool.parallelFor(tokens, [&](int64_t b, int64_t e, int) { k.quantize(x, cols, b, e, qs, dx4, s16, cp); });
    else
        k.quantize(x, cols, 0, tokens, qs, dx4, s16, cp);
    static std::atomic<uint64_t> calls{0};
    return QuantActivations{tokens, cp, qs, dx4, s16, nullptr, ++calls};
}

// The lanes GEMV of the active ISA (lanesLayoutAvailable says there is one).
using RowsLanesFn = bool (*)(GgmlType, const uint8_t*, size_t, int64_t, int64_t, const QuantActivations&, float*,
                             int64_t);
RowsLanesFn rowsLanes() {
    static const RowsLanesFn fn = &activeKernels() == avx512Kernels() ? rowsLanesAvx512 : rowsLanesAvx2;
    return fn;
}

bool takesLanesGemv(const WeightMatrix& w, int64_t tokens, bool decodeRows) {
    return w.lanes && (tokens == 1 || (decodeRows && tokens <= lanesMaxTokens()));
}

// Products of weights in the lanes layout with the same activations: one
// parallel loop over all their rows, laid end to end in units of 4 rows (a
// chunk never splits a row pair, so a row's result does not depend on the split).
void lanesProducts(std::span<const SharedProduct> products, const QuantActivations& act, ThreadPool& pool) {
    int64_t start[kMaxSharedProducts + 1] = {0};
    for (size_t i = 0; i < products.size(); ++i) start[i + 1] = start[i] + (products[i].w->rows + 3) / 4;
    pool.parallelFor(
        start[products.size()],
        [&](int64_t qb, int64_t qe, int) {
            for (size_t i = 0; i < products.size(); ++i) {
                const int64_t b = std::max(qb, start[i]), e = std::min(qe, start[i + 1]);
                if (b >= e) continue;
                const WeightMatrix& w = *products[i].w;
                const int64_t r0 = (b - start[i]) * 4, r1 = std::min((e - start[i]) * 4, w.rows);
                rowsLanes()(w.type, static_cast<const uint8_t*>(w.data) + r0 * w.rowBytes, w.rowBytes, r1 - r0,
                                w.cols, act, products[i].y + r0, w.rows);
            }
        },
        8);
}

void matmulInt(const IsaKernels& k, const WeightMatrix& w, const float* x, int64_t tokens, float* y,
               ThreadPool& pool, bool decodeRows) {
    const QuantActivations act = quantizeActivationsFor(k, x, w.cols, tokens, pool);
    ActivationBuffer& ab = callerActivations();
    const int64_t cp = act.colsPadded;
    const float* s16 = act.s16;

    // Rows straight from the blocks, for one token or a few: chunks are whole
    // groups of 4 rows, the kernels' unit (a ragged chunk would fall back to
    // single rows, which also changes how a row's sum is reduced).
    auto byRowQuads = [&](auto&& rowsFn) {
        const int64_t quads = (w.rows + 3) / 4;
        pool.parallelFor(
            quads,
            [&](int64_t qb, int64_t qe, int) {
                const int64_t b = qb * 4, e = std::min(qe * 4, w.rows);
                rowsFn(static_cast<const uint8_t*>(w.data) + b * w.rowBytes, e - b, y + b);
            },
            8);
    };
    if (takesLanesGemv(w, tokens, decodeRows)) {
        const SharedProduct one{&w, y};
        lanesProducts({&one, 1}, act, pool);
        return;
    }
    if (!w.lanes && decodeRows && hasFewTokensKernel(k, w.type, tokens)) {
        byRowQuads([&](const uint8_t* rows, int64_t n, float* out) {
            k.rowsFewTokens(w.type, rows, w.rowBytes, n, w.cols, act, out, w.rows);
        });
        return;
    }
    // Probe on an empty range: does this ISA have a direct one-token kernel for the type?
    if (!w.lanes && tokens == 1 && k.rowsOneToken &&
        k.rowsOneToken(w.type, static_cast<const uint8_t*>(w.data), w.rowBytes, 0, w.cols, act, y)) {
        byRowQuads([&](const uint8_t* rows, int64_t n, float* out) {
            k.rowsOneToken(w.type, rows, w.rowBytes, n, w.cols, act, out);
        });
        return;
    }

    if (tokens >= kPanelMinTokens && k.panelRows) {
        // Per-32 activation sums for the panel kernel's 32-value groups.
        const int64_t n32 = cp / 32;
        ab.s32.resize(static_cast<size_t>(tokens * n32));
        for (int64_t i = 0; i < tokens * n32; ++i) ab.s32[static_cast<size_t>(i)] = s16[2 * i] + s16[2 * i + 1];
        QuantActivations panelAct = act;
        panelAct.s32 = ab.s32.data();
        const int64_t calls = (w.rows + kPanelCallRows - 1) / kPanelCallRows;
        pool.parallelFor(calls, [&](int64_t b, int64_t e, int) {
            for (int64_t p = b; p < e; ++p) {
                const int64_t r0 = p * kPanelCallRows;
                const int rows = static_cast<int>(std::min<int64_t>(kPanelCallRows, w.rows - r0));
                const auto* lanesRows = static_cast<const uint8_t*>(w.data) + r0 * w.rowBytes;
                if (w.lanes && k.panelRowsLanes &&
                    k.panelRowsLanes(w.type, lanesRows, w.rowBytes, rows, w.cols, panelAct, y + r0, w.rows))
                    continue;
                const GgmlRows src = ggmlRows(w, r0, rows);
                k.panelRows(w.type, src.data, src.rowBytes, rows, w.cols, panelAct, y + r0, w.rows);
            }
        });
        return;
    }

    const int64_t tiles = (w.rows + kTileRows - 1) / kTileRows;
    pool.parallelFor(tiles, [&](int64_t b, int64_t e, int) {
        auto& scratch = threadScratch(unpackedTileBytes(cp));
        UnpackedTile tile = makeUnpackedTile(scratch.data(), cp);
        for (int64_t t = b; t < e; ++t) {
            const int64_t r0 = t * kTileRows;
            const int rows = static_cast<int>(std::min<int64_t>(kTileRows, w.rows - r0));
            const GgmlRows src = ggmlRows(w, r0, rows);
            k.unpack(w.type, src.data, src.rowBytes, rows, w.cols, tile);
            k.intTile(tile, act, y + r0, w.rows);
        }
    });
}

void matmulWith(const IsaKernels& k, const WeightMatrix& w, const float* x, int64_t tokens, float* y,
                ThreadPool& pool, bool decodeRows) {
    if (tokens <= 0 || w.rows <= 0) return;
    if (isFloatType(w.type))
        matmulFloat(k, w, x, tokens, y, pool);
    else if (hasIntegerPath(w.type))
        matmulInt(k, w, x, tokens, y, pool, decodeRows);
    else
        matmulReference(w, x, tokens, y);  // unsupported types are rejected at load; stay correct anyway
}

}  // namespace

void matmul(const WeightMatrix& w, const float* x, int64_t tokens, float* y, ThreadPool& pool) {
    matmulWith(activeKernels(), w, x, tokens, y, pool, false);
}

void matmulDecode(const WeightMatrix& w, const float* x, int64_t tokens, float* y, ThreadPool& pool) {
    matmulWith(activeKernels(), w, x, tokens, y, pool, true);
}

void matmulDecodeShared(std::span<const SharedProduct> products, const float* x, int64_t tokens, ThreadPool& pool) {
    bool shared = !products.empty() && products.size() <= kMaxSharedProducts;
    for (const SharedProduct& p : products)
        shared = shared && takesLanesGemv(*p.w, tokens, true) && p.w->cols == products[0].w->cols && p.w->rows > 0;
    if (!shared) {
        for (const SharedProduct& p : products) matmulDecode(*p.w, x, tokens, p.y, pool);
        return;
    }
    lanesProducts(products, quantizeActivationsFor(activeKernels(), x, products[0].w->cols, tokens, pool), pool);
}

void matmulFloatActivations(const WeightMatrix& w, const float* x, int64_t tokens, float* y, ThreadPool& pool) {
    if (tokens <= 0 || w.rows <= 0) return;
    matmulFloat(activeKernels(), w, x, tokens, y, pool);
}

bool isaSupported(CpuIsa isa) { return kernelsFor(isa) != nullptr; }

bool matmulWithIsa(CpuIsa isa, const WeightMatrix& w, const float* x, int64_t tokens, float* y, ThreadPool& pool,
                   bool decodeRows) {
    const IsaKernels* k = kernelsFor(isa);
    matmulWith(k ? *k : activeKernels(), w, x, tokens, y, pool, decodeRows);
    return k != nullptr;
}

const char* activeIsa() { return activeKernels().name; }

int64_t matmulExactBatchTokens(GgmlType type) {
    const IsaKernels& k = activeKernels();
    if (!hasIntegerPath(type) || isFloatType(type)) return INT64_MAX;  // floatTile: one dot per (row, token)
    if (!k.rowsOneToken && !k.panelRows && !k.rowsFewTokens) return INT64_MAX;  // tiles for every count
    if (lanesLayoutAvailable(type)) return lanesMaxTokens();
    int64_t n = 1;
    while (n < fewTokensMax() && hasFewTokensKernel(k, type, n + 1)) ++n;
    return n;
}

bool lanesLayoutAvailable(GgmlType type) {
    static const bool enabled = [] {
        const char* env = std::getenv("KESTREL_CPU_LANES");
        const IsaKernels* k = &activeKernels();
        return (k == avx512Kernels() || k == avx2Kernels()) && !(env && std::string_view(env) == "0");
    }();
    return enabled && isLanesType(type) && (!lanesAvx512Only(type) || &activeKernels() == avx512Kernels());
}

size_t lanesLayoutBytes(const WeightMatrix& w) { return lanesRowBytes(w.type, w.cols) * static_cast<size_t>(w.rows); }

WeightMatrix repackForDecode(const WeightMatrix& w, void* dst, ThreadPool& pool) {
    WeightMatrix out = w;
    out.data = dst;
    out.rowBytes = lanesRowBytes(w.type, w.cols);
    out.lanes = true;
    pool.parallelFor(
        w.rows,
        [&](int64_t b, int64_t e, int) {
            for (int64_t r = b; r < e; ++r)
                toLanesRow(w.type, static_cast<const uint8_t*>(w.data) + r * w.rowBytes, w.cols,
                           static_cast<uint8_t*>(dst) + r * out.rowBytes);
        },
        64);
    return out;
}

void weightRowToFloat(const WeightMatrix& w, int64_t row, float* out) {
    const GgmlRows src = ggmlRows(w, row, 1);
    dequantizeRow(w.type, src.data, out, w.cols);
}

void matmulReference(const WeightMatrix& w, const float* x, int64_t tokens, float* y) {
    std::vector<float> row(static_cast<size_t>(w.cols));
    for (int64_t r = 0; r < w.rows; ++r) {
        weightRowToFloat(w, r, row.data());
        for (int64_t t = 0; t < tokens; ++t) {
            double acc = 0.0;
            for (int64_t c = 0; c < w.cols; ++c) acc += static_cast<double>(row[c]) * x[t * w.cols + c];
            y[t * w.rows + r] = static_cast<float>(acc);
        }
    }
}

}  // namespace kestrel::kernels
