// kestrel-bench-attention: times CPU attention (kernels::attention) on an f16
// paged cache, for a prefill chunk at the end of a context (the query-block
// kernels) or for decode steps of several sequences (the per-query kernels),
// and reports cycles per (query, key) pair at a stated clock.
// Usage: kestrel-bench-attention [smollm2|gemma3] [context=2048] [prefill-chunk=256]
//                                [decode-streams=0] [threads=2] [ghz=2.95] [calls=20]
// With decode-streams > 0 it times that many one-token sequences instead of the
// chunk. Times are the fastest of `calls` calls (robust on a shared machine; a decode
// call of a few microseconds wants thousands); the KV
// blocks are in a scrambled order, as in the pool.
#include "ops.h"
#include "thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

using namespace kestrel::kernels;

int main(int argc, char** argv) {
    const bool gemma = argc > 1 && std::strcmp(argv[1], "gemma3") == 0;
    const int ctx = argc > 2 ? std::atoi(argv[2]) : 2048, chunk = argc > 3 ? std::atoi(argv[3]) : 256;
    const int streams = argc > 4 ? std::atoi(argv[4]) : 0, threads = argc > 5 ? std::atoi(argv[5]) : 2;
    const double ghz = argc > 6 ? std::atof(argv[6]) : 2.95;
    if (ctx < 1 || chunk < 1 || chunk > ctx || streams < 0 || threads < 1) {
        std::fprintf(stderr, "usage: kestrel-bench-attention [smollm2|gemma3] [context] [prefill-chunk <= context] "
                             "[decode-streams] [threads] [ghz]\n");
        return 2;
    }
    const int heads = gemma ? 4 : 9, kvHeads = gemma ? 1 : 3, dim = gemma ? 256 : 64, rowW = kvHeads * dim;
    const int blockTokens = 16, seqs = std::max(streams, 1), blocksPerSeq = ctx / blockTokens + 1;
    const int blocks = blocksPerSeq * seqs;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<uint16_t> k(static_cast<size_t>(blocks) * blockTokens * rowW), v(k.size());
    for (auto& x : k) x = floatToHalf(uniform(rng));
    for (auto& x : v) x = floatToHalf(uniform(rng));
    // Sequence s's table is row s of `tables`; the pool hands out blocks in no order.
    std::vector<int32_t> tables(static_cast<size_t>(blocks));
    for (int i = 0; i < blocks; ++i) tables[size_t(i)] = i;
    std::shuffle(tables.begin(), tables.end(), rng);
    const int tokens = streams > 0 ? streams : chunk;
    std::vector<int32_t> positions(static_cast<size_t>(tokens)), rows(static_cast<size_t>(tokens));
    for (int t = 0; t < tokens; ++t) {
        positions[size_t(t)] = streams > 0 ? ctx - 1 : ctx - chunk + t;
        rows[size_t(t)] = streams > 0 ? t : 0;
    }
    KvView view{KvType::F16, k.data(), v.data(), rowW, blockTokens, tables.data()};
    view.seqRows = rows.data();
    view.tableWidth = blocksPerSeq;
    const AttentionConfig cfg{heads, kvHeads, dim, dim, 1.0f / 8.0f, 0, 0.0f};
    std::vector<float> q(static_cast<size_t>(tokens) * heads * dim), out(q.size());
    for (auto& x : q) x = uniform(rng);
    ThreadPool pool(threads);
    const int64_t decodeTokens = streams > 0 ? tokens : 0;
    attention(q.data(), tokens, positions.data(), view, cfg, out.data(), pool, decodeTokens);
    double best = 1e30;
    const int calls = argc > 7 ? std::max(1, std::atoi(argv[7])) : 20;
    for (int i = 0; i < calls; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        attention(q.data(), tokens, positions.data(), view, cfg, out.data(), pool, decodeTokens);
        best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    // (query, key) pairs: each query head of each token against its visible keys.
    double pairs = 0;
    for (int t = 0; t < tokens; ++t) pairs += double(heads) * (positions[size_t(t)] + 1);
    std::printf("%s, %s: %d token(s) at %d-%d, %d thread(s): %.1f us, %.2f cycles per (query, key) at %.2f GHz\n",
                gemma ? "gemma3 (4/1 heads of 256)" : "smollm2 (9/3 heads of 64)",
                streams > 0 ? "decode steps" : "a prefill chunk", tokens, positions.front(), positions.back(), threads, best,
                best * 1e-6 * threads * ghz * 1e9 / pairs, ghz);
    return 0;
}
