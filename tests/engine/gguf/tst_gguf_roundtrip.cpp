// GgufWriter -> GgufFile round trips: every value type, nested and empty
// arrays, unicode, tensors of several types and alignments; typed getters;
// writer validation and atomic-write failure paths.
#include "gguf_file.h"
#include "gguf_writer.h"
#include "gguf_test_util.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <csignal>
#include <limits>
#include <random>
#include <sys/resource.h>

using namespace kestrel;
using namespace kestrel::gguf;

namespace {

std::vector<uint8_t> randomBytes(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = uint8_t(rng());
    return v;
}

const char* kUnicode = "Grüße, 世界! \xF0\x9F\xA6\x85 ĸestrel";  // 🦅 as raw UTF-8

GgufWriter everyValueWriter(uint64_t alignment) {
    GgufWriter w(alignment);
    w.set("t.u8", Value::u8(255));
    w.set("t.i8", Value::i8(-128));
    w.set("t.u16", Value::u16(65535));
    w.set("t.i16", Value::i16(-32768));
    w.setUInt32("t.u32", std::numeric_limits<uint32_t>::max());
    w.setInt32("t.i32", std::numeric_limits<int32_t>::min());
    w.setUInt64("t.u64", std::numeric_limits<uint64_t>::max());
    w.set("t.i64", Value::i64(std::numeric_limits<int64_t>::min()));
    w.setFloat32("t.f32", -1.5e-7f);
    w.set("t.f64", Value::f64(3.141592653589793));
    w.setBool("t.true", true);
    w.setBool("t.false", false);
    w.setString("t.unicode", kUnicode);
    w.setString("t.empty", "");
    w.setString("t.nul", std::string("a\0b", 3));
    w.setStringArray("a.strings", {"<s>", "", kUnicode, "Ġthe"});
    w.setFloat32Array("a.f32", {0.5f, -2.25f, 1e30f});
    w.setInt32Array("a.i32", {-1, 0, 2147483647});
    w.set("a.u8", Value::array(ValueType::UInt8, {Value::u8(0), Value::u8(200)}));
    w.set("a.u64", Value::array(ValueType::UInt64, {Value::u64(1ull << 63)}));
    w.set("a.f64", Value::array(ValueType::Float64, {Value::f64(1.0 / 3.0)}));
    w.set("a.bool", Value::array(ValueType::Bool, {Value::boolean(true), Value::boolean(false)}));
    w.set("a.empty_u8", Value::array(ValueType::UInt8, {}));
    w.set("a.empty_nested", Value::array(ValueType::Array, {}));
    // [[1, 2], [], [3]] of int32, and a 3-level array of strings.
    w.set("a.nested", Value::array(ValueType::Array,
                                   {Value::array(ValueType::Int32, {Value::i32(1), Value::i32(2)}),
                                    Value::array(ValueType::Int32, {}),
                                    Value::array(ValueType::Int32, {Value::i32(3)})}));
    w.set("a.deep", Value::array(ValueType::Array,
                                 {Value::array(ValueType::Array, {Value::array(ValueType::String, {Value::string("x")})}),
                                  Value::array(ValueType::String, {Value::string("y"), Value::string("z")})}));
    w.setString("general.architecture", "llama");
    return w;
}

struct TensorCase {
    const char* name;
    GgmlType type;
    std::vector<uint64_t> dims;
};

const std::vector<TensorCase>& tensorCases() {
    static const std::vector<TensorCase> cases = {
        {"f32.vec", GgmlType::F32, {5}},
        {"f16.mat", GgmlType::F16, {7, 3}},
        {"q4_0.mat", GgmlType::Q4_0, {64, 3}},
        {"q8_0.mat", GgmlType::Q8_0, {32, 5}},
        {"q4_k.mat", GgmlType::Q4_K, {256, 2}},
        {"q6_k.4d", GgmlType::Q6_K, {256, 1, 2, 1}},
        {"bf16.3d", GgmlType::BF16, {3, 2, 2}},
    };
    return cases;
}

}  // namespace

