// Messages and the branch tree: adding, reading paths and siblings, switching branches.
#include "conversation_store.h"

#include "store_impl.h"

#include <QJsonDocument>
#include <QSqlQuery>

namespace kestrel::store {
namespace {

QString settingsToJson(const QJsonObject& settings) {
    return QString::fromUtf8(QJsonDocument(settings).toJson(QJsonDocument::Compact));
}

QJsonObject settingsFromJson(const QString& text) {
    // A hand-edited or damaged column reads as "no settings", not an error:
    // the message itself is still worth showing.
    const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8());
    return doc.isObject() ? doc.object() : QJsonObject();
}

QVariant intOrNull(int v) { return v >= 0 ? QVariant(v) : QVariant(QMetaType(QMetaType::Int)); }

}  // namespace

Message messageFromQuery(const QSqlQuery& q) {
    Message m;
    m.id = q.value(0).toLongLong();
    m.conversationId = q.value(1).toLongLong();
    m.parentId = q.value(2).isNull() ? 0 : q.value(2).toLongLong();
    roleFromName(q.value(3).toString(), &m.role);
    m.content = q.value(4).toString();
    m.reasoning = q.value(5).toString();
    m.createdAt = sql::fromMs(q.value(6));
    m.model = q.value(7).toString();
    m.promptTokens = q.value(8).isNull() ? -1 : q.value(8).toInt();
    m.completionTokens = q.value(9).isNull() ? -1 : q.value(9).toInt();
    m.tokensPerSecond = q.value(10).isNull() ? 0.0 : q.value(10).toDouble();
    m.settings = settingsFromJson(q.value(11).toString());
    stateFromName(q.value(12).toString(), &m.state);
    m.error = q.value(13).toString();
    m.stopReason = q.value(14).toString();
    return m;
}

// Shared by addMessage, beginStreamingReply and insertSnapshot: checks the
// parent, inserts the row and (optionally) makes it the active leaf. The
// caller owns the transaction.
StoreResult<MessageId> insertMessageRow(ConversationStore::Impl& d, ConversationId conversationId,
                                        MessageId parentId, const NewMessage& m, const QDateTime& createdAt,
                                        bool makeActive) {
    const QString doing = QStringLiteral("add a message to conversation %1").arg(conversationId);
    QSqlQuery q(d.db());
    if (parentId > 0) {
        KESTREL_STORE_TRY(d.run(q, QStringLiteral("SELECT conversation_id FROM messages WHERE id = ?"), {parentId}, doing));
        if (!q.next())
            return {StoreError::Code::NotFound, QStringLiteral("cannot %1: its parent message %2 does not exist")
                                                    .arg(doing).arg(parentId)};
        if (q.value(0).toLongLong() != conversationId)
            return {StoreError::Code::InvalidArgument,
                    QStringLiteral("cannot %1: its parent message %2 belongs to conversation %3")
                        .arg(doing).arg(parentId).arg(q.value(0).toLongLong())};
    } else {
        KESTREL_STORE_TRY(d.run(q, QStringLiteral("SELECT 1 FROM conversations WHERE id = ?"), {conversationId}, doing));
        if (!q.next())
            return {StoreError::Code::NotFound,
                    QStringLiteral("cannot %1: there is no such conversation").arg(doing)};
    }
    const qint64 created = createdAt.isValid() ? sql::toMs(createdAt) : sql::nowMs();
    KESTREL_STORE_TRY(d.run(q,
        QStringLiteral("INSERT INTO messages (conversation_id, parent_id, role, content, reasoning, created_at, "
                       "model, prompt_tokens, completion_tokens, tokens_per_second, settings_json, state, error, "
                       "stop_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        {conversationId, sql::idOrNull(parentId), roleName(m.role), m.content, m.reasoning, created, m.model,
         intOrNull(m.promptTokens), intOrNull(m.completionTokens),
         m.tokensPerSecond > 0 ? QVariant(m.tokensPerSecond) : QVariant(QMetaType(QMetaType::Double)),
         settingsToJson(m.settings), stateName(m.state), m.error, m.stopReason},
        doing));
    // lastInsertId must be read before the next statement on this query.
    const MessageId id = q.lastInsertId().toLongLong();
    if (makeActive) {
        KESTREL_STORE_TRY(d.run(q,
            QStringLiteral("UPDATE conversations SET active_leaf_id = ?, updated_at = max(updated_at, ?) WHERE id = ?"),
            {id, created, conversationId}, doing));
    }
    return id;
}

