// MessageModel rows and roles, the streaming append path, the Markdown
// code-block split and the <think> splitter, on text fed one character at a time.
#include "message_model.h"
#include "text_segments.h"

#include <QSignalSpy>
#include <QtTest>

using namespace kestrel::desktop;

class TestMessageModel : public QObject {
    Q_OBJECT
private slots:
    void rolesAndRows() {
        MessageModel model;
        QSignalSpy count(&model, &MessageModel::countChanged);
        MessageItem user{1, 0, "user", "hi", {}, "complete", {}, 0, 0, 1};
        MessageItem reply{2, 1, "assistant", "Hello **there**", "", "streaming", {}, 0, 1, 3};
        model.setMessages({user, reply});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(count.size(), 1);
        const QHash<int, QByteArray> names = model.roleNames();
        for (const char* role : {"role", "content", "reasoning", "state", "tokensPerSecond", "siblingIndex",
                                 "siblingCount", "messageId", "segments"})
            QVERIFY2(names.values().contains(role), role);
        const QVariantMap row = model.get(1);
        QCOMPARE(row.value("role").toString(), QString("assistant"));
        QCOMPARE(row.value("siblingIndex").toInt(), 1);
        QCOMPARE(row.value("siblingCount").toInt(), 3);
        QCOMPARE(row.value("messageId").toLongLong(), 2);
        QVERIFY(model.get(5).isEmpty());
        QVERIFY(!model.data(model.index(7), MessageModel::ContentRole).isValid());
    }

    void streamingAppendSignalsOnlyThatRow() {
        MessageModel model;
        model.setMessages({{1, 0, "user", "q", {}, "complete", {}, 0, 0, 1}, {2, 1, "assistant", "", {}, "streaming", {}, 0, 0, 1}});
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.appendText(2, "Hel", {});
        model.appendText(2, "lo", "why");
        model.appendText(99, "nobody", {});  // unknown id: ignored
        model.appendText(2, {}, {});         // nothing: no signal
        QCOMPARE(changed.size(), 2);
        QCOMPARE(changed.at(0).at(0).value<QModelIndex>().row(), 1);
        QCOMPARE(model.items()[1].content, QString("Hello"));
        QCOMPARE(model.items()[1].reasoning, QString("why"));
        model.setState(2, "interrupted");
        model.setTokensPerSecond(2, 42.5);
        QCOMPARE(model.data(model.index(1), MessageModel::StateRole).toString(), QString("interrupted"));
        QCOMPARE(model.data(model.index(1), MessageModel::TokensPerSecondRole).toDouble(), 42.5);
    }

    void segmentsSplitFencedCode() {
        const QVariantList s = splitMarkdownSegments("Intro *text*\n\n```cpp\nint a = 1;\n\nint b;\n```\nAfter.\n~~~\nraw\n~~~");
        QCOMPARE(s.size(), 4);
        QCOMPARE(s[0].toMap().value("kind").toString(), QString("markdown"));
        QCOMPARE(s[1].toMap().value("kind").toString(), QString("code"));
        QCOMPARE(s[1].toMap().value("language").toString(), QString("cpp"));
        QCOMPARE(s[1].toMap().value("text").toString(), QString("int a = 1;\n\nint b;"));
        QCOMPARE(s[2].toMap().value("text").toString(), QString("After."));
        QCOMPARE(s[3].toMap().value("text").toString(), QString("raw"));
    }

    void unterminatedFenceIsCodeSoFar() {
        const QVariantList s = splitMarkdownSegments("Here:\n```python\nprint(1)");
        QCOMPARE(s.size(), 2);
        QCOMPARE(s[1].toMap().value("kind").toString(), QString("code"));
        QCOMPARE(s[1].toMap().value("text").toString(), QString("print(1)"));
        // A fence of four backticks is not closed by three.
        const QVariantList t = splitMarkdownSegments("````\n```\ninner\n```\n````");
        QCOMPARE(t.size(), 1);
        QCOMPARE(t[0].toMap().value("text").toString(), QString("```\ninner\n```"));
    }

    void thinkSplitterStreamsPerCharacter() {
        const QString raw = "  <think>Let me see.\nOK</think>\n\nThe answer is 4.";
        ThinkSplitter splitter;
        QString content, reasoning;
        for (QChar c : raw) {
            const auto d = splitter.push(QString(c));
            content += d.content;
            reasoning += d.reasoning;
            QVERIFY2(!content.contains('<'), qPrintable(content));  // no partial tag ever shown
        }
        const auto tail = splitter.flush();
        content += tail.content;
        reasoning += tail.reasoning;
        QCOMPARE(reasoning, QString("Let me see.\nOK"));
        QCOMPARE(content, QString("The answer is 4."));
    }

    void thinkSplitterLeavesOrdinaryText() {
        ThinkSplitter splitter;
        QString content;
        for (const QString& piece : {QString("<b"), QString(">bold</b> and <think> later")}) content += splitter.push(piece).content;
        content += splitter.flush().content;
        QCOMPARE(content, QString("<b>bold</b> and <think> later"));
        ThinkSplitter unfinished;
        QCOMPARE(unfinished.push("<think>still thinking").reasoning, QString("still thinking"));
        QCOMPARE(unfinished.push("</thi").reasoning, QString());
        QCOMPARE(unfinished.flush().reasoning, QString("</thi"));
    }
};

QTEST_APPLESS_MAIN(TestMessageModel)
#include "tst_message_model.moc"
