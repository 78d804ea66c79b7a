// Conversations and the message tree: edit makes a sibling, regenerate makes
// a sibling reply, the active path follows the chosen branch, siblings are
// counted; rename, soft delete with undo, purge; errors for bad ids and a
// full disk.
#include "conversation_store.h"
#include "store_test_util.h"

#include <QtTest>

using namespace kestrel::store;
using namespace kestrel::store::test;

namespace {

NewMessage msg(MessageRole role, const QString& text) {
    NewMessage m;
    m.role = role;
    m.content = text;
    return m;
}

QStringList contents(const QList<Message>& messages) {
    QStringList out;
    for (const Message& m : messages) out << m.content;
    return out;
}

}  // namespace

class TestStoreBranches : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void linearConversation();
    void editCreatesSibling();
    void regenerateCreatesSiblingReply();
    void selectBranchFollowsNewestChild();
    void badParentsAreErrors();
    void renameAndList();
    void deleteUndoAndPurge();
    void fullDiskIsAnError();
    void readOnlyIsAnError();

private:
    QTemporaryDir* dir_ = nullptr;
    ConversationStore* store_ = nullptr;
};

void TestStoreBranches::init() {
    dir_ = new QTemporaryDir;
    store_ = new ConversationStore;
    STORE_VERIFY_OK(store_->open(dir_->filePath(QStringLiteral("k.sqlite"))));
}

void TestStoreBranches::cleanup() {
    QString why;
    if (store_->isOpen()) QVERIFY2(databaseConsistent(*store_, &why), qPrintable(why));
    delete store_;
    delete dir_;
}

void TestStoreBranches::linearConversation() {
    auto c = store_->createConversation(QStringLiteral("  Linear \n chat "), QStringLiteral("SmolLM2"), QStringLiteral("Be brief."));
    STORE_VERIFY_OK(c);
    auto conv = store_->conversation(*c);
    STORE_VERIFY_OK(conv);
    QCOMPARE(conv->title, QStringLiteral("Linear chat"));  // one line in the sidebar
    QCOMPARE(conv->model, QStringLiteral("SmolLM2"));
    QCOMPARE(conv->systemPrompt, QStringLiteral("Be brief."));
    QCOMPARE(conv->activeLeafId, 0);
    QVERIFY(store_->activeBranch(*c)->isEmpty());

    auto u1 = store_->addMessage(*c, 0, msg(MessageRole::User, QStringLiteral("hi")));
    NewMessage reply = msg(MessageRole::Assistant, QStringLiteral("hello"));
    reply.reasoning = QStringLiteral("the user greets me");
    reply.promptTokens = 12;
    reply.completionTokens = 3;
    reply.tokensPerSecond = 41.5;
    reply.model = QStringLiteral("SmolLM2");
    reply.settings = QJsonObject{{"temperature", 0.7}, {"seed", 42}};
    auto a1 = store_->addMessage(*c, *u1, reply);
    STORE_VERIFY_OK(a1);
    QCOMPARE(store_->conversation(*c)->activeLeafId, *a1);
    auto branch = store_->activeBranch(*c);
    STORE_VERIFY_OK(branch);
    QCOMPARE(contents(*branch), (QStringList{"hi", "hello"}));
    const Message& m = branch->at(1);
    QCOMPARE(m.parentId, *u1);
    QCOMPARE(m.role, MessageRole::Assistant);
    QCOMPARE(m.reasoning, QStringLiteral("the user greets me"));
    QCOMPARE(m.promptTokens, 12);
    QCOMPARE(m.completionTokens, 3);
    QCOMPARE(m.tokensPerSecond, 41.5);
    QCOMPARE(m.settings.value("seed").toInt(), 42);
    QCOMPARE(m.state, MessageState::Complete);
    QVERIFY(m.createdAt.isValid());
    QCOMPARE(branch->at(0).promptTokens, -1);  // unknown stays unknown
    auto sib = store_->siblings(*a1);
    STORE_VERIFY_OK(sib);
    QCOMPARE(sib->count, 1);
    QCOMPARE(sib->index, 0);
}

