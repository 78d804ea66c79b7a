// Streaming replies: buffering (nothing hits the file before the interval,
// everything after a flush), finish with stats, failure, closing mid-reply,
// recovery on the next open, and misuse.
#include "conversation_store.h"
#include "store_test_util.h"

#include <QtTest>

using namespace kestrel::store;
using namespace kestrel::store::test;

class TestStoreStreaming : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void streamsAndFinishes();
    void buffersUntilInterval();
    void flushesOnceIntervalPassed();
    void failKeepsText();
    void closeMidReplyInterrupts();
    void misuseIsAnError();
    void timerFlushesWhenTokensStop();
    void continuesAReplyCutAtItsLimit();

private:
    // What a second process reading the file would see right now.
    QString contentOnDisk(MessageId id) {
        ConversationStore other;
        if (!other.open(path_).isOk()) return QStringLiteral("<open failed>");
        return queryValue(other, QStringLiteral("SELECT content FROM messages WHERE id = %1").arg(id));
    }

    QTemporaryDir* dir_ = nullptr;
    QString path_;
    ConversationStore* store_ = nullptr;
    ConversationId conv_ = 0;
    MessageId user_ = 0;
};

void TestStoreStreaming::init() {
    dir_ = new QTemporaryDir;
    path_ = dir_->filePath(QStringLiteral("st.sqlite"));
    store_ = new ConversationStore;
    STORE_VERIFY_OK(store_->open(path_));
    conv_ = *store_->createConversation(QStringLiteral("stream"));
    NewMessage m;
    m.content = QStringLiteral("tell me a story");
    user_ = *store_->addMessage(conv_, 0, m);
}

void TestStoreStreaming::cleanup() {
    delete store_;
    delete dir_;
}

void TestStoreStreaming::streamsAndFinishes() {
    store_->setFlushIntervalMs(0);  // write every piece
    const QJsonObject settings{{"temperature", 0.2}, {"top_k", 40}};
    auto r = store_->beginStreamingReply(conv_, user_, QStringLiteral("SmolLM2"), settings);
    STORE_VERIFY_OK(r);
    QCOMPARE(store_->message(*r)->state, MessageState::Streaming);
    QCOMPARE(store_->activeBranch(conv_)->last().id, *r);
    QString expected, expectedReasoning;
    for (int i = 0; i < 50; ++i) {
        const QString piece = QStringLiteral("tok%1 🙂 ").arg(i);
        STORE_VERIFY_OK(store_->appendToStreamingReply(*r, piece, i < 3 ? QStringLiteral("think%1 ").arg(i) : QString()));
        expected += piece;
        if (i < 3) expectedReasoning += QStringLiteral("think%1 ").arg(i);
    }
    QCOMPARE(contentOnDisk(*r), expected);
    STORE_VERIFY_OK(store_->finishReply(*r, ReplyStats{17, 50, 123.25}));
    auto m = store_->message(*r);
    QCOMPARE(m->content, expected);
    QCOMPARE(m->reasoning, expectedReasoning);
    QCOMPARE(m->state, MessageState::Complete);
    QCOMPARE(m->promptTokens, 17);
    QCOMPARE(m->completionTokens, 50);
    QCOMPARE(m->tokensPerSecond, 123.25);
    QCOMPARE(m->model, QStringLiteral("SmolLM2"));
    QCOMPARE(m->settings, settings);
    QString why;
    QVERIFY2(databaseConsistent(*store_, &why), qPrintable(why));
}

void TestStoreStreaming::buffersUntilInterval() {
    store_->setFlushIntervalMs(3600 * 1000);
    auto r = store_->beginStreamingReply(conv_, user_, QStringLiteral("m"));
    STORE_VERIFY_OK(store_->appendToStreamingReply(*r, QStringLiteral("held ")));
    STORE_VERIFY_OK(store_->appendToStreamingReply(*r, QStringLiteral("in memory")));
    QCOMPARE(contentOnDisk(*r), QString());  // not written yet
    // Reading through the store shows everything (it flushes first).
    QCOMPARE(store_->activeBranch(conv_)->last().content, QStringLiteral("held in memory"));
    QCOMPARE(contentOnDisk(*r), QStringLiteral("held in memory"));
    STORE_VERIFY_OK(store_->appendToStreamingReply(*r, QStringLiteral(", then finished")));
    STORE_VERIFY_OK(store_->finishReply(*r, {}, MessageState::Interrupted));  // the user pressed stop
    QCOMPARE(contentOnDisk(*r), QStringLiteral("held in memory, then finished"));
    QCOMPARE(store_->message(*r)->state, MessageState::Interrupted);
}

void TestStoreStreaming::flushesOnceIntervalPassed() {
    store_->setFlushIntervalMs(50);
    auto r = store_->beginStreamingReply(conv_, user_, QStringLiteral("m"));
    STORE_VERIFY_OK(store_->appendToStreamingReply(*r, QStringLiteral("a")));
    QTest::qSleep(120);
    // The first append after the interval writes everything pending.
    STORE_VERIFY_OK(store_->appendToStreamingReply(*r, QStringLiteral("b")));
    QCOMPARE(contentOnDisk(*r), QStringLiteral("ab"));
    STORE_VERIFY_OK(store_->finishReply(*r, {}));
}

void TestStoreStreaming::failKeepsText() {
    auto r = store_->beginStreamingReply(conv_, user_, QStringLiteral("m"));
    STORE_VERIFY_OK(store_->appendToStreamingReply(*r, QStringLiteral("partial answer")));
    STORE_VERIFY_OK(store_->failReply(*r, QStringLiteral("CUDA out of memory: reduce the context length")));
    auto m = store_->message(*r);
    QCOMPARE(m->state, MessageState::Error);
    QCOMPARE(m->content, QStringLiteral("partial answer"));
    QCOMPARE(m->error, QStringLiteral("CUDA out of memory: reduce the context length"));
}

