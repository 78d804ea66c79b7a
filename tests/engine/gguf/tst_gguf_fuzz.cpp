// Random mutations of a valid file: open() must either succeed with a
// self-consistent result or fail cleanly (an InvalidFile/Unsupported Status
// naming the file). Seeded, so a failure reproduces; run it under
// -fsanitize=address,undefined to catch what a clean exit would hide.
#include "gguf_file.h"
#include "gguf_test_util.h"
#include "gguf_writer.h"

#include <QTemporaryDir>
#include <QtTest>

#include <random>

using namespace kestrel;
using namespace kestrel::gguf;

namespace {

std::vector<uint8_t> baseFile(const QString& path) {
    GgufWriter w(64);
    w.setString("general.architecture", "llama");
    w.setUInt32("llama.block_count", 2);
    w.setFloat32("llama.rope.freq_base", 10000.0f);
    w.setBool("tokenizer.ggml.add_bos_token", true);
    w.setStringArray("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "Ġa", "ü"});
    w.setFloat32Array("tokenizer.ggml.scores", {0.f, -1.f, -2.f, -3.f, -4.f});
    w.set("x.nested", Value::array(ValueType::Array, {Value::array(ValueType::UInt16, {Value::u16(1)}),
                                                      Value::array(ValueType::String, {Value::string("s")})}));
    w.set("x.i64", Value::i64(-5));
    std::vector<uint8_t> f32(4 * 8 * 2, 1), q8(34 * 2, 2), q4k(144, 3);
    (void)w.addTensor("norm.weight", GgmlType::F32, {8, 2}, f32);
    (void)w.addTensor("embd.weight", GgmlType::Q8_0, {32, 2}, q8);
    (void)w.addTensor("ffn.weight", GgmlType::Q4_K, {256}, q4k);
    if (!w.write(path.toStdString()).isOk()) return {};
    return test::loadBytes(path);
}

uint64_t walk(const Value& v) {
    uint64_t n = 1;
    if (const Array* a = v.asArray())
        for (const Value& item : a->items) n += walk(item);
    if (const std::string* s = v.asString()) n += s->size();
    return n;
}

}  // namespace

class TestGgufFuzz : public QObject {
    Q_OBJECT
private slots:
    void randomMutations() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString p = dir.filePath("fuzz.gguf");
        const std::vector<uint8_t> base = baseFile(dir.filePath("base.gguf"));
        QVERIFY(!base.empty());
        QVERIFY(GgufFile::open(dir.filePath("base.gguf").toStdString()).isOk());

        const uint64_t interesting64[] = {0, 1, 0xFF, uint64_t(1) << 31, uint64_t(1) << 32, uint64_t(1) << 62,
                                          uint64_t(1) << 63, ~uint64_t(0), ~uint64_t(0) - 31, 64, 4096};
        const uint32_t interesting32[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 30, 31, 99, 0x7FFFFFFF, 0xFFFFFFFF};
        // KESTREL_FUZZ_ITERATIONS / KESTREL_FUZZ_SEED widen a local run (e.g. under ASan).
        const int iterations = qEnvironmentVariableIsSet("KESTREL_FUZZ_ITERATIONS")
                                   ? qEnvironmentVariableIntValue("KESTREL_FUZZ_ITERATIONS")
                                   : 2000;
        const uint64_t seed = qEnvironmentVariableIsSet("KESTREL_FUZZ_SEED")
                                  ? qgetenv("KESTREL_FUZZ_SEED").toULongLong()
                                  : 20261202;
        std::mt19937_64 rng(seed);
        int opened = 0, rejected = 0;
        for (int iter = 0; iter < iterations; ++iter) {
            std::vector<uint8_t> bytes = base;
            const int mutations = 1 + int(rng() % 3);
            for (int m = 0; m < mutations && !bytes.empty(); ++m) {
                const size_t pos = size_t(rng() % bytes.size());
                switch (rng() % 5) {
                case 0: bytes[pos] ^= uint8_t(1u << (rng() % 8)); break;
                case 1: bytes[pos] = uint8_t(rng()); break;
                case 2: {
                    const uint64_t v = interesting64[rng() % std::size(interesting64)];
                    for (size_t i = 0; i < 8 && pos + i < bytes.size(); ++i) bytes[pos + i] = uint8_t(v >> (8 * i));
                    break;
                }
                case 3: {
                    const uint32_t v = interesting32[rng() % std::size(interesting32)];
                    for (size_t i = 0; i < 4 && pos + i < bytes.size(); ++i) bytes[pos + i] = uint8_t(v >> (8 * i));
                    break;
                }
                case 4: bytes.resize(pos); break;
                }
            }
            QVERIFY(test::saveBytes(p, bytes));
            auto r = GgufFile::open(p.toStdString());
            if (!r.isOk()) {
                ++rejected;
                const Status st = r.status();
                QVERIFY2(st.code() == ErrorCode::InvalidFile || st.code() == ErrorCode::Unsupported,
                         st.toString().c_str());
                QVERIFY2(st.message().rfind(p.toStdString() + ": ", 0) == 0, st.message().c_str());
                continue;
            }
            ++opened;
            const GgufFile& f = **r;
            QCOMPARE(f.fileSize(), uint64_t(bytes.size()));
            for (const TensorInfo& t : f.tensors()) {
                QVERIFY(f.dataOffset() + t.offset + t.bytes <= f.fileSize());
                QCOMPARE(t.offset % f.alignment(), uint64_t(0));
                uint64_t sum = 0;  // touch every byte the file says is ours
                for (uint64_t i = 0; i < t.bytes; ++i) sum += t.data[i];
                QVERIFY(sum <= 255 * t.bytes);
            }
            uint64_t values = 0;
            for (const auto& [key, value] : f.metadata()) values += walk(value);
            QVERIFY(values >= f.metadata().size());
        }
        qInfo("%d mutations (seed %llu) of a %zu-byte file: %d opened, %d rejected cleanly", iterations,
              static_cast<unsigned long long>(seed), base.size(), opened, rejected);
        QCOMPARE(opened + rejected, iterations);
        QVERIFY(rejected > 0);  // the mutations do reach the validation
    }
};

QTEST_APPLESS_MAIN(TestGgufFuzz)
#include "tst_gguf_fuzz.moc"
