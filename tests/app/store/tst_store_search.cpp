// Full-text search: words, substrings, Chinese, titles, deleted and streaming
// conversations, highlight ranges, and hostile queries that must never be an
// SQL error (FTS5 syntax characters are searched literally).
#include "conversation_store.h"
#include "store_test_util.h"

#include <QtTest>

using namespace kestrel::store;
using namespace kestrel::store::test;

class TestStoreSearch : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanupTestCase();
    void findsWordsAndSubstrings();
    void findsChinese();
    void titleHits();
    void highlightsPointAtTerms();
    void hostileQueries_data();
    void hostileQueries();
    void literalSyntaxIsSearchable();
    void deletedAndStreamingAreHidden();
    void indexStaysConsistent();

private:
    MessageId add(ConversationId c, const QString& text) {
        NewMessage m;
        m.content = text;
        auto id = store_.addMessage(c, 0, m);
        return id ? *id : 0;
    }

    QTemporaryDir dir_;
    ConversationStore store_;
    ConversationId english_ = 0, chinese_ = 0, hostile_ = 0;
    MessageId gradient_ = 0, chineseMsg_ = 0, nearMsg_ = 0;
};

void TestStoreSearch::initTestCase() {
    STORE_VERIFY_OK(store_.open(dir_.filePath(QStringLiteral("s.sqlite"))));
    english_ = *store_.createConversation(QStringLiteral("Optimizers"));
    gradient_ = add(english_, QStringLiteral("Stochastic gradient descent updates the weights.\nAdam adds momentum."));
    add(english_, QStringLiteral("Learning rate schedules: cosine, linear warm-up."));
    chinese_ = *store_.createConversation(QStringLiteral("中文对话"));
    chineseMsg_ = add(chinese_, QStringLiteral("这是一个中文句子，讨论机器学习和神经网络。"));
    hostile_ = *store_.createConversation(QStringLiteral("Syntax"));
    nearMsg_ = add(hostile_, QStringLiteral("Use NEAR(alpha beta) and \"quoted\" text with a * star and -minus; O'Brien"));
}

void TestStoreSearch::cleanupTestCase() { store_.close(); }

void TestStoreSearch::findsWordsAndSubstrings() {
    auto hits = store_.search(QStringLiteral("gradient"));
    STORE_VERIFY_OK(hits);
    QCOMPARE(hits->size(), 1);
    QCOMPARE(hits->first().messageId, gradient_);
    QCOMPARE(hits->first().conversationId, english_);
    QCOMPARE(hits->first().conversationTitle, QStringLiteral("Optimizers"));
    // Case-insensitive, several words ANDed, prefixes (search as you type).
    QCOMPARE(store_.search(QStringLiteral("ADAM Stochastic"))->size(), 1);
    QCOMPARE(store_.search(QStringLiteral("gradi"))->size(), 1);
    QCOMPARE(store_.search(QStringLiteral("adam cosine"))->size(), 0);  // different messages
    QCOMPARE(store_.search(QStringLiteral("zebra"))->size(), 0);
    // Short terms (under three characters) still filter.
    QCOMPARE(store_.search(QStringLiteral("weights up"))->size(), 1);  // "updates"
    QCOMPARE(store_.search(QStringLiteral("   "))->size(), 0);
}

void TestStoreSearch::findsChinese() {
    for (const QString& q : {QStringLiteral("机器学习"), QStringLiteral("中文"), QStringLiteral("神经网络 句子"),
                             QStringLiteral("网")}) {
        auto hits = store_.search(q);
        STORE_VERIFY_OK(hits);
        bool found = false;
        for (const SearchHit& h : *hits) found = found || h.messageId == chineseMsg_;
        QVERIFY2(found, qPrintable(q));
    }
    QCOMPARE(store_.search(QStringLiteral("机器人"))->size(), 0);
}

void TestStoreSearch::titleHits() {
    auto hits = store_.search(QStringLiteral("optimi"));
    STORE_VERIFY_OK(hits);
    QCOMPARE(hits->size(), 1);
    QCOMPARE(hits->first().messageId, 0);  // the title, not a message
    QCOMPARE(hits->first().conversationId, english_);
    QCOMPARE(store_.search(QStringLiteral("对话"))->first().conversationId, chinese_);
}

void TestStoreSearch::highlightsPointAtTerms() {
    auto hits = store_.search(QStringLiteral("momentum weights"));
    STORE_VERIFY_OK(hits);
    QCOMPARE(hits->size(), 1);
    const SearchHit& h = hits->first();
    QVERIFY(!h.snippet.contains(QLatin1Char('\n')));  // one line
    QCOMPARE(h.highlights.size(), 2);
    QStringList marked;
    for (const auto& [start, length] : h.highlights) marked << h.snippet.mid(start, length).toLower();
    QCOMPARE(marked, (QStringList{"weights", "momentum"}));
    QVERIFY(h.highlightedHtml().contains(QLatin1String("<b>weights</b>")));

    // A long message: the snippet is a window around the match, cut with "…".
    const QString longText = QString(500, QLatin1Char('a')) + QStringLiteral(" needle <script>x</script> ") + QString(500, QLatin1Char('b'));
    add(english_, longText);
    auto far = store_.search(QStringLiteral("needle"));
    QCOMPARE(far->size(), 1);
    QVERIFY(far->first().snippet.startsWith(QStringLiteral("…")));
    QVERIFY(far->first().snippet.endsWith(QStringLiteral("…")));
    QVERIFY(far->first().snippet.size() < 200);
    const auto [start, length] = far->first().highlights.first();
    QCOMPARE(far->first().snippet.mid(start, length), QStringLiteral("needle"));
    const QString html = far->first().highlightedHtml();
    QVERIFY(!html.contains(QLatin1String("<script>")));
    QVERIFY(html.contains(QLatin1String("&lt;script&gt;")));
}

