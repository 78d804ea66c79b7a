#include "chat_controller.h"

#include "conversation_list_model.h"
#include "conversation_store.h"
#include "engine_worker.h"
#include "exporter.h"
#include "message_model.h"
#include "settings_model.h"

#include <QClipboard>
#include <QDateTime>
#include <QFileInfo>
#include <QGuiApplication>
#include <QJsonObject>
#include <QRegularExpression>
#include <QUrl>

namespace kestrel::desktop {

namespace {

QString localPath(const QString& pathOrUrl) {
    return pathOrUrl.startsWith(QLatin1String("file:")) ? QUrl(pathOrUrl).toLocalFile() : pathOrUrl;
}

// A title from the first words of the first message, like a subject line.
QString titleFrom(const QString& text) {
    QString t = text.simplified();
    if (t.size() > 48) t = t.left(45).trimmed() + QStringLiteral("…");
    return t.isEmpty() ? ChatController::tr("New chat") : t;
}

}  // namespace

ChatController::ChatController(SettingsModel* settings, const QString& databasePath, QObject* parent)
    : QObject(parent),
      settings_(settings),
      store_(std::make_unique<store::ConversationStore>()),
      messages_(new MessageModel(this)),
      conversations_(new ConversationListModel(store_.get(), this)),
      worker_(new EngineWorker()) {
    registerEngineMetaTypes();
    const store::StoreError opened = store_->open(databasePath.isEmpty() ? store::ConversationStore::defaultPath()
                                                                         : databasePath);
    if (!opened) lastError_ = opened.message();

    worker_->moveToThread(&workerThread_);
    connect(&workerThread_, &QThread::finished, worker_, &QObject::deleteLater);
    connect(this, &ChatController::requestLoad, worker_, &EngineWorker::loadModel, Qt::QueuedConnection);
    connect(this, &ChatController::requestGenerate, worker_, &EngineWorker::generate, Qt::QueuedConnection);
    connect(worker_, &EngineWorker::loadProgress, this,
            [this](double f) {
                loadProgress_ = f;
                emit loadProgressChanged();
            },
            Qt::QueuedConnection);
    connect(worker_, &EngineWorker::modelLoaded, this, &ChatController::onModelLoaded, Qt::QueuedConnection);
    connect(worker_, &EngineWorker::loadFailed, this, &ChatController::onLoadFailed, Qt::QueuedConnection);
    connect(worker_, &EngineWorker::replyStarted, this, &ChatController::onReplyStarted, Qt::QueuedConnection);
    connect(worker_, &EngineWorker::pieceGenerated, this, &ChatController::onPiece, Qt::QueuedConnection);
    connect(worker_, &EngineWorker::replyFinished, this, &ChatController::onFinished, Qt::QueuedConnection);
    connect(worker_, &EngineWorker::replyFailed, this, &ChatController::onFailed, Qt::QueuedConnection);
    workerThread_.setObjectName(QStringLiteral("kestrel-engine"));
    workerThread_.start();

    connect(settings_, &SettingsModel::applied, this, [this] {
        const ModelLoadRequest r = settings_->appliedLoadRequest();
        if (r.path != modelInfo_.value(QStringLiteral("path")).toString() || modelState_ != QLatin1String("ready") ||
            r.contextLength != modelInfo_.value(QStringLiteral("requestedContext")).toInt() ||
            r.device != modelInfo_.value(QStringLiteral("device")).toString() ||
            r.chatTemplate != modelInfo_.value(QStringLiteral("chatTemplate")).toString() ||
            r.kvCache != modelInfo_.value(QStringLiteral("requestedKvCache")).toString() ||
            r.draftPath != modelInfo_.value(QStringLiteral("draftPath")).toString())
            loadModel();
    });

    undoTimer_.setSingleShot(true);
    undoTimer_.setInterval(6000);
    connect(&undoTimer_, &QTimer::timeout, this, &ChatController::purgeDeleted);
    // Deleted conversations a previous run could not purge (it was killed).
    store_->purgeDeleted().isOk();
    conversations_->refresh();
}

ChatController::~ChatController() {
    worker_->stop(~quint64(0));
    worker_->cancelLoad();
    workerThread_.quit();
    workerThread_.wait();
    if (activeRequest_ && replyMessageId_) store_->finishReply(replyMessageId_, {}, store::MessageState::Interrupted).isOk();
    purgeDeleted();
    store_->close();
}

QObject* ChatController::messagesObject() const { return messages_; }
QObject* ChatController::conversationsObject() const { return conversations_; }

QString ChatController::currentTitle() const {
    if (!conversationId_) return tr("New chat");
    auto c = store_->conversation(conversationId_);
    return c ? c->title : QString();
}

void ChatController::fail(const QString& message) {
    lastError_ = message;
    emit errorOccurred(message);
}

void ChatController::start() {
    const QString path = settings_->appliedModelPath();
    if (!QFileInfo::exists(path)) {
        emit needsModel(tr("No model file was found at %1. Choose a .gguf model to start chatting.").arg(path));
        return;
    }
    loadModel();
}

void ChatController::loadModel() {
    const ModelLoadRequest request = settings_->appliedLoadRequest();
    if (activeRequest_) stop();
    modelState_ = QStringLiteral("loading");
    loadProgress_ = 0;
    modelInfo_ = {{QStringLiteral("path"), request.path},
                  {QStringLiteral("fileName"), QFileInfo(request.path).fileName()},
                  {QStringLiteral("requestedContext"), request.contextLength},
                  {QStringLiteral("device"), request.device},
                  {QStringLiteral("chatTemplate"), request.chatTemplate},
                  {QStringLiteral("requestedKvCache"), request.kvCache},
                  {QStringLiteral("draftPath"), request.draftPath}};
    emit modelStateChanged();
    emit loadProgressChanged();
    emit requestLoad(request);
}

void ChatController::cancelLoad() { worker_->cancelLoad(); }

void ChatController::onModelLoaded(const ModelSummary& summary) {
    QVariantMap info = summary.toVariantMap();
    info.insert(QStringLiteral("requestedContext"), modelInfo_.value(QStringLiteral("requestedContext")));
    info.insert(QStringLiteral("device"), modelInfo_.value(QStringLiteral("device")));
    info.insert(QStringLiteral("chatTemplate"), modelInfo_.value(QStringLiteral("chatTemplate")));
    info.insert(QStringLiteral("requestedKvCache"), modelInfo_.value(QStringLiteral("requestedKvCache")));
    info.insert(QStringLiteral("draftPath"), modelInfo_.value(QStringLiteral("draftPath")));
    modelInfo_ = info;
    modelState_ = QStringLiteral("ready");
    contextLength_ = summary.contextLength;
    contextUsed_ = 0;
    settings_->setLoadedModelInfo(info);
    emit modelStateChanged();
    emit statsChanged();
}

void ChatController::onLoadFailed(const QString& message, bool cancelled) {
    modelState_ = cancelled ? QStringLiteral("none") : QStringLiteral("error");
    emit modelStateChanged();
    if (cancelled) return;
    fail(tr("The model could not be loaded: %1").arg(message));
    emit needsModel(tr("The model could not be loaded: %1").arg(message));
}

qint64 ChatController::lastMessageId() const {
    const auto& items = messages_->items();
    return items.isEmpty() ? 0 : items.back().id;
}

void ChatController::reloadMessages() {
    QList<MessageItem> items;
    if (conversationId_) {
        auto branch = store_->activeBranch(conversationId_);
        if (!branch) {
            fail(branch.error().message());
        } else {
            for (const store::Message& m : branch.value()) {
                MessageItem item;
                item.id = m.id;
                item.parentId = m.parentId;
                item.role = store::roleName(m.role);
                item.content = m.content;
                item.reasoning = m.reasoning;
                item.state = store::stateName(m.state);
                item.error = m.error;
                item.tokensPerSecond = m.tokensPerSecond;
                item.stopReason = m.stopReason;
                if (auto s = store_->siblings(m.id)) {
                    item.siblingIndex = s->index;
                    item.siblingCount = s->count;
                }
                items.append(item);
            }
        }
    }
    messages_->setMessages(std::move(items));
}

bool ChatController::send(const QString& text) {
    const QString content = text.trimmed();
    if (content.isEmpty() || generating()) return false;
    if (modelState_ != QLatin1String("ready")) {
        fail(modelState_ == QLatin1String("loading") ? tr("The model is still loading; wait a moment.")
                                                     : tr("No model is loaded. Open Settings (Ctrl+,) to choose one."));
        return false;
    }
    if (!conversationId_) {
        auto created = store_->createConversation(titleFrom(content), modelInfo_.value(QStringLiteral("name")).toString(),
                                                  settings_->appliedSystemPrompt());
        if (!created) {
            fail(created.error().message());
            return false;
        }
        conversationId_ = created.value();
        emit currentConversationChanged();
    }
    store::NewMessage message;
    message.role = store::MessageRole::User;
    message.content = content;
    auto added = store_->addMessage(conversationId_, lastMessageId(), message);
    if (!added) {
        fail(added.error().message());
        return false;
    }
    return startReply(added.value());
}

bool ChatController::startReply(qint64 parentId) {
    const QString modelName = modelInfo_.value(QStringLiteral("name")).toString();
    auto reply = store_->beginStreamingReply(conversationId_, parentId, modelName,
                                             QJsonObject::fromVariantMap(settings_->appliedSamplingJson()));
    if (!reply) {
        fail(reply.error().message());
        reloadMessages();
        return false;
    }
    replyMessageId_ = reply.value();
    reloadMessages();
    conversations_->refresh();
    requestReply(false);
    return true;
}

bool ChatController::continueReply() {
    if (generating() || modelState_ != QLatin1String("ready")) return false;
    const auto& items = messages_->items();
    if (items.isEmpty() || !items.back().continuable()) return false;
    const qint64 id = items.back().id;
    auto before = store_->message(id);
    if (!before) {
        fail(before.error().message());
        return false;
    }
    if (const store::StoreError resumed = store_->resumeReply(id); !resumed) {
        fail(resumed.message());
        return false;
    }
    continued_ = before.value();
    replyMessageId_ = id;
    messages_->setState(id, QStringLiteral("streaming"));
    messages_->setStopReason(id, {});
    requestReply(true);
    return true;
}

// Sends the branch up to the reply being written (replyMessageId_) to the engine;
// `continuing`: that reply too, its text so far left open for the model to go on.
void ChatController::requestReply(bool continuing) {
    GenerationRequest request;
    settings_->fillGenerationRequest(&request);
    request.conversationKey = QStringLiteral("conversation-%1").arg(conversationId_);
    request.continueLast = continuing;
    const QString system = settings_->appliedSystemPrompt();
    if (!system.trimmed().isEmpty()) request.messages.append({QStringLiteral("system"), system, {}});
    for (const MessageItem& m : messages_->items()) {
        if (m.id == replyMessageId_ && !continuing) break;
        if (m.role == QLatin1String("user") || m.role == QLatin1String("assistant"))
            request.messages.append({m.role, m.content, m.reasoning});
        if (m.id == replyMessageId_) break;
    }
    splitter_ = ThinkSplitter();
    replyTokens_ = 0;
    replyClock_.invalidate();
    activeRequest_ = ++nextRequest_;
    emit generatingChanged();
    emit replyStarted(replyMessageId_);
    emit requestGenerate(activeRequest_, request);
}

void ChatController::stop() {
    if (activeRequest_) worker_->stop(activeRequest_);
}

void ChatController::onReplyStarted(quint64 requestId, bool startsInReasoning) {
    if (requestId == activeRequest_ && startsInReasoning) splitter_.startInReasoning();
}

void ChatController::onPiece(quint64 requestId, const QString& text, int tokens) {
    if (requestId != activeRequest_) return;
    if (!replyClock_.isValid()) replyClock_.start();
    replyTokens_ += tokens;
    const ThinkSplitter::Delta d = splitter_.push(text);
    if (!d.content.isEmpty() || !d.reasoning.isEmpty()) {
        store_->appendToStreamingReply(replyMessageId_, d.content, d.reasoning).isOk();
        messages_->appendText(replyMessageId_, d.content, d.reasoning);
    }
    const qint64 ms = replyClock_.elapsed();
    if (ms > 200 && replyTokens_ > 1) {
        tokensPerSecond_ = 1000.0 * (replyTokens_ - 1) / double(ms);
        messages_->setTokensPerSecond(replyMessageId_, tokensPerSecond_);
    }
    ++contextUsed_;
    emit statsChanged();
}

void ChatController::onFinished(quint64 requestId, const GenerationStats& stats) {
    if (requestId != activeRequest_) return;
    const ThinkSplitter::Delta d = splitter_.flush();
    if (!d.content.isEmpty() || !d.reasoning.isEmpty()) {
        store_->appendToStreamingReply(replyMessageId_, d.content, d.reasoning).isOk();
        messages_->appendText(replyMessageId_, d.content, d.reasoning);
    }
    const bool cancelled = stats.stopReason == QLatin1String("cancelled");
    store::ReplyStats s;
    s.promptTokens = stats.promptTokens;
    s.completionTokens = stats.completionTokens + (continued_ ? std::max(0, continued_->completionTokens) : 0);
    s.tokensPerSecond = stats.tokensPerSecond;
    s.stopReason = store::isKnownStopReason(stats.stopReason) ? stats.stopReason : QString();
    const store::StoreError saved =
        store_->finishReply(replyMessageId_, s, cancelled ? store::MessageState::Interrupted : store::MessageState::Complete);
    if (!saved) fail(saved.message());
    messages_->setState(replyMessageId_, cancelled ? QStringLiteral("interrupted") : QStringLiteral("complete"));
    messages_->setStopReason(replyMessageId_, s.stopReason);
    if (stats.tokensPerSecond > 0) {
        tokensPerSecond_ = stats.tokensPerSecond;
        messages_->setTokensPerSecond(replyMessageId_, stats.tokensPerSecond);
    }
    if (stats.contextLength > 0) {
        contextUsed_ = stats.contextUsed;
        contextLength_ = stats.contextLength;
    }
    const qint64 id = replyMessageId_;
    endReply();
    emit statsChanged();
    emit replyEnded(id, stats.stopReason);
}

void ChatController::onFailed(quint64 requestId, const QString& message) {
    if (requestId != activeRequest_) return;
    if (continued_) {
        // The reply was fine before; keep it as it was (with any text that came) and say why.
        store::ReplyStats before{continued_->promptTokens, continued_->completionTokens, continued_->tokensPerSecond,
                                 continued_->stopReason};
        store_->finishReply(replyMessageId_, before, continued_->state).isOk();
        messages_->setState(replyMessageId_, store::stateName(continued_->state));
        messages_->setStopReason(replyMessageId_, continued_->stopReason);
    } else {
        store_->failReply(replyMessageId_, message).isOk();
        messages_->setState(replyMessageId_, QStringLiteral("error"), message);
    }
    const qint64 id = replyMessageId_;
    endReply();
    fail(message);
    emit replyEnded(id, QStringLiteral("error"));
}

void ChatController::endReply() {
    activeRequest_ = 0;
    replyMessageId_ = 0;
    continued_.reset();
    conversations_->refresh();
    emit generatingChanged();
}

bool ChatController::regenerate() {
    if (generating() || modelState_ != QLatin1String("ready")) return false;
    const auto& items = messages_->items();
    for (auto it = items.rbegin(); it != items.rend(); ++it) {
        if (it->role == QLatin1String("assistant")) return startReply(it->parentId);
        if (it->role == QLatin1String("user")) return startReply(it->id);  // a reply that never came
    }
    return false;
}

bool ChatController::editMessage(qint64 messageId, const QString& newText) {
    if (generating() || newText.trimmed().isEmpty()) return false;
    auto original = store_->message(messageId);
    if (!original || original->conversationId != conversationId_) return false;
    const bool reply = original->role == store::MessageRole::Assistant;
    if (!reply && (original->role != store::MessageRole::User || modelState_ != QLatin1String("ready"))) return false;
    store::NewMessage message;
    message.role = original->role;
    message.content = newText.trimmed();
    if (reply) {
        message.model = original->model;
        message.stopReason = QStringLiteral("edited");
    }
    auto added = store_->addMessage(conversationId_, original->parentId, message);
    if (!added) {
        fail(added.error().message());
        return false;
    }
    if (!reply) return startReply(added.value());
    reloadMessages();
    conversations_->refresh();
    return true;
}

bool ChatController::switchBranch(qint64 messageId, int delta) {
    if (generating()) return false;
    auto siblings = store_->siblings(messageId);
    if (!siblings) return false;
    const int target = siblings->index + delta;
    if (target < 0 || target >= siblings->ids.size()) return false;
    auto leaf = store_->selectBranch(siblings->ids[target]);
    if (!leaf) {
        fail(leaf.error().message());
        return false;
    }
    reloadMessages();
    return true;
}

void ChatController::newConversation() {
    if (generating()) stop();
    conversationId_ = 0;
    messages_->setMessages({});
    contextUsed_ = 0;
    emit statsChanged();
    emit currentConversationChanged();
}

bool ChatController::selectConversation(qint64 id) {
    if (id == conversationId_) return true;
    if (generating()) return false;
    auto c = store_->conversation(id);
    if (!c || c->deletedAt.isValid()) return false;
    conversationId_ = id;
    reloadMessages();
    emit currentConversationChanged();
    return true;
}

bool ChatController::renameConversation(qint64 id, const QString& title) {
    if (title.trimmed().isEmpty()) return false;
    const store::StoreError e = store_->renameConversation(id, title.trimmed());
    if (!e) {
        fail(e.message());
        return false;
    }
    conversations_->refresh();
    if (id == conversationId_) emit currentConversationChanged();
    return true;
}

bool ChatController::deleteConversation(qint64 id) {
    if (id == conversationId_ && generating()) return false;
    purgeDeleted();  // one undo at a time: an older pending delete becomes final
    auto c = store_->conversation(id);
    const store::StoreError e = store_->deleteConversation(id);
    if (!e) {
        fail(e.message());
        return false;
    }
    pendingUndoId_ = id;
    pendingUndoTitle_ = c ? c->title : QString();
    undoTimer_.start();
    emit pendingUndoChanged();
    if (id == conversationId_) newConversation();
    conversations_->refresh();
    return true;
}

bool ChatController::undoDelete() {
    if (!pendingUndoId_) return false;
    const store::StoreError e = store_->restoreConversation(pendingUndoId_);
    undoTimer_.stop();
    pendingUndoId_ = 0;
    pendingUndoTitle_.clear();
    emit pendingUndoChanged();
    conversations_->refresh();
    if (!e) fail(e.message());
    return e.isOk();
}

void ChatController::purgeDeleted() {
    undoTimer_.stop();
    if (!pendingUndoId_) return;
    store_->purgeDeleted().isOk();
    pendingUndoId_ = 0;
    pendingUndoTitle_.clear();
    emit pendingUndoChanged();
}

bool ChatController::exportConversations(const QString& format, const QString& pathOrUrl, bool all) {
    store::ExportFormat f;
    if (format == QLatin1String("md")) f = store::ExportFormat::Markdown;
    else if (format == QLatin1String("json")) f = store::ExportFormat::Json;
    else if (format == QLatin1String("html")) f = store::ExportFormat::Html;
    else if (format == QLatin1String("txt")) f = store::ExportFormat::PlainText;
    else {
        fail(tr("Unknown export format \"%1\".").arg(format));
        return false;
    }
    if (!all && !conversationId_) {
        fail(tr("Open a conversation to export, or export all of them."));
        return false;
    }
    store_->flushStreaming().isOk();
    QList<store::ConversationId> ids;
    if (!all) ids.append(conversationId_);
    const QString path = localPath(pathOrUrl);
    const store::StoreError e = store::Exporter(*store_).exportToFile(ids, f, path);
    if (!e) {
        fail(e.message());
        return false;
    }
    emit exported(path);
    return true;
}

int ChatController::importConversations(const QString& pathOrUrl) {
    auto ids = store::Importer(*store_).importFile(localPath(pathOrUrl));
    if (!ids) {
        fail(ids.error().message());
        return -1;
    }
    conversations_->refresh();
    return int(ids->size());
}

void ChatController::copyText(const QString& text) const {
    if (QClipboard* clipboard = QGuiApplication::clipboard()) clipboard->setText(text);
}

QString ChatController::suggestedExportName(const QString& format) const {
    QString base = conversationId_ ? currentTitle() : tr("Kestrel conversations");
    base.replace(QRegularExpression(QStringLiteral("[/\\\\:*?\"<>|]")), QStringLiteral("_"));
    return base.left(60).trimmed() + QLatin1Char('.') + format;
}

}  // namespace kestrel::desktop
