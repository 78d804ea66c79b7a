// Every matmul path (scalar, AVX2, AVX-512 VNNI where this CPU has them) against
// references on random data of awkward shapes. Outputs are poisoned with NaN
// before each run, so an element a path forgets to write fails the comparison.
// Bounds on the normalised error ||y - ref|| / ||ref||:
//   float weights (F32/F16/BF16) vs matmulReference: 1e-5 per case (float accumulation only);
//   quantised weights vs a double-precision product of the dequantised weights with
//   the activations rounded the way the kernels round them (int8 per 32 values):
//   1e-4 per case, so any layout or indexing slip shows;
//   quantised weights vs matmulReference, over all cases of a type: 1e-2 (the
//   int8 activations cost about 0.5%; per case it is noisier when an output
//   happens to be near zero).
#include "lanes_layout.h"
#include "matmul.h"
#include "quant_blocks.h"
#include "thread_pool.h"

#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace kestrel;
using namespace kestrel::kernels;

namespace {

struct ScaleField {
    GgmlType type;
    std::vector<int> offsets;  // f16 scale fields in a block
};

// Random bytes exercise every bit of a layout; the f16 scales are set to sane
// values because random scale bits would be inf/NaN now and then.
const ScaleField kScaleFields[] = {
    {GgmlType::Q4_0, {0}},     {GgmlType::Q4_1, {0, 2}},  {GgmlType::Q5_0, {0}},    {GgmlType::Q5_1, {0, 2}},
    {GgmlType::Q8_0, {0}},     {GgmlType::Q2_K, {80, 82}}, {GgmlType::Q3_K, {108}},  {GgmlType::Q4_K, {0, 2}},
    {GgmlType::Q5_K, {0, 2}},  {GgmlType::Q6_K, {208}},
};

uint16_t halfOf(float f) {
    uint16_t h;
    quantizeRow(GgmlType::F16, &f, &h, 1);
    return h;
}

std::vector<uint8_t> randomWeights(GgmlType type, int64_t rows, int64_t cols, std::mt19937& rng) {
    const auto traits = *ggmlTypeTraits(type);
    const size_t rowBytes = *ggmlRowBytes(type, static_cast<uint64_t>(cols));
    std::vector<uint8_t> w(rowBytes * rows);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    if (traits.blockSize == 1) {
        std::vector<float> row(static_cast<size_t>(cols));
        for (int64_t r = 0; r < rows; ++r) {
            for (auto& v : row) v = dist(rng);
            quantizeRow(type, row.data(), w.data() + r * rowBytes, cols);
        }
        return w;
    }
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& b : w) b = static_cast<uint8_t>(byte(rng));
    for (const auto& sf : kScaleFields) {
        if (sf.type != type) continue;
        const size_t blocks = w.size() / traits.blockBytes;
        for (size_t b = 0; b < blocks; ++b)
            for (int off : sf.offsets) {
                const uint16_t h = halfOf(dist(rng) * 0.05f);
                std::memcpy(w.data() + b * traits.blockBytes + off, &h, 2);
            }
    }
    return w;
}

double normalisedError(const std::vector<float>& y, const std::vector<float>& ref) {
    double num = 0, den = 0;
    for (size_t i = 0; i < y.size(); ++i) {
        const double d = static_cast<double>(y[i]) - ref[i];
        num += d * d;  // NaN (an unwritten output) propagates and fails the bound
        den += static_cast<double>(ref[i]) * ref[i];
    }
    return std::sqrt(num / den);
}

