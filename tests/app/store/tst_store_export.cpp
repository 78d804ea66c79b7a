// Markdown, HTML and plain-text exports: the active branch, notes for other
// versions and unfinished replies, and escaping (no markup from content ever
// reaches the HTML; control characters never reach any text file raw).
// Files are written atomically. JSON round trips live in tst_store_import.
#include "conversation_store.h"
#include "exporter.h"
#include "hostile_text.h"
#include "store_test_util.h"

#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QtTest>

using namespace kestrel::store;
using namespace kestrel::store::test;

class TestStoreExport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void formatNames();
    void markdownShowsActiveBranch();
    void plainTextShowsActiveBranch();
    void htmlIsEscapedAndSelfContained();
    void controlCharactersAreVisible();
    void allConversations();
    void writesFilesAtomically();
    void errorsAreValues();

private:
    QTemporaryDir dir_;
    ConversationStore store_;
    ConversationId conv_ = 0, other_ = 0;
};

void TestStoreExport::initTestCase() {
    STORE_VERIFY_OK(store_.open(dir_.filePath(QStringLiteral("e.sqlite"))));
    conv_ = *store_.createConversation(QStringLiteral("<script>alert('title')</script>"),
                                        QStringLiteral("\"><img src=x onerror=alert(1)>"),
                                        QStringLiteral("You are <b>helpful</b>."));
    NewMessage u;
    u.content = QStringLiteral("old question");
    const MessageId oldQ = *store_.addMessage(conv_, 0, u);
    NewMessage a;
    a.role = MessageRole::Assistant;
    a.content = QStringLiteral("old answer");
    STORE_VERIFY_OK(store_.addMessage(conv_, oldQ, a));
    u.content = hostileText();
    const MessageId q = *store_.addMessage(conv_, 0, u);  // edited: the second root
    a.content = QStringLiteral("Answer with <script>document.cookie</script> in it");
    a.reasoning = QStringLiteral("</details><script>evil()</script>");
    a.model = QStringLiteral("<i>model</i>");
    const MessageId r = *store_.addMessage(conv_, q, a);
    auto failed = store_.beginStreamingReply(conv_, r, QStringLiteral("m"));
    STORE_VERIFY_OK(store_.appendToStreamingReply(*failed, QStringLiteral("half")));
    STORE_VERIFY_OK(store_.failReply(*failed, QStringLiteral("<b>engine</b> failed")));
    other_ = *store_.createConversation(QStringLiteral("Second conversation"));
    u.content = QStringLiteral("hello from the second one");
    STORE_VERIFY_OK(store_.addMessage(other_, 0, u));
}

void TestStoreExport::formatNames() {
    QCOMPARE(exportFileExtension(ExportFormat::Markdown), QStringLiteral("md"));
    QCOMPARE(exportFileExtension(ExportFormat::Json), QStringLiteral("json"));
    QCOMPARE(exportFileExtension(ExportFormat::Html), QStringLiteral("html"));
    QCOMPARE(exportFileExtension(ExportFormat::PlainText), QStringLiteral("txt"));
    QCOMPARE(exportFormatName(ExportFormat::PlainText), QStringLiteral("Plain text"));
}

void TestStoreExport::markdownShowsActiveBranch() {
    auto md = Exporter(store_).exportToBytes({conv_}, ExportFormat::Markdown);
    STORE_VERIFY_OK(md);
    const QString text = QString::fromUtf8(*md);
    QVERIFY(text.startsWith(QStringLiteral("# <script>alert('title')</script>")));
    QVERIFY(text.contains(QStringLiteral("Answer with")));
    QVERIFY(text.contains(QStringLiteral("Version 2 of 2")));
    QVERIFY(!text.contains(QStringLiteral("old answer")));  // another branch
    QVERIFY(text.contains(QStringLiteral("This reply failed: <b>engine</b> failed")));
    QVERIFY(text.contains(QStringLiteral("> You are <b>helpful</b>.")));
    // Reasoning sits in <details>, so its own text is escaped there.
    QVERIFY(text.contains(QStringLiteral("&lt;/details&gt;&lt;script&gt;evil()")));
    QVERIFY(text.contains(QStringLiteral("```\ncode block\n```")));
    QVERIFY(!text.contains(QStringLiteral("Second conversation")));
}

void TestStoreExport::plainTextShowsActiveBranch() {
    auto txt = Exporter(store_).exportToBytes({conv_}, ExportFormat::PlainText);
    STORE_VERIFY_OK(txt);
    const QString text = QString::fromUtf8(*txt);
    QVERIFY(text.contains(QStringLiteral("[User |")));
    QVERIFY(text.contains(QStringLiteral("[Assistant | <i>model</i> |")));
    QVERIFY(text.contains(QStringLiteral("version 2 of 2")));
    QVERIFY(text.contains(QStringLiteral("(This reply failed: <b>engine</b> failed)")));
    QVERIFY(!text.contains(QStringLiteral("old question")));
    QVERIFY(text.contains(QString::fromUtf16(u"👩‍👩‍👧‍👦 🏳️‍🌈 中文测试")));
}

