// Stop strings: held back while they might still complete, never shown.
#include "runtime/stop_matcher.h"

#include <QtTest>

using namespace kestrel;

class TstStopMatcher : public QObject {
    Q_OBJECT

    static std::pair<std::string, bool> feed(StopMatcher& m, const std::vector<std::string>& pieces) {
        std::string shown;
        for (const auto& p : pieces) {
            auto out = m.push(p);
            shown += out.text;
            if (out.stopped) return {shown, true};
        }
        return {shown + m.flush(), false};
    }

private slots:
    void noStopsPassesEverythingThrough() {
        StopMatcher m({});
        QCOMPARE(m.push("hello").text, std::string("hello"));
    }

    void stopSplitAcrossPiecesIsNeverShown() {
        StopMatcher m({"<|im_end|>"});
        auto [shown, stopped] = feed(m, {"Hi", " there<|", "im_", "end|>", "more"});
        QVERIFY(stopped);
        QCOMPARE(shown, std::string("Hi there"));
    }

    void partialMatchThatDivergesIsReleased() {
        StopMatcher m({"User:"});
        auto first = m.push("ok Us");
        QCOMPARE(first.text, std::string("ok "));  // "Us" might begin "User:"
        auto second = m.push("ually");
        QCOMPARE(second.text, std::string("Usually"));
        QVERIFY(!second.stopped);
    }

    void earliestOfSeveralStopsWins() {
        StopMatcher m({"BBB", "A"});
        auto [shown, stopped] = feed(m, {"xxBBB yA"});
        QVERIFY(stopped);
        QCOMPARE(shown, std::string("xx"));
    }

    void heldTextComesOutOnFlush() {
        StopMatcher m({"###"});
        auto [shown, stopped] = feed(m, {"end #", "#"});
        QVERIFY(!stopped);
        QCOMPARE(shown, std::string("end ##"));
    }

    void multibyteTextIsUntouched() {
        StopMatcher m({"停"});
        auto [shown, stopped] = feed(m, {"你好", "世界停下"});
        QVERIFY(stopped);
        QCOMPARE(shown, std::string("你好世界"));
    }
};

QTEST_APPLESS_MAIN(TstStopMatcher)
#include "tst_stop_matcher.moc"