// What the integer paths compute, in double: activations rounded to int8 with
// one absmax/127 scale per 32 values.
std::vector<float> quantisedActivationReference(const WeightMatrix& w, const std::vector<float>& x, int64_t tokens) {
    std::vector<double> xq(x.size());
    for (size_t b = 0; b < x.size(); b += 32) {
        float amax = 0;
        for (size_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b + j]));
        const float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
        for (size_t j = 0; j < 32; ++j) xq[b + j] = static_cast<double>(d) * std::nearbyint(x[b + j] * id);
    }
    std::vector<float> row(static_cast<size_t>(w.cols)), y(static_cast<size_t>(w.rows * tokens));
    for (int64_t r = 0; r < w.rows; ++r) {
        dequantizeRow(w.type, static_cast<const uint8_t*>(w.data) + r * w.rowBytes, row.data(), w.cols);
        for (int64_t t = 0; t < tokens; ++t) {
            double acc = 0;
            for (int64_t c = 0; c < w.cols; ++c) acc += row[static_cast<size_t>(c)] * xq[static_cast<size_t>(t * w.cols + c)];
            y[static_cast<size_t>(t * w.rows + r)] = static_cast<float>(acc);
        }
    }
    return y;
}

// w repacked into the lanes layout, as the CPU backend loads it where lanesLayoutAvailable.
struct LanesCopy {
    std::vector<uint8_t> bytes;
    WeightMatrix w;
};
// Row lengths, in 32-value blocks, for the lanes tests: `blocks` for the 32-value
// formats; for Q4_K whole super blocks, 1 to 5 (4-slot groups, 16-slot groups, both).
std::vector<int64_t> lanesTestBlocks(GgmlType t, std::initializer_list<int64_t> blocks) {
    if (t == GgmlType::Q4_K) return {8, 16, 24, 40};
    return blocks;
}

LanesCopy lanesCopy(const WeightMatrix& w) {
    LanesCopy c;
    c.bytes.resize(lanesLayoutBytes(w));
    ThreadPool pool(2);
    c.w = repackForDecode(w, c.bytes.data(), pool);
    return c;
}

const char* isaName(CpuIsa isa) {
    switch (isa) {
    case CpuIsa::Scalar: return "scalar";
    case CpuIsa::Avx2: return "avx2";
    case CpuIsa::Avx512Vnni: return "avx512vnni";
    }
    return "?";
}

}  // namespace

