// kestrel-bench-matmul: times matmul for SmolLM2-135M's shapes (and a few other
// types) with 1 and 64 tokens, and reports GB/s of weights streamed and GOP/s.
// Usage: kestrel-bench-matmul [threads=2] [seconds-per-case=0.3] [model-copies=4]
// Times are the fastest of the runs in that window (robust on a shared machine).
// The per-token estimate at the end sums one layer's products x 30 layers plus
// the Q8_0 lm head (decode) — matmul time only, no attention or norms.
#include "matmul.h"
#include "thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace kestrel;
using namespace kestrel::kernels;

namespace {

struct Case {
    const char* name;
    GgmlType type;
    int64_t rows, cols;
    int perModel;  // how many of these one SmolLM2 forward pass has
};

struct Matrix {
    std::vector<uint8_t> bytes;
    WeightMatrix w;
};

Matrix makeMatrix(GgmlType type, int64_t rows, int64_t cols, std::mt19937& rng) {
    Matrix m;
    const size_t rowBytes = *ggmlRowBytes(type, static_cast<uint64_t>(cols));
    m.bytes.resize(rowBytes * rows);
    std::normal_distribution<float> dist(0.0f, 0.05f);
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
        for (auto& v : row) v = dist(rng);
        quantizeRow(type, row.data(), m.bytes.data() + r * rowBytes, cols);
    }
    m.w = WeightMatrix{type, m.bytes.data(), rows, cols, rowBytes};
    if (lanesLayoutAvailable(type)) {  // as the CPU backend loads it
        std::vector<uint8_t> lanes(lanesLayoutBytes(m.w));
        ThreadPool one(1);
        m.w = repackForDecode(m.w, lanes.data(), one);
        m.bytes = std::move(lanes);  // the buffer moves, its address stays
    }
    return m;
}

