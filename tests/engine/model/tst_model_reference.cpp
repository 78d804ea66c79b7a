// SmolLM2-135M (llama) and Gemma 3 270M (gemma3) against the NumPy reference
// (tests/reference/model_reference.py, run by the ctest fixture
// model_reference_data), on three prompts each, in two numerics:
//  - float activations (CpuBackend::MatmulMode::FloatActivations, f32 cache):
//    the model's maths as defined. Last-position logits within
//    max |C++ - NumPy| / max |NumPy| < 1e-3 (measured ~1e-6), and 64 greedy
//    tokens identical.
//  - the fast int8-activation matmuls (the default, as llama.cpp's Q8 path):
//    < 5e-2 (measured 2.2-3.9e-2). Rounding activations to int8 makes the
//    network's output sensitive to any tiny difference: a 1e-6 relative change
//    of the embeddings moves SmolLM2's logits by 5.5e-2 under int8 numerics
//    (checked with the NumPy reference), so greedy continuations may part at
//    near-ties, and only there.
// Top-1 must equal the reference at every prompt position and greedy tokens must
// be identical; a difference is accepted only at a near-tie (the reference's
// top-2 margin below 0.5 logits with int8 activations — measured divergences sit
// at margins 0.003-0.17 — and below 2 * bound * max |logit| with float ones) and
// is reported.
#include "model_test_util.h"
#include "test_env.h"

#include <QElapsedTimer>
#include <QtTest>

using namespace kestrel;