class TestMatmul : public QObject {
    Q_OBJECT

private slots:
    void pathsMatchReference_data() {
        QTest::addColumn<int>("type");
        for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1,
                           GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q2_K, GgmlType::Q3_K,
                           GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K})
            QTest::newRow(ggmlTypeName(t).data()) << static_cast<int>(t);
    }

    void pathsMatchReference() {
        QFETCH(int, type);
        const auto t = static_cast<GgmlType>(type);
        const auto traits = *ggmlTypeTraits(t);
        QVERIFY(traits.computeSupported);
        const bool isFloat = traits.blockSize == 1;
        const double bound = isFloat ? 1e-5 : 1e-4;
        const double aggregateBound = 1e-2;
        double aggNum = 0, aggDen = 0;
        // Float types get odd column counts; block types 1..5 whole blocks.
        const int64_t unit = isFloat ? 13 : traits.blockSize;
        ThreadPool pool(2);
        std::mt19937 rng(static_cast<unsigned>(type) * 977u);
        std::normal_distribution<float> dist(0.0f, 1.0f);
        int paths = 0;
        double worst = 0.0;
        for (int64_t rows : {1, 3, 17, 100})
            for (int64_t tokens : {1, 2, 3, 4, 5, 8, 9, 64})
                for (int64_t blocks = 1; blocks <= 5; ++blocks) {
                    const int64_t cols = blocks * unit;
                    const std::vector<uint8_t> wbytes = randomWeights(t, rows, cols, rng);
                    const WeightMatrix w{t, wbytes.data(), rows, cols, *ggmlRowBytes(t, static_cast<uint64_t>(cols))};
                    std::vector<float> x(static_cast<size_t>(tokens * cols));
                    for (auto& v : x) v = dist(rng);
                    std::vector<float> ref(static_cast<size_t>(tokens * rows));
                    matmulReference(w, x.data(), tokens, ref.data());
                    double refNorm = 0;
                    for (float v : ref) refNorm += static_cast<double>(v) * v;
                    QVERIFY2(refNorm > 0, "reference output is all zeros: the comparison would prove nothing");
                    const std::vector<float> exact = isFloat ? ref : quantisedActivationReference(w, x, tokens);
                    // Each path as prefill rows and, for up to 8 tokens, as decode rows (matmulDecode).
                    for (const auto& [isa, decode] :
                         {std::pair{CpuIsa::Scalar, false}, {CpuIsa::Avx2, false}, {CpuIsa::Avx512Vnni, false},
                          {CpuIsa::Scalar, true}, {CpuIsa::Avx2, true}, {CpuIsa::Avx512Vnni, true}}) {
                        if (!isaSupported(isa) || (decode && tokens > 8)) continue;
                        std::vector<float> y(ref.size(), std::nanf(""));
                        QVERIFY(matmulWithIsa(isa, w, x.data(), tokens, y.data(), pool, decode));
                        const double err = normalisedError(y, exact);
                        for (size_t i = 0; i < y.size(); ++i) {
                            aggNum += (static_cast<double>(y[i]) - ref[i]) * (static_cast<double>(y[i]) - ref[i]);
                            aggDen += static_cast<double>(ref[i]) * ref[i];
                        }
                        worst = std::max(worst, err);
                        ++paths;
                        if (!(err < bound))
                            QFAIL(qPrintable(QStringLiteral("%1%8 %2: rows %3 tokens %4 cols %5: error %6 >= %7")
                                                 .arg(isaName(isa)).arg(ggmlTypeName(t).data()).arg(rows).arg(tokens)
                                                 .arg(cols).arg(err).arg(bound).arg(decode ? " decode" : "")));
                    }
                }
        const double aggregate = std::sqrt(aggNum / aggDen);
        qInfo("%s: %d path runs, worst per-case error %.3g (bound %.0e), error vs float activations %.3g (bound %.0e)",
              ggmlTypeName(t).data(), paths, worst, bound, aggregate, aggregateBound);
        QVERIFY2(aggregate < aggregateBound, "error against the float-activation reference is too large");
    }

    // Every quant at its largest magnitude against activations at +-127: the AVX2 panels add
    // maddubs's 16-bit sums over runs of words before widening, so a run one word too long
    // would saturate here (and only here: random data stays far from 32767).
    void extremeQuantsMatchReference_data() {
        QTest::addColumn<int>("type");
        for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                           GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K})
            QTest::newRow(ggmlTypeName(t).data()) << static_cast<int>(t);
    }

    void extremeQuantsMatchReference() {
        QFETCH(int, type);
        const auto t = static_cast<GgmlType>(type);
        const auto traits = *ggmlTypeTraits(t);
        const int64_t rows = 17, cols = 2 * 256;
        const size_t rowBytes = *ggmlRowBytes(t, static_cast<uint64_t>(cols));
        // All bits set: every unsigned quant field at its maximum; Q8_0's quants at -128.
        std::vector<uint8_t> wbytes(rowBytes * rows, t == GgmlType::Q8_0 ? 0x80 : 0xff);
        for (const auto& sf : kScaleFields) {
            if (sf.type != t) continue;
            const uint16_t h = halfOf(0.01f);
            for (size_t b = 0; b < wbytes.size() / traits.blockBytes; ++b)
                for (int off : sf.offsets) std::memcpy(wbytes.data() + b * traits.blockBytes + off, &h, 2);
        }
        const WeightMatrix w{t, wbytes.data(), rows, cols, rowBytes};
        ThreadPool pool(2);
        for (int64_t tokens : {2, 64}) {
            std::vector<float> x(static_cast<size_t>(tokens * cols));
            for (int64_t i = 0; i < tokens * cols; ++i) x[static_cast<size_t>(i)] = (i / cols) % 2 ? -1.0f : 1.0f;
            const std::vector<float> exact = quantisedActivationReference(w, x, tokens);
            for (CpuIsa isa : {CpuIsa::Scalar, CpuIsa::Avx2, CpuIsa::Avx512Vnni}) {
                if (!isaSupported(isa)) continue;
                std::vector<float> y(exact.size(), std::nanf(""));
                QVERIFY(matmulWithIsa(isa, w, x.data(), tokens, y.data(), pool, false));
                const double err = normalisedError(y, exact);
                QVERIFY2(err < 1e-4, qPrintable(QStringLiteral("%1 %2 tokens %3: error %4")
                                                     .arg(isaName(isa)).arg(ggmlTypeName(t).data()).arg(tokens).arg(err)));
            }
        }
    }

    void activeIsaIsKnown() {
        const QByteArray isa = activeIsa();
        QVERIFY2(isa == "scalar" || isa == "avx2" || isa == "avx512vnni", isa.constData());
        qInfo("active ISA: %s", isa.constData());
    }

    // The SIMD activation quantisers must round exactly as the portable one. Widths: under
    // one group of 8 blocks (the AVX-512 one's unit), two groups and a 2-block tail
    // (SmolLM2's 576), six groups and a 1-block tail.
    void activationQuantisersAgree_data() {
        QTest::addColumn<int>("cols");
        for (int cols : {160, 576, 1568}) QTest::newRow(QByteArray::number(cols).constData()) << cols;
    }

    void activationQuantisersAgree() {
        QFETCH(int, cols);
        if (!isaSupported(CpuIsa::Avx2)) QSKIP("no AVX2 on this CPU");
        const int64_t cp = padCols(cols), tokens = 3;
        std::mt19937 rng(9);
        std::normal_distribution<float> dist(0.0f, 1.0f);
        std::vector<float> x(static_cast<size_t>(cols * tokens));
        for (auto& v : x) v = dist(rng) * 3.0f;
        for (int j = 0; j < 32; ++j) x[static_cast<size_t>(32 + j)] = 0.0f;  // an all-zero block
        x[70] = 127.0f * 0.5f;  // exact halves after scaling exercise round-to-even
        for (int j = 0; j < 32; ++j) x[static_cast<size_t>(cols + 64 + j)] *= 1e-30f;  // a tiny block (token 1)
        using Quantiser = void (*)(const float*, int64_t, int64_t, int64_t, int8_t*, float*, float*, int64_t);
        auto run = [&](Quantiser f) {
            std::vector<int8_t> q(static_cast<size_t>(cp * tokens), 1);
            std::vector<float> d(static_cast<size_t>(cp / 4 * tokens), 1), s(static_cast<size_t>(cp / 16 * tokens), 1);
            f(x.data(), cols, 0, tokens, q.data(), d.data(), s.data(), cp);
            std::vector<uint8_t> bytes(q.begin(), q.end());
            const auto* db = reinterpret_cast<const uint8_t*>(d.data());
            const auto* sb = reinterpret_cast<const uint8_t*>(s.data());
            bytes.insert(bytes.end(), db, db + d.size() * 4);
            bytes.insert(bytes.end(), sb, sb + s.size() * 4);
            return bytes;
        };
        const std::vector<uint8_t> portable = run(quantizeActivations);
        QVERIFY(run(quantizeActivationsAvx2) == portable);
        if (isaSupported(CpuIsa::Avx512Vnni)) QVERIFY(run(quantizeActivationsAvx512) == portable);
        else qInfo("no AVX-512 on this CPU: its quantiser not compared");
    }

    // A decode step of several sequences (matmulDecode): every token's outputs
    // must equal, bit for bit, a one-token product of that token alone, up to
    // the count the active path promises (matmulExactBatchTokens). Awkward shapes: row counts
    // that leave 1-3 rows past the last group of 4, block counts that leave a
    // partial group of blocks (4 per vector for the nibble formats, 2 for Q8_0).
    void batchedTokensEqualLoneTokens_data() {
        QTest::addColumn<int>("type");
        for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q8_0, GgmlType::Q5_0, GgmlType::Q4_K,
                           GgmlType::Q6_K, GgmlType::F16})
            QTest::newRow(ggmlTypeName(t).data()) << static_cast<int>(t);
    }

    void batchedTokensEqualLoneTokens() {
        QFETCH(int, type);
        const auto t = static_cast<GgmlType>(type);
        const int64_t exact = std::min<int64_t>(matmulExactBatchTokens(t), 16);
        qInfo("%s on %s: exact up to %lld tokens per call", ggmlTypeName(t).data(), activeIsa(),
              static_cast<long long>(exact));
        if (exact < 2) QSKIP("this path rounds batches differently from single tokens");
        const int64_t unit = ggmlTypeTraits(t)->blockSize;
        ThreadPool pool(2);
        std::mt19937 rng(static_cast<unsigned>(type) * 131u + 5u);
        std::normal_distribution<float> dist(0.0f, 1.0f);
        int compared = 0;
        for (int64_t rows : {1, 6, 37, 130})
            for (int64_t blocks : {1, 3, 5, 18, 48})
                for (int64_t tokens = 2; tokens <= exact; ++tokens) {
                    const int64_t cols = blocks * unit;
                    const std::vector<uint8_t> wbytes = randomWeights(t, rows, cols, rng);
                    const WeightMatrix w{t, wbytes.data(), rows, cols, *ggmlRowBytes(t, static_cast<uint64_t>(cols))};
                    std::vector<float> x(static_cast<size_t>(tokens * cols));
                    for (auto& v : x) v = dist(rng) * (1.0f + static_cast<float>(rng() % 8));
                    // As the CPU backend loads it: in the lanes layout where this CPU has it.
                    const LanesCopy lanes = lanesLayoutAvailable(t) ? lanesCopy(w) : LanesCopy{{}, w};
                    std::vector<float> batch(static_cast<size_t>(tokens * rows), std::nanf(""));
                    matmulDecode(lanes.w, x.data(), tokens, batch.data(), pool);
                    for (int64_t k = 0; k < tokens; ++k) {
                        std::vector<float> lone(static_cast<size_t>(rows), std::nanf(""));
                        matmul(lanes.w, x.data() + k * cols, 1, lone.data(), pool);
                        if (std::memcmp(lone.data(), batch.data() + k * rows, lone.size() * sizeof(float)) != 0)
                            QFAIL(qPrintable(QStringLiteral("rows %1 cols %2: token %3 of %4 differs from the same token alone")
                                                 .arg(rows).arg(cols).arg(k).arg(tokens)));
                        ++compared;
                    }
                }
        QVERIFY(compared > 0);
    }

    // The lanes layout (lanes_layout.h) is a permutation: back to GGML's blocks
    // byte for byte, for every group shape (16-block groups, 4-block groups,
    // a short last group).
    void lanesLayoutRoundTrips() {
        std::mt19937 rng(11);
        for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q8_0, GgmlType::Q4_K})
            for (int64_t blocks : lanesTestBlocks(t, {1, 2, 3, 4, 5, 15, 16, 17, 18, 21, 35, 48})) {
                const int64_t cols = blocks * kQK;
                const std::vector<uint8_t> row = randomWeights(t, 1, cols, rng);
                std::vector<uint8_t> lanes(lanesRowBytes(t, cols), 0xcd), back(row.size(), 0xcd);
                toLanesRow(t, row.data(), cols, lanes.data());
                fromLanesRow(t, lanes.data(), cols, back.data());
                if (back != row)
                    QFAIL(qPrintable(QStringLiteral("%1, %2 blocks: the round trip changed the row")
                                         .arg(ggmlTypeName(t).data()).arg(blocks)));
                // Q4_K: scales as bytes, not 6-bit fields: 8 bytes more per two super blocks, 16 more for
                // an odd last one (two 4-slot groups, each with the super block's d and dmin).
                const auto superBlocks = static_cast<size_t>(blocks / 8);
                const size_t slack = t == GgmlType::Q4_K ? 8 * (superBlocks / 2) + 16 * (superBlocks % 2) : 16;
                QVERIFY(lanes.size() >= row.size() && lanes.size() <= row.size() + slack);
            }
    }

    // Products of weights in the lanes layout against the same reference and
    // bound as pathsMatchReference, as decode rows (the lanes GEMV up to 16
    // tokens, the panels past that) and as prefill rows (panels built from the
    // lanes layout, or from GGML blocks restored from it), with block counts
    // that make every group shape.
    void lanesLayoutMatchesReference_data() {
        QTest::addColumn<int>("type");
        for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q8_0, GgmlType::Q4_K})
            QTest::newRow(ggmlTypeName(t).data()) << static_cast<int>(t);
    }

    void lanesLayoutMatchesReference() {
        QFETCH(int, type);
        const auto t = static_cast<GgmlType>(type);
        if (!lanesLayoutAvailable(t)) QSKIP("this CPU does not use the lanes layout (no AVX2)");
        ThreadPool pool(2);
        std::mt19937 rng(static_cast<unsigned>(type) * 31u + 7u);
        std::normal_distribution<float> dist(0.0f, 1.0f);
        double worst = 0.0;
        int runs = 0;
        for (int64_t rows : {1, 3, 17, 100})
            for (int64_t blocks : lanesTestBlocks(t, {1, 3, 4, 5, 16, 17, 21, 38}))
                for (int64_t tokens : {1, 2, 5, 9, 16, 17, 64}) {
                    const int64_t cols = blocks * kQK;
                    const std::vector<uint8_t> wbytes = randomWeights(t, rows, cols, rng);
                    const WeightMatrix w{t, wbytes.data(), rows, cols, *ggmlRowBytes(t, static_cast<uint64_t>(cols))};
                    const LanesCopy lanes = lanesCopy(w);
                    std::vector<float> x(static_cast<size_t>(tokens * cols));
                    for (auto& v : x) v = dist(rng);
                    const std::vector<float> exact = quantisedActivationReference(w, x, tokens);
                    for (bool decode : {false, true}) {
                        std::vector<float> y(exact.size(), std::nanf(""));
                        (decode ? matmulDecode : matmul)(lanes.w, x.data(), tokens, y.data(), pool);
                        const double err = normalisedError(y, exact);
                        worst = std::max(worst, err);
                        ++runs;
                        if (!decode && tokens > 1) {
                            // Prefill's panels come straight from the lanes layout (all but Q5_0):
                            // the same numbers as from GGML's blocks, bit for bit.
                            std::vector<float> ggml(exact.size(), std::nanf(""));
                            matmul(w, x.data(), tokens, ggml.data(), pool);
                            QVERIFY2(std::memcmp(y.data(), ggml.data(), y.size() * sizeof(float)) == 0,
                                     qPrintable(QStringLiteral("%1: rows %2 tokens %3 cols %4: lanes prefill differs from GGML's")
                                                    .arg(ggmlTypeName(t).data()).arg(rows).arg(tokens).arg(cols)));
                        }
                        if (!(err < 1e-4))
                            QFAIL(qPrintable(QStringLiteral("%1%6: rows %2 tokens %3 cols %4: error %5 >= 1e-4")
                                                 .arg(ggmlTypeName(t).data()).arg(rows).arg(tokens).arg(cols).arg(err)
                                                 .arg(decode ? " decode" : "")));
                    }
                }
        qInfo("%s lanes layout: %d runs, worst error %.3g (bound 1e-4)", ggmlTypeName(t).data(), runs, worst);
    }

    // Threads split rows; the result must not depend on how many there are.
    void threadCountDoesNotChangeResult() {
        std::mt19937 rng(3);
        const int64_t rows = 37, cols = 256, tokens = 7;
        const auto wbytes = randomWeights(GgmlType::Q4_K, rows, cols, rng);
        const WeightMatrix w{GgmlType::Q4_K, wbytes.data(), rows, cols, *ggmlRowBytes(GgmlType::Q4_K, cols)};
        std::normal_distribution<float> dist(0.0f, 1.0f);
        std::vector<float> x(static_cast<size_t>(tokens * cols));
        for (auto& v : x) v = dist(rng);
        std::vector<float> y1(static_cast<size_t>(rows * tokens), std::nanf("")), y3 = y1;
        ThreadPool one(1), three(3);
        matmul(w, x.data(), tokens, y1.data(), one);
        matmul(w, x.data(), tokens, y3.data(), three);
        for (size_t i = 0; i < y1.size(); ++i) QCOMPARE(y3[i], y1[i]);
    }
};

QTEST_APPLESS_MAIN(TestMatmul)
#include "tst_matmul.moc"
