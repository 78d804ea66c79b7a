// kernels/cpu/ops against naive double-precision references on random inputs
// of awkward sizes. Outputs are poisoned with NaN before each run; the error is
// max |got - ref| / max |ref| with the bound stated at each check.
#include "ops.h"
#include "thread_pool.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

using namespace kestrel::kernels;

namespace {

std::vector<float> randomVec(size_t n, std::mt19937& rng, float lo = -2.0f, float hi = 2.0f) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
}

template <typename A, typename B>
double relErr(const A& got, const B& ref) {
    double maxDiff = 0, maxRef = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        const double g = got[i];
        if (std::isnan(g)) return std::numeric_limits<double>::infinity();
        maxDiff = std::max(maxDiff, std::abs(g - static_cast<double>(ref[i])));
        maxRef = std::max(maxRef, std::abs(static_cast<double>(ref[i])));
    }
    return maxRef > 0 ? maxDiff / maxRef : maxDiff;
}

std::vector<float> poisoned(size_t n) { return std::vector<float>(n, std::numeric_limits<float>::quiet_NaN()); }

// One attention case: keys and values for positions [0, total) in the cache
// (paged: blockTokens > 0, in shuffled blocks), queries at `positions`.
struct AttentionCase {
    KvType type = KvType::F32;
    int heads = 0, kvHeads = 0, headDim = 0, window = 0;
    float softcap = 0.0f;
    int blockTokens = 0;  // 0: one contiguous slab
    int total = 0;
    std::vector<int32_t> positions;
    float scale = 0.0f;        // 0: 1 / sqrt(headDim)
    bool negative = false;     // keys in [0.5, 2), queries in [-2, -1): every score far below zero
};

// The columns every data-driven attention test has: storage type (a KvType), heads,
// kv heads, head size, sliding window and softcap.
void addAttentionColumns() {
    QTest::addColumn<int>("type");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("window");
    QTest::addColumn<float>("softcapValue");
}

// The current data row's case (addAttentionColumns), with keys in `blockTokens`-position
// blocks for `total` positions.
AttentionCase fetchAttentionCase(int blockTokens, int total, std::vector<int32_t> positions) {
    QFETCH(int, type);
    QFETCH(int, heads);
    QFETCH(int, kvHeads);
    QFETCH(int, headDim);
    QFETCH(int, window);
    QFETCH(float, softcapValue);
    return {KvType(type), heads, kvHeads, headDim, window, softcapValue, blockTokens, total, std::move(positions)};
}

