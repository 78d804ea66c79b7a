// Dequantisation and quantisation against gguf-py (tests/reference/quant_reference.py,
// run by the quant_reference_data fixture): dequantised values must be bit-identical
// (0 ulp) to gguf.quants.dequantize, for random blocks and for rows of the real models;
// the 32-block quantisers must produce the same bytes as gguf.quants.quantize.
// Round trips quantise -> dequantise stay within a stated error per type.
#include "fp16.h"
#include "matmul.h"
#include "test_env.h"

#include <QFile>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace kestrel;
using namespace kestrel::kernels;

namespace {

QByteArray readAll(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

struct Case {
    QString name;
    GgmlType type;
    qint64 elements;
    QString kind;
};

QList<Case> manifest() {
    QList<Case> cases;
    const QByteArray text = readAll(test::testDataDir() + "/quant/quant_manifest.txt");
    for (const QByteArray& line : text.split('\n')) {
        const QList<QByteArray> f = line.simplified().split(' ');
        if (f.size() != 4) continue;
        cases.push_back({QString::fromUtf8(f[0]), static_cast<GgmlType>(f[1].toUInt()), f[2].toLongLong(),
                         QString::fromUtf8(f[3])});
    }
    return cases;
}

double normalisedError(const std::vector<float>& a, const std::vector<float>& ref) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        num += (static_cast<double>(a[i]) - ref[i]) * (static_cast<double>(a[i]) - ref[i]);
        den += static_cast<double>(ref[i]) * ref[i];
    }
    return std::sqrt(num / den);
}

}  // namespace

class TestQuant : public QObject {
    Q_OBJECT

    void addManifestRows(const QString& kind) {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("type");
        QTest::addColumn<qint64>("elements");
        const QList<Case> cases = manifest();
        for (const Case& c : cases)
            if (c.kind == kind) QTest::newRow(qPrintable(c.name)) << c.name << static_cast<int>(c.type) << c.elements;
        if (cases.isEmpty()) QTest::newRow("missing") << QString() << 0 << qint64(0);
    }

private slots:
    void dequantMatchesGgufPy_data() { addManifestRows("dequant"); }
    void dequantMatchesGgufPy() {
        QFETCH(QString, name);
        QFETCH(int, type);
        QFETCH(qint64, elements);
        if (name.isEmpty()) QFAIL("no reference data: run tests/reference/quant_reference.py via ctest's fixture");
        const QString base = test::testDataDir() + "/quant/" + name;
        const QByteArray blocks = readAll(base + ".blocks"), ref = readAll(base + ".f32");
        QCOMPARE(static_cast<qint64>(ref.size()), elements * 4);
        const auto rowBytes = ggmlRowBytes(static_cast<GgmlType>(type), static_cast<uint64_t>(elements));
        QVERIFY(rowBytes.has_value());
        QCOMPARE(static_cast<qint64>(blocks.size()), static_cast<qint64>(*rowBytes));
        std::vector<float> out(static_cast<size_t>(elements), std::nanf(""));
        dequantizeRow(static_cast<GgmlType>(type), blocks.constData(), out.data(), elements);
        const auto* expect = reinterpret_cast<const float*>(ref.constData());
        int nonzero = 0;
        for (qint64 i = 0; i < elements; ++i) {
            uint32_t a, b;
            std::memcpy(&a, &out[static_cast<size_t>(i)], 4);
            std::memcpy(&b, &expect[i], 4);
            nonzero += expect[i] != 0.0f;
            if (a != b)
                QFAIL(qPrintable(QStringLiteral("element %1: got %2 (0x%3), gguf-py %4 (0x%5)")
                                     .arg(i).arg(out[static_cast<size_t>(i)], 0, 'g', 9).arg(a, 8, 16, QChar('0'))
                                     .arg(expect[i], 0, 'g', 9).arg(b, 8, 16, QChar('0'))));
        }
        QVERIFY2(nonzero > elements / 2, "reference data is mostly zeros: the comparison would prove little");
    }

