// Paged KV on the GPU: a cached prefix, copy-on-write forks and a mixed batch
// of three sequences give the logits of a from-scratch GPU run (same tokens,
// same positions). Bound 5e-2, the end-to-end CPU-vs-GPU bound: reused KV is
// the same bytes, but the rows in a step change how attention splits the keys
// and which fused kernels run (a one-token step takes the fused decode path),
// float roundings of ~1e-6 that the int8 re-quantisation of every layer's
// activations amplifies to ~1e-2 on random-weight models. A wrong block,
// position or sequence moves the logits by O(1).
//
// First, on a model of its own, a step graph replayed after a wider step grew
// the tiled GEMM's split-K workspace gives the logits of fresh runs. (The
// workspace was once freed on growth while earlier graphs still held its
// address; this check did not catch that on the H200, where the allocator
// handed the freed range back as the start of the larger buffer, so the
// replay still hit valid memory. It guards replay after a wider step.)
#include "cuda_checks.h"

#include "cuda_backend_impl.h"
#include "fresh_logits.h"
#include "model_impl.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace kestrel::cudatest {
namespace {

constexpr double kBound = 5e-2;

double relDiff(std::span<const float> a, std::span<const float> b) {
    if (a.size() != b.size() || a.empty()) return 1e30;
    double d = 0, m = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (!std::isfinite(a[i])) return 1e30;
        d = std::max(d, std::fabs(double(a[i]) - double(b[i])));
        m = std::max(m, std::fabs(double(b[i])));
    }
    return d / std::max(m, 1e-30);
}

std::vector<int32_t> tokens(int n, uint32_t seed, int vocab) {
    std::mt19937 rng(seed);
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (auto& x : t) x = 100 + int32_t(rng() % uint32_t(std::max(1, vocab - 200)));
    return t;
}

std::vector<int32_t> cat(std::span<const int32_t> a, std::span<const int32_t> b) {
    std::vector<int32_t> v(a.begin(), a.end());
    v.insert(v.end(), b.begin(), b.end());
    return v;
}

// The model on the GPU, or null with the reason recorded in `out`.
std::shared_ptr<Model> loadOnCuda(const LoadOptions& o, const std::string& what, std::vector<CheckResult>& out) {
    auto loaded = Model::load(o);
    if (!loaded) {
        out.push_back({what + ": load on cuda", 0, 0, false, loaded.status().message()});
        return nullptr;
    }
    return std::move(*loaded);
}

// Its own model (a fresh stream, so a fresh split-K workspace): a larger step earlier in the
// process would have grown the workspace before the graph was captured.
std::vector<CheckResult> runGraphReplayCheck(const LoadOptions& o) {
    std::vector<CheckResult> out;
    const auto owned = loadOnCuda(o, "graph replay", out);
    if (!owned) return out;
    Model& model = *owned;
    runtime::KvPool& pool = *model.impl().pool;
    const int vocab = pool.vocabSize();
    std::vector<float> logits;
    Status st = Status::ok();
    // 16 one-token rows three times (eager, captured, replayed), from the sequences' first token on (so
    // no larger step came before), then 32 rows (a wider tile: the split-K workspace grows), then the
    // 16-row step again: a replay of the graph captured before the growth.
    const auto* cuda = dynamic_cast<const backend::cudaimpl::CudaBackend*>(model.impl().backend.get());
    constexpr int kSeqs = 16;
    std::vector<int32_t> seq(kSeqs);
    std::vector<std::vector<int32_t>> fed(kSeqs);
    std::vector<runtime::PoolChunk> chunks;
    auto stepAll = [&](int perSeq, uint32_t seed, model::LogitsWanted want) {
        chunks.clear();
        for (int i = 0; i < kSeqs; ++i) {
            const auto t = tokens(perSeq, seed + uint32_t(i), vocab);
            const size_t from = fed[size_t(i)].size();
            fed[size_t(i)].insert(fed[size_t(i)].end(), t.begin(), t.end());
            chunks.push_back({seq[size_t(i)], std::span(fed[size_t(i)]).subspan(from), want});
        }
        return pool.step(chunks, logits);
    };
    for (int i = 0; i < kSeqs; ++i) seq[size_t(i)] = pool.open();
    for (int k = 0; k < 3 && st.isOk(); ++k) st = stepAll(1, 200 + 20 * uint32_t(k), model::LogitsWanted::Last);
    if (st.isOk()) st = stepAll(2, 300, model::LogitsWanted::Last);
    const int64_t replaysBefore = cuda ? cuda->stats().replays : 0;
    if (st.isOk()) st = stepAll(1, 400, model::LogitsWanted::Last);
    const bool replayed = cuda && cuda->stats().replays > replaysBefore;
    out.push_back({"graph replay: 16-row step replayed from its graph after a 32-row step", replayed ? 1.0 : 0.0, 1,
                   st.isOk() && replayed, st.message()});
    if (st.isOk() && logits.size() == size_t(kSeqs * vocab)) {
        const std::vector<float> got = logits;
        double worst = 0;
        for (int i = 0; i < kSeqs; ++i)
            worst = std::max(worst, relDiff(std::span(got).subspan(size_t(i * vocab), size_t(vocab)),
                                           test::freshLogits(model, fed[size_t(i)])));
        out.push_back({"graph replay: 16 sequences after the replay (worst)", worst, kBound, worst <= kBound, ""});
    }
    for (int32_t s : seq) pool.close(s);
    return out;
}

}  // namespace

