// Hostile and broken GGUF files: each must give a clean error with the right
// code, naming the file and the key or tensor; none may crash or allocate
// without bound. Files are hand-assembled (test::FileSpec) so they can say
// things no writer would.
#include "gguf_file.h"
#include "gguf_test_util.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace kestrel;
using namespace kestrel::gguf;
using kestrel::test::FileSpec;
using kestrel::test::GgufBytes;
using kestrel::test::kvRaw;
using kestrel::test::kvString;
using kestrel::test::kvU32;
using kestrel::test::TensorSpec;

Q_DECLARE_METATYPE(kestrel::ErrorCode)

namespace {

// A valid file: two keys, an F32 [8, 2] tensor at 0 (64 bytes) and a Q8_0
// [32] tensor at 64 (34 bytes), with no padding after the last byte of data,
// so that every strict prefix is broken.
FileSpec validSpec() {
    FileSpec s;
    s.kvs = {kvString("general.architecture", "llama"), kvU32("some.count", 7)};
    s.tensors = {{"a", {8, 2}, 0, 0}, {"b", {32}, 8, 64}};
    s.dataBytes = 64 + 34;
    return s;
}

std::vector<uint8_t> arrayValue(uint32_t elementType, uint64_t count, const std::vector<uint8_t>& items = {}) {
    GgufBytes x;
    x.u32(elementType).u64(count).raw(items);
    return x.b;
}

QByteArray toQ(const std::vector<uint8_t>& v) { return QByteArray(reinterpret_cast<const char*>(v.data()), qsizetype(v.size())); }

}  // namespace