// max |attention - double reference| / max |reference|.
double attentionError(const AttentionCase& c, ThreadPool& pool) {
    const int tokens = static_cast<int>(c.positions.size());
    const int rowW = c.kvHeads * c.headDim;
    std::mt19937 rng(c.heads * 100 + c.headDim);
    const float kLo = c.negative ? 0.5f : -2.0f, qLo = c.negative ? -2.0f : -1.5f, qHi = c.negative ? -1.0f : 1.5f;
    auto kAll = randomVec(static_cast<size_t>(c.total * rowW), rng, kLo);
    auto vAll = randomVec(static_cast<size_t>(c.total * rowW), rng);
    auto q = randomVec(static_cast<size_t>(tokens * c.heads * c.headDim), rng, qLo, qHi);
    std::vector<int32_t> allPos(static_cast<size_t>(c.total));
    for (int i = 0; i < c.total; ++i) allPos[size_t(i)] = i;

    // Paged: 3 spare blocks, the table a random permutation, so rows of
    // neighbouring positions are far apart and an indirection bug shows.
    const int blocks = c.blockTokens ? (c.total + c.blockTokens - 1) / c.blockTokens + 3 : 1;
    std::vector<int32_t> table(static_cast<size_t>(blocks));
    for (int i = 0; i < blocks; ++i) table[size_t(i)] = i;
    std::shuffle(table.begin(), table.end(), rng);
    const size_t rowsHeld = c.blockTokens ? size_t(blocks) * size_t(c.blockTokens) : size_t(c.total);
    std::vector<uint8_t> kStore(rowsHeld * size_t(rowW) * 4), vStore(kStore.size());
    std::vector<float> kScales(rowsHeld * size_t(rowW) / kKvQ8Block), vScales(kScales.size());
    KvView view{c.type, kStore.data(), vStore.data(), rowW};
    view.kScales = kScales.data();
    view.vScales = vScales.data();
    if (c.blockTokens) {
        view.blockTokens = c.blockTokens;
        view.tables = table.data();
    }
    storeKv(kAll.data(), vAll.data(), c.total, allPos.data(), rowW, view);
    // The reference sees what the cache holds: f16 roundings, or 8-bit codes times their
    // scales as read back from the slabs (the layout of ops.h: scale of element e at e / 32).
    for (int p = 0; p < c.total; ++p) {
        const int64_t row = KvView::rowOffset(view.tables, view.blockTokens, rowW, p);
        for (int i = 0; i < rowW; ++i) {
            float& kx = kAll[size_t(p * rowW + i)];
            float& vx = vAll[size_t(p * rowW + i)];
            if (c.type == KvType::F16) {
                kx = halfToFloat(floatToHalf(kx));
                vx = halfToFloat(floatToHalf(vx));
            } else if (c.type == KvType::Q8) {
                const int64_t e = row + i;
                kx = float(reinterpret_cast<const int8_t*>(kStore.data())[e]) * kScales[size_t(e / kKvQ8Block)];
                vx = float(reinterpret_cast<const int8_t*>(vStore.data())[e]) * vScales[size_t(e / kKvQ8Block)];
            }
        }
    }

    AttentionConfig cfg{c.heads, c.kvHeads, c.headDim, c.headDim,
                        c.scale > 0 ? c.scale : 1.0f / std::sqrt(float(c.headDim)), c.window, c.softcap};
    std::vector<double> ref(static_cast<size_t>(tokens * c.heads * c.headDim));
    for (int t = 0; t < tokens; ++t)
        for (int h = 0; h < c.heads; ++h) {
            const int p = c.positions[size_t(t)], kvh = h / (c.heads / c.kvHeads);
            std::vector<double> s;
            std::vector<int> js;
            for (int j = 0; j <= p; ++j) {
                if (c.window > 0 && p - j >= c.window) continue;
                double d = 0;
                for (int i = 0; i < c.headDim; ++i)
                    d += double(q[(t * c.heads + h) * c.headDim + i]) * kAll[j * rowW + kvh * c.headDim + i];
                d *= cfg.scale;
                if (c.softcap > 0) d = c.softcap * std::tanh(d / c.softcap);
                s.push_back(d);
                js.push_back(j);
            }
            double m = -1e300, sum = 0;
            for (double v : s) m = std::max(m, v);
            for (double& v : s) sum += (v = std::exp(v - m));
            for (int i = 0; i < c.headDim; ++i) {
                double acc = 0;
                for (size_t n = 0; n < s.size(); ++n) acc += s[n] / sum * vAll[js[n] * rowW + kvh * c.headDim + i];
                ref[(t * c.heads + h) * c.headDim + i] = acc;
            }
        }
    // Every token as a decode step (the per-query kernels), then as prefill (query blocks
    // where the ISA has them): the larger error of the two.
    double err = 0;
    for (int64_t decodeTokens : {int64_t(tokens), int64_t(0)}) {
        auto out = poisoned(ref.size());
        attention(q.data(), tokens, c.positions.data(), view, cfg, out.data(), pool, decodeTokens);
        err = std::max(err, relErr(out, ref));
    }
    return err;
}

}  // namespace

class TestCpuOps : public QObject {
    Q_OBJECT
    ThreadPool pool_{2};

private slots:
    // argmaxRow against the first-greater loop (greedy sampling's definition) on rows with
    // ties (values from a few levels), -inf, NaNs (first and elsewhere) and a partial last
    // vector; the lengths cross the vector path's threshold (32) and its 16-value steps.
    void argmaxRowMatchesFirstGreaterLoop() {
        std::mt19937 rng(7);
        const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
        int checked = 0;
        for (int n : {1, 2, 15, 16, 17, 31, 32, 33, 47, 48, 64, 100, 301, 4099, 49152}) {
            for (int kind = 0; kind < 6; ++kind) {
                std::vector<float> x = kind == 1 ? std::vector<float>(size_t(n), 0.0f) : randomVec(size_t(n), rng);
                std::uniform_int_distribution<int> at(0, n - 1), level(0, 3);
                if (kind == 2)  // few distinct values: many ties, the lowest index must win
                    for (float& v : x) v = float(level(rng));
                if (kind == 3) {  // NaNs, not first
                    for (int i = 0; i < 1 + n / 10; ++i) x[size_t(at(rng))] = nan;
                    if (n > 1) x[0] = -1.0f;
                }
                if (kind == 4) {  // a NaN first wins for good
                    x[0] = nan;
                    x[size_t(at(rng))] = 100.0f;
                }
                if (kind == 5) std::fill(x.begin(), x.end(), -inf);
                if (kind == 0) x[size_t(at(rng))] = 3.0f;  // one clear winner anywhere, the tail included
                int64_t want = 0;
                for (int64_t i = 1; i < n; ++i)
                    if (x[size_t(i)] > x[size_t(want)]) want = i;
                const int64_t got = argmaxRow(x.data(), n);
                if (got != want) qWarning("n %d, case %d: got %lld, want %lld", n, kind, (long long)got, (long long)want);
                QCOMPARE(got, want);
                ++checked;
            }
        }
        QCOMPARE(checked, 15 * 6);
    }

