// The shared paged KV pool on the CPU: reused, forked and batched KV gives the
// same logits as computing from scratch (same tokens, same positions); snapshots
// round-trip exactly and a corrupt or foreign one is ignored; a full pool is a
// clear error. Tiny synthetic models (tests/engine/model/synthetic_model.h), so
// no downloaded model is needed.
#include "../model/synthetic_model.h"
#include "matmul.h"
#include "fresh_logits.h"
#include "model_impl.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>

using namespace kestrel;

namespace {

double maxRelDiff(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size() || a.empty()) return 1e30;
    double d = 0, m = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        d = std::max(d, std::fabs(double(a[i]) - double(b[i])));
        m = std::max(m, std::fabs(double(b[i])));
    }
    return d / std::max(m, 1e-30);
}

// Reused KV is bit-identical, but a row's place in a batch can change the
// float summation order inside the tiled int8 matmul (the tail tile is
// summed differently): rounding of ~1e-7. A wrong position, block or
// sequence moves logits by > 1e-2.
constexpr double kBound = 1e-5;

#define KESTREL_COMPARE_LOGITS(a, b)                                                                     \
    do {                                                                                                \
        const double d_ = maxRelDiff(a, b);                                                             \
        QVERIFY2(d_ <= kBound, qPrintable(QString("logits differ by %1 (bound %2)").arg(d_).arg(kBound))); \
    } while (0)

std::vector<int32_t> randomTokens(int n, uint32_t seed, int vocab) {
    std::mt19937 rng(seed);
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (auto& x : t) x = int32_t(rng() % uint32_t(vocab));
    return t;
}

std::vector<int32_t> concat(std::span<const int32_t> a, std::span<const int32_t> b) {
    std::vector<int32_t> v(a.begin(), a.end());
    v.insert(v.end(), b.begin(), b.end());
    return v;
}

}  // namespace