class TestModelReference : public QObject {
    Q_OBJECT

private slots:
    void matchesNumpy_data() {
        QTest::addColumn<QString>("modelPath");
        QTest::addColumn<QString>("refName");
        QTest::addColumn<bool>("exact");
        QTest::addColumn<bool>("kv8");  // the 8-bit KV cache (LoadOptions::kvPrecision = Int8)
        QTest::newRow("SmolLM2-135M Q4_1, float activations") << test::smollm2Path() << "model_ref_smollm2" << true << false;
        QTest::newRow("Gemma-3-270M Q4_K_M, float activations") << test::gemma3Path() << "model_ref_gemma3" << true << false;
        QTest::newRow("SmolLM2-135M Q4_1, int8 activations") << test::smollm2Path() << "model_ref_smollm2" << false << false;
        QTest::newRow("Gemma-3-270M Q4_K_M, int8 activations") << test::gemma3Path() << "model_ref_gemma3" << false << false;
        QTest::newRow("SmolLM2-135M Q4_1, float activations, 8-bit KV") << test::smollm2Path() << "model_ref_smollm2" << true << true;
        QTest::newRow("Gemma-3-270M Q4_K_M, float activations, 8-bit KV") << test::gemma3Path() << "model_ref_gemma3" << true << true;
        QTest::newRow("SmolLM2-135M Q4_1, int8 activations, 8-bit KV") << test::smollm2Path() << "model_ref_smollm2" << false << true;
        QTest::newRow("Gemma-3-270M Q4_K_M, int8 activations, 8-bit KV") << test::gemma3Path() << "model_ref_gemma3" << false << true;
    }
    void matchesNumpy() {
        QFETCH(QString, modelPath);
        QFETCH(QString, refName);
        QFETCH(bool, exact);
        QFETCH(bool, kv8);
        // The 8-bit KV cache rounds each K and V value to 1/254 of its 32-block's largest:
        // alone (float activations) that moved the last logits by 2.2-2.6e-2 when measured,
        // with int8 activations 3.4-4.8e-2 (the activations alone: 3.6-4.7e-2).
        const double bound = exact ? (kv8 ? 5e-2 : 1e-3) : (kv8 ? 8e-2 : 5e-2);
        KESTREL_REQUIRE_MODEL(modelPath);
        const QString base = test::testDataDir() + "/" + refName;
        const QJsonObject ref = test::readJson(base + ".json");
        if (ref.isEmpty()) QSKIP(qPrintable(base + ".json missing: run ctest -R model_reference_data (python3, numpy, gguf)"));

        backend::CpuBackend be(2, exact ? backend::CpuBackend::MatmulMode::FloatActivations
                                        : backend::CpuBackend::MatmulMode::Fast);
        auto model = test::loadModel(modelPath, be);
        QVERIFY2(model.isOk(), model.status().toString().c_str());
        const int vocab = model.value()->config().vocabSize;
        const auto prompts = ref["prompts"].toArray();
        double worst = 0;
        for (int pi = 0; pi < prompts.size(); ++pi) {
            const auto prompt = test::intsOf(prompts[pi]);
            model::RunnerOptions ro;
            ro.contextLength = 256;
            ro.maxBatch = 16;  // the third prompts are longer: chunked prefill
            if (exact) ro.kvStorage = runtime::KvStorage::F32;
            if (kv8) ro.kvStorage = runtime::KvStorage::Q8;
            auto runner = model::ModelRunner::create(model.value(), be, ro);
            QVERIFY2(runner.isOk(), runner.status().toString().c_str());
            std::vector<float> logits;
            QElapsedTimer timer;
            timer.start();
            const Status fs = runner.value()->forward(prompt, model::LogitsMode::All, logits);
            const double prefillMs = double(timer.nsecsElapsed()) / 1e6;
            QVERIFY2(fs.isOk(), fs.toString().c_str());
            const std::vector<float> last = test::readF32(base + QString("_logits%1.f32").arg(pi));
            QCOMPARE(last.size(), size_t(vocab));
            const float* mine = logits.data() + (prompt.size() - 1) * vocab;
            const double err = test::normalisedError(mine, last.data(), last.size());
            worst = std::max(worst, err);
            double maxRef = 0;
            for (float x : last) maxRef = std::max(maxRef, double(std::abs(x)));
            const double tie = exact && !kv8 ? 2.0 * bound * maxRef : 0.5;

            const auto top1 = test::intsOf(ref["top1"].toArray()[pi]);
            const auto margins = test::doublesOf(ref["top1_margins"].toArray()[pi]);
            int agree = 0;
            for (size_t t = 0; t < prompt.size(); ++t) {
                const int got = test::argmax(logits.data() + t * vocab, vocab);
                if (got == top1[t]) {
                    ++agree;
                    continue;
                }
                qInfo("prompt %d position %zu: top-1 %d vs reference %d (reference margin %.3g)", pi, t, got, top1[t],
                      margins[t]);
                QVERIFY2(margins[t] < tie, "top-1 differs at a position that is not a near-tie");
            }
            const auto greedy = test::intsOf(ref["greedy"].toArray()[pi]);
            const auto gMargins = test::doublesOf(ref["margins"].toArray()[pi]);
            int32_t next = test::argmax(mine, vocab);
            size_t same = 0;
            timer.restart();
            const size_t greedyCount = greedy.size();
            for (; same < greedyCount; ++same) {
                if (next != greedy[same]) {
                    const double m = same == 0 ? margins.back() : gMargins[same - 1];
                    qInfo("prompt %d: greedy diverges at token %zu (reference margin %.3g, near-tie below %.3g)", pi,
                          same, m, tie);
                    QVERIFY2(m < tie, "greedy tokens diverge at a step that is not a near-tie");
                    break;
                }
                QVERIFY(runner.value()->forward({&next, 1}, model::LogitsMode::LastOnly, logits).isOk());
                next = test::argmax(logits.data(), vocab);
            }
            const double decodeMs = double(timer.nsecsElapsed()) / 1e6;
            qInfo("prompt %d (%zu tokens): last-logits error %.3e, top-1 %d/%zu, greedy %zu/%zu identical; "
                  "prefill %.0f tok/s (all-position logits), decode %.0f tok/s (information only)",
                  pi, prompt.size(), err, agree, prompt.size(), same, greedyCount,
                  prompt.size() / (prefillMs / 1e3), same / (decodeMs / 1e3));
            QVERIFY2(err < bound, qPrintable(QString("prompt %1: last logits error %2 above %3").arg(pi).arg(err).arg(bound)));
        }
        qInfo("worst last-logits error %.3e (bound %.0e)", worst, bound);
    }
};

QTEST_APPLESS_MAIN(TestModelReference)
#include "tst_model_reference.moc"