    void rmsNormMatchesReference_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::addColumn<int>("group");
        QTest::newRow("token norm 1x577") << 1 << 577 << 577;
        QTest::newRow("token norm 37x640 (threaded)") << 37 << 640 << 640;
        QTest::newRow("per-head 5x(7*48)") << 5 << 7 * 48 << 48;
        QTest::newRow("per-head 3x(4*13)") << 3 << 4 * 13 << 13;
    }
    void rmsNormMatchesReference() {
        QFETCH(int, rows);
        QFETCH(int, cols);
        QFETCH(int, group);
        std::mt19937 rng(rows * 1000 + cols);
        auto x = randomVec(static_cast<size_t>(rows * cols), rng);
        auto g = randomVec(static_cast<size_t>(group), rng, 0.5f, 1.5f);
        const float eps = 1e-6f;
        std::vector<double> ref(x.size());
        for (int gi = 0; gi < rows * cols / group; ++gi) {
            double ss = 0;
            for (int j = 0; j < group; ++j) ss += double(x[gi * group + j]) * x[gi * group + j];
            const double inv = 1.0 / std::sqrt(ss / group + eps);
            for (int j = 0; j < group; ++j) ref[gi * group + j] = x[gi * group + j] * inv * g[j];
        }
        auto y = poisoned(x.size());
        rmsNorm(x.data(), g.data(), eps, y.data(), rows, cols, group, pool_);
        QVERIFY2(relErr(y, ref) < 1e-5, "rmsNorm error above 1e-5");
        // in place
        rmsNorm(x.data(), g.data(), eps, x.data(), rows, cols, group, pool_);
        QVERIFY2(relErr(x, ref) < 1e-5, "in-place rmsNorm error above 1e-5");
    }

    void ropeMatchesReference_data() {
        QTest::addColumn<bool>("neox");
        QTest::addColumn<int>("headDim");
        QTest::addColumn<int>("dims");
        QTest::newRow("normal 64/64") << false << 64 << 64;
        QTest::newRow("neox 256/256") << true << 256 << 256;
        QTest::newRow("neox partial 80/32") << true << 80 << 32;
        QTest::newRow("normal partial 48/20") << false << 48 << 20;
    }
    void ropeMatchesReference() {
        QFETCH(bool, neox);
        QFETCH(int, headDim);
        QFETCH(int, dims);
        const int heads = 3, rows = 9;
        const int cols = heads * headDim;
        std::mt19937 rng(headDim + dims);
        auto x = randomVec(static_cast<size_t>(rows * cols), rng);
        std::vector<int32_t> pos(rows);
        std::uniform_int_distribution<int> pd(0, 4095);
        for (int& p : pos) p = pd(rng);
        pos[0] = 0;
        RopeConfig cfg;
        cfg.dims = dims;
        cfg.base = 10000.0f;
        cfg.neox = neox;
        std::vector<float> inv(static_cast<size_t>(dims / 2));
        const float ms = ropeFrequencies(cfg, inv.data());
        QCOMPARE(ms, 1.0f);
        std::vector<double> ref(x.begin(), x.end());
        for (int r = 0; r < rows; ++r)
            for (int h = 0; h < heads; ++h)
                for (int i = 0; i < dims / 2; ++i) {
                    const double theta = pos[r] * std::pow(10000.0, -2.0 * i / dims);
                    const int a = r * cols + h * headDim + (neox ? i : 2 * i);
                    const int b = a + (neox ? dims / 2 : 1);
                    ref[a] = x[a] * std::cos(theta) - x[b] * std::sin(theta);
                    ref[b] = x[a] * std::sin(theta) + x[b] * std::cos(theta);
                }
        rope(x.data(), rows, cols, headDim, pos.data(), dims, neox, inv.data(), ms, pool_);
        // float32 angles at positions < 4096 lose ~4096 * 2^-24 rad: bound 5e-4.
        QVERIFY2(relErr(x, ref) < 5e-4, "rope error above 5e-4");
    }

    // The CPU backend keeps RopeAngles across a step's layers: a table must answer only for
    // exactly its positions, frequencies and mscale, and rows rotated in a batch (split over
    // threads past 16 rows) must be those rotated one at a time, bit for bit.
    void ropeAnglesAreKeptPerPositions() {
        const int rows = 40, headDim = 64, dims = 64, cols = 2 * headDim;
        std::mt19937 rng(7);
        std::vector<int32_t> pos(rows);
        std::uniform_int_distribution<int> pd(0, 8191);
        for (int& p : pos) p = pd(rng);
        RopeConfig cfg;
        cfg.dims = dims;
        std::vector<float> inv(dims / 2);
        const float ms = ropeFrequencies(cfg, inv.data());
        RopeAngles angles;
        QVERIFY(!angles.holds(pos.data(), rows, inv.data(), dims / 2, ms));
        angles.fill(pos.data(), rows, inv.data(), dims / 2, ms);
        QVERIFY(angles.holds(pos.data(), rows, inv.data(), dims / 2, ms));
        QVERIFY(!angles.holds(pos.data(), rows - 1, inv.data(), dims / 2, ms));
        QVERIFY(!angles.holds(pos.data(), rows, inv.data(), dims / 2, ms * 2.0f));
        auto moved = pos;
        moved[rows - 1] += 1;
        QVERIFY(!angles.holds(moved.data(), rows, inv.data(), dims / 2, ms));
        auto slower = inv;
        slower[3] *= 0.5f;
        QVERIFY(!angles.holds(pos.data(), rows, slower.data(), dims / 2, ms));

        const auto x = randomVec(static_cast<size_t>(rows * cols), rng);
        auto batch = x;
        rope(batch.data(), rows, cols, headDim, angles, true, pool_);
        auto single = x;
        for (int r = 0; r < rows; ++r)
            rope(single.data() + r * cols, 1, cols, headDim, pos.data() + r, dims, true, inv.data(), ms, pool_);
        QVERIFY(std::memcmp(batch.data(), single.data(), batch.size() * sizeof(float)) == 0);
        QVERIFY(std::memcmp(batch.data(), x.data(), batch.size() * sizeof(float)) != 0);
    }

    void ropeScalingFrequencies() {
        RopeConfig cfg;
        cfg.dims = 64;
        cfg.base = 500000.0f;
        std::vector<float> plain(32), lin(32), ll3(32);
        ropeFrequencies(cfg, plain.data());
        cfg.scaling = RopeScaling::Linear;
        cfg.factor = 4.0f;
        ropeFrequencies(cfg, lin.data());
        for (int i = 0; i < 32; ++i) QVERIFY(std::abs(lin[i] * 4.0f - plain[i]) <= 1e-6f * plain[i]);
        cfg.scaling = RopeScaling::Llama3;
        cfg.factor = 8.0f;
        cfg.lowFreqFactor = 1.0f;
        cfg.highFreqFactor = 4.0f;
        cfg.originalContext = 8192.0f;
        ropeFrequencies(cfg, ll3.data());
        // Fast pairs (wavelength < 2048) unchanged, slow pairs (wavelength > 8192) divided by 8.
        QCOMPARE(ll3[0], plain[0]);
        QVERIFY(std::abs(ll3[31] * 8.0f - plain[31]) <= 1e-6f * plain[31]);
        for (int i = 0; i < 32; ++i) QVERIFY(ll3[i] <= plain[i] && ll3[i] >= plain[i] / 8.0f * 0.999f);
    }

    void gluMatchesReference_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("n");
        QTest::newRow("silu 1537") << 0 << 1537;
        QTest::newRow("gelu 2047") << 1 << 2047;
        QTest::newRow("silu 70001 (threaded)") << 0 << 70001;
        QTest::newRow("gelu 40003 (threaded)") << 1 << 40003;
    }
    void gluMatchesReference() {
        QFETCH(int, kind);
        QFETCH(int, n);
        std::mt19937 rng(n);
        auto g = randomVec(static_cast<size_t>(n), rng, -12.0f, 12.0f);
        auto u = randomVec(static_cast<size_t>(n), rng);
        std::vector<double> ref(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) {
            const double x = g[i];
            const double act = kind == 0 ? x / (1.0 + std::exp(-x))
                                         : 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
            ref[i] = act * u[i];
        }
        auto out = poisoned(static_cast<size_t>(n));
        glu(g.data(), u.data(), out.data(), n, kind == 0 ? GluKind::Silu : GluKind::GeluTanh, pool_);
        QVERIFY2(relErr(out, ref) < 1e-5, "glu error above 1e-5");
    }

    void softmaxAndSoftcap() {
        std::mt19937 rng(7);
        auto x = randomVec(1001, rng, -30.0f, 30.0f);
        std::vector<double> ref(x.size());
        double m = -1e30, s = 0;
        for (float v : x) m = std::max(m, double(v));
        for (size_t i = 0; i < x.size(); ++i) s += (ref[i] = std::exp(x[i] - m));
        for (double& r : ref) r /= s;
        auto y = x;
        softmax(y.data(), static_cast<int64_t>(y.size()));
        QVERIFY2(relErr(y, ref) < 1e-5, "softmax error above 1e-5");
        auto c = x;
        softcap(c.data(), static_cast<int64_t>(c.size()), 5.0f);
        for (size_t i = 0; i < x.size(); ++i) ref[i] = 5.0 * std::tanh(x[i] / 5.0);
        QVERIFY2(relErr(c, ref) < 1e-6, "softcap error above 1e-6");
    }

    void halfConversion() {
        const float values[] = {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 0.333333f, 1e5f};
        const uint16_t bits[] = {0x0000, 0x3c00, 0xc100, 0x7bff, 0x0400, 0x0001, 0x3555, 0x7c00};
        for (size_t i = 0; i < std::size(values); ++i) {
            QCOMPARE(floatToHalf(values[i]), bits[i]);
            if (i < 7) QVERIFY(std::abs(halfToFloat(bits[i]) - values[i]) <= std::abs(values[i]) * 1e-3f);
        }
        // Round-trip of every finite half is exact.
        for (uint32_t h = 0; h < 0x7c00; ++h) QCOMPARE(floatToHalf(halfToFloat(static_cast<uint16_t>(h))), uint16_t(h));
        // The many-value conversion (8 per instruction where the CPU has F16C) equals the
        // scalar one on every value: random ones, halfway cases, subnormals, overflow, NaNs,
        // and lengths that leave a tail.
        std::mt19937 rng(4);
        std::vector<float> many(203);
        for (size_t i = 0; i < many.size(); ++i) {
            const uint32_t bits = static_cast<uint32_t>(rng());
            std::memcpy(&many[i], &bits, 4);
            if (i % 3 == 0) many[i] = std::ldexp(static_cast<float>(static_cast<int>(rng() % 4097) - 2048), static_cast<int>(rng() % 40) - 30);
        }
        many[17] = std::nanf("");
        many[100] = 65520.0f;  // halfway to the next half past the largest: rounds to inf
        std::vector<uint16_t> got(many.size(), 0xabcd);
        floatsToHalves(many.data(), got.data(), static_cast<int64_t>(many.size()));
        for (size_t i = 0; i < many.size(); ++i)
            if (got[i] != floatToHalf(many[i])) QFAIL(qPrintable(QStringLiteral("value %1 converts differently").arg(i)));
    }

    void attentionMatchesReference_data() {
        addAttentionColumns();
        QTest::addColumn<int>("blockTokens");  // 0: one contiguous slab; else shuffled blocks of that size
        const int f32 = int(KvType::F32), f16 = int(KvType::F16), q8 = int(KvType::Q8);
        QTest::newRow("f32 gqa 9/3 d64") << f32 << 9 << 3 << 64 << 0 << 0.0f << 0;
        QTest::newRow("f16 gqa 9/3 d64") << f16 << 9 << 3 << 64 << 0 << 0.0f << 0;
        QTest::newRow("f16 mqa 4/1 d256 window 37") << f16 << 4 << 1 << 256 << 37 << 0.0f << 0;
        QTest::newRow("f32 mha 2/2 d20 softcap") << f32 << 2 << 2 << 20 << 0 << 30.0f << 0;
        QTest::newRow("f32 3/1 d13 window 5") << f32 << 3 << 1 << 13 << 5 << 0.0f << 0;
        QTest::newRow("paged 16 f16 gqa 9/3 d64") << f16 << 9 << 3 << 64 << 0 << 0.0f << 16;
        QTest::newRow("paged 16 f32 3/1 d13 window 5") << f32 << 3 << 1 << 13 << 5 << 0.0f << 16;
        QTest::newRow("paged 16 f16 3/1 d13 window 5") << f16 << 3 << 1 << 13 << 5 << 0.0f << 16;
        QTest::newRow("f16 mha 2/2 d20 softcap") << f16 << 2 << 2 << 20 << 0 << 30.0f << 0;
        // Groups of 2 and 4 heads per kv head with 64-wide heads (AVX-512 runs a group at once).
        QTest::newRow("paged 16 f16 gqa 8/2 d64") << f16 << 8 << 2 << 64 << 0 << 0.0f << 16;
        QTest::newRow("f32 gqa 4/2 d64 window 9 softcap") << f32 << 4 << 2 << 64 << 9 << 20.0f << 0;
        QTest::newRow("paged 7 f16 mqa 4/1 d256 window 37") << f16 << 4 << 1 << 256 << 37 << 0.0f << 7;
        // Groups of 2 and 3 heads per kv head with 256-wide heads (AVX-512 runs a group at once).
        QTest::newRow("paged 16 f32 gqa 6/2 d256") << f32 << 6 << 2 << 256 << 0 << 0.0f << 16;
        QTest::newRow("f16 gqa 4/2 d256 window 9 softcap") << f16 << 4 << 2 << 256 << 9 << 20.0f << 0;
        // 8-bit: the grouped kernels (9/3, 8/2 at d64), the per-head kernel with register
        // accumulators (d64 MHA) and with memory accumulators (d128, d256 with a window and a
        // softcap), contiguous and in shuffled blocks.
        QTest::newRow("q8 gqa 9/3 d64") << q8 << 9 << 3 << 64 << 0 << 0.0f << 0;
        QTest::newRow("paged 16 q8 gqa 9/3 d64") << q8 << 9 << 3 << 64 << 0 << 0.0f << 16;
        QTest::newRow("paged 16 q8 gqa 8/2 d64 window 9") << q8 << 8 << 2 << 64 << 9 << 0.0f << 16;
        QTest::newRow("paged 16 q8 mha 4/4 d64") << q8 << 4 << 4 << 64 << 0 << 0.0f << 16;
        QTest::newRow("paged 16 q8 gqa 8/2 d128") << q8 << 8 << 2 << 128 << 0 << 0.0f << 16;
        QTest::newRow("paged 7 q8 mqa 4/1 d256 window 37 softcap") << q8 << 4 << 1 << 256 << 37 << 30.0f << 7;
    }
    void attentionMatchesReference() {
        QFETCH(int, blockTokens);
        // 150 cached positions (more than two 64-key blocks), then 11 new tokens at 150..160.
        AttentionCase c = fetchAttentionCase(blockTokens, 161, {});
        for (int p = 150; p <= 160; ++p) c.positions.push_back(p);
        const double err = attentionError(c, pool_);
        QVERIFY2(err < 1e-5, qPrintable(QStringLiteral("attention error %1 above 1e-5").arg(err)));
    }

    // Key ranges longer than a work item's 256 keys are split, computed in parallel
    // and merged: contexts of 1, 256, 257 (the first split), 512, 700 keys and a
    // window of 300, for every storage type and each kernel (grouped 64- and 256-wide,
    // register and memory accumulators).
    void attentionSplitsLongRanges_data() {
        addAttentionColumns();
        for (KvType type : {KvType::F32, KvType::F16, KvType::Q8}) {
            const char* name = type == KvType::F32 ? "f32" : type == KvType::F16 ? "f16" : "q8";
            QTest::addRow("%s gqa 9/3 d64", name) << int(type) << 9 << 3 << 64 << 0 << 0.0f;
            QTest::addRow("%s mha 4/4 d64 window 300", name) << int(type) << 4 << 4 << 64 << 300 << 0.0f;
            QTest::addRow("%s gqa 8/2 d128 softcap", name) << int(type) << 8 << 2 << 128 << 0 << 30.0f;
            QTest::addRow("%s mqa 4/1 d256", name) << int(type) << 4 << 1 << 256 << 0 << 0.0f;
            if (type != KvType::Q8) QTest::addRow("%s 3/1 d20 window 300", name) << int(type) << 3 << 1 << 20 << 300 << 0.0f;
        }
    }
    void attentionSplitsLongRanges() {
        const AttentionCase c = fetchAttentionCase(16, 700, {0, 255, 256, 511, 699});
        const double err = attentionError(c, pool_);
        QVERIFY2(err < 1e-5, qPrintable(QStringLiteral("attention error %1 above 1e-5").arg(err)));
    }

    // Prefill-shaped calls: runs of consecutive positions, which AVX-512 computes as blocks of
    // 16 (token, head) queries per kv head (attention_blocked.h). A whole prompt from position 0
    // (the first block sees 1-5 keys, a lane's keys end inside a tile), a chunk in the middle
    // of one, and runs cut by gaps (blocks of 2-3 tokens beside lone tokens); group sizes 1
    // (16 tokens a block), 2, 3 (a lane unused), 4, 8 and 16 (one token a block).
    void attentionQueryBlocks_data() {
        addAttentionColumns();
        QTest::addColumn<int>("blockTokens");
        QTest::addColumn<int>("shape");  // 0: positions 0..199, 1: 100..199, 2: runs cut by gaps
        for (KvType type : {KvType::F32, KvType::F16, KvType::Q8}) {
            const char* name = type == KvType::F32 ? "f32" : type == KvType::F16 ? "f16" : "q8";
            for (int shape : {0, 1, 2}) {
                QTest::addRow("%s gqa 9/3 d64 paged 16, shape %d", name, shape) << int(type) << 9 << 3 << 64 << 0 << 0.0f << 16 << shape;
                QTest::addRow("%s gqa 8/2 d64 window 37 paged 7, shape %d", name, shape) << int(type) << 8 << 2 << 64 << 37 << 0.0f << 7 << shape;
                QTest::addRow("%s mha 3/3 d64, shape %d", name, shape) << int(type) << 3 << 3 << 64 << 0 << 0.0f << 0 << shape;
                QTest::addRow("%s gqa 8/2 d128 paged 16, shape %d", name, shape) << int(type) << 8 << 2 << 128 << 0 << 0.0f << 16 << shape;
                QTest::addRow("%s mqa 4/1 d256 window 37 paged 16, shape %d", name, shape) << int(type) << 4 << 1 << 256 << 37 << 0.0f << 16 << shape;
                QTest::addRow("%s gqa 16/2 d64 paged 16, shape %d", name, shape) << int(type) << 16 << 2 << 64 << 0 << 0.0f << 16 << shape;
                QTest::addRow("%s mqa 16/1 d64, shape %d", name, shape) << int(type) << 16 << 1 << 64 << 0 << 0.0f << 0 << shape;
            }
        }
    }
    void attentionQueryBlocks() {
        QFETCH(int, blockTokens);
        QFETCH(int, shape);
        AttentionCase c = fetchAttentionCase(blockTokens, 200, {});
        if (shape == 2) {
            c.positions = {3, 4, 5, 9, 40, 41, 120, 150, 151, 152, 153, 154, 155, 156, 199};
        } else {
            for (int p = shape == 0 ? 0 : 100; p < 200; ++p) c.positions.push_back(p);
        }
        const double err = attentionError(c, pool_);
        QVERIFY2(err < 1e-5, qPrintable(QStringLiteral("attention error %1 above 1e-5").arg(err)));
    }

    // A prefill token's attention must not depend on what its call holds beside it (the
    // scheduler chunks a prompt differently when other chats share the step, and greedy
    // replies must not change): the same token's output, bit for bit, in a whole prompt,
    // in chunks cut at other places, alone, and after decode tokens of other positions.
    void attentionPrefillTokenIsBatchInvariant_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("headDim");
        QTest::addColumn<int>("window");
        QTest::newRow("f16 9/3 d64") << int(KvType::F16) << 9 << 64 << 0;
        QTest::newRow("f16 9/3 d64 window 45") << int(KvType::F16) << 9 << 64 << 45;
        QTest::newRow("q8 8/2 d128 window 20") << int(KvType::Q8) << 8 << 128 << 20;
        QTest::newRow("f32 4/1 d256 window 37") << int(KvType::F32) << 4 << 256 << 37;
    }
    void attentionPrefillTokenIsBatchInvariant() {
        QFETCH(int, type);
        QFETCH(int, heads);
        QFETCH(int, headDim);
        QFETCH(int, window);
        const int kvHeads = heads == 9 ? 3 : heads == 8 ? 2 : 1, rowW = kvHeads * headDim, total = 150, blockTokens = 16;
        std::mt19937 rng(11);
        const auto k = randomVec(size_t(total * rowW), rng), v = randomVec(size_t(total * rowW), rng);
        const auto q = randomVec(size_t(total * heads * headDim), rng);  // row p: the query at position p
        std::vector<int32_t> table(total / blockTokens + 1), all(total);
        for (size_t i = 0; i < table.size(); ++i) table[i] = int32_t(table.size() - 1 - i);
        for (int p = 0; p < total; ++p) all[size_t(p)] = p;
        const size_t elems = table.size() * blockTokens * size_t(rowW);
        std::vector<uint8_t> kStore(elems * 4), vStore(elems * 4);
        std::vector<float> kScales(elems / kKvQ8Block), vScales(elems / kKvQ8Block);
        KvView view{KvType(type), kStore.data(), vStore.data(), rowW, blockTokens, table.data()};
        view.kScales = kScales.data();
        view.vScales = vScales.data();
        storeKv(k.data(), v.data(), total, all.data(), rowW, view);
        AttentionConfig cfg{heads, kvHeads, headDim, headDim, 1.0f / std::sqrt(float(headDim)), window, 0.0f};
        const size_t width = size_t(heads) * size_t(headDim);
        // Outputs of the tokens at `positions`, the first `decode` of them as decode steps.
        auto run = [&](const std::vector<int32_t>& positions, int64_t decode) {
            std::vector<float> qs, out(positions.size() * width, std::numeric_limits<float>::quiet_NaN());
            for (int32_t p : positions) qs.insert(qs.end(), q.begin() + p * long(width), q.begin() + (p + 1) * long(width));
            attention(qs.data(), int64_t(positions.size()), positions.data(), view, cfg, out.data(), pool_, decode);
            return out;
        };
        const std::vector<float> whole = run(all, 0);
        auto same = [&](const std::vector<int32_t>& positions, int64_t decode, const char* what) {
            const std::vector<float> out = run(positions, decode);
            for (size_t i = size_t(decode); i < positions.size(); ++i)
                QVERIFY2(std::memcmp(&out[i * width], &whole[size_t(positions[i]) * width], width * sizeof(float)) == 0,
                         qPrintable(QStringLiteral("%1: position %2 differs from the whole prompt's").arg(what).arg(positions[i])));
        };
        for (int cut : {1, 3, 7, 64, 101}) {  // a prompt in chunks of `cut` tokens
            for (int from = 0; from < total; from += cut) {
                std::vector<int32_t> chunk;
                for (int p = from; p < std::min(total, from + cut); ++p) chunk.push_back(p);
                same(chunk, 0, "chunked");
            }
        }
        same({149, 60, 61, 62, 63, 64, 65, 66, 67}, 1, "after a decode token");
        same({12, 13, 14, 99, 100, 140}, 0, "runs cut by gaps");
    }

    // storeKv's 8-bit rows: every 32 values of a head's row become codes round(x / d)
    // with d = max |x| / 127 (so the largest is +-127 and each value is within d / 2),
    // stored where the layout says, in shuffled blocks; a block of zeros has d = 0.
    void storeKvQ8RoundsEachBlock() {
        const int kvHeads = 3, headDim = 64, rowW = kvHeads * headDim, blockTokens = 4, total = 10;
        std::mt19937 rng(7);
        auto k = randomVec(size_t(total * rowW), rng, -3.0f, 3.0f);
        auto v = randomVec(size_t(total * rowW), rng, -0.01f, 0.01f);
        std::fill(k.begin() + 5 * rowW + 32, k.begin() + 5 * rowW + 64, 0.0f);  // one all-zero block
        std::vector<int32_t> pos(total), table = {2, 0, 3, 1};
        for (int i = 0; i < total; ++i) pos[size_t(i)] = i;
        const size_t elems = table.size() * blockTokens * rowW;
        std::vector<int8_t> kc(elems, 99), vc(elems, 99);
        std::vector<float> ks(elems / kKvQ8Block, -1.0f), vs(ks.size(), -1.0f);
        KvView view{KvType::Q8, kc.data(), vc.data(), rowW, blockTokens, table.data()};
        view.kScales = ks.data();
        view.vScales = vs.data();
        storeKv(k.data(), v.data(), total, pos.data(), rowW, view);
        for (int p = 0; p < total; ++p)
            for (int b = 0; b < rowW / kKvQ8Block; ++b) {
                const int64_t e0 = KvView::rowOffset(table.data(), blockTokens, rowW, p) + b * kKvQ8Block;
                for (auto [x, codes, scales] : {std::tuple{k.data(), kc.data(), ks.data()},
                                                std::tuple{v.data(), vc.data(), vs.data()}}) {
                    const float* src = x + p * rowW + b * kKvQ8Block;
                    float amax = 0.0f;
                    for (int i = 0; i < kKvQ8Block; ++i) amax = std::max(amax, std::fabs(src[i]));
                    const float d = scales[e0 / kKvQ8Block];
                    QCOMPARE(d, amax / 127.0f);
                    int largest = 0;
                    for (int i = 0; i < kKvQ8Block; ++i) {
                        const int code = codes[e0 + i];
                        largest = std::max(largest, std::abs(code));
                        QVERIFY2(std::fabs(code * d - src[i]) <= 0.5f * d * (1.0f + 1e-5f) + 1e-30f,
                                 qPrintable(QStringLiteral("position %1 value %2: code %3 x %4 for %5")
                                                .arg(p).arg(b * kKvQ8Block + i).arg(code).arg(double(d)).arg(double(src[i]))));
                    }
                    QCOMPARE(largest, amax > 0.0f ? 127 : 0);
                }
            }
    }

    // Grouped 64-wide heads (AVX-512 scores 16 keys at once) with runs of keys
    // that are not multiples of 16: contexts of 1, 15, 16, 17, 33 and 100 keys,
    // in one slab (runs of up to 64) or in blocks of 7, 24 or 40 positions.
    void attentionGroupedTails_data() {
        QTest::addColumn<int>("type");  // KvType
        QTest::addColumn<int>("group");
        QTest::addColumn<float>("softcapValue");
        QTest::addColumn<int>("blockTokens");
        QTest::addColumn<bool>("negative");
        for (KvType type : {KvType::F32, KvType::F16, KvType::Q8})
            for (int group : {2, 3, 4})
                for (float softcapValue : {0.0f, 5.0f})
                    for (int blockTokens : {0, 7, 24, 40})
                        QTest::addRow("%s group %d softcap %g blocks %d",
                                      type == KvType::F32 ? "f32" : type == KvType::F16 ? "f16" : "q8", group,
                                      double(softcapValue), blockTokens)
                            << int(type) << group << softcapValue << blockTokens << false;
        // Scores near -120: a maximum taken over an unused lane holding 0 would underflow every weight.
        QTest::newRow("f32 group 3 negative") << int(KvType::F32) << 3 << 0.0f << 0 << true;
        QTest::newRow("f16 group 4 negative blocks 24") << int(KvType::F16) << 4 << 0.0f << 24 << true;
        QTest::newRow("q8 group 3 negative blocks 7") << int(KvType::Q8) << 3 << 0.0f << 7 << true;
    }
    void attentionGroupedTails() {
        QFETCH(int, type);
        QFETCH(int, group);
        QFETCH(float, softcapValue);
        QFETCH(int, blockTokens);
        QFETCH(bool, negative);
        AttentionCase c{KvType(type), 2 * group, 2, 64, 0, softcapValue, blockTokens, 100, {0, 14, 15, 16, 32, 99}};
        if (negative) {
            c.scale = 1.0f;
            c.negative = true;
        }
        // Scores near -120 carry ~1e-5 of float rounding (up to 9e-6 seen on the scalar path); a
        // wrong maximum there gives an error of 1.
        const double bound = negative ? 1e-4 : 1e-5;
        const double err = attentionError(c, pool_);
        QVERIFY2(err < bound, qPrintable(QStringLiteral("attention error %1 above %2").arg(err).arg(bound)));
    }
};

QTEST_APPLESS_MAIN(TestCpuOps)
#include "tst_cpu_ops.moc"
