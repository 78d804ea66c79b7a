// Streaming replies: text arrives per token on the UI thread and is written
// in batches, at most about once per flush interval, each batch one
// transaction. What a SIGKILL can lose is the text of the current batch.
#include "conversation_store.h"

#include "store_impl.h"

#include <QAbstractEventDispatcher>
#include <QSqlQuery>
#include <QtDebug>

namespace kestrel::store {

StoreError ConversationStore::Impl::flush() {
    if (!open) return StoreError::ok();
    bool any = false;
    for (auto it = streaming.cbegin(); it != streaming.cend() && !any; ++it)
        any = !it->content.isEmpty() || !it->reasoning.isEmpty();
    if (!any) return StoreError::ok();

    const QString doing = QStringLiteral("save the reply being written");
    sql::Transaction tx(db(), path);
    KESTREL_STORE_TRY(tx.begin(doing));
    {
        QSqlQuery q(db());
        for (auto it = streaming.cbegin(); it != streaming.cend(); ++it) {
            if (it->content.isEmpty() && it->reasoning.isEmpty()) continue;
            KESTREL_STORE_TRY(run(q,
                QStringLiteral("UPDATE messages SET content = content || ?, reasoning = reasoning || ? WHERE id = ?"),
                {it->content, it->reasoning, it.key()}, doing));
        }
    }
    // On failure the text stays pending and the next flush retries it.
    KESTREL_STORE_TRY(tx.commit(doing));
    for (auto it = streaming.begin(); it != streaming.end(); ++it) {
        it->content.clear();
        it->reasoning.clear();
    }
    sinceFlush.restart();
    return StoreError::ok();
}

void ConversationStore::Impl::armFlushTimer() {
    // Without an event loop (a plain thread, a test without QCoreApplication)
    // the check in appendToStreamingReply is the only trigger.
    if (!QAbstractEventDispatcher::instance()) return;
    if (!flushTimer) {
        flushTimer = std::make_unique<QTimer>();
        flushTimer->setSingleShot(true);
        QObject::connect(flushTimer.get(), &QTimer::timeout, [this] {
            const StoreError err = flush();
            if (!err) qWarning("kestrel store: %s", qPrintable(err.message()));
        });
    }
    if (flushTimer->isActive()) return;
    flushTimer->start(int(std::max<qint64>(0, flushIntervalMs - sinceFlush.elapsed())));
}

StoreResult<MessageId> ConversationStore::beginStreamingReply(ConversationId conversationId, MessageId parentId,
                                                              const QString& model, const QJsonObject& settings) {
    if (!d_->open) return d_->notOpen();
    const QString doing = QStringLiteral("start a reply in conversation %1").arg(conversationId);
    NewMessage m;
    m.role = MessageRole::Assistant;
    m.model = model;
    m.settings = settings;
    m.state = MessageState::Streaming;
    sql::Transaction tx(d_->db(), d_->path);
    KESTREL_STORE_TRY(tx.begin(doing));
    auto id = insertMessageRow(*d_, conversationId, parentId, m, {}, true);
    if (!id) return id.error();
    if (!model.isEmpty()) {
        QSqlQuery q(d_->db());
        KESTREL_STORE_TRY(d_->run(q, QStringLiteral("UPDATE conversations SET model = ? WHERE id = ?"),
                                  {model, conversationId}, doing));
    }
    KESTREL_STORE_TRY(tx.commit(doing));
    d_->trackStreaming(*id);
    return *id;
}

StoreError ConversationStore::resumeReply(MessageId id) {
    if (!d_->open) return d_->notOpen();
    const QString doing = QStringLiteral("continue reply %1").arg(id);
    sql::Transaction tx(d_->db(), d_->path);
    KESTREL_STORE_TRY(tx.begin(doing));
    QSqlQuery q(d_->db());
    KESTREL_STORE_TRY(d_->run(q, QStringLiteral("SELECT conversation_id, role, state FROM messages WHERE id = ?"), {id}, doing));
    if (!q.next()) return {StoreError::Code::NotFound, QStringLiteral("cannot %1: there is no message %2").arg(doing).arg(id)};
    const ConversationId conversationId = q.value(0).toLongLong();
    const QString role = q.value(1).toString(), state = q.value(2).toString();
    if (role != QLatin1String("assistant") ||
        (state != QLatin1String("complete") && state != QLatin1String("interrupted")))
        return {StoreError::Code::InvalidArgument,
                QStringLiteral("cannot %1: only a finished assistant reply can be continued (this is a %2 message, %3)")
                    .arg(doing, role, state)};
    KESTREL_STORE_TRY(d_->run(q, QStringLiteral("UPDATE messages SET state = 'streaming', stop_reason = '' WHERE id = ?"),
                              {id}, doing));
    KESTREL_STORE_TRY(tx.commit(doing));
    d_->trackStreaming(id);
    return d_->touch(conversationId);
}

StoreError ConversationStore::appendToStreamingReply(MessageId id, const QString& content, const QString& reasoning) {
    if (!d_->open) return d_->notOpen();
    auto it = d_->streaming.find(id);
    if (it == d_->streaming.end())
        return {StoreError::Code::InvalidArgument,
                QStringLiteral("message %1 is not a reply being written by this store (finished already?)").arg(id)};
    it->content += content;
    it->reasoning += reasoning;
    if (d_->sinceFlush.elapsed() >= d_->flushIntervalMs) return d_->flush();
    d_->armFlushTimer();
    return StoreError::ok();
}

StoreError ConversationStore::flushStreaming() {
    if (!d_->open) return d_->notOpen();
    return d_->flush();
}

namespace {

StoreError endReply(ConversationStore::Impl& d, MessageId id, const QString& setSql,
                    std::initializer_list<QVariant> values, const QString& doing) {
    if (!d.open) return d.notOpen();
    KESTREL_STORE_TRY(d.flush());
    QSqlQuery q(d.db());
    KESTREL_STORE_TRY(d.run(q, QStringLiteral("SELECT conversation_id, state FROM messages WHERE id = ?"), {id}, doing));
    if (!q.next()) {
        d.streaming.remove(id);  // purged while streaming: nothing left to write
        return {StoreError::Code::NotFound, QStringLiteral("cannot %1: there is no message %2").arg(doing).arg(id)};
    }
    const ConversationId conversationId = q.value(0).toLongLong();
    if (q.value(1).toString() != QLatin1String("streaming"))
        return {StoreError::Code::InvalidArgument,
                QStringLiteral("cannot %1: message %2 is not being written (state %3)").arg(doing).arg(id).arg(q.value(1).toString())};
    QVariantList all(values);
    all.append(id);
    KESTREL_STORE_TRY(sql::run(q, QStringLiteral("UPDATE messages SET %1 WHERE id = ?").arg(setSql), all, doing, d.path));
    d.streaming.remove(id);
    return d.touch(conversationId);
}

}  // namespace

StoreError ConversationStore::finishReply(MessageId id, const ReplyStats& stats, MessageState finalState) {
    if (finalState != MessageState::Complete && finalState != MessageState::Interrupted)
        return {StoreError::Code::InvalidArgument,
                QStringLiteral("finishReply ends a reply as complete or interrupted; use failReply for errors")};
    if (!isKnownStopReason(stats.stopReason))
        return {StoreError::Code::InvalidArgument, QStringLiteral("unknown stop reason \"%1\"").arg(stats.stopReason.left(40))};
    return endReply(*d_, id,
        QStringLiteral("state = ?, prompt_tokens = ?, completion_tokens = ?, tokens_per_second = ?, stop_reason = ?"),
        {stateName(finalState),
         stats.promptTokens >= 0 ? QVariant(stats.promptTokens) : QVariant(QMetaType(QMetaType::Int)),
         stats.completionTokens >= 0 ? QVariant(stats.completionTokens) : QVariant(QMetaType(QMetaType::Int)),
         stats.tokensPerSecond > 0 ? QVariant(stats.tokensPerSecond) : QVariant(QMetaType(QMetaType::Double)),
         stats.stopReason},
        QStringLiteral("finish reply %1").arg(id));
}

StoreError ConversationStore::failReply(MessageId id, const QString& error) {
    return endReply(*d_, id, QStringLiteral("state = 'error', error = ?"), {error},
                    QStringLiteral("record the error of reply %1").arg(id));
}

void ConversationStore::setFlushIntervalMs(int ms) { d_->flushIntervalMs = std::max(0, ms); }

}  // namespace kestrel::store