StoreResult<MessageId> ConversationStore::addMessage(ConversationId conversationId, MessageId parentId,
                                                     const NewMessage& message) {
    if (!d_->open) return d_->notOpen();
    if (message.state == MessageState::Streaming)
        return {StoreError::Code::InvalidArgument,
                QStringLiteral("addMessage cannot add a streaming message; use beginStreamingReply")};
    const QString doing = QStringLiteral("add a message to conversation %1").arg(conversationId);
    sql::Transaction tx(d_->db(), d_->path);
    KESTREL_STORE_TRY(tx.begin(doing));
    auto id = insertMessageRow(*d_, conversationId, parentId, message, {}, true);
    if (!id) return id.error();
    KESTREL_STORE_TRY(tx.commit(doing));
    return *id;
}

StoreResult<Message> ConversationStore::message(MessageId id) const {
    if (!d_->open) return d_->notOpen();
    // Reads show buffered text when it can be written; a failing flush (full
    // disk) is reported by the streaming calls, not by every read.
    (void)d_->flush();
    QSqlQuery q(d_->db());
    KESTREL_STORE_TRY(d_->run(q,
        QStringLiteral("SELECT %1 FROM messages WHERE id = ?").arg(QLatin1String(kMessageColumns)), {id},
        QStringLiteral("read message %1").arg(id)));
    if (!q.next()) return {StoreError::Code::NotFound, QStringLiteral("there is no message %1").arg(id)};
    return messageFromQuery(q);
}

namespace {

StoreResult<QList<Message>> readMessages(ConversationStore::Impl& d, const QString& sqlText,
                                         std::initializer_list<QVariant> values, const QString& doing) {
    if (!d.open) return d.notOpen();
    (void)d.flush();  // as in message()
    QSqlQuery q(d.db());
    q.setForwardOnly(true);
    KESTREL_STORE_TRY(d.run(q, sqlText, values, doing));
    QList<Message> out;
    while (q.next()) out.append(messageFromQuery(q));
    return out;
}

}  // namespace

StoreResult<QList<Message>> ConversationStore::activeBranch(ConversationId conversationId) const {
    // Walk up from the leaf; a parent is always older (smaller id) than its
    // children, so id order is root-to-leaf order. The depth bound only guards
    // against a hand-edited file with a parent cycle.
    return readMessages(*d_,
        QStringLiteral("WITH RECURSIVE path(id, depth) AS ("
                       "  SELECT active_leaf_id, 0 FROM conversations WHERE id = ? AND active_leaf_id IS NOT NULL"
                       "  UNION ALL"
                       "  SELECT m.parent_id, p.depth + 1 FROM messages m JOIN path p ON m.id = p.id"
                       "  WHERE m.parent_id IS NOT NULL AND p.depth < 1000000)"
                       "SELECT %1 FROM messages WHERE id IN (SELECT id FROM path) ORDER BY id")
            .arg(QLatin1String(kMessageColumns)),
        {conversationId}, QStringLiteral("read conversation %1").arg(conversationId));
}

StoreResult<QList<Message>> ConversationStore::allMessages(ConversationId conversationId) const {
    return readMessages(*d_,
        QStringLiteral("SELECT %1 FROM messages WHERE conversation_id = ? ORDER BY id").arg(QLatin1String(kMessageColumns)),
        {conversationId}, QStringLiteral("read conversation %1").arg(conversationId));
}