std::vector<CheckResult> runKvReuseCheck(const std::string& ggufPath) {
    std::vector<CheckResult> out;
    LoadOptions o;
    o.path = ggufPath;
    o.device = "cuda";
    o.kvPoolTokens = 8192;
    out = runGraphReplayCheck(o);
    const auto owned = loadOnCuda(o, "paged KV", out);
    if (!owned) return out;
    Model& model = *owned;
    runtime::KvPool& pool = *model.impl().pool;
    const int vocab = pool.vocabSize();
    std::vector<float> logits;
    auto fresh = [&](std::span<const int32_t> t) { return test::freshLogits(model, t); };
    auto result = [&](const std::string& name, std::span<const float> got, std::span<const float> ref) {
        const double e = relDiff(got, ref);
        out.push_back({"paged KV: " + name, e, kBound, e <= kBound, ""});
    };

    // A prefix cached by a closed sequence, reused by a new one.
    const auto t = tokens(250, 1, vocab);  // one step (the pool's step holds 256 tokens)
    const auto ref = fresh(t);
    {
        const int32_t a = pool.open();
        const runtime::PoolChunk ch{a, std::span(t).first(200), model::LogitsWanted::None};
        Status st = pool.step({&ch, 1}, logits);
        pool.close(a);
        if (!st.isOk()) out.push_back({"paged KV: prefill", 0, 0, false, st.message()});
    }
    const int32_t b = pool.open();
    const int64_t reused = pool.reuse(b, t, int64_t(t.size()) - 1);
    const runtime::PoolChunk rest{b, std::span(t).subspan(size_t(reused)), model::LogitsWanted::Last};
    Status st = pool.step({&rest, 1}, logits);
    pool.close(b);
    out.push_back({"paged KV: 192 cached positions reused", double(reused), 192, st.isOk() && reused == 192, st.message()});
    result("continuation after the cached prefix", logits, ref);

    // Two forks of a prompt ending mid-block, stepped together.
    const auto prompt = tokens(40, 2, vocab), x = tokens(9, 3, vocab), y = tokens(9, 4, vocab);
    const auto refX = fresh(cat(prompt, x)), refY = fresh(cat(prompt, y));
    const int32_t a = pool.open();
    const runtime::PoolChunk c0{a, prompt, model::LogitsWanted::None};
    st = pool.step({&c0, 1}, logits);
    auto f = pool.fork(a);
    if (st.isOk() && f) {
        const runtime::PoolChunk both[] = {{a, x, model::LogitsWanted::Last}, {*f, y, model::LogitsWanted::Last}};
        st = pool.step(both, logits);
        if (st.isOk() && logits.size() == size_t(2 * vocab)) {
            result("fork A after copy-on-write", std::span(logits).first(size_t(vocab)), refX);
            result("fork B after copy-on-write", std::span(logits).subspan(size_t(vocab)), refY);
        }
        pool.close(*f);
    }
    pool.close(a);
    if (!st.isOk() || !f) out.push_back({"paged KV: forks", 0, 0, false, st.isOk() ? f.status().message() : st.message()});

    // Two decoding sequences and a prefill chunk in one step.
    const auto p1 = tokens(33, 5, vocab), p2 = tokens(70, 6, vocab), p3 = tokens(25, 7, vocab);
    const int32_t n1[] = {p2[3]}, n2[] = {p1[5]};
    const auto r1 = fresh(cat(p1, n1)), r2 = fresh(cat(p2, n2)), r3 = fresh(p3);
    const int32_t s1 = pool.open(), s2 = pool.open(), s3 = pool.open();
    const runtime::PoolChunk pre[] = {{s1, p1, model::LogitsWanted::None}, {s2, p2, model::LogitsWanted::None}};
    st = pool.step(pre, logits);
    const runtime::PoolChunk mixed[] = {{s1, n1, model::LogitsWanted::Last},
                                        {s2, n2, model::LogitsWanted::Last},
                                        {s3, p3, model::LogitsWanted::Last}};
    if (st.isOk()) st = pool.step(mixed, logits);
    if (st.isOk() && logits.size() == size_t(3 * vocab)) {
        const std::vector<float>* refs[] = {&r1, &r2, &r3};
        for (int i = 0; i < 3; ++i)
            result("mixed batch, sequence " + std::to_string(i + 1), std::span(logits).subspan(size_t(i * vocab), size_t(vocab)),
                   *refs[i]);
    } else {
        out.push_back({"paged KV: mixed batch", 0, 0, false, st.message()});
    }
    for (int32_t s : {s1, s2, s3}) pool.close(s);

    // Speculative decoding: a lone decode row, a chunk of 5 guessed tokens (decode rows that read
    // keys their own step writes, so not loaded early) and a prefill chunk in one step; each guessed
    // row gives the logits of its prefix from scratch.
    const auto q1 = tokens(21, 8, vocab), q2 = tokens(38, 9, vocab), guess = tokens(5, 10, vocab), q3 = tokens(12, 11, vocab);
    const int32_t lone[] = {q2[1]};
    std::vector<std::vector<float>> refs = {fresh(cat(q1, lone))};
    for (size_t i = 1; i <= guess.size(); ++i) refs.push_back(fresh(cat(q2, std::span(guess).first(i))));
    refs.push_back(fresh(q3));
    const int32_t g1 = pool.open(), g2 = pool.open(), g3 = pool.open();
    const runtime::PoolChunk gpre[] = {{g1, q1, model::LogitsWanted::None}, {g2, q2, model::LogitsWanted::None}};
    st = pool.step(gpre, logits);
    runtime::PoolChunk guessed{g2, guess, model::LogitsWanted::All};
    guessed.speculative = true;
    const runtime::PoolChunk spec[] = {{g1, lone, model::LogitsWanted::Last}, guessed, {g3, q3, model::LogitsWanted::Last}};
    if (st.isOk()) st = pool.step(spec, logits);
    if (st.isOk() && logits.size() == refs.size() * size_t(vocab)) {
        for (size_t i = 0; i < refs.size(); ++i)
            result(i == 0 ? "speculative step, lone decode row"
                   : i <= guess.size() ? "speculative step, guessed row " + std::to_string(i)
                                       : "speculative step, prefill chunk",
                   std::span(logits).subspan(i * size_t(vocab), size_t(vocab)), refs[i]);
    } else {
        out.push_back({"paged KV: speculative step", 0, 0, false, st.message()});
    }
    for (int32_t s : {g1, g2, g3}) pool.close(s);

    return out;
}

}  // namespace kestrel::cudatest