void TestStoreSearch::hostileQueries_data() {
    QTest::addColumn<QString>("query");
    QTest::newRow("lone quote") << QStringLiteral("\"");
    QTest::newRow("unbalanced quote") << QStringLiteral("\"gradient");
    QTest::newRow("quotes inside") << QStringLiteral("gra\"di\"ent");
    QTest::newRow("star") << QStringLiteral("*");
    QTest::newRow("prefix star") << QStringLiteral("grad*");
    QTest::newRow("NEAR(") << QStringLiteral("NEAR(");
    QTest::newRow("NEAR full") << QStringLiteral("NEAR(gradient descent, 3)");
    QTest::newRow("minus") << QStringLiteral("-");
    QTest::newRow("not") << QStringLiteral("gradient -adam NOT momentum");
    QTest::newRow("or/and") << QStringLiteral("OR AND NOT");
    QTest::newRow("column filter") << QStringLiteral("content:gradient");
    QTest::newRow("caret/braces") << QStringLiteral("^{content}: (a OR b)");
    QTest::newRow("sql injection") << QStringLiteral("'; DROP TABLE messages; --");
    QTest::newRow("parens") << QStringLiteral(")))(((");
    QTest::newRow("backslash") << QStringLiteral("\\\\ \\\" \\");
    QTest::newRow("percent/underscore") << QStringLiteral("% _ %%");
    QTest::newRow("control chars") << QString::fromUtf16(u"a\u0000b\u0001\u001f\u007f");
    QTest::newRow("rtl marks") << QString::fromUtf16(u"\u202Egradient\u202C \u200F\u200E");
    QTest::newRow("emoji") << QString::fromUtf16(u"🙂👩‍👩‍👧 😀😀😀");
    QTest::newRow("lone surrogate") << QString(QChar(0xD800)) + QStringLiteral("abc");
    QTest::newRow("very long") << QString(5000, QLatin1Char('z'));
    QTest::newRow("chinese punctuation") << QStringLiteral("“中文”（测试）");
}

void TestStoreSearch::hostileQueries() {
    QFETCH(QString, query);
    auto hits = store_.search(query);
    QVERIFY2(hits.isOk(), qPrintable(hits.error().message()));
    for (const SearchHit& h : *hits)
        for (const auto& [start, length] : h.highlights) QVERIFY(start >= 0 && start + length <= h.snippet.size());
    // The database is unharmed.
    QCOMPARE(store_.search(QStringLiteral("gradient"))->size(), 1);
}

void TestStoreSearch::literalSyntaxIsSearchable() {
    for (const QString& q : {QStringLiteral("NEAR(alpha"), QStringLiteral("\"quoted\""), QStringLiteral("* star"),
                             QStringLiteral("-minus"), QStringLiteral("O'Brien")}) {
        auto hits = store_.search(q);
        STORE_VERIFY_OK(hits);
        QVERIFY2(hits->size() == 1 && hits->first().messageId == nearMsg_, qPrintable(q));
    }
}

void TestStoreSearch::deletedAndStreamingAreHidden() {
    STORE_VERIFY_OK(store_.deleteConversation(english_));
    QCOMPARE(store_.search(QStringLiteral("gradient"))->size(), 0);
    QCOMPARE(store_.search(QStringLiteral("Optimizers"))->size(), 0);
    STORE_VERIFY_OK(store_.restoreConversation(english_));
    QCOMPARE(store_.search(QStringLiteral("gradient"))->size(), 1);

    // A reply becomes searchable when it stops streaming.
    auto r = store_.beginStreamingReply(english_, gradient_, QStringLiteral("m"));
    STORE_VERIFY_OK(store_.appendToStreamingReply(*r, QStringLiteral("xylophone")));
    STORE_VERIFY_OK(store_.flushStreaming());
    QCOMPARE(store_.search(QStringLiteral("xylophone"))->size(), 0);
    STORE_VERIFY_OK(store_.finishReply(*r, {}));
    QCOMPARE(store_.search(QStringLiteral("xylophone"))->size(), 1);
    // Renames re-index titles.
    STORE_VERIFY_OK(store_.renameConversation(english_, QStringLiteral("Training tricks")));
    QCOMPARE(store_.search(QStringLiteral("Optimizers"))->size(), 0);
    QCOMPARE(store_.search(QStringLiteral("tricks"))->first().messageId, 0);
}

void TestStoreSearch::indexStaysConsistent() {
    // FTS5's own check compares the index with the content tables.
    QCOMPARE(queryColumn(store_, QStringLiteral("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')")), QStringList());
    QCOMPARE(queryColumn(store_, QStringLiteral("INSERT INTO conversations_fts(conversations_fts) VALUES('integrity-check')")), QStringList());
    STORE_VERIFY_OK(store_.deleteConversation(hostile_));
    QCOMPARE(*store_.purgeDeleted(), 1);
    QCOMPARE(queryColumn(store_, QStringLiteral("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')")), QStringList());
    QString why;
    QVERIFY2(databaseConsistent(store_, &why), qPrintable(why));
}

QTEST_APPLESS_MAIN(TestStoreSearch)
#include "tst_store_search.moc"