void TestStoreBranches::editCreatesSibling() {
    auto c = store_->createConversation(QStringLiteral("edit"));
    auto u1 = store_->addMessage(*c, 0, msg(MessageRole::User, "q1"));
    auto a1 = store_->addMessage(*c, *u1, msg(MessageRole::Assistant, "a1"));
    auto u2 = store_->addMessage(*c, *a1, msg(MessageRole::User, "q2"));
    auto a2 = store_->addMessage(*c, *u2, msg(MessageRole::Assistant, "a2"));
    STORE_VERIFY_OK(a2);
    // Edit q2: a new user message with q2's parent.
    auto u2b = store_->addMessage(*c, store_->message(*u2)->parentId, msg(MessageRole::User, "q2 edited"));
    STORE_VERIFY_OK(u2b);
    QCOMPARE(contents(*store_->activeBranch(*c)), (QStringList{"q1", "a1", "q2 edited"}));
    auto sib = store_->siblings(*u2b);
    QCOMPARE(sib->count, 2);
    QCOMPARE(sib->index, 1);
    QCOMPARE(sib->ids, (QList<MessageId>{*u2, *u2b}));
    QCOMPARE(store_->siblings(*u2)->index, 0);
    // The old branch is still all there.
    QCOMPARE(store_->allMessages(*c)->size(), 5);
    QCOMPARE(store_->children(*c, *a1)->size(), 2);
    QCOMPARE(store_->children(*c, 0)->size(), 1);
    // Switch back to the first branch explicitly.
    STORE_VERIFY_OK(store_->setActiveLeaf(*c, *a2));
    QCOMPARE(contents(*store_->activeBranch(*c)), (QStringList{"q1", "a1", "q2", "a2"}));
    // Editing the very first message makes a second root.
    auto u1b = store_->addMessage(*c, 0, msg(MessageRole::User, "q1 edited"));
    QCOMPARE(store_->siblings(*u1b)->count, 2);
    QCOMPARE(contents(*store_->activeBranch(*c)), (QStringList{"q1 edited"}));
}

void TestStoreBranches::regenerateCreatesSiblingReply() {
    auto c = store_->createConversation(QStringLiteral("regen"));
    auto u1 = store_->addMessage(*c, 0, msg(MessageRole::User, "q"));
    auto a1 = store_->addMessage(*c, *u1, msg(MessageRole::Assistant, "first try"));
    auto a2 = store_->beginStreamingReply(*c, *u1, QStringLiteral("gemma3"));
    STORE_VERIFY_OK(a2);
    STORE_VERIFY_OK(store_->appendToStreamingReply(*a2, QStringLiteral("second try")));
    STORE_VERIFY_OK(store_->finishReply(*a2, {}));
    auto a3 = store_->beginStreamingReply(*c, *u1, QStringLiteral("gemma3"));
    STORE_VERIFY_OK(store_->finishReply(*a3, {}));
    auto sib = store_->siblings(*a2);
    QCOMPARE(sib->count, 3);
    QCOMPARE(sib->index, 1);
    QCOMPARE(sib->ids, (QList<MessageId>{*a1, *a2, *a3}));
    QCOMPARE(store_->conversation(*c)->model, QStringLiteral("gemma3"));
    QCOMPARE(store_->activeBranch(*c)->last().id, *a3);
}

void TestStoreBranches::selectBranchFollowsNewestChild() {
    auto c = store_->createConversation(QStringLiteral("switch"));
    auto u1 = store_->addMessage(*c, 0, msg(MessageRole::User, "q1"));
    auto a1 = store_->addMessage(*c, *u1, msg(MessageRole::Assistant, "a1"));
    auto u2 = store_->addMessage(*c, *a1, msg(MessageRole::User, "q2"));
    auto a2 = store_->addMessage(*c, *u2, msg(MessageRole::Assistant, "a2"));
    auto a2b = store_->addMessage(*c, *u2, msg(MessageRole::Assistant, "a2 regenerated"));
    auto u2b = store_->addMessage(*c, *a1, msg(MessageRole::User, "q2 edited"));
    auto a3 = store_->addMessage(*c, *u2b, msg(MessageRole::Assistant, "a3"));
    STORE_VERIFY_OK(a3);
    // "<" on q2's switcher: back to the q2 branch, ending at its newest reply.
    auto leaf = store_->selectBranch(*u2);
    STORE_VERIFY_OK(leaf);
    QCOMPARE(*leaf, *a2b);
    QCOMPARE(contents(*store_->activeBranch(*c)), (QStringList{"q1", "a1", "q2", "a2 regenerated"}));
    QCOMPARE(*store_->selectBranch(*a2), *a2);
    QCOMPARE(contents(*store_->activeBranch(*c)), (QStringList{"q1", "a1", "q2", "a2"}));
    QCOMPARE(*store_->selectBranch(*u2b), *a3);
    QCOMPARE(store_->siblings(*u2b)->index, 1);
    QCOMPARE(*store_->selectBranch(*u1), *a3);  // newest child at every level
}

