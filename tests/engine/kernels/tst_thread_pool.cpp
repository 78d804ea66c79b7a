// ThreadPool: every index of [0, n) is visited exactly once, by a valid thread
// index, whatever n, grain and pool size; also after the workers fell asleep.
#include "thread_pool.h"

#include <QtTest>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

using kestrel::kernels::ThreadPool;

class TestThreadPool : public QObject {
    Q_OBJECT

    static bool coversOnce(ThreadPool& pool, int64_t n, int64_t grain, QString& why) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(std::max<int64_t>(n, 1)));
        std::atomic<int> badThread{0}, badRange{0};
        pool.parallelFor(
            n,
            [&](int64_t b, int64_t e, int t) {
                if (t < 0 || t >= pool.size()) badThread.fetch_add(1);
                if (b < 0 || e > n || b >= e) badRange.fetch_add(1);
                for (int64_t i = b; i < e && i < n; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
            },
            grain);
        if (badThread || badRange) {
            why = QStringLiteral("n=%1 grain=%2: bad thread index or empty/out-of-range chunk").arg(n).arg(grain);
            return false;
        }
        for (int64_t i = 0; i < n; ++i)
            if (hits[static_cast<size_t>(i)].load() != 1) {
                why = QStringLiteral("n=%1 grain=%2: index %3 visited %4 times")
                          .arg(n).arg(grain).arg(i).arg(hits[static_cast<size_t>(i)].load());
                return false;
            }
        return true;
    }

private slots:
    void randomSizes_data() {
        QTest::addColumn<int>("threads");
        for (int t : {1, 2, 3, 5}) QTest::newRow(qPrintable(QStringLiteral("threads=%1").arg(t))) << t;
    }

    void randomSizes() {
        QFETCH(int, threads);
        ThreadPool pool(threads);
        QCOMPARE(pool.size(), threads);
        std::mt19937 rng(42 + threads);
        for (int iter = 0; iter < 3000; ++iter) {
            const int64_t n = std::uniform_int_distribution<int64_t>(0, iter % 10 == 0 ? 100000 : 300)(rng);
            const int64_t grain = std::uniform_int_distribution<int64_t>(0, 64)(rng);
            QString why;
            QVERIFY2(coversOnce(pool, n, grain, why), qPrintable(why));
        }
    }

    void wakesAfterSleeping() {
        ThreadPool pool(2);
        for (int iter = 0; iter < 5; ++iter) {
            // Longer than the workers' spin window, so they are asleep on the condition variable.
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            QString why;
            QVERIFY2(coversOnce(pool, 1000, 1, why), qPrintable(why));
        }
    }

    void defaultSizeIsPositive() {
        ThreadPool pool(0);
        QVERIFY(pool.size() >= 1);
    }
};

QTEST_APPLESS_MAIN(TestThreadPool)
#include "tst_thread_pool.moc"