class TestGgufHostile : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void baseFileIsValid() {
        const QString p = dir_.filePath("valid.gguf");
        QVERIFY(test::saveBytes(p, validSpec().build()));
        auto r = GgufFile::open(p.toStdString());
        QVERIFY2(r.isOk(), r.status().toString().c_str());
        QCOMPARE((*r)->tensors().size(), size_t(2));
        QCOMPARE((*r)->findTensor("b")->bytes, uint64_t(34));
    }

    void rejected_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<kestrel::ErrorCode>("code");
        QTest::addColumn<QString>("context");  // the key or tensor the message must name
        QTest::addColumn<QString>("what");     // and what it must say

        auto row = [](const char* name, const FileSpec& s, ErrorCode code, const char* context, const char* what) {
            QTest::newRow(name) << toQ(s.build()) << code << QString::fromUtf8(context) << QString::fromUtf8(what);
        };
        const auto E = ErrorCode::InvalidFile;
        FileSpec s;

        s = validSpec(); s.magic = 0x46554746;
        row("wrong magic", s, E, "header", "not a GGUF file");
        s = validSpec(); s.version = 1;
        row("version 1", s, ErrorCode::Unsupported, "header", "GGUF version 1 is not supported");
        s = validSpec(); s.version = 99;
        row("version 99", s, ErrorCode::Unsupported, "header", "GGUF version 99 is not supported");
        s = validSpec(); s.version = 0x03000000;
        row("big-endian", s, ErrorCode::Unsupported, "header", "big-endian GGUF files are not supported");
        s = validSpec(); s.tensorCountOverride = int64_t(1) << 40;
        row("tensor count huge", s, E, "header", "claims 1099511627776 tensors");
        s = validSpec(); s.kvCountOverride = int64_t(1) << 62;
        row("kv count huge", s, E, "header", "claims 4611686018427387904 metadata keys");

        s = validSpec(); s.tensors[0].dims = {uint64_t(1) << 32, uint64_t(1) << 32, 2};
        row("dims overflow", s, E, "tensor 'a'", "hold more than 2^64 elements");
        s = validSpec(); s.tensors[0].dims = {uint64_t(1) << 62};  // elements fit, bytes (x4) do not
        row("bytes overflow", s, E, "tensor 'a'", "need more than 2^64 bytes");
        s = validSpec(); s.tensors[1].offset = 4096;
        row("offset past end", s, E, "tensor 'b'", "ends past the end of the file");
        s = validSpec(); s.tensors[1].offset = ~uint64_t(0) - 31;
        row("offset+size overflow", s, E, "tensor 'b'", "overflows 64 bits");
        s = validSpec(); s.tensors[0].dims = {uint64_t(1) << 59};
        row("size past end", s, E, "tensor 'a'", "ends past the end of the file");
        s = validSpec(); s.tensors[1].type = 99;
        row("unknown tensor type", s, ErrorCode::Unsupported, "tensor 'b'", "unknown tensor type id 99");
        s = validSpec(); s.tensors[1].type = 4;  // a gap in ggml's enum (removed Q4_2)
        row("removed tensor type", s, ErrorCode::Unsupported, "tensor 'b'", "unknown tensor type id 4");
        s = validSpec(); s.tensors[1].offset = 68;
        row("unaligned offset", s, E, "tensor 'b'", "data offset 68 is not a multiple of the alignment 32");
        s = validSpec(); s.tensors[1].offset = 32;
        row("overlap", s, E, "tensor 'b'", "overlaps tensor 'a'");
        s = validSpec(); s.tensors[1].dims = {16};
        row("partial block", s, E, "tensor 'b'", "row length 16 is not a whole number of Q8_0 blocks");
        s = validSpec(); s.tensors[0].dims = {}; s.tensors[0].nDimsOverride = 0;
        row("n_dims 0", s, E, "tensor 'a'", "has 0 dimensions (expected 1 to 4)");
        s = validSpec(); s.tensors[0].dims = {1, 1, 1, 1, 16};
        row("n_dims 5", s, E, "tensor 'a'", "has 5 dimensions (expected 1 to 4)");
        s = validSpec(); s.tensors[0].dims = {8, 0};
        row("zero dim", s, E, "tensor 'a'", "dims [8, 0] contain a zero");
        s = validSpec(); s.tensors[1].name = "a";
        row("duplicate tensor", s, E, "tensor 'a'", "duplicate tensor name");

        s = validSpec(); s.kvs.push_back(kvU32("some.count", 8));
        row("duplicate key", s, E, "key 'some.count'", "duplicate key");
        s = validSpec(); s.kvs.push_back(kvU32("general.alignment", 0));
        row("alignment 0", s, E, "key 'general.alignment'", "alignment is 0");
        s = validSpec(); s.kvs.push_back(kvU32("general.alignment", 3));
        row("alignment 3", s, E, "key 'general.alignment'", "3 is not a power of two");
        s = validSpec(); s.kvs.push_back(kvString("general.alignment", "32"));
        row("alignment string", s, E, "key 'general.alignment'", "expected uint32, found string");
        s = validSpec(); s.kvs.push_back(kvU32("general.alignment", 64));  // valid, but tensor b at 64 ... fine;
        s.tensors[1].offset = 96;                                            // 96 is not a multiple of 64
        row("offset vs custom alignment", s, E, "tensor 'b'", "not a multiple of the alignment 64");

        {
            GgufBytes v;
            v.u64(uint64_t(1) << 63).raw({'x', 'y'});
            s = validSpec(); s.kvs.push_back(kvRaw("evil.string", 8, v.b));
            row("string length 2^63", s, E, "key 'evil.string'", "string of 9223372036854775808 bytes");
        }
        {
            GgufBytes k;
            k.u64(uint64_t(1) << 63);
            s = validSpec(); s.kvs.insert(s.kvs.begin(), k.b);
            row("key length 2^63", s, E, "metadata key #0", "runs past the end of the file");
        }
        {
            GgufBytes t;
            t.u64(~uint64_t(0));
            s = validSpec(); s.tensors.clear(); s.dataBytes = 0; s.tensorCountOverride = 1;
            s.kvs.push_back(t.b);  // lands where the tensor info is expected
            s.kvCountOverride = 2;
            row("tensor name length 2^64-1", s, E, "tensor #0", "runs past the end of the file");
        }
        s = validSpec(); s.kvs.push_back(kvRaw("evil.array", 9, arrayValue(0, uint64_t(1) << 62)));
        row("array count 2^62", s, E, "key 'evil.array'", "array of 4611686018427387904 uint8 values");
        s = validSpec(); s.kvs.push_back(kvRaw("evil.array", 9, arrayValue(9, ~uint64_t(0))));
        row("array count 2^64-1 of arrays", s, E, "key 'evil.array'", "more than 2^64");
        s = validSpec(); s.kvs.push_back(kvRaw("evil.array", 9, arrayValue(8, 1000, {0, 0, 0, 0, 0, 0, 0, 0})));
        row("string array longer than file", s, E, "key 'evil.array'", "array of 1000 string values");
        s = validSpec(); s.kvs.push_back(kvRaw("evil.array", 9, arrayValue(13, 0)));
        row("array of unknown type", s, E, "key 'evil.array'", "array of unknown value type 13");
        s = validSpec(); s.kvs.push_back(kvRaw("evil.type", 13, {0, 0, 0, 0}));
        row("unknown value type", s, E, "key 'evil.type'", "unknown value type 13");
        s = validSpec(); s.kvs.push_back(kvRaw("evil.bool", 7, {2}));
        row("bool 2", s, E, "key 'evil.bool'", "is 2, not 0 or 1");
        {
            // 10,000 nested array headers: each says "1 array follows".
            GgufBytes bomb;
            for (int i = 0; i < 10000; ++i) bomb.u32(9).u64(1);
            bomb.u32(0).u64(0);
            s = validSpec(); s.kvs.push_back(kvRaw("evil.nest", 9, bomb.b));
            row("nesting bomb", s, E, "key 'evil.nest'", "arrays nested more than 8 deep");
        }
        {
            FileSpec t = validSpec();
            t.dataBytes = 0;  // tensor infos present, data section missing altogether
            auto bytes = t.build();
            QTest::newRow("no data section") << toQ(bytes) << E << QString("tensor ") << QString("past the end of the file");
        }
        QTest::newRow("empty file") << QByteArray() << E << QString("header") << QString("empty");
        QTest::newRow("three bytes") << QByteArray("GGU") << E << QString("header") << QString("file ends while reading the magic");
    }

    void rejected() {
        QFETCH(QByteArray, bytes);
        QFETCH(kestrel::ErrorCode, code);
        QFETCH(QString, context);
        QFETCH(QString, what);
        const QString p = dir_.filePath("bad.gguf");
        QVERIFY(test::saveBytes(p, reinterpret_cast<const uint8_t*>(bytes.constData()), size_t(bytes.size())));
        auto r = GgufFile::open(p.toStdString());
        QVERIFY(!r.isOk());
        const std::string msg = r.status().message();
        qInfo("%s", r.status().toString().c_str());
        QCOMPARE(errorCodeName(r.status().code()), errorCodeName(code));
        QVERIFY2(msg.rfind(p.toStdString() + ": " + context.toStdString(), 0) == 0, msg.c_str());
        QVERIFY2(msg.find(what.toStdString()) != std::string::npos, msg.c_str());
    }

    void exampleMessageShape() {
        // The exact shape promised in status.h and gguf_file.h.
        FileSpec s = validSpec();
        s.tensors[1].offset = 64 * 1024;
        const QString p = dir_.filePath("shape.gguf");
        const auto bytes = s.build();
        QVERIFY(test::saveBytes(p, bytes));
        auto r = GgufFile::open(p.toStdString());
        QVERIFY(!r.isOk());
        const uint64_t dataStart = (bytes.size() - 98);
        const std::string expected = p.toStdString() + ": tensor 'b': data [" + std::to_string(dataStart + 65536) + ".." +
                                     std::to_string(dataStart + 65536 + 34) + ") ends past the end of the file (" +
                                     std::to_string(bytes.size()) + " bytes)";
        QCOMPARE(r.status().message(), expected);
    }

    void everyPrefixIsRejected() {
        const auto full = validSpec().build();
        const QString p = dir_.filePath("prefix.gguf");
        for (size_t len = 0; len < full.size(); ++len) {
            QVERIFY(test::saveBytes(p, full.data(), len));
            auto r = GgufFile::open(p.toStdString());
            QVERIFY2(!r.isOk(), qPrintable(QStringLiteral("prefix of %1 bytes opened").arg(len)));
            QCOMPARE(r.status().code(), ErrorCode::InvalidFile);
            QVERIFY(r.status().message().rfind(p.toStdString() + ": ", 0) == 0);
        }
        QVERIFY(test::saveBytes(p, full));
        QVERIFY(GgufFile::open(p.toStdString()).isOk());
    }

    // 2^24 + 1 uint8 values (one byte each, so the bytes are really there):
    // refused before anything is allocated for them.
    void tooManyMetadataValues() {
        const uint64_t count = kMaxMetadataValues + 1;
        FileSpec s = validSpec();
        std::vector<uint8_t> value = arrayValue(0, count);
        value.resize(value.size() + count, 1);
        s.kvs.push_back(kvRaw("evil.huge", 9, value));
        const QString p = dir_.filePath("huge.gguf");
        QVERIFY(test::saveBytes(p, s.build()));
        auto r = GgufFile::open(p.toStdString());
        QCOMPARE(r.status().code(), ErrorCode::Unsupported);
        QVERIFY2(r.status().message().rfind(p.toStdString() + ": key 'evil.huge': ", 0) == 0,
                 r.status().message().c_str());
        QVERIFY(r.status().message().find("more than 16777216 metadata values") != std::string::npos);
        QFile::remove(p);
    }

    void missingFileIsNotFound() {
        const std::string p = dir_.filePath("absent.gguf").toStdString();
        auto r = GgufFile::open(p);
        QCOMPARE(r.status().code(), ErrorCode::NotFound);
        QCOMPARE(r.status().message(), p + ": cannot open: No such file or directory");
    }

    void directoryIsRejected() {
        auto r = GgufFile::open(dir_.path().toStdString());
        QCOMPARE(r.status().code(), ErrorCode::InvalidFile);
        QVERIFY(r.status().message().find("not a regular file") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestGgufHostile)
#include "tst_gguf_hostile.moc"