    void quantizeMatchesGgufPy_data() { addManifestRows("quant"); }
    void quantizeMatchesGgufPy() {
        QFETCH(QString, name);
        QFETCH(int, type);
        QFETCH(qint64, elements);
        if (name.isEmpty()) QFAIL("no reference data: run tests/reference/quant_reference.py via ctest's fixture");
        const QString base = test::testDataDir() + "/quant/" + name;
        const QByteArray expect = readAll(base + ".blocks"), input = readAll(base + ".f32");
        QCOMPARE(static_cast<qint64>(input.size()), elements * 4);
        QByteArray out(expect.size(), '\xAA');
        QVERIFY(quantizeRow(static_cast<GgmlType>(type), reinterpret_cast<const float*>(input.constData()),
                            out.data(), elements));
        for (qsizetype i = 0; i < out.size(); ++i)
            if (out[i] != expect[i])
                QFAIL(qPrintable(QStringLiteral("byte %1 differs: got 0x%2, gguf-py 0x%3")
                                     .arg(i).arg(static_cast<uint8_t>(out[i]), 2, 16, QChar('0'))
                                     .arg(static_cast<uint8_t>(expect[i]), 2, 16, QChar('0'))));
    }

    void fp16RoundTripsEveryFiniteHalf() {
        for (uint32_t h = 0; h < 65536; ++h) {
            if ((h & 0x7c00) == 0x7c00) continue;
            const uint16_t back = floatToFp16(fp16ToFloat(static_cast<uint16_t>(h)));
            if (back != h) QFAIL(qPrintable(QStringLiteral("half 0x%1 came back as 0x%2").arg(h, 4, 16).arg(back, 4, 16)));
        }
    }

    void roundTripError_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<double>("bound");
        // Bounds: about 1.5x the expected RMS error of round-to-nearest at each
        // format's step size on Gaussian data (e.g. Q4_0: step amax/8 -> ~0.08).
        QTest::newRow("F16") << static_cast<int>(GgmlType::F16) << 1e-3;
        QTest::newRow("BF16") << static_cast<int>(GgmlType::BF16) << 5e-3;
        QTest::newRow("Q8_0") << static_cast<int>(GgmlType::Q8_0) << 1e-2;
        QTest::newRow("Q5_0") << static_cast<int>(GgmlType::Q5_0) << 6e-2;
        QTest::newRow("Q5_1") << static_cast<int>(GgmlType::Q5_1) << 6e-2;
        QTest::newRow("Q4_0") << static_cast<int>(GgmlType::Q4_0) << 0.12;
        QTest::newRow("Q4_1") << static_cast<int>(GgmlType::Q4_1) << 0.12;
        QTest::newRow("Q4_K") << static_cast<int>(GgmlType::Q4_K) << 0.13;
        QTest::newRow("Q5_K") << static_cast<int>(GgmlType::Q5_K) << 7e-2;
        QTest::newRow("Q6_K") << static_cast<int>(GgmlType::Q6_K) << 3e-2;
    }
    void roundTripError() {
        QFETCH(int, type);
        QFETCH(double, bound);
        const auto t = static_cast<GgmlType>(type);
        const int64_t n = 256 * 32;
        std::mt19937 rng(5);
        std::normal_distribution<float> dist(0.0f, 1.0f);
        std::vector<float> x(static_cast<size_t>(n)), back(static_cast<size_t>(n), std::nanf(""));
        for (auto& v : x) v = dist(rng) * 0.02f;
        std::vector<uint8_t> q(*ggmlRowBytes(t, static_cast<uint64_t>(n)));
        QVERIFY(quantizeRow(t, x.data(), q.data(), n));
        dequantizeRow(t, q.data(), back.data(), n);
        const double err = normalisedError(back, x);
        qInfo("%s round-trip normalised error %.4g (bound %.3g)", ggmlTypeName(t).data(), err, bound);
        QVERIFY2(err < bound, qPrintable(QStringLiteral("error %1 >= bound %2").arg(err).arg(bound)));
        // Exact zeros stay zero: an all-zero block must not invent values.
        std::vector<float> zeros(static_cast<size_t>(n), 0.0f);
        QVERIFY(quantizeRow(t, zeros.data(), q.data(), n));
        dequantizeRow(t, q.data(), back.data(), n);
        for (float v : back) QCOMPARE(v, 0.0f);
    }
};

QTEST_APPLESS_MAIN(TestQuant)
#include "tst_quant.moc"
