// <think> segments come out as reasoning, whatever the token boundaries.
#include "runtime/reasoning_splitter.h"

#include <QtTest>

using namespace kestrel;

class TstReasoningSplitter : public QObject {
    Q_OBJECT

    static std::pair<std::string, std::string> feed(ReasoningSplitter& s, const std::vector<std::string>& pieces) {
        std::string answer, reasoning;
        auto take = [&](const std::vector<TextSegment>& segs) {
            for (const auto& seg : segs) (seg.kind == TextKind::Reasoning ? reasoning : answer) += seg.text;
        };
        for (const auto& p : pieces) take(s.push(p));
        take(s.flush());
        return {answer, reasoning};
    }

private slots:
    void plainTextIsAnswer() {
        ReasoningSplitter s;
        QCOMPARE(feed(s, {"Hello", " world"}), std::make_pair(std::string("Hello world"), std::string()));
    }

    void tagsSplitAcrossPieces() {
        ReasoningSplitter s;
        auto [answer, reasoning] = feed(s, {"<thi", "nk>let me ", "think</th", "ink>The answer is 4."});
        QCOMPARE(reasoning, std::string("let me think"));
        QCOMPARE(answer, std::string("The answer is 4."));
    }

    void replyThatStartsInsideReasoning() {
        ReasoningSplitter s(true);  // DeepSeek-R1: the prompt ended with <think>\n
        auto [answer, reasoning] = feed(s, {"\nhmm", "</think>\n\nDone"});
        QCOMPARE(reasoning, std::string("\nhmm"));
        QCOMPARE(answer, std::string("\n\nDone"));
    }

    void almostATagIsReleased() {
        ReasoningSplitter s;
        auto first = s.push("a <thin");
        QCOMPARE(first.size(), size_t(1));
        QCOMPARE(first[0].text, std::string("a "));
        auto second = s.push("g> b");
        QCOMPARE(second.size(), size_t(1));
        QCOMPARE(second[0].text, std::string("<thing> b"));
    }

    void unfinishedReasoningIsFlushedAsReasoning() {
        ReasoningSplitter s;
        auto [answer, reasoning] = feed(s, {"<think>still thinking <"});
        QCOMPARE(reasoning, std::string("still thinking <"));
        QVERIFY(answer.empty());
    }
};

QTEST_APPLESS_MAIN(TstReasoningSplitter)
#include "tst_reasoning_splitter.moc"