class TestGgufRoundTrip : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    QString path(const char* name) const { return dir_.filePath(QString::fromLatin1(name)); }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void everyValueType_data() {
        QTest::addColumn<int>("alignment");
        QTest::newRow("align32") << 32;
        QTest::newRow("align64") << 64;
        QTest::newRow("align128") << 128;
    }
    void everyValueType() {
        QFETCH(int, alignment);
        GgufWriter w = everyValueWriter(uint64_t(alignment));
        std::vector<std::vector<uint8_t>> payloads;
        for (size_t i = 0; i < tensorCases().size(); ++i) {
            const auto& c = tensorCases()[i];
            uint64_t elements = 1;
            for (auto d : c.dims) elements *= d;
            const uint64_t bytes = *ggmlRowBytes(c.type, c.dims[0]) * (elements / c.dims[0]);
            payloads.push_back(randomBytes(bytes, uint32_t(i + 1)));
            const Status st = w.addTensor(c.name, c.type, c.dims, payloads.back());
            QVERIFY2(st.isOk(), st.toString().c_str());
        }
        const std::string file = path("every.gguf").toStdString();
        const Status ws = w.write(file);
        QVERIFY2(ws.isOk(), ws.toString().c_str());
        QVERIFY(!QFile::exists(QString::fromStdString(file + ".tmp")));

        auto r = GgufFile::open(file);
        QVERIFY2(r.isOk(), r.status().toString().c_str());
        const GgufFile& f = **r;
        QCOMPARE(f.version(), 3u);
        QCOMPARE(f.alignment(), uint64_t(alignment));
        QCOMPARE(f.dataOffset() % uint64_t(alignment), uint64_t(0));

        QCOMPARE(f.find("t.u8")->type, ValueType::UInt8);
        QCOMPARE(*f.find("t.u8")->asUInt(), uint64_t(255));
        QCOMPARE(f.find("t.i8")->type, ValueType::Int8);
        QCOMPARE(f.getInt("t.i8").value(), int64_t(-128));
        QCOMPARE(f.getInt("t.u16").value(), int64_t(65535));
        QCOMPARE(f.getInt("t.i16").value(), int64_t(-32768));
        QCOMPARE(f.getInt("t.u32").value(), int64_t(4294967295));
        QCOMPARE(f.getInt("t.i32").value(), int64_t(std::numeric_limits<int32_t>::min()));
        QCOMPARE(*f.find("t.u64")->asUInt(), std::numeric_limits<uint64_t>::max());
        QCOMPARE(f.getInt("t.i64").value(), std::numeric_limits<int64_t>::min());
        QCOMPARE(f.find("t.f32")->type, ValueType::Float32);
        QCOMPARE(f.getFloat("t.f32").value(), double(-1.5e-7f));
        QCOMPARE(f.getFloat("t.f64").value(), 3.141592653589793);
        QCOMPARE(f.getBool("t.true").value(), true);
        QCOMPARE(f.getBool("t.false").value(), false);
        QCOMPARE(f.getString("t.unicode").value(), std::string(kUnicode));
        QCOMPARE(f.getString("t.empty").value(), std::string());
        QCOMPARE(f.getString("t.nul").value(), std::string("a\0b", 3));
        QCOMPARE(f.getString("general.architecture").value(), std::string("llama"));

        auto strings = f.getStringArray("a.strings");
        QVERIFY(strings.isOk());
        QCOMPARE(strings->size(), size_t(4));
        QCOMPARE((*strings)[0], std::string_view("<s>"));
        QCOMPARE((*strings)[1], std::string_view(""));
        QCOMPARE((*strings)[2], std::string_view(kUnicode));
        QCOMPARE((*strings)[3], std::string_view("Ġthe"));
        QCOMPARE(f.getFloatArray("a.f32").value(), (std::vector<double>{0.5, -2.25, double(1e30f)}));
        QCOMPARE(f.getIntArray("a.i32").value(), (std::vector<int64_t>{-1, 0, 2147483647}));
        QCOMPARE(f.getIntArray("a.u8").value(), (std::vector<int64_t>{0, 200}));
        QCOMPARE(f.find("a.u8")->asArray()->elementType, ValueType::UInt8);
        QCOMPARE(*f.find("a.u64")->asArray()->items[0].asUInt(), uint64_t(1) << 63);
        QCOMPARE(f.getFloatArray("a.f64").value(), std::vector<double>{1.0 / 3.0});
        const Array* bools = f.find("a.bool")->asArray();
        QCOMPARE(bools->items.size(), size_t(2));
        QCOMPARE(*bools->items[0].asBool(), true);
        QCOMPARE(*bools->items[1].asBool(), false);
        QCOMPARE(f.find("a.empty_u8")->asArray()->elementType, ValueType::UInt8);
        QVERIFY(f.find("a.empty_u8")->asArray()->items.empty());
        QCOMPARE(f.find("a.empty_nested")->asArray()->elementType, ValueType::Array);
        QVERIFY(f.find("a.empty_nested")->asArray()->items.empty());

        const Array* nested = f.find("a.nested")->asArray();
        QVERIFY(nested);
        QCOMPARE(nested->elementType, ValueType::Array);
        QCOMPARE(nested->items.size(), size_t(3));
        QCOMPARE(nested->items[0].asArray()->items.size(), size_t(2));
        QCOMPARE(*nested->items[0].asArray()->items[1].asInt(), int64_t(2));
        QCOMPARE(nested->items[1].asArray()->elementType, ValueType::Int32);
        QVERIFY(nested->items[1].asArray()->items.empty());
        QCOMPARE(*nested->items[2].asArray()->items[0].asInt(), int64_t(3));
        const Array* deep = f.find("a.deep")->asArray();
        QCOMPARE(*deep->items[0].asArray()->items[0].asArray()->items[0].asString(), std::string("x"));
        QCOMPARE(*deep->items[1].asArray()->items[1].asString(), std::string("z"));

        QCOMPARE(f.tensors().size(), tensorCases().size());
        for (size_t i = 0; i < tensorCases().size(); ++i) {
            const auto& c = tensorCases()[i];
            const TensorInfo* t = f.findTensor(c.name);
            QVERIFY2(t, c.name);
            QCOMPARE(f.tensors()[i].name, std::string(c.name));  // file order kept
            QCOMPARE(t->type, c.type);
            QCOMPARE(t->dims, c.dims);
            QCOMPARE(t->bytes, uint64_t(payloads[i].size()));
            QCOMPARE(t->offset % uint64_t(alignment), uint64_t(0));
            QCOMPARE(t->rowLength(), c.dims[0]);
            QCOMPARE(t->rows() * t->rowLength(), t->elements);
            QVERIFY(std::equal(payloads[i].begin(), payloads[i].end(), t->data));
        }
        QVERIFY(!f.findTensor("absent"));
    }

    void keysKeepInsertionOrder() {
        GgufWriter w;
        w.setUInt32("zzz.first", 1);
        w.setUInt32("aaa.second", 2);
        w.setUInt32("mmm.third", 3);
        w.setUInt32("zzz.first", 4);  // replaces in place, keeps position
        const QString p = path("order.gguf");
        QVERIFY(w.write(p.toStdString()).isOk());
        const QByteArray bytes = [&] { QFile f(p); f.open(QIODevice::ReadOnly); return f.readAll(); }();
        const auto a = bytes.indexOf("zzz.first"), b = bytes.indexOf("aaa.second"), c = bytes.indexOf("mmm.third");
        QVERIFY(a > 0 && a < b && b < c);
        QCOMPARE(bytes.count("zzz.first"), qsizetype(1));
        auto r = GgufFile::open(p.toStdString());
        QVERIFY(r.isOk());
        QCOMPARE((*r)->getInt("zzz.first").value(), int64_t(4));
        QCOMPARE((*r)->metadata().size(), size_t(3));
        QVERIFY(!(*r)->find("general.alignment"));  // default alignment is not written
    }

    void version2IsRead() {
        test::FileSpec spec;
        spec.version = 2;
        spec.kvs = {test::kvU32("x", 9)};
        spec.tensors = {{"w", {8}, 0, 0}};
        spec.dataBytes = 32;
        const QString p = path("v2.gguf");
        QVERIFY(test::saveBytes(p, spec.build()));
        auto r = GgufFile::open(p.toStdString());
        QVERIFY2(r.isOk(), r.status().toString().c_str());
        QCOMPARE((*r)->version(), 2u);
        QCOMPARE((*r)->getInt("x").value(), int64_t(9));
        QCOMPARE((*r)->findTensor("w")->bytes, uint64_t(32));
    }

    void typedGetterErrors() {
        GgufWriter w;
        w.setString("s", "text");
        w.setUInt64("big", std::numeric_limits<uint64_t>::max());
        w.setFloat32("f", 2.5f);
        w.setInt32("i", 7);
        w.setFloat32Array("fa", {1.0f});
        w.setStringArray("sa", {"a"});
        const QString p = path("getters.gguf");
        QVERIFY(w.write(p.toStdString()).isOk());
        auto r = GgufFile::open(p.toStdString());
        QVERIFY(r.isOk());
        const GgufFile& f = **r;
        const std::string where = p.toStdString() + ": ";

        auto e = f.getInt("s");
        QCOMPARE(e.status().code(), ErrorCode::InvalidFile);
        QCOMPARE(e.status().message(), where + "key 's': expected an integer, found string");
        QCOMPARE(f.getBool("i").status().message(), where + "key 'i': expected bool, found int32");
        QCOMPARE(f.getString("f").status().message(), where + "key 'f': expected string, found float32");
        QCOMPARE(f.getFloat("s").status().code(), ErrorCode::InvalidFile);
        QVERIFY(f.getInt("big").status().message().find("does not fit in int64") != std::string::npos);
        QCOMPARE(f.getFloat("i").value(), 7.0);  // integers widen to double without loss here
        QCOMPARE(f.getInt("f").status().code(), ErrorCode::InvalidFile);  // no truncating floats
        auto m = f.getString("nope");
        QCOMPARE(m.status().code(), ErrorCode::NotFound);
        QCOMPARE(m.status().message(), where + "key 'nope': missing");

        QCOMPARE(f.getInt("nope", 42), int64_t(42));
        QCOMPARE(f.getInt("i", 42), int64_t(7));
        QCOMPARE(f.getString("s", "x"), std::string("text"));
        QCOMPARE(f.getFloat("f", 0.0), 2.5);
        QCOMPARE(f.getBool("nope", true), true);

        QCOMPARE(f.getIntArray("fa").status().message(),
                 where + "key 'fa': expected array of integers, found array of float32");
        QCOMPARE(f.getFloatArray("sa").status().message(),
                 where + "key 'sa': expected array of numbers, found array of string");
        QCOMPARE(f.getStringArray("fa").status().message(),
                 where + "key 'fa': expected array of string, found array of float32");
        QCOMPARE(f.getStringArray("s").status().message(), where + "key 's': expected array of string, found string");
        QCOMPARE(f.getStringArray("nope").status().code(), ErrorCode::NotFound);
    }

    void writerRejectsBadInput() {
        const std::string p = path("bad-writer.gguf").toStdString();
        {
            GgufWriter w;
            w.set("k", Value{ValueType::UInt8, uint64_t(300)});
            const Status st = w.write(p);
            QCOMPARE(st.code(), ErrorCode::InvalidArgument);
            QVERIFY2(st.message().rfind(p + ": key 'k': ", 0) == 0, st.message().c_str());
            QVERIFY(st.message().find("does not fit in uint8") != std::string::npos);
        }
        {
            GgufWriter w;
            w.set("k", Value{ValueType::String, uint64_t(1)});
            QCOMPARE(w.write(p).code(), ErrorCode::InvalidArgument);
        }
        {
            GgufWriter w;
            w.set("k", Value::array(ValueType::Int32, {Value::i32(1), Value::string("no")}));
            const Status st = w.write(p);
            QCOMPARE(st.code(), ErrorCode::InvalidArgument);
            QVERIFY2(st.message().find("element 1 is string in an array of int32") != std::string::npos,
                     st.message().c_str());
        }
        {
            GgufWriter w(3);
            const Status st = w.write(p);
            QCOMPARE(st.code(), ErrorCode::InvalidArgument);
            QVERIFY(st.message().find("not a power of two") != std::string::npos);
        }
        {
            GgufWriter w(64);
            w.setUInt32("general.alignment", 32);  // disagrees with the layout
            QCOMPARE(w.write(p).code(), ErrorCode::InvalidArgument);
        }
        QVERIFY(!QFile::exists(QString::fromStdString(p)));

        GgufWriter w;
        std::vector<uint8_t> bytes(34);
        QVERIFY(w.addTensor("ok", GgmlType::Q8_0, {32}, bytes).isOk());
        QCOMPARE(w.addTensor("ok", GgmlType::Q8_0, {32}, bytes).code(), ErrorCode::InvalidArgument);
        const Status wrongSize = w.addTensor("short", GgmlType::Q8_0, {64}, bytes);
        QCOMPARE(wrongSize.code(), ErrorCode::InvalidArgument);
        QVERIFY2(wrongSize.message().find("tensor 'short': got 34 bytes, the dims and type need 68") != std::string::npos,
                 wrongSize.message().c_str());
        QCOMPARE(w.addTensor("partial", GgmlType::Q8_0, {16}, std::span(bytes).first(17)).code(),
                 ErrorCode::InvalidArgument);
        QCOMPARE(w.addTensor("zero", GgmlType::F32, {0}, {}).code(), ErrorCode::InvalidArgument);
        QCOMPARE(w.addTensor("5d", GgmlType::F32, {1, 1, 1, 1, 1}, std::span(bytes).first(4)).code(),
                 ErrorCode::InvalidArgument);
        QCOMPARE(w.addTensor("unknown", GgmlType(99), {1}, std::span(bytes).first(4)).code(),
                 ErrorCode::InvalidArgument);
    }

    void writeToMissingDirectoryIsIo() {
        GgufWriter w;
        w.setUInt32("x", 1);
        const std::string p = path("no/such/dir/x.gguf").toStdString();
        const Status st = w.write(p);
        QCOMPARE(st.code(), ErrorCode::Io);
        QVERIFY2(st.message().find("No such file or directory") != std::string::npos, st.message().c_str());
    }

    // A write that runs out of room (here RLIMIT_FSIZE stands in for a full
    // disk: write() fails with EFBIG part-way) leaves the old file untouched
    // and no temporary behind.
    void failedWriteKeepsOldFileAndRemovesTmp() {
        const QString qp = path("atomic.gguf");
        const std::string p = qp.toStdString();
        GgufWriter small;
        small.setString("which", "old");
        QVERIFY(small.write(p).isOk());
        const auto oldBytes = test::loadBytes(qp);

        GgufWriter big;
        big.setString("which", "new");
        const auto payload = randomBytes(1 << 20, 7);
        QVERIFY(big.addTensor("w", GgmlType::F32, {uint64_t(payload.size() / 4)}, payload).isOk());

        struct rlimit old {};
        QCOMPARE(getrlimit(RLIMIT_FSIZE, &old), 0);
        auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = old;
        lim.rlim_cur = 64 * 1024;
        QCOMPARE(setrlimit(RLIMIT_FSIZE, &lim), 0);
        const Status st = big.write(p);
        setrlimit(RLIMIT_FSIZE, &old);
        std::signal(SIGXFSZ, oldHandler);

        QCOMPARE(st.code(), ErrorCode::Io);
        QVERIFY2(st.message().find("File too large") != std::string::npos, st.message().c_str());
        QVERIFY2(st.message().rfind(p + ": ", 0) == 0, st.message().c_str());
        QVERIFY(!QFile::exists(qp + ".tmp"));
        QVERIFY(test::loadBytes(qp) == oldBytes);
        auto r = GgufFile::open(p);
        QVERIFY(r.isOk());
        QCOMPARE((*r)->getString("which").value(), std::string("old"));
    }
};

QTEST_APPLESS_MAIN(TestGgufRoundTrip)
#include "tst_gguf_roundtrip.moc"
