// Bad models fail to load with a message naming the file and what is wrong;
// a runner refuses what it cannot do (full context, unknown token ids) and
// rewinds correctly.
#include "model_test_util.h"
#include "synthetic_model.h"
#include "test_env.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace kestrel;

class TestModelHostile : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    Status loadWith(const test::Mutation& mut, const std::string& arch = "llama") {
        test::SynthSpec spec;
        spec.arch = arch;
        const QString path = dir_.filePath(QString::number(counter_++) + ".gguf");
        const Status ws = test::writeSynthetic(spec, path.toStdString(), mut);
        if (!ws.isOk()) return ws;
        backend::CpuBackend be(1);
        auto m = test::loadModel(path, be);
        return m.status();
    }
    int counter_ = 0;

private slots:
    void missingKey() {
        test::Mutation m;
        m.dropKey = "llama.block_count";
        const Status s = loadWith(m);
        QVERIFY(!s.isOk());
        QVERIFY2(s.message().find("missing key 'llama.block_count' (required by architecture llama)") != std::string::npos,
                 s.message().c_str());
        QVERIFY2(s.message().find(".gguf") != std::string::npos, "message names the file");
        m.dropKey = "qwen3.attention.layer_norm_rms_epsilon";
        const Status s2 = loadWith(m, "qwen3");
        QVERIFY2(s2.message().find("missing key 'qwen3.attention.layer_norm_rms_epsilon'") != std::string::npos,
                 s2.message().c_str());
    }

    void wrongShape() {
        test::Mutation m;
        m.badShapeTensor = "blk.1.attn_q.weight";
        const Status s = loadWith(m);
        QCOMPARE(s.code(), ErrorCode::InvalidFile);
        QVERIFY2(s.message().find("tensor 'blk.1.attn_q.weight' has shape [64, 52], expected [64, 64]") != std::string::npos,
                 s.message().c_str());
        m.badShapeTensor = "blk.0.attn_k_norm.weight";
        const Status s2 = loadWith(m, "gemma3");
        QVERIFY2(s2.message().find("tensor 'blk.0.attn_k_norm.weight' has shape [14], expected [16]") != std::string::npos,
                 s2.message().c_str());
    }

    void missingTensor() {
        test::Mutation m;
        m.dropTensor = "blk.1.ffn_up.weight";
        const Status s = loadWith(m);
        QVERIFY2(s.message().find("missing tensor 'blk.1.ffn_up.weight' (required by architecture llama)") != std::string::npos,
                 s.message().c_str());
        m.dropTensor = "blk.0.attn_v.bias";
        const Status s2 = loadWith(m, "qwen2");
        QVERIFY2(s2.message().find("missing tensor 'blk.0.attn_v.bias'") != std::string::npos, s2.message().c_str());
    }

    void unsupportedType() {
        test::Mutation m;
        m.badTypeTensor = "blk.0.ffn_down.weight";
        const Status s = loadWith(m);
        QCOMPARE(s.code(), ErrorCode::Unsupported);
        QVERIFY2(s.message().find("tensor 'blk.0.ffn_down.weight' has type I8, which Kestrel cannot compute with") !=
                     std::string::npos,
                 s.message().c_str());
    }

    void unsupportedArchitecture() {
        test::SynthSpec spec;
        spec.arch = "mamba";
        const QString path = dir_.filePath("mamba.gguf");
        QVERIFY(test::writeSynthetic(spec, path.toStdString()).isOk());
        backend::CpuBackend be(1);
        const Status s = test::loadModel(path, be).status();
        QCOMPARE(s.code(), ErrorCode::Unsupported);
        QVERIFY2(s.message().find("architecture 'mamba' is not supported (supported: llama, qwen2, qwen3, gemma3)") !=
                     std::string::npos,
                 s.message().c_str());
    }

    void runnerLimitsAndTruncate() {
        test::SynthSpec spec;
        const QString path = dir_.filePath("ok.gguf");
        QVERIFY(test::writeSynthetic(spec, path.toStdString()).isOk());
        backend::CpuBackend be(2);
        auto model = test::loadModel(path, be);
        QVERIFY2(model.isOk(), model.status().toString().c_str());
        auto r = model::ModelRunner::create(model.value(), be, 8, 3);
        QVERIFY(r.isOk());
        model::ModelRunner& run = *r.value();
        std::vector<float> logits, again;
        const std::vector<int32_t> a = {4, 8, 15, 16, 23};
        QVERIFY(run.forward(a, model::LogitsMode::LastOnly, logits).isOk());
        QCOMPARE(run.position(), int64_t(5));
        QCOMPARE(logits.size(), size_t(spec.vocab));
        // Unknown id: an error, state unchanged.
        const std::vector<int32_t> bad = {96};
        Status s = run.forward(bad, model::LogitsMode::LastOnly, again);
        QCOMPARE(s.code(), ErrorCode::InvalidArgument);
        QVERIFY2(s.message().find("token id 96 is outside the vocabulary (size 96)") != std::string::npos, s.message().c_str());
        QCOMPARE(run.position(), int64_t(5));
        // Full context: 5 + 4 > 8.
        const std::vector<int32_t> four = {1, 2, 3, 4};
        s = run.forward(four, model::LogitsMode::LastOnly, again);
        QCOMPARE(s.code(), ErrorCode::InvalidArgument);
        QVERIFY2(s.message().find("context full") != std::string::npos, s.message().c_str());
        QCOMPARE(run.position(), int64_t(5));
        // Rewind to 3 and replay the last two tokens: the same logits as the first pass.
        run.truncate(3);
        QCOMPARE(run.position(), int64_t(3));
        QVERIFY(run.forward(std::span(a).subspan(3), model::LogitsMode::LastOnly, again).isOk());
        QCOMPARE(again.size(), logits.size());
        QVERIFY(test::normalisedError(again.data(), logits.data(), logits.size()) < 1e-6);
        // LogitsMode::All over chunks of 3 gives the same last row as LastOnly.
        auto r2 = model::ModelRunner::create(model.value(), be, 8, 3);
        std::vector<float> all;
        QVERIFY(r2.value()->forward(a, model::LogitsMode::All, all).isOk());
        QCOMPARE(all.size(), size_t(5 * spec.vocab));
        // (bound 1e-5: a 2-row matmul may sum in another order than a 1-row one)
        QVERIFY(test::normalisedError(all.data() + 4 * spec.vocab, logits.data(), logits.size()) < 1e-5);
        // Filling the context exactly is allowed; one more is not.
        const std::vector<int32_t> three = {1, 2, 3};
        QVERIFY(r2.value()->forward(three, model::LogitsMode::LastOnly, again).isOk());
        QCOMPARE(r2.value()->position(), int64_t(8));
        const std::vector<int32_t> one = {1};
        QVERIFY(!r2.value()->forward(one, model::LogitsMode::LastOnly, again).isOk());
    }
};

QTEST_APPLESS_MAIN(TestModelHostile)
#include "tst_model_hostile.moc"