class TestKvPool : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string modelA_, modelB_, model32_;

    std::shared_ptr<Model> load(const std::string& path, const std::string& snapshots = {}, int64_t poolTokens = 0,
                                KvPrecision precision = KvPrecision::Half) {
        LoadOptions o;
        o.path = path;
        o.threads = 2;
        o.snapshotDir = snapshots;
        o.kvPoolTokens = poolTokens;
        o.kvPrecision = precision;
        auto m = Model::load(o);
        if (!m) qWarning("%s", m.status().toString().c_str());
        return m ? std::move(m).value() : nullptr;
    }

    // Logits of the last token of `tokens`, computed alone in a fresh sequence with nothing cached.
    std::vector<float> fresh(Model& model, std::span<const int32_t> tokens) {
        Status s;
        auto logits = test::freshLogits(model, tokens, &s);
        if (!s.isOk()) qWarning("%s", s.toString().c_str());
        return logits;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        test::SynthSpec spec;  // Q8_0/F16 weights: the default int8-activation matmuls
        spec.ctx = 512;
        spec.vocab = 300;
        modelA_ = dir_.filePath("a.gguf").toStdString();
        QVERIFY(test::writeSynthetic(spec, modelA_).isOk());
        spec.seed = 2;  // same shape, other weights: another model file
        modelB_ = dir_.filePath("b.gguf").toStdString();
        QVERIFY(test::writeSynthetic(spec, modelB_).isOk());
        spec.nEmbd = 128;  // 32-wide heads: the 8-bit KV cache's block
        spec.headDim = 32;
        model32_ = dir_.filePath("d32.gguf").toStdString();
        QVERIFY(test::writeSynthetic(spec, model32_).isOk());
    }

    // The 8-bit KV cache (scales beside the codes) through everything that moves KV:
    // a reused prefix, a copy-on-write fork and a snapshot give the logits of a fresh
    // run on the same cache type; a snapshot of the 16-bit cache is foreign to it.
    void int8KvCacheReusesForksAndRestores() {
        QTemporaryDir snaps;
        auto model = load(model32_, snaps.path().toStdString(), 0, KvPrecision::Int8);
        QVERIFY(model);
        const ModelInfo& info = model->info();
        QCOMPARE(info.kvPrecision, KvPrecision::Int8);
        QCOMPARE(info.kvBytesPerToken, uint64_t(info.layers) * 2 * uint64_t(info.kvHeads) * (32 + 4));
        const auto t = randomTokens(100, 21, 300);
        const auto ref = fresh(*model, t);
        runtime::KvPool& pool = *model->impl().pool;
        {  // reuse: 64 positions left by a closed sequence
            const int32_t a = pool.open();
            std::vector<float> unused;
            const runtime::PoolChunk ch{a, std::span(t).first(70), model::LogitsWanted::None};
            QVERIFY(pool.step({&ch, 1}, unused).isOk());
            pool.close(a);
            const int32_t b = pool.open();
            const int64_t reused = pool.reuse(b, t, int64_t(t.size()) - 1);
            QCOMPARE(reused, int64_t(64));
            std::vector<float> logits;
            const runtime::PoolChunk rest{b, std::span(t).subspan(size_t(reused)), model::LogitsWanted::Last};
            QVERIFY(pool.step({&rest, 1}, logits).isOk());
            pool.close(b);
            KESTREL_COMPARE_LOGITS(logits, ref);
        }
        model->clearPrefixCache();
        {  // fork inside a partial block: the copied block carries its scales
            const int32_t a = pool.open();
            std::vector<float> logits;
            const runtime::PoolChunk c0{a, std::span(t).first(40), model::LogitsWanted::None};
            QVERIFY(pool.step({&c0, 1}, logits).isOk());
            auto b = pool.fork(a);
            QVERIFY(b);
            const auto other = randomTokens(60, 22, 300);
            const auto refOther = fresh(*model, concat(std::span(t).first(40), other));
            const runtime::PoolChunk both[] = {{a, std::span(t).subspan(40), model::LogitsWanted::Last},
                                               {*b, other, model::LogitsWanted::Last}};
            QVERIFY(pool.step(both, logits).isOk());
            QVERIFY(pool.stats().blocks.copies >= 1);
            const std::vector<float> la(logits.begin(), logits.begin() + pool.vocabSize()),
                lb(logits.begin() + pool.vocabSize(), logits.end());
            KESTREL_COMPARE_LOGITS(la, ref);
            KESTREL_COMPARE_LOGITS(lb, refOther);
            pool.close(a);
            pool.close(*b);
        }
        {  // snapshot round trip
            auto a = Session::create(model);
            QVERIFY((*a)->evaluate(std::span(t).first(90)));
            QVERIFY((*a)->saveSnapshot("int8").isOk());
        }
        // A fresh load, as after a restart: nothing of the first cache's memory is left to lean on.
        auto reopened = load(model32_, snaps.path().toStdString(), 0, KvPrecision::Int8);
        QVERIFY(reopened);
        auto s = Session::create(reopened);
        std::string note;
        auto restored = (*s)->restoreSnapshot("int8", &note);
        QVERIFY2(restored, restored.status().toString().c_str());
        QCOMPARE(*restored, int32_t(90));
        auto logits = (*s)->evaluate(std::span(t).subspan(90));
        QVERIFY(logits);
        KESTREL_COMPARE_LOGITS(*logits, ref);
        // The same file with the 16-bit cache: the 8-bit snapshot is not its KV.
        auto half = load(model32_, snaps.path().toStdString());
        QVERIFY(half);
        QCOMPARE(half->info().kvPrecision, KvPrecision::Half);
        auto h = Session::create(half);
        auto none = (*h)->restoreSnapshot("int8", &note);
        QVERIFY(none);
        QCOMPARE(*none, int32_t(0));
        QVERIFY2(note.find("KV storage") != std::string::npos, note.c_str());
    }

    // Heads narrower than the 8-bit block (16 values): the cache stays 16-bit, and says so.
    void int8KvCacheNeedsWholeBlocks() {
        auto model = load(modelA_, {}, 0, KvPrecision::Int8);
        QVERIFY(model);
        QCOMPARE(model->info().kvPrecision, KvPrecision::Half);
        QCOMPARE(model->info().kvBytesPerToken, uint64_t(model->info().layers) * 2 * uint64_t(model->info().kvHeads) * 16 * 2);
    }

    // A prefix left in the cache by a closed sequence is reused by a new one,
    // and the continuation's logits equal a from-scratch run bit for bit
    // (each matmul row and each attention row is computed independently).
    void cachedPrefixGivesSameLogits() {
        auto model = load(modelA_);
        QVERIFY(model);
        const auto t = randomTokens(100, 11, 300);
        const auto ref = fresh(*model, t);
        runtime::KvPool& pool = *model->impl().pool;
        {
            const int32_t a = pool.open();
            std::vector<float> unused;
            const runtime::PoolChunk ch{a, std::span(t).first(70), model::LogitsWanted::None};
            QVERIFY(pool.step({&ch, 1}, unused).isOk());
            pool.close(a);  // its 4 full blocks (64 positions) stay cached
        }
        const int32_t b = pool.open();
        const int64_t reused = pool.reuse(b, t, int64_t(t.size()) - 1);
        QCOMPARE(reused, int64_t(64));
        std::vector<float> logits;
        const runtime::PoolChunk ch{b, std::span(t).subspan(size_t(reused)), model::LogitsWanted::Last};
        QVERIFY(pool.step({&ch, 1}, logits).isOk());
        pool.close(b);
        qInfo("reuse of 64 cached positions: max |diff| / max |ref| = %g", maxRelDiff(logits, ref));
        KESTREL_COMPARE_LOGITS(logits, ref);
    }

    // Session turns: the second generate() reuses the first turn's positions.
    void sessionTurnsReuseTheirHistory() {
        auto model = load(modelA_);
        QVERIFY(model);
        auto session = Session::create(model);
        QVERIFY(session);
        const auto turn1 = randomTokens(60, 3, 300);
        GenerateParams p;
        p.sampling.temperature = 0.0f;
        p.maxTokens = 4;
        p.ignoreEndOfGeneration = true;
        auto r1 = (*session)->generate(turn1, p);
        QVERIFY(r1);
        auto turn2 = concat(turn1, r1->tokens);
        const auto extra = randomTokens(20, 4, 300);
        turn2.insert(turn2.end(), extra.begin(), extra.end());
        auto r2 = (*session)->generate(turn2, p);
        QVERIFY(r2);
        // All of turn 1 and the reply except the last sampled token (never fed back) are reused.
        QCOMPARE(r2->reusedTokens, int32_t(turn1.size() + r1->tokens.size() - 1));
        // A new session over the same model finds the history in the prefix cache.
        (*session).reset();
        auto other = Session::create(model);
        QVERIFY(other);
        auto r3 = (*other)->generate(turn2, p);
        QVERIFY(r3);
        QCOMPARE(r3->reusedTokens, int32_t((turn2.size() - 1) / 16 * 16));
        QCOMPARE(r3->tokens, r2->tokens);
    }

    // Two forks of one prompt write different continuations: copy-on-write
    // keeps each one's KV its own.
    void forksCopyOnWrite() {
        auto model = load(modelA_);
        QVERIFY(model);
        const auto prompt = randomTokens(40, 5, 300);  // 2.5 blocks: the last one is shared and partial
        const auto x = randomTokens(10, 6, 300), y = randomTokens(10, 7, 300);
        const auto refX = fresh(*model, concat(prompt, x)), refY = fresh(*model, concat(prompt, y));
        runtime::KvPool& pool = *model->impl().pool;
        const int32_t a = pool.open();
        std::vector<float> logits;
        const runtime::PoolChunk c0{a, prompt, model::LogitsWanted::None};
        QVERIFY(pool.step({&c0, 1}, logits).isOk());
        auto b = pool.fork(a);
        QVERIFY(b);
        const auto usedBefore = pool.stats().blocks.usedBlocks;
        // Both forks in one step: continuous batching of two sequences.
        const runtime::PoolChunk both[] = {{a, x, model::LogitsWanted::Last}, {*b, y, model::LogitsWanted::Last}};
        QVERIFY(pool.step(both, logits).isOk());
        QVERIFY(pool.stats().blocks.copies >= 1);
        QVERIFY(pool.stats().blocks.usedBlocks > usedBefore);
        const int vocab = pool.vocabSize();
        const std::vector<float> la(logits.begin(), logits.begin() + vocab), lb(logits.begin() + vocab, logits.end());
        KESTREL_COMPARE_LOGITS(la, refX);
        KESTREL_COMPARE_LOGITS(lb, refY);
        pool.close(a);
        pool.close(*b);
    }

    // Decode rows and a prefill chunk of three sequences in one step equal each computed alone.
    void batchedStepEqualsSingleSteps() {
        auto model = load(modelA_);
        QVERIFY(model);
        runtime::KvPool& pool = *model->impl().pool;
        const auto p1 = randomTokens(33, 8, 300), p2 = randomTokens(17, 9, 300), p3 = randomTokens(25, 10, 300);
        const int32_t n1 = 77, n2 = 12;
        const auto r1 = fresh(*model, concat(p1, std::vector<int32_t>{n1}));
        const auto r2 = fresh(*model, concat(p2, std::vector<int32_t>{n2}));
        const auto r3 = fresh(*model, p3);
        const int32_t s1 = pool.open(), s2 = pool.open(), s3 = pool.open();
        std::vector<float> logits;
        const runtime::PoolChunk pre[] = {{s1, p1, model::LogitsWanted::None}, {s2, p2, model::LogitsWanted::None}};
        QVERIFY(pool.step(pre, logits).isOk());
        const int32_t one1[] = {n1}, one2[] = {n2};
        const runtime::PoolChunk mixed[] = {{s1, one1, model::LogitsWanted::Last},
                                            {s2, one2, model::LogitsWanted::Last},
                                            {s3, p3, model::LogitsWanted::Last}};
        QVERIFY(pool.step(mixed, logits).isOk());
        const int vocab = pool.vocabSize();
        QCOMPARE(int(logits.size()), 3 * vocab);
        const std::vector<float>* refs[] = {&r1, &r2, &r3};
        for (int i = 0; i < 3; ++i) {
            const std::vector<float> row(logits.begin() + i * vocab, logits.begin() + (i + 1) * vocab);
            KESTREL_COMPARE_LOGITS(row, *refs[i]);
        }
        for (int32_t s : {s1, s2, s3}) pool.close(s);
    }

    // Decode steps of three sequences give each sequence, bit for bit, the logits
    // it gets decoding alone, where the kernels promise it (decode rows are
    // computed apart from prefill rows; kernels::matmulExactBatchTokens).
    void batchedDecodeStepsEqualLoneDecodeExactly() {
        if (kernels::matmulExactBatchTokens(GgmlType::Q8_0) < 3 || kernels::matmulExactBatchTokens(GgmlType::F16) < 3)
            QSKIP("on this CPU path, batched decode rows round differently from lone ones");
        auto model = load(modelA_);
        QVERIFY(model);
        runtime::KvPool& pool = *model->impl().pool;
        const std::vector<int32_t> prompts[] = {randomTokens(21, 31, 300), randomTokens(40, 32, 300),
                                                randomTokens(9, 33, 300)};
        constexpr int kSteps = 5;
        auto fed = [](size_t seq, int step) { return int32_t((seq * 97 + size_t(step) * 13 + 5) % 300); };
        const int vocab = pool.vocabSize();
        std::vector<float> logits, unused;
        // Alone: each sequence prefilled, then decoded one token per step.
        std::vector<std::vector<float>> alone(3);
        for (size_t i = 0; i < 3; ++i) {
            model->clearPrefixCache();
            const int32_t s = pool.open();
            const runtime::PoolChunk pre{s, prompts[i], model::LogitsWanted::None};
            QVERIFY(pool.step({&pre, 1}, unused).isOk());
            for (int k = 0; k < kSteps; ++k) {
                const int32_t tok[] = {fed(i, k)};
                const runtime::PoolChunk one{s, tok, model::LogitsWanted::Last};
                QVERIFY(pool.step({&one, 1}, logits).isOk());
                alone[i].insert(alone[i].end(), logits.begin(), logits.end());
            }
            pool.close(s);
        }
        // Together: the same prefills, then every step decodes all three.
        model->clearPrefixCache();
        int32_t seqs[3];
        for (size_t i = 0; i < 3; ++i) {
            seqs[i] = pool.open();
            const runtime::PoolChunk pre{seqs[i], prompts[i], model::LogitsWanted::None};
            QVERIFY(pool.step({&pre, 1}, unused).isOk());
        }
        for (int k = 0; k < kSteps; ++k) {
            int32_t toks[3];
            std::vector<runtime::PoolChunk> chunks;
            for (size_t i = 0; i < 3; ++i) {
                toks[i] = fed(i, k);
                chunks.push_back({seqs[i], std::span<const int32_t>(&toks[i], 1), model::LogitsWanted::Last});
            }
            QVERIFY(pool.step(chunks, logits).isOk());
            QCOMPARE(int(logits.size()), 3 * vocab);
            for (size_t i = 0; i < 3; ++i)
                QVERIFY2(std::memcmp(logits.data() + i * vocab, alone[i].data() + size_t(k) * vocab,
                                     size_t(vocab) * sizeof(float)) == 0,
                         qPrintable(QString("sequence %1, step %2: batched logits differ from lone ones").arg(i).arg(k)));
        }
        for (int32_t s : seqs) pool.close(s);
    }

    void snapshotRoundTrip() {
        QTemporaryDir snaps;
        auto model = load(modelA_, snaps.path().toStdString());
        QVERIFY(model);
        const auto t = randomTokens(120, 12, 300);
        const auto ref = fresh(*model, t);
        {
            auto a = Session::create(model);
            QVERIFY(a);
            QVERIFY((*a)->evaluate(std::span(t).first(90)));
            QVERIFY((*a)->saveSnapshot("conversation 1").isOk());
        }
        model->clearPrefixCache();  // as after a restart
        auto b = Session::create(model);
        QVERIFY(b);
        std::string note;
        auto restored = (*b)->restoreSnapshot("conversation 1", &note);
        QVERIFY2(restored, restored.status().toString().c_str());
        QCOMPARE(*restored, int32_t(90));
        QVERIFY2(note.empty(), note.c_str());
        QCOMPARE(std::vector<int32_t>((*b)->tokens().begin(), (*b)->tokens().end()),
                 std::vector<int32_t>(t.begin(), t.begin() + 90));
        auto logits = (*b)->evaluate(std::span(t).subspan(90));
        QVERIFY(logits);
        KESTREL_COMPARE_LOGITS(*logits, ref);
        // No snapshot under a key: nothing restored, no note.
        auto none = (*b)->restoreSnapshot("never saved", &note);
        QVERIFY(none);
        QCOMPARE(*none, int32_t(0));
    }

    void corruptTruncatedOrForeignSnapshotsAreIgnored() {
        QTemporaryDir snaps;
        auto model = load(modelA_, snaps.path().toStdString());
        QVERIFY(model);
        const auto t = randomTokens(80, 13, 300);
        auto save = [&](const std::string& key) {
            auto a = Session::create(model);
            QVERIFY((*a)->evaluate(t));
            QVERIFY((*a)->saveSnapshot(key).isOk());
        };
        save("corrupt");
        save("truncated");
        save("foreign");
        const auto& store = *model->impl().snapshots;
        {  // one flipped byte in the middle of the KV payload
            std::fstream f(store.pathFor("corrupt"), std::ios::in | std::ios::out | std::ios::binary);
            f.seekg(0, std::ios::end);
            const auto size = f.tellg();
            f.seekp(size / 2);
            char c = 0;
            f.seekg(size / 2);
            f.read(&c, 1);
            c = char(c ^ 0x40);
            f.seekp(size / 2);
            f.write(&c, 1);
        }
        std::filesystem::resize_file(store.pathFor("truncated"), std::filesystem::file_size(store.pathFor("truncated")) - 7);
        model->clearPrefixCache();
        for (const char* key : {"corrupt", "truncated"}) {
            auto s = Session::create(model);
            std::string note;
            auto n = (*s)->restoreSnapshot(key, &note);
            QVERIFY(n);
            QCOMPARE(*n, int32_t(0));
            QVERIFY2(!note.empty(), key);
            qInfo("%s: %s", key, note.c_str());
            QVERIFY(!std::filesystem::exists(store.pathFor(key)));  // never trusted, not kept
            QVERIFY((*s)->tokens().empty());
        }
        // The same folder opened by another model file: the snapshot is foreign.
        auto other = load(modelB_, snaps.path().toStdString());
        QVERIFY(other);
        auto s = Session::create(other);
        std::string note;
        auto n = (*s)->restoreSnapshot("foreign", &note);
        QVERIFY(n);
        QCOMPARE(*n, int32_t(0));
        QVERIFY2(note.find("another model") != std::string::npos, note.c_str());
    }

    // A pool too small for two long sequences: the second fails with a clear
    // OutOfMemory and the first is untouched.
    void fullPoolIsAClearError() {
        auto model = load(modelA_, {}, 256);  // 16 blocks
        QVERIFY(model);
        SessionOptions so;
        so.contextLength = 256;
        auto a = Session::create(model, so), b = Session::create(model, so);
        QVERIFY(a && b);
        const auto t = randomTokens(200, 14, 300), u = randomTokens(200, 15, 300);
        QVERIFY((*a)->evaluate(t));
        auto r = (*b)->evaluate(u);
        QVERIFY(!r);
        QCOMPARE(r.status().code(), ErrorCode::OutOfMemory);
        qInfo("%s", r.status().message().c_str());
        QCOMPARE(int((*a)->tokens().size()), 200);
        QVERIFY((*b)->tokens().empty());
        (*a)->reset();
        QVERIFY((*b)->evaluate(u));  // room again
    }
};

QTEST_APPLESS_MAIN(TestKvPool)
#include "tst_kv_pool.moc"
