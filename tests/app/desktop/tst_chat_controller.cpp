// ChatController with the real SmolLM2 and a store in a temporary folder:
// send, streaming into the message model, stop, regenerate and edit as
// branches, switching branches, delete with undo, export and import, and the
// first start without a model.
#include "chat_controller.h"
#include "conversation_list_model.h"
#include "conversation_store.h"
#include "message_model.h"
#include "settings_model.h"
#include "test_env.h"

#include <QFile>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace kestrel::desktop;

class TestChatController : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<SettingsModel> settings_;
    std::unique_ptr<ChatController> chat_;

    bool waitReply() { return QTest::qWaitFor([this] { return !chat_->generating(); }, 60000); }
    const QList<MessageItem>& items() const { return chat_->messageModel()->items(); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        qputenv("XDG_CONFIG_HOME", dir_.filePath("config").toLocal8Bit());
        QCoreApplication::setOrganizationName("KestrelTest");
        QCoreApplication::setApplicationName("ChatController");
    }

    void firstStartWithoutModelAsksForOne() {
        qputenv("KESTREL_MODELS_DIR", dir_.filePath("no-models").toLocal8Bit());
        SettingsModel settings;
        ChatController chat(&settings, dir_.filePath("empty.sqlite"));
        QSignalSpy needs(&chat, &ChatController::needsModel);
        chat.start();
        QCOMPARE(needs.size(), 1);
        QVERIFY(needs.at(0).at(0).toString().contains("SmolLM2-135M-Instruct.Q4_1.gguf"));
        QVERIFY(!chat.send("hello"));  // no model: refused with a message, not a crash
        QVERIFY(!chat.lastError().isEmpty());
        qunsetenv("KESTREL_MODELS_DIR");
    }

    void loadsTheDefaultModel() {
        KESTREL_REQUIRE_MODEL(kestrel::test::smollm2Path());
        qputenv("KESTREL_MODELS_DIR", kestrel::test::modelsDir().toLocal8Bit());
        settings_ = std::make_unique<SettingsModel>();
        settings_->setModelPath(kestrel::test::smollm2Path());
        settings_->setProperty("temperature", 0.0);
        settings_->setProperty("maxTokens", 24);
        settings_->setProperty("contextLength", 1024);
        settings_->setProperty("systemPrompt", "You are a concise assistant. Answer in one sentence.");
        QVERIFY(settings_->apply());
        chat_ = std::make_unique<ChatController>(settings_.get(), dir_.filePath("chat.sqlite"));
        chat_->setUndoWindowMs(300);
        chat_->start();
        QVERIFY(QTest::qWaitFor([this] { return chat_->modelState() == "ready"; }, 60000));
        QCOMPARE(chat_->modelInfo().value("architecture").toString(), QString("llama"));
        QCOMPARE(chat_->contextLength(), 1024);
    }

    void sendStreamsIntoTheModel() {
        if (!chat_) QSKIP("needs the model");
        QSignalSpy changed(chat_->messageModel(), &QAbstractItemModel::dataChanged);
        QSignalSpy ended(chat_.get(), &ChatController::replyEnded);
        QVERIFY(chat_->send("What is the capital of France?"));
        QVERIFY(chat_->generating());
        QVERIFY(!chat_->send("second while busy"));
        QVERIFY(waitReply());
        QCOMPARE(items().size(), 2);
        QCOMPARE(items()[0].role, QString("user"));
        QCOMPARE(items()[1].role, QString("assistant"));
        QVERIFY2(items()[1].content.contains("Paris"), qPrintable(items()[1].content));
        QCOMPARE(items()[1].state, QString("complete"));
        QVERIFY(changed.size() > 3);  // streamed, not set once at the end
        QCOMPARE(ended.size(), 1);
        QVERIFY(chat_->contextUsed() > 10);
        QVERIFY(chat_->currentConversationId() > 0);
        QCOMPARE(chat_->conversationModel()->rowCount(), 1);
        // What the store has matches what is shown.
        auto branch = chat_->store()->activeBranch(chat_->currentConversationId());
        QVERIFY(branch.isOk());
        QCOMPARE(branch->size(), 2);
        QCOMPARE(branch->at(1).content, items()[1].content);
        QVERIFY(branch->at(1).completionTokens > 0);
    }

    void regenerateAddsASiblingAndBranchesSwitch() {
        if (!chat_) QSKIP("needs the model");
        const QString first = items()[1].content;
        settings_->setProperty("temperature", 1.2);
        settings_->setProperty("seed", "7");
        QVERIFY(settings_->apply());
        QVERIFY(chat_->regenerate());
        QVERIFY(waitReply());
        QCOMPARE(items().size(), 2);
        QCOMPARE(items()[1].siblingCount, 2);
        QCOMPARE(items()[1].siblingIndex, 1);
        QVERIFY(chat_->switchBranch(items()[1].id, -1));
        QCOMPARE(items()[1].content, first);
        QCOMPARE(items()[1].siblingIndex, 0);
        QVERIFY(!chat_->switchBranch(items()[1].id, -1));  // no version before the first
    }

    void editStartsABranchAndKeepsTheOld() {
        if (!chat_) QSKIP("needs the model");
        const qint64 userId = items()[0].id;
        QVERIFY(chat_->editMessage(userId, "What is the capital of Italy?"));
        QVERIFY(waitReply());
        QCOMPARE(items().size(), 2);
        QCOMPARE(items()[0].content, QString("What is the capital of Italy?"));
        QCOMPARE(items()[0].siblingCount, 2);
        QCOMPARE(items()[0].siblingIndex, 1);
        QVERIFY(chat_->switchBranch(items()[0].id, -1));
        QCOMPARE(items()[0].content, QString("What is the capital of France?"));
        QCOMPARE(items()[1].siblingCount, 2);  // both replies of the old branch are still there
        QVERIFY(chat_->switchBranch(items()[0].id, 1));
        QCOMPARE(items()[0].content, QString("What is the capital of Italy?"));
    }

    void stopInterruptsAndKeepsText() {
        if (!chat_) QSKIP("needs the model");
        settings_->setProperty("maxTokens", 400);
        QVERIFY(settings_->apply());
        QSignalSpy ended(chat_.get(), &ChatController::replyEnded);
        QVERIFY(chat_->send("Count from 1 to 500, one number per line."));
        QVERIFY(QTest::qWaitFor([this] { return items().size() == 4 && items()[3].content.size() >= 4; }, 60000));
        chat_->stop();
        QVERIFY(waitReply());
        QCOMPARE(ended.last().at(1).toString(), QString("cancelled"));
        QCOMPARE(items()[3].state, QString("interrupted"));
        QVERIFY(!items()[3].content.isEmpty());
        auto stored = chat_->store()->message(items()[3].id);
        QVERIFY(stored.isOk());
        QCOMPARE(stored->content, items()[3].content);
        QVERIFY(stored->completionTokens < 100);
    }

    // A reply cut at its length limit says so, and Continue adds to the same message:
    // the engine sees the reply left open, so the text goes on rather than restarting.
    void continueGoesOnWritingACutReply() {
        if (!chat_) QSKIP("needs the model");
        settings_->setProperty("maxTokens", 16);
        settings_->setProperty("temperature", 0.0);  // greedy: the regenerate test left 1.2
        QVERIFY(settings_->apply());
        QVERIFY(chat_->send("List the numbers from 1 to 40, separated by commas."));
        QVERIFY(waitReply());
        const MessageItem cut = items().back();
        QCOMPARE(cut.stopReason, QString("max_tokens"));
        QVERIFY(cut.continuable());
        QVERIFY(chat_->messageModel()->get(int(items().size()) - 1).value("continuable").toBool());
        const int rows = int(items().size());
        const int firstTokens = chat_->store()->message(cut.id)->completionTokens;
        QCOMPARE(firstTokens, 16);
        QSignalSpy ended(chat_.get(), &ChatController::replyEnded);
        QVERIFY(chat_->continueReply());
        QVERIFY(chat_->generating());
        QCOMPARE(items().back().state, QString("streaming"));
        QVERIFY(!chat_->continueReply());  // busy
        QVERIFY(waitReply());
        QCOMPARE(ended.size(), 1);
        QCOMPARE(ended.at(0).at(0).toLongLong(), cut.id);
        QCOMPARE(int(items().size()), rows);  // the same message grew
        const MessageItem grown = items().back();
        QVERIFY2(grown.content.startsWith(cut.content) && grown.content.size() > cut.content.size(),
                 qPrintable(cut.content + " | " + grown.content));
        // Greedy decoding goes on where it stopped instead of answering again from "1": the
        // first number added follows the last number shown (SmolLM2: "1, 2, 3, 4, 5, 6" then
        // ", 7, 8, 9, 10, 1").
        const QString added = grown.content.mid(cut.content.size());
        const QRegularExpression number(QStringLiteral("\\d+"));
        QRegularExpressionMatchIterator shown = number.globalMatch(cut.content);
        int last = -1;
        while (shown.hasNext()) last = shown.next().captured().toInt();
        const QRegularExpressionMatch next = number.match(added);
        QVERIFY2(last > 0 && next.hasMatch() && next.captured().toInt() == last + 1, qPrintable(cut.content + " | " + added));
        auto stored = chat_->store()->message(cut.id);
        QCOMPARE(stored->content, grown.content);
        QVERIFY2(stored->completionTokens > firstTokens, qPrintable(QString::number(stored->completionTokens)));
        QCOMPARE(stored->stopReason, grown.stopReason);
    }

    // Rewriting a reply keeps the model's as another branch, generates nothing, and the
    // rewritten reply can be continued: the model goes on from the user's words.
    void editingAReplyMakesABranchToContinue() {
        if (!chat_) QSKIP("needs the model");
        const MessageItem old = items().back();
        QCOMPARE(old.role, QString("assistant"));
        const int rows = int(items().size());
        QVERIFY(!chat_->editMessage(old.id, "   "));  // nothing to keep
        QVERIFY(chat_->editMessage(old.id, "Here they are in words: one, two, three,"));
        QVERIFY(!chat_->generating());  // a rewritten reply is not answered
        QCOMPARE(int(items().size()), rows);
        const MessageItem edited = items().back();
        QVERIFY(edited.id != old.id);
        QCOMPARE(edited.content, QString("Here they are in words: one, two, three,"));
        QCOMPARE(edited.stopReason, QString("edited"));
        QCOMPARE(edited.siblingCount, old.siblingCount + 1);
        QVERIFY(edited.continuable());
        QCOMPARE(chat_->store()->message(edited.id)->stopReason, QString("edited"));
        QVERIFY(chat_->continueReply());
        QVERIFY(waitReply());
        QVERIFY2(items().back().content.startsWith(edited.content) && items().back().content.size() > edited.content.size(),
                 qPrintable(items().back().content));
        // The model's own reply is still there, one branch back.
        QVERIFY(chat_->switchBranch(items().back().id, -1));
        QCOMPARE(items().back().content, old.content);
    }

    void exportAndImport() {
        if (!chat_) QSKIP("needs the model");
        const QString md = dir_.filePath("out.md"), json = dir_.filePath("out.json");
        QVERIFY2(chat_->exportConversations("md", md), qPrintable(chat_->lastError()));
        QVERIFY2(chat_->exportConversations("json", "file://" + json), qPrintable(chat_->lastError()));
        QVERIFY(!chat_->exportConversations("docx", md));
        QFile f(md);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll().contains("capital of Italy"));
        QCOMPARE(chat_->importConversations(json), 1);
        QCOMPARE(chat_->conversationModel()->rowCount(), 2);
        QCOMPARE(chat_->importConversations(dir_.filePath("missing.json")), -1);
    }

    void deleteWithUndo() {
        if (!chat_) QSKIP("needs the model");
        auto* list = chat_->conversationModel();
        const int before = list->rowCount();
        const qint64 id = chat_->currentConversationId();
        QVERIFY(chat_->deleteConversation(id));
        QCOMPARE(list->rowCount(), before - 1);
        QCOMPARE(chat_->currentConversationId(), 0);
        QVERIFY(!chat_->pendingUndoTitle().isEmpty());
        QVERIFY(chat_->undoDelete());
        QCOMPARE(list->rowCount(), before);
        QVERIFY(chat_->pendingUndoTitle().isEmpty());
        // Without undo, the delete becomes final when the window closes.
        QVERIFY(chat_->deleteConversation(id));
        QVERIFY(QTest::qWaitFor([this] { return chat_->pendingUndoTitle().isEmpty(); }, 5000));
        QVERIFY(!chat_->undoDelete());
        auto deleted = chat_->store()->listDeletedConversations();
        QVERIFY(deleted.isOk());
        QCOMPARE(deleted->size(), 0);
        QVERIFY(!chat_->store()->conversation(id).isOk());
    }

    void renameAndSearch() {
        if (!chat_) QSKIP("needs the model");
        auto* list = chat_->conversationModel();
        if (list->rowCount() == 0) QVERIFY(chat_->send("Tell me about kestrels.") && waitReply());
        const qint64 id = list->idAt(0);
        QVERIFY(chat_->renameConversation(id, "Birds of prey"));
        QVERIFY(!chat_->renameConversation(id, "   "));
        list->setQuery("prey");
        QCOMPARE(list->rowCount(), 1);
        QVERIFY(chat_->selectConversation(list->idAt(0)));
        list->setQuery("");
    }

    void kvCacheAndDraftChangesReloadTheModel() {
        if (!chat_) QSKIP("needs the model");
        const auto applyAndWait = [this] {
            QVERIFY(settings_->apply());
            QCOMPARE(chat_->modelState(), QString("loading"));  // the change reloads the model
            QVERIFY(QTest::qWaitFor([this] { return chat_->modelState() == "ready"; }, 60000));
        };
        settings_->setProperty("kvCache", "int8");
        applyAndWait();
        QCOMPARE(chat_->modelInfo().value("kvCache").toString(), QString("int8"));
        settings_->setProperty("kvCache", "f16");
        settings_->setProperty("draftModelPath", kestrel::test::smollm2Path());
        settings_->setProperty("speculation", "draft");
        applyAndWait();
        QCOMPARE(chat_->modelInfo().value("kvCache").toString(), QString("f16"));
        QVERIFY(!chat_->modelInfo().value("draftName").toString().isEmpty());
        QVERIFY(chat_->modelInfo().value("draftWarning").toString().isEmpty());
        settings_->setProperty("speculation", "lookup");
        applyAndWait();
        QVERIFY(chat_->modelInfo().value("draftName").toString().isEmpty());
        // Nothing the load depends on changed: no reload.
        settings_->setProperty("temperature", 0.0);
        QVERIFY(settings_->apply());
        QCOMPARE(chat_->modelState(), QString("ready"));
    }

    void cleanupTestCase() {
        chat_.reset();
        settings_.reset();
    }
};

QTEST_GUILESS_MAIN(TestChatController)
#include "tst_chat_controller.moc"
