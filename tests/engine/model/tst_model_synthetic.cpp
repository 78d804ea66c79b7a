// qwen2, qwen3, llama (own and tied output) and gemma3 on tiny random-weight
// models written with GgufWriter, against tests/reference/model_reference.py
// run on the same file. Bound on every position's logits, max |C++ - NumPy| /
// max |NumPy|: 1e-4 with F32 weights (float rounding only: checks the
// recipe), 5e-2 with Q8_0/F16 weights, whose int8-quantised activations in the
// C++ matmuls (NumPy multiplies in float) move tiny random models by ~2e-2. Top-1 must agree wherever the reference's
// top-2 margin is not a near-tie (> 1e-2 * logit range), and so must 16
// greedy tokens.
#include "forwarding_backend.h"
#include "model_runner.h"
#include "model_test_util.h"
#include "synthetic_model.h"
#include "test_env.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <random>
#include <vector>

using namespace kestrel;

class TestModelSynthetic : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void matchesNumpy_data() {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<bool>("tied");
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("window");
        QTest::addColumn<bool>("f32");
        for (bool f32 : {true, false}) {
            const char* w = f32 ? "F32 weights" : "Q8_0/F16 weights";
            QTest::addRow("llama, %s", w) << "llama" << false << 2 << 0 << f32;
            QTest::addRow("llama tied, %s", w) << "llama" << true << 2 << 0 << f32;
            QTest::addRow("qwen2, %s", w) << "qwen2" << false << 2 << 0 << f32;
            QTest::addRow("qwen3, %s", w) << "qwen3" << true << 3 << 0 << f32;
            QTest::addRow("gemma3 sliding 5 + global layer 5, %s", w) << "gemma3" << true << 7 << 5 << f32;
        }
    }
    void matchesNumpy() {
        QFETCH(QString, arch);
        QFETCH(bool, tied);
        QFETCH(int, layers);
        QFETCH(int, window);
        QFETCH(bool, f32);
        test::SynthSpec spec;
        spec.f32Weights = f32;
        spec.arch = arch.toStdString();
        spec.tied = tied;
        spec.nLayer = layers;
        spec.window = window;
        spec.ropeBase = arch == "gemma3" ? 1e6f : 10000.0f;
        spec.seed = static_cast<uint32_t>(qHash(QString(QTest::currentDataTag())));
        const QString stem = arch + (tied ? "_tied" : "") + (f32 ? "_f32" : "_q8");
        const QString path = dir_.filePath(stem + ".gguf");
        const Status ws = test::writeSynthetic(spec, path.toStdString());
        QVERIFY2(ws.isOk(), ws.toString().c_str());

        const std::vector<std::vector<int32_t>> prompts = {{1, 5, 9, 33, 2, 70, 11, 95, 0, 42, 17, 8, 64}, {3}};
        const QString out = dir_.filePath(stem + "_ref");
        QStringList args = {test::sourceDir() + "/tests/reference/model_reference.py", "--model", path, "--out", out,
                            "--greedy", "16", "--quiet"};
        for (const auto& p : prompts) {
            QStringList ids;
            for (int32_t t : p) ids << QString::number(t);
            args << "--prompt" << ids.join(",");
        }
        QProcess py;
        py.start("python3", args);
        QVERIFY(py.waitForFinished(120000));
        if (py.exitCode() != 0) QSKIP(qPrintable("reference failed (python3 + numpy + gguf needed): " + py.readAllStandardError()));
        const std::vector<test::ReferencePrompt> ref = test::readReference(out.toStdString());
        QVERIFY2(ref.size() == prompts.size(), "the reference wrote no readable .txt");

        backend::CpuBackend be(2);
        auto model = test::loadModel(path, be);
        QVERIFY2(model.isOk(), model.status().toString().c_str());
        QCOMPARE(model.value()->config().tiedEmbeddings, tied);
        model::RunnerOptions ro;
        ro.contextLength = 64;
        ro.maxBatch = 5;  // chunked prefill
        // F32 rows test the recipe at float rounding: an F16 cache alone adds ~5e-4.
        ro.kvStorage = f32 ? runtime::KvStorage::F32 : runtime::KvStorage::F16;
        test::ReferenceRule rule;
        rule.bound = f32 ? 1e-4 : 5e-2;
        rule.tieOfMax = 2.0 * rule.bound;  // a near-tie: the top-2 margin within twice the error bound
        rule.allPositions = true;
        for (const test::Finding& f : test::checkAgainstReference(model.value(), be, ro, out.toStdString(), ref, rule)) {
            qInfo("%s %s: %.2e (bound %.1e) %s", QTest::currentDataTag(), f.name.c_str(), f.error, f.bound, f.note.c_str());
            QVERIFY2(f.ok, qPrintable(QString::fromStdString(f.name + ": " + f.note)));
        }
    }

    // The batch runner tells the backend each step's longest context
    // (Backend::setKeyBound) before the step is recorded, puts the backend's
    // answer in the step's replay shape (a step recorded for short contexts
    // must not be replayed for long ones), and clears the bound after the step.
    void stepsTellTheirKeyBound() {
        struct Watching : test::ForwardingBackend {
            using ForwardingBackend::ForwardingBackend;
            std::vector<int64_t> bounds;                   // every setKeyBound, in order
            std::vector<std::vector<int64_t>> shapes;      // every replayStep shape
            std::vector<int64_t> boundAtAttention;         // the bound in force when attention was recorded
            int64_t bound = 0;
            int64_t setKeyBound(int64_t keys) override {
                bounds.push_back(keys);
                bound = keys;
                return keys > 0 && keys <= 8 ? 1 : 0;
            }
            bool replayStep(std::span<const int64_t> shape) override {
                shapes.emplace_back(shape.begin(), shape.end());
                return false;  // always record, so the attention calls are seen
            }
            void attention(const backend::Tensor& q, runtime::KvCache& kv, int layer, const backend::KvBatch& batch,
                           const backend::AttentionParams& p, backend::Tensor& out) override {
                boundAtAttention.push_back(bound);
                ForwardingBackend::attention(q, kv, layer, batch, p, out);
            }
        };
        test::SynthSpec spec;
        spec.arch = "llama";
        spec.nLayer = 1;
        const QString path = dir_.filePath("key_bound.gguf");
        const Status ws = test::writeSynthetic(spec, path.toStdString());
        QVERIFY2(ws.isOk(), ws.toString().c_str());
        backend::CpuBackend cpu(1);
        Watching be(cpu);
        auto model = test::loadModel(path, be);
        QVERIFY2(model.isOk(), model.status().toString().c_str());
        auto runner = model::ModelRunner::create(model.value(), be, 32, 16);
        QVERIFY2(runner.isOk(), runner.status().toString().c_str());
        std::vector<float> logits;
        const std::vector<int32_t> prompt = {1, 5, 9, 33, 2};
        QVERIFY(runner.value()->forward(prompt, model::LogitsMode::LastOnly, logits).isOk());
        for (int32_t t : {7, 8, 9, 10, 11}) QVERIFY(runner.value()->forward({&t, 1}, model::LogitsMode::LastOnly, logits).isOk());
        // Steps of 5, 6, ..., 10 keys: each told before its recording, then cleared.
        QCOMPARE(be.bounds, (std::vector<int64_t>{5, 0, 6, 0, 7, 0, 8, 0, 9, 0, 10, 0}));
        QCOMPARE(be.boundAtAttention, (std::vector<int64_t>{5, 6, 7, 8, 9, 10}));
        QCOMPARE(be.shapes.size(), size_t(6));
        // One-token steps of 6, 7 and 8 keys (variant 1) share a shape; 9 and 10 (variant 0) share another.
        QCOMPARE(be.shapes[1], be.shapes[2]);
        QCOMPARE(be.shapes[2], be.shapes[3]);
        QCOMPARE(be.shapes[4], be.shapes[5]);
        QVERIFY(be.shapes[3] != be.shapes[4]);
    }

    // Weight bytes a caller holds in memory (not GgufFile's mapping) are as they
    // were after the CPU backend has repacked them: it used to drop the pages of
    // every repacked tensor, which zeroes anonymous memory (the CUDA checks, which
    // hand the same bytes to both backends, then compared against zeros).
    void uploadLeavesCallerBytesIntact() {
        gguf::TensorInfo info;
        info.name = "blk.0.ffn_down.weight";
        info.type = GgmlType::Q4_0;
        info.dims = {4096, 64};
        info.elements = 4096 * 64;
        info.bytes = 64 * (4096 / 32) * 18;  // 144 KiB: whole pages inside, as a DONTNEED would take
        std::vector<uint8_t> bytes(info.bytes);
        std::mt19937 rng(7);
        for (auto& b : bytes) b = static_cast<uint8_t>(rng());
        for (size_t b = 0; b < bytes.size(); b += 18) {  // each block's f16 scale: 1.0
            bytes[b] = 0x00;
            bytes[b + 1] = 0x3c;
        }
        const std::vector<uint8_t> before = bytes;
        info.data = bytes.data();
        backend::CpuBackend be(2);
        auto w = be.uploadWeight(info);
        QVERIFY2(w.isOk(), w.status().toString().c_str());
        QVERIFY2(bytes == before, "uploading a weight changed the caller's bytes");
    }
};

QTEST_APPLESS_MAIN(TestModelSynthetic)
#include "tst_model_synthetic.moc"
