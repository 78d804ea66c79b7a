// ConversationStore's private state, shared by the files that implement it
// (conversation_store.cpp, store_messages.cpp, streaming_writer.cpp,
// store_search.cpp, store_snapshot.cpp). Internal to app/store.
#pragma once

#include "conversation_store.h"
#include "store_sql.h"

#include <QElapsedTimer>
#include <QHash>
#include <QLockFile>
#include <QSqlDatabase>
#include <QString>
#include <QTimer>

#include <memory>

namespace kestrel::store {

// Text received for a streaming reply but not yet written.
struct PendingReply {
    QString content;
    QString reasoning;
};

struct ConversationStore::Impl {
    QString connectionName;
    QString path;
    bool open = false;
    int recovered = 0;
    // Held while open: the first store to open a file owns its streaming rows;
    // a second store (same or another live process) must not treat them as
    // orphans. A dead owner's lock is stale and taken over.
    std::unique_ptr<QLockFile> ownerLock;

    // Streaming: replies begun by this store and not yet finished (with their
    // unwritten text), when the last flush happened, and the timer that
    // flushes a reply whose tokens stopped arriving.
    QHash<MessageId, PendingReply> streaming;
    QElapsedTimer sinceFlush;
    int flushIntervalMs = 1000;
    std::unique_ptr<QTimer> flushTimer;

    QSqlDatabase db() const { return QSqlDatabase::database(connectionName, false); }

    StoreError notOpen() const {
        return {StoreError::Code::Internal,
                QStringLiteral("the conversation store is not open (call open() first)")};
    }
    StoreError run(QSqlQuery& q, const QString& sqlText, std::initializer_list<QVariant> values,
                   const QString& doing) const {
        return sql::run(q, sqlText, values, doing, path);
    }

    // Bumps a conversation's updated_at.
    StoreError touch(ConversationId id) const;
    // Writes every pending piece in one transaction.
    StoreError flush();
    // Starts buffering reply `id` (begun or resumed). The flush interval counts from
    // the start of a reply, so its first token is not written on its own just because
    // the last flush was long ago.
    void trackStreaming(MessageId id) {
        if (streaming.isEmpty()) sinceFlush.restart();
        streaming.insert(id, PendingReply{});
    }
    void armFlushTimer();
};

// Reads a messages row selected with kMessageColumns.
Message messageFromQuery(const QSqlQuery& q);
inline constexpr const char* kMessageColumns =
    "id, conversation_id, parent_id, role, content, reasoning, created_at, model, prompt_tokens, "
    "completion_tokens, tokens_per_second, settings_json, state, error, stop_reason";

Conversation conversationFromQuery(const QSqlQuery& q);
inline constexpr const char* kConversationColumns =
    "id, title, created_at, updated_at, model, system_prompt, active_leaf_id, deleted_at";

// Checks that `parentId` (0 = a root) is in the conversation, inserts the
// row and, when `makeActive`, makes it the active leaf and bumps updated_at.
// The caller owns the transaction. (store_messages.cpp)
StoreResult<MessageId> insertMessageRow(ConversationStore::Impl& d, ConversationId conversationId,
                                        MessageId parentId, const NewMessage& m, const QDateTime& createdAt,
                                        bool makeActive);

}  // namespace kestrel::store