StoreResult<QList<Message>> ConversationStore::children(ConversationId conversationId, MessageId parentId) const {
    return readMessages(*d_,
        QStringLiteral("SELECT %1 FROM messages WHERE conversation_id = ? AND parent_id IS ? ORDER BY id")
            .arg(QLatin1String(kMessageColumns)),
        {conversationId, sql::idOrNull(parentId)},
        QStringLiteral("read the replies to message %1").arg(parentId));
}

StoreResult<SiblingInfo> ConversationStore::siblings(MessageId id) const {
    if (!d_->open) return d_->notOpen();
    const QString doing = QStringLiteral("read the branches at message %1").arg(id);
    QSqlQuery q(d_->db());
    KESTREL_STORE_TRY(d_->run(q, QStringLiteral("SELECT conversation_id, parent_id FROM messages WHERE id = ?"), {id}, doing));
    if (!q.next()) return {StoreError::Code::NotFound, QStringLiteral("there is no message %1").arg(id)};
    const QVariant conversationId = q.value(0);
    const QVariant parent = q.value(1);
    KESTREL_STORE_TRY(d_->run(q,
        QStringLiteral("SELECT id FROM messages WHERE conversation_id = ? AND parent_id IS ? ORDER BY id"),
        {conversationId, parent.isNull() ? QVariant(QMetaType(QMetaType::LongLong)) : parent}, doing));
    SiblingInfo info;
    while (q.next()) {
        const MessageId sibling = q.value(0).toLongLong();
        if (sibling == id) info.index = int(info.ids.size());
        info.ids.append(sibling);
    }
    info.count = int(info.ids.size());
    return info;
}

StoreError ConversationStore::setActiveLeaf(ConversationId conversationId, MessageId leafId) {
    if (!d_->open) return d_->notOpen();
    const QString doing = QStringLiteral("show message %1 in conversation %2").arg(leafId).arg(conversationId);
    QSqlQuery q(d_->db());
    KESTREL_STORE_TRY(d_->run(q, QStringLiteral("SELECT conversation_id FROM messages WHERE id = ?"), {leafId}, doing));
    if (!q.next()) return {StoreError::Code::NotFound, QStringLiteral("cannot %1: no such message").arg(doing)};
    if (q.value(0).toLongLong() != conversationId)
        return {StoreError::Code::InvalidArgument,
                QStringLiteral("cannot %1: the message belongs to conversation %2").arg(doing).arg(q.value(0).toLongLong())};
    // Switching branches is not an edit: updated_at (the sidebar order) stays.
    return d_->run(q, QStringLiteral("UPDATE conversations SET active_leaf_id = ? WHERE id = ?"),
                   {leafId, conversationId}, doing);
}

StoreResult<MessageId> ConversationStore::selectBranch(MessageId id) {
    if (!d_->open) return d_->notOpen();
    const QString doing = QStringLiteral("switch to the branch of message %1").arg(id);
    QSqlQuery q(d_->db());
    KESTREL_STORE_TRY(d_->run(q, QStringLiteral("SELECT conversation_id FROM messages WHERE id = ?"), {id}, doing));
    if (!q.next()) return {StoreError::Code::NotFound, QStringLiteral("cannot %1: no such message").arg(doing)};
    const ConversationId conversationId = q.value(0).toLongLong();
    // Newest child at every level: the branch the user last worked on below it.
    KESTREL_STORE_TRY(d_->run(q,
        QStringLiteral("WITH RECURSIVE down(id, depth) AS ("
                       "  SELECT ?, 0"
                       "  UNION ALL"
                       "  SELECT (SELECT max(c.id) FROM messages c WHERE c.parent_id = down.id), depth + 1 FROM down"
                       "  WHERE down.id IS NOT NULL AND depth < 1000000)"
                       "SELECT id FROM down WHERE id IS NOT NULL ORDER BY depth DESC LIMIT 1"),
        {id}, doing));
    const MessageId leaf = q.next() ? q.value(0).toLongLong() : id;
    KESTREL_STORE_TRY(setActiveLeaf(conversationId, leaf));
    return leaf;
}

}  // namespace kestrel::store