void TestStoreExport::htmlIsEscapedAndSelfContained() {
    auto html = Exporter(store_).exportToBytes({}, ExportFormat::Html);
    STORE_VERIFY_OK(html);
    const QString page = QString::fromUtf8(*html);
    QVERIFY(page.startsWith(QStringLiteral("<!DOCTYPE html>")));
    // Nothing executable and nothing fetched, whatever the content said.
    QVERIFY(!page.contains(QStringLiteral("<script"), Qt::CaseInsensitive));
    QVERIFY(!page.contains(QStringLiteral("<img"), Qt::CaseInsensitive));
    QVERIFY(!page.contains(QStringLiteral("<i>"), Qt::CaseInsensitive));
    QVERIFY(!page.contains(QStringLiteral("<b>"), Qt::CaseInsensitive));
    // Every tag in the page is one the exporter wrote, and none of them
    // loads anything or carries an event handler.
    const QSet<QString> ours{"!doctype", "html", "head", "meta", "title", "style", "body", "article", "h1", "p",
                             "div", "strong", "section", "header", "details", "summary", "footer"};
    static const QRegularExpression tag(QStringLiteral("<\\s*/?\\s*([^\\s>/]+)[^>]*>"));
    for (auto it = tag.globalMatch(page); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        QVERIFY2(ours.contains(m.captured(1).toLower()), qPrintable(m.captured(0)));
        QVERIFY2(!m.captured(0).contains(QRegularExpression(QStringLiteral("\\b(src|href|on\\w+)\\s*="),
                                                            QRegularExpression::CaseInsensitiveOption)),
                 qPrintable(m.captured(0)));
    }
    QVERIFY(page.contains(QStringLiteral("&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt;")));
    QVERIFY(page.contains(QStringLiteral("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;")));
    QVERIFY(page.contains(QStringLiteral("&lt;i&gt;model&lt;/i&gt;")));
    QVERIFY(page.contains(QStringLiteral("&lt;/details&gt;&lt;script&gt;evil()&lt;/script&gt;")));
    QVERIFY(page.contains(QStringLiteral("&lt;b&gt;engine&lt;/b&gt; failed")));
    QVERIFY(page.contains(QStringLiteral("prefers-color-scheme: dark")));
    QVERIFY(page.contains(QStringLiteral("Content-Security-Policy")));
    // Tags are balanced: the content could not close our elements early.
    QCOMPARE(page.count(QStringLiteral("<section")), page.count(QStringLiteral("</section>")));
    QCOMPARE(page.count(QStringLiteral("<details")), page.count(QStringLiteral("</details>")));
    QCOMPARE(page.count(QStringLiteral("<article")), 2);
    QVERIFY(page.contains(QStringLiteral("hello from the second one")));
}

void TestStoreExport::controlCharactersAreVisible() {
    for (ExportFormat f : {ExportFormat::Markdown, ExportFormat::Html, ExportFormat::PlainText}) {
        auto bytes = Exporter(store_).exportToBytes({conv_}, f);
        STORE_VERIFY_OK(bytes);
        for (char c : *bytes) {
            const auto u = static_cast<unsigned char>(c);
            QVERIFY2(u >= 0x20 || u == '\n' || u == '\r' || u == '\t', qPrintable(exportFormatName(f)));
            QVERIFY2(u != 0x7f, qPrintable(exportFormatName(f)));
        }
        QVERIFY(QString::fromUtf8(*bytes).contains(QChar(0x2400)));  // ␀ for U+0000
    }
}

void TestStoreExport::allConversations() {
    auto md = Exporter(store_).exportToBytes({}, ExportFormat::Markdown);
    STORE_VERIFY_OK(md);
    const QString text = QString::fromUtf8(*md);
    // Newest first, as in the sidebar.
    QVERIFY(text.indexOf(QStringLiteral("# Second conversation")) >= 0);
    QVERIFY(text.indexOf(QStringLiteral("# Second conversation")) < text.indexOf(QStringLiteral("# <script>")));
}

void TestStoreExport::writesFilesAtomically() {
    const QString path = dir_.filePath(QStringLiteral("out.html"));
    {
        QFile old(path);
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write(QByteArray(4 << 20, 'z'));  // longer than the export: must not linger
    }
    STORE_VERIFY_OK(Exporter(store_).exportToFile({conv_}, ExportFormat::Html, path));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray written = f.readAll();
    QCOMPARE(written, *Exporter(store_).exportToBytes({conv_}, ExportFormat::Html));
    QVERIFY(QDir(dir_.path()).entryList({QStringLiteral("out.html.*")}, QDir::Files | QDir::Hidden).isEmpty());
}

void TestStoreExport::errorsAreValues() {
    const QString bad = dir_.filePath(QStringLiteral("e.sqlite/inside/out.md"));  // below a file
    const StoreError err = Exporter(store_).exportToFile({conv_}, ExportFormat::Markdown, bad);
    QCOMPARE(err.code(), StoreError::Code::Io);
    QVERIFY2(err.message().contains(bad), qPrintable(err.message()));
    QCOMPARE(Exporter(store_).exportToBytes({987654}, ExportFormat::Json).error().code(), StoreError::Code::NotFound);
}

QTEST_APPLESS_MAIN(TestStoreExport)
#include "tst_store_export.moc"
