// The sampler chain: each filter keeps exactly the tokens it should, seeds
// reproduce, penalties move the right logits.
#include "runtime/sampler.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <map>
#include <set>

using namespace kestrel;

class TstSampler : public QObject {
    Q_OBJECT

    // Draws `n` tokens from fresh copies of `logits` and returns the set seen.
    static std::set<TokenId> drawMany(const SamplingParams& p, const std::vector<float>& logits, int n) {
        Sampler sampler(p);
        std::set<TokenId> seen;
        for (int i = 0; i < n; ++i) {
            auto copy = logits;
            seen.insert(sampler.sample(copy, {}));
        }
        return seen;
    }

private slots:
    void greedyPicksArgmaxLowestIdOnTies() {
        SamplingParams p;
        p.temperature = 0;
        Sampler s(p);
        std::vector<float> logits = {0.1f, 3.0f, -2.0f, 3.0f};
        QCOMPARE(s.sample(logits, {}), 1);
        QCOMPARE(argmax(logits), 1);
    }

    void topKKeepsOnlyTheKBest() {
        SamplingParams p;
        p.temperature = 1.0f;
        p.topK = 3;
        p.topP = 1.0f;
        p.minP = 0.0f;
        p.seed = 7;
        std::vector<float> logits = {1.0f, 1.1f, 0.9f, 5.0f, 0.2f, 1.05f};  // best three: 3, 1, 5
        const auto seen = drawMany(p, logits, 2000);
        QCOMPARE(seen, (std::set<TokenId>{1, 3, 5}));
    }

    void topPKeepsTheSmallestNucleus() {
        SamplingParams p;
        p.temperature = 1.0f;
        p.topK = 0;
        p.topP = 0.7f;
        p.minP = 0.0f;
        p.seed = 11;
        // probabilities 0.5, 0.3, 0.15, 0.05: the nucleus for 0.7 is {0, 1}
        std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
        QCOMPARE(drawMany(p, logits, 2000), (std::set<TokenId>{0, 1}));
    }

    void minPDropsTokensBelowTheFractionOfTheBest() {
        SamplingParams p;
        p.temperature = 1.0f;
        p.topK = 0;
        p.topP = 1.0f;
        p.minP = 0.25f;
        p.seed = 3;
        // p_max 0.4; threshold 0.1: keeps 0.4, 0.3, 0.2; drops 0.06, 0.04
        std::vector<float> logits = {std::log(0.4f), std::log(0.3f), std::log(0.2f), std::log(0.06f), std::log(0.04f)};
        QCOMPARE(drawMany(p, logits, 3000), (std::set<TokenId>{0, 1, 2}));
    }

    void frequenciesFollowTheTemperature() {
        // With temperature 2, two tokens with logits 0 and ln(4) have p = 1/3, 2/3.
        SamplingParams p;
        p.temperature = 2.0f;
        p.topK = 0;
        p.topP = 1.0f;
        p.minP = 0.0f;
        p.seed = 99;
        Sampler s(p);
        int ones = 0;
        const int n = 20000;
        for (int i = 0; i < n; ++i) {
            std::vector<float> logits = {0.0f, std::log(4.0f)};
            ones += s.sample(logits, {}) == 1;
        }
        const double share = double(ones) / n;
        QVERIFY2(std::abs(share - 2.0 / 3.0) < 0.015, qPrintable(QString::number(share)));
    }

    void sameSeedSameSequenceOtherSeedOther() {
        SamplingParams p;
        p.temperature = 1.0f;
        p.topK = 0;
        p.topP = 1.0f;
        p.minP = 0.0f;
        std::vector<float> base(64);
        for (size_t i = 0; i < base.size(); ++i) base[i] = float(std::sin(double(i)));
        auto run = [&](uint64_t seed) {
            p.seed = seed;
            Sampler s(p);
            std::vector<TokenId> out;
            for (int i = 0; i < 50; ++i) {
                auto l = base;
                out.push_back(s.sample(l, {}));
            }
            return out;
        };
        QCOMPARE(run(42), run(42));
        QVERIFY(run(42) != run(43));
    }

