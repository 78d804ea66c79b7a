// LookupDrafter: which earlier n-gram a draft follows, how long it is, and how
// its length adapts to the guesses' fate.
#include "lookup_drafter.h"

#include <QtTest>

using namespace kestrel;

class TstLookupDrafter : public QObject {
    Q_OBJECT

    static std::vector<TokenId> draftOf(const std::vector<TokenId>& history, int max, int minN = 2, int maxN = 3) {
        LookupDrafter d(minN, maxN);
        d.reset(history);
        std::vector<TokenId> out;
        d.draft(max, out);
        return out;
    }

private slots:
    void noEarlierOccurrenceNoDraft() {
        QVERIFY(draftOf({}, 4).empty());
        QVERIFY(draftOf({5}, 4).empty());
        QVERIFY(draftOf({1, 2, 3, 4, 5, 6}, 4).empty());
        QVERIFY(draftOf({1, 2, 3, 1, 9}, 4).empty());  // "1 9" never came before; a lone "9" is below minNgram
        QCOMPARE(draftOf({1, 2, 3, 1, 9, 9}, 4, 1, 3), (std::vector<TokenId>{9, 9, 9, 9}));  // minNgram 1: "9" repeats
    }

    void followsTheLatestOccurrence() {
        // "7 8" occurred twice before the end: the later one (followed by 3) wins.
        QCOMPARE(draftOf({7, 8, 1, 2, 7, 8, 3, 4, 5, 7, 8}, 3), (std::vector<TokenId>{3, 4, 5}));
    }

    void longerSuffixWinsOverANearerShortOne() {
        // "6 7 8" matches early (followed by 1 2); "7 8" alone matches later (followed by 5).
        QCOMPARE(draftOf({6, 7, 8, 1, 2, 9, 7, 8, 5, 0, 6, 7, 8}, 2), (std::vector<TokenId>{1, 2}));
    }

    void draftStopsAtMaxAndContinuesARepeatingPattern() {
        QCOMPARE(draftOf({1, 2, 3, 4, 5, 6, 1, 2}, 2), (std::vector<TokenId>{3, 4}));
        // "1 2 1 2": the latest earlier "1 2" ends one period back; its continuation runs
        // into the present and repeats the period.
        QCOMPARE(draftOf({1, 2, 1, 2}, 5), (std::vector<TokenId>{1, 2, 1, 2, 1}));
        QVERIFY(draftOf({1, 2, 3, 1, 2}, 0).empty());
    }

    void pushExtendsTheIndex() {
        LookupDrafter d;
        d.reset(std::vector<TokenId>{4, 5, 6});
        std::vector<TokenId> out;
        d.draft(3, out);
        QVERIFY(out.empty());
        for (TokenId t : {9, 4, 5}) d.push(t);
        d.draft(3, out);
        QCOMPARE(out, (std::vector<TokenId>{6, 9, 4}));
        QCOMPARE(d.history(), (std::vector<TokenId>{4, 5, 6, 9, 4, 5}));
    }

    void lengthAdaptsToTheGuesses() {
        LookupDrafter d;
        d.reset(std::vector<TokenId>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2});
        std::vector<TokenId> out;
        d.draft(6, out);
        QCOMPARE(int(out.size()), 6);  // no history of guesses: the caller's limit
        d.checked(6, 0);               // the first guess missed: half as long
        d.draft(6, out);
        QCOMPARE(int(out.size()), 3);
        d.checked(3, 1);               // partly kept: unchanged
        d.draft(6, out);
        QCOMPARE(int(out.size()), 3);
        d.checked(3, 3);               // all kept: one longer
        d.draft(6, out);
        QCOMPARE(int(out.size()), 4);
        for (int i = 0; i < 3; ++i) d.checked(1, 0);
        d.draft(6, out);
        QCOMPARE(int(out.size()), 1);  // never below one
        d.checked(0, 0);               // no guess: no news
        d.draft(6, out);
        QCOMPARE(int(out.size()), 1);
    }
};

QTEST_APPLESS_MAIN(TstLookupDrafter)
#include "tst_lookup_drafter.moc"
