// ChatController: what QML calls (exposed as the singleton `Chat`).
//
// Lives on the UI thread and owns the conversation store, the two list models
// and the engine worker's thread. It follows "one token's journey": send()
// stores the user message, begins a streaming reply in the store and asks the
// worker (queued) to generate; pieces come back as queued signals and are
// appended to the message model and to the store (which flushes about once a
// second). stop() calls the worker's thread-safe stop() directly, so Esc ends
// generation within one decode step.
//
// Errors (engine or store) become `lastError` / errorOccurred(message) with
// text the user can act on; nothing here throws or aborts.
#pragma once

#include "engine_types.h"
#include "store_types.h"
#include "text_segments.h"

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QThread>
#include <QTimer>
#include <QVariantMap>

#include <memory>
#include <optional>

namespace kestrel::store {
class ConversationStore;
}

namespace kestrel::desktop {

class ConversationListModel;
class EngineWorker;
class MessageModel;
class SettingsModel;

class ChatController : public QObject {
    Q_OBJECT
    Q_PROPERTY(QObject* messages READ messagesObject CONSTANT)
    Q_PROPERTY(QObject* conversations READ conversationsObject CONSTANT)
    Q_PROPERTY(qint64 currentConversationId READ currentConversationId NOTIFY currentConversationChanged)
    Q_PROPERTY(QString currentTitle READ currentTitle NOTIFY currentConversationChanged)
    Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
    Q_PROPERTY(QString modelState READ modelState NOTIFY modelStateChanged)  // none, loading, ready, error
    Q_PROPERTY(double loadProgress READ loadProgress NOTIFY loadProgressChanged)
    Q_PROPERTY(QVariantMap modelInfo READ modelInfo NOTIFY modelStateChanged)
    Q_PROPERTY(QString lastError READ lastError NOTIFY errorOccurred)
    Q_PROPERTY(double tokensPerSecond READ tokensPerSecond NOTIFY statsChanged)
    Q_PROPERTY(int contextUsed READ contextUsed NOTIFY statsChanged)
    Q_PROPERTY(int contextLength READ contextLength NOTIFY statsChanged)
    Q_PROPERTY(QString templateWarning READ templateWarning NOTIFY modelStateChanged)
    Q_PROPERTY(QString pendingUndoTitle READ pendingUndoTitle NOTIFY pendingUndoChanged)

public:
    // Opens the store at `databasePath` (ConversationStore::defaultPath() when empty).
    ChatController(SettingsModel* settings, const QString& databasePath = {}, QObject* parent = nullptr);
    ~ChatController() override;

    QObject* messagesObject() const;
    QObject* conversationsObject() const;
    MessageModel* messageModel() const { return messages_; }
    ConversationListModel* conversationModel() const { return conversations_; }
    store::ConversationStore* store() const { return store_.get(); }
    qint64 currentConversationId() const { return conversationId_; }
    QString currentTitle() const;
    bool generating() const { return activeRequest_ != 0; }
    QString modelState() const { return modelState_; }
    double loadProgress() const { return loadProgress_; }
    QVariantMap modelInfo() const { return modelInfo_; }
    QString lastError() const { return lastError_; }
    double tokensPerSecond() const { return tokensPerSecond_; }
    int contextUsed() const { return contextUsed_; }
    int contextLength() const { return contextLength_; }
    QString pendingUndoTitle() const { return pendingUndoTitle_; }
    QString templateWarning() const { return modelInfo_.value(QStringLiteral("templateWarning")).toString(); }

    // Loads the applied model, or reports needsModel() when there is none.
    Q_INVOKABLE void start();
    Q_INVOKABLE void loadModel();
    Q_INVOKABLE void cancelLoad();

    Q_INVOKABLE bool send(const QString& text);
    Q_INVOKABLE void stop();
    Q_INVOKABLE bool regenerate();
    // Goes on writing the last reply when it was cut at its length limit or stopped
    // (MessageItem::continuable): the new text adds to the same message.
    Q_INVOKABLE bool continueReply();
    // A user message: its new text as a sibling, answered anew. A reply: the user's text
    // as a sibling reply (stop reason "edited", continuable), nothing generated.
    Q_INVOKABLE bool editMessage(qint64 messageId, const QString& newText);
    Q_INVOKABLE bool switchBranch(qint64 messageId, int delta);

    Q_INVOKABLE void newConversation();
    Q_INVOKABLE bool selectConversation(qint64 id);
    Q_INVOKABLE bool renameConversation(qint64 id, const QString& title);
    Q_INVOKABLE bool deleteConversation(qint64 id);  // undoable for a few seconds
    Q_INVOKABLE bool undoDelete();
    // format: "md", "json", "html" or "txt"; path: a local path or file: URL.
    Q_INVOKABLE bool exportConversations(const QString& format, const QString& path, bool all = false);
    Q_INVOKABLE int importConversations(const QString& path);  // how many; -1 on error
    Q_INVOKABLE void copyText(const QString& text) const;
    Q_INVOKABLE QString suggestedExportName(const QString& format) const;

    int undoWindowMs() const { return undoTimer_.interval(); }
    void setUndoWindowMs(int ms) { undoTimer_.setInterval(ms); }
    EngineWorker* worker() const { return worker_; }

signals:
    void currentConversationChanged();
    void generatingChanged();
    void modelStateChanged();
    void loadProgressChanged();
    void statsChanged();
    void pendingUndoChanged();
    void errorOccurred(const QString& message);
    void needsModel(const QString& reason);
    void replyStarted(qint64 messageId);
    void replyEnded(qint64 messageId, const QString& stopReason);
    void exported(const QString& path);

    // To the worker (queued).
    void requestLoad(const kestrel::desktop::ModelLoadRequest& request);
    void requestGenerate(quint64 requestId, const kestrel::desktop::GenerationRequest& request);

private:
    void fail(const QString& message);
    void reloadMessages();
    bool startReply(qint64 parentId);
    void requestReply(bool continuing);
    void onModelLoaded(const ModelSummary& summary);
    void onLoadFailed(const QString& message, bool cancelled);
    void onReplyStarted(quint64 requestId, bool startsInReasoning);
    void onPiece(quint64 requestId, const QString& text, int tokens);
    void onFinished(quint64 requestId, const GenerationStats& stats);
    void onFailed(quint64 requestId, const QString& message);
    void endReply();
    void purgeDeleted();
    qint64 lastMessageId() const;

    SettingsModel* settings_;
    std::unique_ptr<store::ConversationStore> store_;
    MessageModel* messages_;
    ConversationListModel* conversations_;
    QThread workerThread_;
    EngineWorker* worker_;

    qint64 conversationId_ = 0;
    QString modelState_ = QStringLiteral("none");
    double loadProgress_ = 0;
    QVariantMap modelInfo_;
    QString lastError_;

    quint64 nextRequest_ = 0;
    quint64 activeRequest_ = 0;
    qint64 replyMessageId_ = 0;
    // A continued reply: what it had before (restored if the continuation fails), so
    // that its token count adds up.
    std::optional<store::Message> continued_;
    ThinkSplitter splitter_;
    QElapsedTimer replyClock_;
    int replyTokens_ = 0;
    double tokensPerSecond_ = 0;
    int contextUsed_ = 0;
    int contextLength_ = 0;

    QTimer undoTimer_;
    qint64 pendingUndoId_ = 0;
    QString pendingUndoTitle_;
};

}  // namespace kestrel::desktop