// decode: matmulDecode (the few-token row kernels a decode step of several sequences takes).
double timeIt(const Matrix& m, int64_t tokens, ThreadPool& pool, double seconds, bool decode = false) {
    const auto product = decode ? matmulDecode : matmul;
    std::vector<float> x(static_cast<size_t>(m.w.cols * tokens)), y(static_cast<size_t>(m.w.rows * tokens));
    std::mt19937 rng(7);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (auto& v : x) v = dist(rng);
    for (int i = 0; i < 3; ++i) product(m.w, x.data(), tokens, y.data(), pool);
    // The minimum over many runs: this machine is shared, and the minimum is the
    // run that other processes did not interrupt.
    const auto start = std::chrono::steady_clock::now();
    double best = 1e30;
    for (;;) {
        const auto t0 = std::chrono::steady_clock::now();
        product(m.w, x.data(), tokens, y.data(), pool);
        const auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
        if (std::chrono::duration<double>(t1 - start).count() > seconds) break;
    }
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const double seconds = argc > 2 ? std::atof(argv[2]) : 0.3;
    const int copies = std::max(1, argc > 3 ? std::atoi(argv[3]) : 4);
    ThreadPool pool(threads);
    std::printf("isa=%s threads=%d lanes layout: %s\n", activeIsa(), pool.size(), lanesLayoutAvailable(GgmlType::Q4_1) ? "yes" : "no");
    {
        // Dispatch cost of an (almost) empty parallelFor: a decode step makes ~200 of them.
        std::vector<int64_t> sink(static_cast<size_t>(pool.size()) * 16);
        const int calls = 20000;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i)
            pool.parallelFor(pool.size(), [&](int64_t b, int64_t e, int t) { sink[static_cast<size_t>(t) * 16] += e - b; });
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        std::printf("parallelFor dispatch: %.2f us per call (mean of %d)\n", us / calls, calls);
    }

    const Case smol[] = {
        {"attn_q   576x576 ", GgmlType::Q4_1, 576, 576, 30},   {"attn_k   192x576 ", GgmlType::Q4_1, 192, 576, 30},
        {"attn_v   192x576 ", GgmlType::Q4_1, 192, 576, 30},   {"attn_o   576x576 ", GgmlType::Q4_1, 576, 576, 30},
        {"ffn_gate 1536x576", GgmlType::Q4_1, 1536, 576, 30},  {"ffn_up   1536x576", GgmlType::Q4_1, 1536, 576, 30},
        {"ffn_down 576x1536", GgmlType::Q4_1, 576, 1536, 30},  {"lm_head 49152x576", GgmlType::Q8_0, 49152, 576, 1},
    };
    const Case others[] = {
        {"Q4_0 1536x576    ", GgmlType::Q4_0, 1536, 576, 0}, {"Q5_0 2048x640    ", GgmlType::Q5_0, 2048, 640, 0},
        {"Q8_0 1536x576    ", GgmlType::Q8_0, 1536, 576, 0}, {"Q4_K 640x1024    ", GgmlType::Q4_K, 640, 1024, 0},
        {"Q6_K 640x2048    ", GgmlType::Q6_K, 640, 2048, 0}, {"F16  576x576     ", GgmlType::F16, 576, 576, 0},
        {"F32  576x576     ", GgmlType::F32, 576, 576, 0},
    };
    std::mt19937 rng(1);
    double decodeTotal = 0.0, prefillTotal = 0.0;
    auto run = [&](const Case& c) {
        const Matrix m = makeMatrix(c.type, c.rows, c.cols, rng);
        const double bytes = static_cast<double>(m.bytes.size());
        const double t1 = timeIt(m, 1, pool, seconds);
        const double t4 = timeIt(m, 4, pool, seconds, true);
        const double t64 = timeIt(m, 64, pool, seconds);
        const double ops = 2.0 * c.rows * c.cols;
        std::printf("%s %-5s  1 tok: %8.1f us %6.1f GB/s %6.1f GOP/s | 4 tok: %5.2fx | 64 tok: %8.1f us %6.1f GOP/s\n",
                    c.name, std::string(ggmlTypeName(c.type)).c_str(), t1 * 1e6, bytes / t1 / 1e9, ops / t1 / 1e9,
                    t4 / t1, t64 * 1e6, ops * 64 / t64 / 1e9);
        decodeTotal += c.perModel * t1;
        // Prefill needs the lm head for the last token only.
        prefillTotal += c.perModel == 1 ? t1 : c.perModel * t64;
    };
    std::printf("SmolLM2-135M shapes:\n");
    for (const Case& c : smol) run(c);
    std::printf("matmul-only estimate: decode %.1f tok/s (%.2f ms/token), prefill-64 %.1f tok/s\n", 1.0 / decodeTotal,
                decodeTotal * 1e3, 64.0 / prefillTotal);
    {
        // Decode as the model runs it: every matrix once per token, in the model's call order, laid
        // out in a GGUF file's order (token_embd = the tied lm head first; per layer ffn_down,
        // ffn_gate, ffn_up, attn_k, attn_output, attn_q, attn_v), so a product's successor is
        // rarely next in memory, as in the real file. `copies` copies of the weights are cycled:
        // 4 (~390 MB, past the 260 MB L3) means no token finds its weights cached; 1 tests L3.
        std::vector<Matrix> layer;
        for (const Case& c : smol) layer.push_back(makeMatrix(c.type, c.rows, c.cols, rng));
        constexpr size_t kLmHead = 7;
        constexpr size_t kFileOrder[] = {6, 4, 5, 1, 3, 0, 2};  // indices into smol[]
        size_t modelBytes = layer[kLmHead].bytes.size();
        for (size_t i : kFileOrder) modelBytes += layer[i].bytes.size() * 30;
        std::vector<std::vector<uint8_t>> arena(static_cast<size_t>(copies), std::vector<uint8_t>(modelBytes));
        std::vector<std::vector<WeightMatrix>> plans(static_cast<size_t>(copies));
        for (size_t k = 0; k < arena.size(); ++k) {
            auto place = [&](size_t i, size_t& off) {
                std::memcpy(arena[k].data() + off, layer[i].bytes.data(), layer[i].bytes.size());
                WeightMatrix w = layer[i].w;
                w.data = arena[k].data() + off;
                off += layer[i].bytes.size();
                return w;
            };
            size_t off = 0;
            const WeightMatrix head = place(kLmHead, off);
            for (int l = 0; l < 30; ++l) {
                WeightMatrix placed[kLmHead];
                for (size_t i : kFileOrder) placed[i] = place(i, off);
                for (size_t i = 0; i < kLmHead; ++i) plans[k].push_back(placed[i]);
            }
            plans[k].push_back(head);
        }
        // One token, then decode steps of several sequences (matmulDecode, as the scheduler's
        // batches run): the step time against one token's is what batching gains
        // (KESTREL_GEMV_MAX_TOKENS=1 times the panel kernel instead, for the crossover).
        std::mt19937 xr(5);
        std::normal_distribution<float> xd(0.0f, 1.0f);
        std::vector<float> x(1536 * 16), y(49152 * 16);
        for (auto& v : x) v = xd(xr);
        double oneToken = 0.0;
        for (int64_t tokens : {1, 2, 3, 4, 5, 6, 8, 12, 16}) {
            double best = 1e30;
            const auto start = std::chrono::steady_clock::now();
            for (int token = 0;; ++token) {
                const auto t0 = std::chrono::steady_clock::now();
                for (const WeightMatrix& w : plans[static_cast<size_t>(token % copies)])
                    matmulDecode(w, x.data(), tokens, y.data(), pool);
                const auto t1 = std::chrono::steady_clock::now();
                if (token >= copies) best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
                if (token >= 2 * copies && std::chrono::duration<double>(t1 - start).count() > 10 * seconds) break;
            }
            if (tokens == 1) {
                oneToken = best;
                std::printf("decode, whole model in file order (%d copies of %.1f MB cycled): %.1f tok/s, %.2f GB/s\n",
                            copies, modelBytes / 1e6, 1.0 / best, modelBytes / best / 1e9);
            } else {
                std::printf("  step of %2lld tokens: %6.2f ms = %.2fx one token's, %6.1f tok/s aggregate\n",
                            static_cast<long long>(tokens), best * 1e3, best / oneToken, tokens / best);
            }
        }
    }
    std::printf("Other types:\n");
    for (const Case& c : others) run(c);
    return 0;
}