    void repetitionPenaltyDividesPositiveAndMultipliesNegative() {
        SamplingParams p;
        p.temperature = 0;
        p.repeatPenalty = 2.0f;
        p.repeatLastN = 2;
        Sampler s(p);
        std::vector<float> logits = {4.0f, -1.0f, 3.0f, 3.5f};
        const std::vector<TokenId> history = {3, 0, 1};  // window of 2: tokens 0 and 1
        QCOMPARE(s.sample(logits, history), 3);  // 0 drops to 2.0, 3 is outside the window
        QCOMPARE(logits[0], 2.0f);
        QCOMPARE(logits[1], -2.0f);
        QCOMPARE(logits[3], 3.5f);
    }

    void frequencyAndPresencePenaltiesCountOccurrences() {
        SamplingParams p;
        p.temperature = 0;
        p.frequencyPenalty = 0.5f;
        p.presencePenalty = 0.25f;
        p.repeatLastN = -1;
        Sampler s(p);
        std::vector<float> logits = {1.0f, 1.0f, 1.0f};
        const std::vector<TokenId> history = {0, 0, 0, 2};
        s.sample(logits, history);
        QCOMPARE(logits[0], 1.0f - 3 * 0.5f - 0.25f);
        QCOMPARE(logits[1], 1.0f);
        QCOMPARE(logits[2], 1.0f - 0.5f - 0.25f);
    }

    void outOfRangeHistoryIsIgnored() {
        SamplingParams p;
        p.temperature = 0;
        p.repeatPenalty = 1.5f;
        Sampler s(p);
        std::vector<float> logits = {1.0f, 2.0f};
        const std::vector<TokenId> history = {-5, 1000000, 1};
        QCOMPARE(s.sample(logits, history), 1);
    }

    // A backend may return only a row's best logits (the GPU's top selection):
    // sampleTop on topNeeded of them draws exactly what sample() draws on the row.
    void sampleTopOnTheBestLogitsEqualsSampleOnTheRow() {
        std::mt19937 rng(7);
        int checked = 0;
        for (float temperature : {0.0f, 0.7f, 1.5f})
            for (int32_t topK : {1, 5, 40})
                for (float topP : {0.9f, 1.0f})
                    for (float minP : {0.0f, 0.05f})
                        for (float repeat : {1.0f, 1.3f})
                            for (float frequency : {0.0f, 0.5f})
                                for (int32_t lastN : {8, -1}) {
                                    SamplingParams p;
                                    p.temperature = temperature;
                                    p.topK = topK;
                                    p.topP = topP;
                                    p.minP = minP;
                                    p.repeatPenalty = repeat;
                                    p.frequencyPenalty = frequency;
                                    p.presencePenalty = frequency / 2;
                                    p.repeatLastN = lastN;
                                    p.seed = 99;
                                    Sampler full(p), top(p);
                                    std::vector<TokenId> history = {3, 3, 17, 250};
                                    for (int step = 0; step < 12; ++step) {
                                        // Values on a coarse grid: ties among the best are common.
                                        std::vector<float> logits(300);
                                        for (float& v : logits) v = float(int(rng() % 41) - 20) * 0.25f;
                                        const int32_t n = top.topNeeded(history);
                                        QVERIFY(n > 0);
                                        std::vector<TopLogit> best(size_t(n), TopLogit{0, -1});
                                        selectTop(logits, n, best);
                                        std::shuffle(best.begin(), best.end(), rng);
                                        const TokenId a = full.sample(logits, history);
                                        const TokenId b = top.sampleTop(best, history);
                                        QCOMPARE(b, a);
                                        history.push_back(a);
                                        ++checked;
                                    }
                                }
        QVERIFY(checked > 1000);
    }

    void topNeededAsksForTheWholeRowWhenTheBestAreNotEnough() {
        SamplingParams p;
        p.temperature = 0.8f;
        p.topK = 0;  // top-p over the whole vocabulary
        QCOMPARE(Sampler(p).topNeeded({}), 0);
        p.topK = 20;
        QCOMPARE(Sampler(p).topNeeded({}), 20);
        p.repeatPenalty = 0.9f;  // raises repeated tokens: any token could become the best
        const std::vector<TokenId> history = {1, 2};
        QCOMPARE(Sampler(p).topNeeded(history), 0);
        p.repeatPenalty = 1.2f;
        QCOMPARE(Sampler(p).topNeeded(history), 22);
        p.temperature = 0.0f;
        QCOMPARE(Sampler(p).topNeeded(history), 3);
    }
};

QTEST_APPLESS_MAIN(TstSampler)
#include "tst_sampler.moc"