void TestStoreBranches::badParentsAreErrors() {
    auto c1 = store_->createConversation(QStringLiteral("one"));
    auto c2 = store_->createConversation(QStringLiteral("two"));
    auto m1 = store_->addMessage(*c1, 0, msg(MessageRole::User, "in one"));
    QCOMPARE(store_->addMessage(*c2, *m1, msg(MessageRole::User, "x")).error().code(), StoreError::Code::InvalidArgument);
    QCOMPARE(store_->addMessage(*c1, 999999, msg(MessageRole::User, "x")).error().code(), StoreError::Code::NotFound);
    QCOMPARE(store_->addMessage(999999, 0, msg(MessageRole::User, "x")).error().code(), StoreError::Code::NotFound);
    QCOMPARE(store_->setActiveLeaf(*c2, *m1).code(), StoreError::Code::InvalidArgument);
    QCOMPARE(store_->setActiveLeaf(*c2, 424242).code(), StoreError::Code::NotFound);
    QCOMPARE(store_->siblings(424242).error().code(), StoreError::Code::NotFound);
    QCOMPARE(store_->message(424242).error().code(), StoreError::Code::NotFound);
    QCOMPARE(store_->selectBranch(424242).error().code(), StoreError::Code::NotFound);
    QCOMPARE(store_->renameConversation(424242, "x").code(), StoreError::Code::NotFound);
    NewMessage streaming = msg(MessageRole::Assistant, "x");
    streaming.state = MessageState::Streaming;
    QCOMPARE(store_->addMessage(*c1, *m1, streaming).error().code(), StoreError::Code::InvalidArgument);
    QCOMPARE(store_->allMessages(*c2)->size(), 0);
}

void TestStoreBranches::renameAndList() {
    auto a = store_->createConversation(QStringLiteral("a"));
    auto b = store_->createConversation(QStringLiteral("b"));
    auto c = store_->createConversation(QStringLiteral("c"));
    STORE_VERIFY_OK(c);
    // Same-millisecond creation falls back to id order: newest first.
    auto list = store_->listConversations();
    QCOMPARE(list->size(), 3);
    QCOMPARE(list->first().id, *c);
    // A new message moves a conversation to the top.
    QTest::qWait(5);
    STORE_VERIFY_OK(store_->addMessage(*a, 0, msg(MessageRole::User, "bump")));
    QCOMPARE(store_->listConversations()->first().id, *a);
    STORE_VERIFY_OK(store_->renameConversation(*b, QStringLiteral("<b>\"quoted\" 'title'</b> 🙂")));
    QCOMPARE(store_->conversation(*b)->title, QStringLiteral("<b>\"quoted\" 'title'</b> 🙂"));
    QCOMPARE(store_->listConversations()->first().id, *b);
}

