// The CUDA weight repacking (engine/backend/cuda/cuda_repack.h) on the host:
// every GGUF type with an integer device layout, decoded back from that layout,
// must give the values the CPU's dequantisation gives. Needs no GPU, so CI runs
// it: a layout slip (nibble order, sub-block order, scale index) fails here
// before it can show up as a small error in a GPU product.
#include "cuda_repack.h"
#include "fp16.h"
#include "matmul.h"

#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace kestrel;
using namespace kestrel::backend::cudaimpl;

namespace {

float half(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return kernels::fp16ToFloat(h);
}

// Value k of block i, read back from the device layout.
float decode(const DeviceLayout& l, const std::vector<uint8_t>& qs, const std::vector<uint8_t>& sc, int64_t i, int k) {
    const uint8_t* q = qs.data() + i * l.qsBytes;
    const uint8_t* s = sc.data() + i * l.scaleBytes;
    switch (l.format) {
    case cuda::DevFormat::Q4_0:
    case cuda::DevFormat::Q4_1: {
        const int nib = k < 16 ? (q[k] & 15) : (q[k - 16] >> 4);
        if (l.format == cuda::DevFormat::Q4_0) return half(s) * static_cast<float>(nib - 8);
        return half(s) * static_cast<float>(nib) + half(s + 2);
    }
    case cuda::DevFormat::Q8_0: return half(s) * static_cast<float>(static_cast<int8_t>(q[k]));
    case cuda::DevFormat::Q8_16:
        return half(s + (k < 16 ? 0 : 2)) * static_cast<float>(static_cast<int8_t>(q[k])) + half(s + 4);
    case cuda::DevFormat::F16: break;
    }
    return NAN;
}

}  // namespace

class TestCudaRepack : public QObject {
    Q_OBJECT
private slots:
    void decodesToTheCpuValues_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<double>("bound");
        // Exact where GGUF's own f16 scales are copied; K-quants round d * sc to f16.
        QTest::newRow("Q4_0") << int(GgmlType::Q4_0) << 0.0;
        QTest::newRow("Q4_1") << int(GgmlType::Q4_1) << 0.0;
        QTest::newRow("Q5_0") << int(GgmlType::Q5_0) << 0.0;
        QTest::newRow("Q5_1") << int(GgmlType::Q5_1) << 0.0;
        QTest::newRow("Q8_0") << int(GgmlType::Q8_0) << 0.0;
        QTest::newRow("Q4_K") << int(GgmlType::Q4_K) << 1e-3;
        QTest::newRow("Q5_K") << int(GgmlType::Q5_K) << 1e-3;
        QTest::newRow("Q6_K") << int(GgmlType::Q6_K) << 1e-3;
    }

    void decodesToTheCpuValues() {
        QFETCH(int, type);
        QFETCH(double, bound);
        const auto t = static_cast<GgmlType>(type);
        const auto layout = deviceLayoutFor(t);
        QVERIFY(layout.has_value());
        const int64_t rows = 5, cols = 768, nb = cols / 32;
        const uint64_t rowBytes = *ggmlRowBytes(t, cols);
        std::mt19937 rng(1234u + static_cast<unsigned>(type));
        std::normal_distribution<float> nd(0.0f, 1.0f);
        std::vector<uint8_t> gguf(rowBytes * rows);
        for (int64_t r = 0; r < rows; ++r) {
            std::vector<float> x(cols);
            for (float& v : x) v = nd(rng) * (1.0f + static_cast<float>(r));  // rows of different scale
            QVERIFY(kernels::quantizeRow(t, x.data(), gguf.data() + r * rowBytes, cols));
        }
        std::vector<uint8_t> qs(static_cast<size_t>(rows * nb * layout->qsBytes), 0xAB),
            sc(static_cast<size_t>(rows * nb * layout->scaleBytes), 0xAB);
        repackRows(t, gguf.data(), cols, 0, 2, qs.data(), sc.data());  // two calls: row ranges are independent
        repackRows(t, gguf.data(), cols, 2, rows, qs.data(), sc.data());
        double worst = 0.0;
        for (int64_t r = 0; r < rows; ++r) {
            std::vector<float> ref(cols);
            kernels::dequantizeRow(t, gguf.data() + r * rowBytes, ref.data(), cols);
            float refMax = 0.0f;
            for (float v : ref) refMax = std::max(refMax, std::fabs(v));
            QVERIFY(refMax > 0.0f);
            for (int64_t c = 0; c < cols; ++c) {
                const float got = decode(*layout, qs, sc, r * nb + c / 32, static_cast<int>(c % 32));
                QVERIFY2(std::isfinite(got), qPrintable(QString("row %1 col %2 not finite").arg(r).arg(c)));
                worst = std::max(worst, std::fabs(static_cast<double>(got) - ref[c]) / refMax);
            }
        }
        QVERIFY2(worst <= bound, qPrintable(QString("worst |device - cpu| / max|cpu| = %1, bound %2").arg(worst).arg(bound)));
    }

    void floatAndLowBitTypesHaveNoIntegerLayout() {
        for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q2_K, GgmlType::Q3_K})
            QVERIFY(!deviceLayoutFor(t).has_value());
    }
};

QTEST_APPLESS_MAIN(TestCudaRepack)
#include "tst_cuda_repack.moc"