void TestStoreStreaming::closeMidReplyInterrupts() {
    store_->setFlushIntervalMs(3600 * 1000);
    auto r = store_->beginStreamingReply(conv_, user_, QStringLiteral("m"));
    STORE_VERIFY_OK(store_->appendToStreamingReply(*r, QStringLiteral("unfinished")));
    store_->close();  // the app quits mid-reply: text written, state interrupted
    STORE_VERIFY_OK(store_->open(path_));
    QCOMPARE(store_->recoveredReplyCount(), 0);
    auto m = store_->message(*r);
    QCOMPARE(m->content, QStringLiteral("unfinished"));
    QCOMPARE(m->state, MessageState::Interrupted);
    QCOMPARE(store_->appendToStreamingReply(*r, QStringLiteral("x")).code(), StoreError::Code::InvalidArgument);
}

void TestStoreStreaming::misuseIsAnError() {
    QCOMPARE(store_->appendToStreamingReply(12345, QStringLiteral("x")).code(), StoreError::Code::InvalidArgument);
    QCOMPARE(store_->finishReply(12345, {}).code(), StoreError::Code::NotFound);
    QCOMPARE(store_->finishReply(user_, {}).code(), StoreError::Code::InvalidArgument);  // not streaming
    auto r = store_->beginStreamingReply(conv_, user_, QStringLiteral("m"));
    QCOMPARE(store_->finishReply(*r, {}, MessageState::Error).code(), StoreError::Code::InvalidArgument);
    STORE_VERIFY_OK(store_->finishReply(*r, {}));
    QCOMPARE(store_->finishReply(*r, {}).code(), StoreError::Code::InvalidArgument);  // twice
    QCOMPARE(store_->beginStreamingReply(999, 0, QStringLiteral("m")).error().code(), StoreError::Code::NotFound);
}

void TestStoreStreaming::timerFlushesWhenTokensStop() {
    // With an event loop (the app), a reply whose tokens stop arriving is
    // still written about one interval later, without another append.
    int argc = 1;
    char name[] = "tst_store_streaming";
    char* argv[] = {name, nullptr};
    QCoreApplication app(argc, argv);
    store_->close();
    STORE_VERIFY_OK(store_->open(path_));  // timer created under the app
    store_->setFlushIntervalMs(1500);
    auto r = store_->beginStreamingReply(conv_, user_, QStringLiteral("m"));
    STORE_VERIFY_OK(store_->appendToStreamingReply(*r, QStringLiteral("last token")));
    QCOMPARE(contentOnDisk(*r), QString());  // buffered, the interval has not passed
    QTRY_COMPARE_WITH_TIMEOUT(contentOnDisk(*r), QStringLiteral("last token"), 10000);
    store_->close();  // before the application object goes away
}

void TestStoreStreaming::continuesAReplyCutAtItsLimit() {
    store_->setFlushIntervalMs(0);
    auto r = store_->beginStreamingReply(conv_, user_, QStringLiteral("m"));
    STORE_VERIFY_OK(store_->appendToStreamingReply(*r, QStringLiteral("Once upon a")));
    ReplyStats cut{5, 3, 40.0, QStringLiteral("max_tokens")};
    STORE_VERIFY_OK(store_->finishReply(*r, cut));
    QCOMPARE(store_->message(*r)->stopReason, QStringLiteral("max_tokens"));
    // Continue: the same message streams again, its text grows, and it ends anew.
    STORE_VERIFY_OK(store_->resumeReply(*r));
    QCOMPARE(store_->message(*r)->state, MessageState::Streaming);
    QCOMPARE(store_->message(*r)->stopReason, QString());
    STORE_VERIFY_OK(store_->appendToStreamingReply(*r, QStringLiteral(" time, a kestrel")));
    STORE_VERIFY_OK(store_->finishReply(*r, ReplyStats{9, 7, 41.0, QStringLiteral("eos")}));
    auto m = store_->message(*r);
    QCOMPARE(m->content, QStringLiteral("Once upon a time, a kestrel"));
    QCOMPARE(m->state, MessageState::Complete);
    QCOMPARE(m->stopReason, QStringLiteral("eos"));
    QCOMPARE(m->completionTokens, 7);
    QCOMPARE(store_->activeBranch(conv_)->size(), 2);  // no new message
    QCOMPARE(store_->search(QStringLiteral("kestrel"))->size(), 1);  // indexed again once finished
    QString why;
    QVERIFY2(databaseConsistent(*store_, &why), qPrintable(why));
    // A stopped (interrupted) reply can be continued too; user messages, replies still
    // being written and unknown ids cannot; an unknown stop reason is refused.
    STORE_VERIFY_OK(store_->resumeReply(*r));
    STORE_VERIFY_OK(store_->finishReply(*r, ReplyStats{-1, -1, 0.0, QStringLiteral("cancelled")}, MessageState::Interrupted));
    STORE_VERIFY_OK(store_->resumeReply(*r));
    QCOMPARE(store_->resumeReply(*r).code(), StoreError::Code::InvalidArgument);  // already streaming
    QCOMPARE(store_->finishReply(*r, ReplyStats{-1, -1, 0.0, QStringLiteral("bored")}).code(),
             StoreError::Code::InvalidArgument);
    STORE_VERIFY_OK(store_->finishReply(*r, {}));
    QCOMPARE(store_->resumeReply(user_).code(), StoreError::Code::InvalidArgument);
    QCOMPARE(store_->resumeReply(98765).code(), StoreError::Code::NotFound);
}

QTEST_APPLESS_MAIN(TestStoreStreaming)
#include "tst_store_streaming.moc"