void TestStoreBranches::deleteUndoAndPurge() {
    auto keep = store_->createConversation(QStringLiteral("keep"));
    auto gone = store_->createConversation(QStringLiteral("gone"));
    auto u = store_->addMessage(*gone, 0, msg(MessageRole::User, "q"));
    STORE_VERIFY_OK(store_->addMessage(*gone, *u, msg(MessageRole::Assistant, "a")));

    STORE_VERIFY_OK(store_->deleteConversation(*gone));
    QCOMPARE(store_->listConversations()->size(), 1);
    QCOMPARE(store_->listConversations()->first().id, *keep);
    QCOMPARE(store_->listDeletedConversations()->size(), 1);
    QVERIFY(store_->conversation(*gone)->deletedAt.isValid());
    QCOMPARE(store_->deleteConversation(*gone).code(), StoreError::Code::NotFound);  // already deleted

    STORE_VERIFY_OK(store_->restoreConversation(*gone));  // undo
    QCOMPARE(store_->listConversations()->size(), 2);
    QVERIFY(!store_->conversation(*gone)->deletedAt.isValid());
    QCOMPARE(store_->activeBranch(*gone)->size(), 2);
    QCOMPARE(store_->restoreConversation(*gone).code(), StoreError::Code::NotFound);

    STORE_VERIFY_OK(store_->deleteConversation(*gone));
    // A purge cutoff before the deletion keeps it; the default purges.
    QCOMPARE(*store_->purgeDeleted(QDateTime::currentDateTimeUtc().addDays(-1)), 0);
    QCOMPARE(*store_->purgeDeleted(), 1);
    QCOMPARE(store_->conversation(*gone).error().code(), StoreError::Code::NotFound);
    QCOMPARE(queryValue(*store_, QStringLiteral("SELECT count(*) FROM messages")), QStringLiteral("0"));
    QCOMPARE(store_->listConversations()->size(), 1);
    QCOMPARE(queryValue(*store_, QStringLiteral("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')")),
             QString());
}

void TestStoreBranches::fullDiskIsAnError() {
    auto c = store_->createConversation(QStringLiteral("full"));
    // SQLite's page cap stands in for a full disk: the same SQLITE_FULL.
    const QString pages = queryValue(*store_, QStringLiteral("PRAGMA page_count"));
    queryValue(*store_, QStringLiteral("PRAGMA max_page_count = %1").arg(pages.toInt() + 2));
    const auto big = store_->addMessage(*c, 0, msg(MessageRole::User, QString(1 << 20, QLatin1Char('x'))));
    QVERIFY(!big.isOk());
    QCOMPARE(big.error().code(), StoreError::Code::DiskFull);
    QVERIFY2(big.error().message().contains(QLatin1String("disk is full")), qPrintable(big.error().message()));
    // Nothing half-written, and the store still works.
    QCOMPARE(store_->allMessages(*c)->size(), 0);
    queryValue(*store_, QStringLiteral("PRAGMA max_page_count = 1073741823"));
    STORE_VERIFY_OK(store_->addMessage(*c, 0, msg(MessageRole::User, "fits")));
}

void TestStoreBranches::readOnlyIsAnError() {
    // query_only gives the SQLITE_READONLY a read-only file or folder gives
    // (the tests may run as root, for whom chmod does not stop writes).
    auto c = store_->createConversation(QStringLiteral("ro"));
    auto u = store_->addMessage(*c, 0, msg(MessageRole::User, "q"));
    store_->setFlushIntervalMs(0);
    auto r = store_->beginStreamingReply(*c, *u, QStringLiteral("m"));
    STORE_VERIFY_OK(r);
    queryValue(*store_, QStringLiteral("PRAGMA query_only = ON"));
    const auto denied = store_->createConversation(QStringLiteral("nope"));
    QCOMPARE(denied.error().code(), StoreError::Code::ReadOnly);
    QVERIFY2(denied.error().message().contains(QLatin1String("read-only")), qPrintable(denied.error().message()));
    QCOMPARE(store_->renameConversation(*c, "x").code(), StoreError::Code::ReadOnly);
    QCOMPARE(store_->deleteConversation(*c).code(), StoreError::Code::ReadOnly);
    // Streaming text that cannot be written stays pending, and is written
    // once writing works again.
    QCOMPARE(store_->appendToStreamingReply(*r, QStringLiteral("kept ")).code(), StoreError::Code::ReadOnly);
    QCOMPARE(store_->appendToStreamingReply(*r, QStringLiteral("in memory")).code(), StoreError::Code::ReadOnly);
    QVERIFY(store_->listConversations().isOk());  // reads still work
    queryValue(*store_, QStringLiteral("PRAGMA query_only = OFF"));
    STORE_VERIFY_OK(store_->finishReply(*r, {}));
    QCOMPARE(store_->message(*r)->content, QStringLiteral("kept in memory"));
}

QTEST_APPLESS_MAIN(TestStoreBranches)
#include "tst_store_branches.moc"
