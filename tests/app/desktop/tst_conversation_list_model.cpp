// ConversationListModel over a real store in a temporary folder: order,
// refresh after changes, search filtering (FTS) with escaped snippets.
#include "conversation_list_model.h"
#include "conversation_store.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace kestrel;
using namespace kestrel::desktop;

class TestConversationListModel : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    store::ConversationStore store_;

    store::ConversationId add(const QString& title, const QString& text) {
        auto id = store_.createConversation(title);
        if (!id) return 0;
        store::NewMessage m;
        m.content = text;
        auto msg = store_.addMessage(id.value(), 0, m);
        return msg ? id.value() : 0;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const store::StoreError e = store_.open(dir_.filePath("list.sqlite"));
        QVERIFY2(e.isOk(), qPrintable(e.message()));
    }

    void listsNewestFirst() {
        ConversationListModel model(&store_);
        model.refresh();
        QCOMPARE(model.rowCount(), 0);
        const auto a = add("Falcons", "How fast does a peregrine dive?");
        QTest::qWait(5);  // distinct updatedAt
        const auto b = add("Bread", "A recipe for <b>sourdough</b> & rye");
        QVERIFY(a && b);
        QSignalSpy count(&model, &ConversationListModel::countChanged);
        model.refresh();
        QCOMPARE(count.size(), 1);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.idAt(0), b);
        QCOMPARE(model.idAt(1), a);
        QCOMPARE(model.rowOf(a), 1);
        QCOMPARE(model.rowOf(424242), -1);
        QCOMPARE(model.data(model.index(0), ConversationListModel::TitleRole).toString(), QString("Bread"));
        QVERIFY(!model.data(model.index(0), ConversationListModel::UpdatedTextRole).toString().isEmpty());
        const QHash<int, QByteArray> roles = model.roleNames();
        QVERIFY(roles.values().contains("title") && roles.values().contains("updated") &&
                roles.values().contains("conversationId"));
    }

    void searchFilters() {
        ConversationListModel model(&store_);
        model.refresh();
        QSignalSpy query(&model, &ConversationListModel::queryChanged);
        model.setQuery("peregrine");
        QCOMPARE(query.size(), 1);
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.data(model.index(0), ConversationListModel::TitleRole).toString(), QString("Falcons"));
        QVERIFY(model.data(model.index(0), ConversationListModel::SnippetRole).toString().contains("<b>"));
        // User text in a snippet is escaped: only the highlight is markup.
        model.setQuery("sourdough");
        QCOMPARE(model.rowCount(), 1);
        const QString snippet = model.data(model.index(0), ConversationListModel::SnippetRole).toString();
        QVERIFY2(snippet.contains("&lt;b&gt;"), qPrintable(snippet));
        model.setQuery("zebra");
        QCOMPARE(model.rowCount(), 0);
        model.setQuery("\"unbalanced OR NEAR(");  // never a syntax error
        QVERIFY(model.lastError().isEmpty());
        model.setQuery("");
        QCOMPARE(model.rowCount(), 2);
    }

    void deletedAndRenamedShowAfterRefresh() {
        ConversationListModel model(&store_);
        model.refresh();
        const auto id = model.idAt(0);
        QVERIFY(store_.renameConversation(id, "Renamed").isOk());
        model.refresh();
        QCOMPARE(model.data(model.index(model.rowOf(id)), ConversationListModel::TitleRole).toString(),
                 QString("Renamed"));
        QVERIFY(store_.deleteConversation(id).isOk());
        model.refresh();
        QCOMPARE(model.rowOf(id), -1);
        QVERIFY(store_.restoreConversation(id).isOk());
        model.refresh();
        QVERIFY(model.rowOf(id) >= 0);
    }
};

QTEST_GUILESS_MAIN(TestConversationListModel)
#include "tst_conversation_list_model.moc"
