// The step trace's arithmetic: a kernel's share of the critical path is the
// gap from its wait's release to the next kernel's, whatever order the stamps
// arrived in; a step with a missing stamp is not counted.
#include "backend/step_timeline.h"

#include <QtTest>

using namespace kestrel::backend;

class TstStepTimeline : public QObject {
    Q_OBJECT

    static const TimelineRow& row(const std::vector<TimelineRow>& rows, const std::string& label) {
        static const TimelineRow none;
        for (const auto& r : rows)
            if (r.label == label) return r;
        return none;
    }

private slots:
    void sharesAreGapsBetweenReleasesInTimeOrder() {
        StepTimeline t;
        // Slots in another order than the launches; the fourth stamp is a kernel
        // launched after the step (it ends the step's last kernel).
        const std::vector<KernelStamp> stamps = {
            {9'000, 10'000},  // gemv: released at 10 us, resident 1 us
            {4'000, 14'000},  // top-k after the step
            {1'000, 2'000},   // norm: released at 2 us
            {9'500, 11'000},  // attention
        };
        QVERIFY(t.addStep({"norm", "gemv", "attention"}, stamps));
        const auto rows = t.rowsByCost();
        QCOMPARE(rows.size(), size_t(3));
        QCOMPARE(rows[0].label, std::string("norm"));  // 2 -> 10 us: the largest share first
        QCOMPARE(row(rows, "norm").criticalUs, 8.0);
        QCOMPARE(row(rows, "gemv").criticalUs, 1.0);
        QCOMPARE(row(rows, "attention").criticalUs, 3.0);
        QCOMPARE(row(rows, "gemv").residentUs, 1.0);
        QCOMPARE(row(rows, "attention").residentUs, 1.5);
        QCOMPARE(t.spanUs(), 9.0);  // first release (2 us) to the last kernel's (11 us)
        QCOMPARE(t.steps(), int64_t(1));
    }

    void repeatedLabelsAddUpOverCallsAndSteps() {
        StepTimeline t;
        for (int step = 0; step < 2; ++step) {
            const uint64_t base = 100'000 * static_cast<uint64_t>(step);
            QVERIFY(t.addStep({"norm", "gemv", "norm", "gemv"}, {{base, base + 1'000},
                                                                  {base, base + 2'000},
                                                                  {base, base + 4'000},
                                                                  {base, base + 5'000},
                                                                  {base, base + 9'000}}));
        }
        const auto rows = t.rowsByCost();
        QCOMPARE(row(rows, "norm").calls, int64_t(4));
        QCOMPARE(row(rows, "norm").criticalUs, 2 * (1.0 + 1.0));
        QCOMPARE(row(rows, "gemv").criticalUs, 2 * (2.0 + 4.0));
        QCOMPARE(t.steps(), int64_t(2));
    }

    void lastKernelWithoutASuccessorGetsNoShare() {
        StepTimeline t;
        QVERIFY(t.addStep({"embed", "logits"}, {{0, 1'000}, {0, 3'000}}));
        const auto rows = t.rowsByCost();
        QCOMPARE(row(rows, "embed").criticalUs, 2.0);
        QCOMPARE(row(rows, "logits").criticalUs, 0.0);
        QCOMPARE(row(rows, "logits").calls, int64_t(1));
    }

    void missingStampsLeaveTheTimelineUntouched() {
        StepTimeline t;
        QVERIFY(!t.addStep({"a", "b", "c"}, {{0, 1'000}, {0, 2'000}}));
        QVERIFY(!t.addStep({}, {{0, 1'000}}));
        QCOMPARE(t.steps(), int64_t(0));
        QVERIFY(t.rowsByCost().empty());
        QCOMPARE(t.spanUs(), 0.0);
    }
};

QTEST_APPLESS_MAIN(TstStepTimeline)
#include "tst_step_timeline.moc"
