// Whole conversations in and out, for export and import.
#include "conversation_store.h"

#include "store_impl.h"

#include <QHash>
#include <QSqlQuery>

namespace kestrel::store {

StoreResult<ConversationSnapshot> ConversationStore::snapshot(ConversationId id) const {
    auto conv = conversation(id);
    if (!conv) return conv.error();
    auto messages = allMessages(id);
    if (!messages) return messages.error();
    return ConversationSnapshot{std::move(*conv), std::move(*messages)};
}

StoreResult<ConversationId> ConversationStore::insertSnapshot(const ConversationSnapshot& snapshot) {
    if (!d_->open) return d_->notOpen();
    const Conversation& c = snapshot.conversation;
    // Multi-argument arg() below: the title is user text and may contain "%1".
    const QString doing = QStringLiteral("import the conversation \"%1\"").arg(c.title.left(80));
    sql::Transaction tx(d_->db(), d_->path);
    KESTREL_STORE_TRY(tx.begin(doing));
    const qint64 now = sql::nowMs();
    QSqlQuery q(d_->db());
    KESTREL_STORE_TRY(d_->run(q,
        QStringLiteral("INSERT INTO conversations (title, created_at, updated_at, model, system_prompt) "
                       "VALUES (?, ?, ?, ?, ?)"),
        {c.title.simplified(), c.createdAt.isValid() ? sql::toMs(c.createdAt) : now,
         c.updatedAt.isValid() ? sql::toMs(c.updatedAt) : now, c.model, c.systemPrompt},
        doing));
    const ConversationId newId = q.lastInsertId().toLongLong();

    QHash<MessageId, MessageId> idMap;
    for (const Message& m : snapshot.messages) {
        MessageId parent = 0;
        if (m.parentId > 0) {
            const auto it = idMap.constFind(m.parentId);
            if (it == idMap.constEnd())
                return {StoreError::Code::InvalidFile,
                        QStringLiteral("cannot %1: message %2 comes before its parent %3")
                            .arg(doing, QString::number(m.id), QString::number(m.parentId))};
            parent = *it;
        }
        NewMessage n;
        n.role = m.role;
        n.content = m.content;
        n.reasoning = m.reasoning;
        n.model = m.model;
        n.promptTokens = m.promptTokens;
        n.completionTokens = m.completionTokens;
        n.tokensPerSecond = m.tokensPerSecond;
        n.settings = m.settings;
        // Nobody is writing an imported reply any more.
        n.state = m.state == MessageState::Streaming ? MessageState::Interrupted : m.state;
        n.error = m.error;
        n.stopReason = m.stopReason;
        auto inserted = insertMessageRow(*d_, newId, parent, n, m.createdAt, false);
        if (!inserted) return inserted.error();
        if (idMap.contains(m.id))
            return {StoreError::Code::InvalidFile, QStringLiteral("cannot %1: message id %2 appears twice").arg(doing, QString::number(m.id))};
        idMap.insert(m.id, *inserted);
    }
    MessageId leaf = 0;
    if (c.activeLeafId > 0) leaf = idMap.value(c.activeLeafId, 0);
    if (leaf == 0 && !snapshot.messages.isEmpty()) leaf = idMap.value(snapshot.messages.last().id);
    if (leaf > 0)
        KESTREL_STORE_TRY(d_->run(q, QStringLiteral("UPDATE conversations SET active_leaf_id = ? WHERE id = ?"),
                                  {leaf, newId}, doing));
    KESTREL_STORE_TRY(tx.commit(doing));
    return newId;
}

}  // namespace kestrel::store
