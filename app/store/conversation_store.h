// ConversationStore: every conversation and message in one SQLite file.
//
// Threading: a store and everything it returns belong to the thread that
// created it (the UI thread in the app). QtSql connections are not shareable
// across threads, and the streaming flush timer runs on that thread's event
// loop. The engine worker never calls the store; the controller on the UI
// thread forwards its pieces with appendToStreamingReply().
//
// Ownership: the store owns its database connection; values it returns are
// copies. Two ConversationStore objects may open the same file (each gets its
// own connection; SQLite's locking and WAL keep them consistent).
//
// Durability: WAL journal, synchronous=NORMAL, foreign keys on. A streaming
// reply is buffered in memory and written at most about once a second (and on
// finish/fail/close), so a killed process loses at most ~1 s of text and the
// file is never inconsistent: each flush is one transaction. On open, replies a
// crashed process left "streaming" become "interrupted" with their text kept.
//
// Errors: every call returns StoreError / StoreResult; no call crashes on a
// read-only folder, a full disk, a damaged file or an unknown id.
//
// Branches: messages form a tree through parentId. Editing user message k adds
// a new user message with k's parent (a sibling of k); regenerating a reply
// adds a new assistant message with the old reply's parent. A conversation
// shows one branch: the path from the root to its active leaf.
#pragma once

#include "store_error.h"
#include "store_types.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <memory>

namespace kestrel::store {

class ConversationStore {
public:
    ConversationStore();
    ~ConversationStore();  // close()
    ConversationStore(const ConversationStore&) = delete;
    ConversationStore& operator=(const ConversationStore&) = delete;

    // QStandardPaths::AppDataLocation + "/kestrel.sqlite" (the app's database).
    static QString defaultPath();
    // The schema version this build writes (PRAGMA user_version after open()).
    static int latestSchemaVersion();

    // Opens or creates the database at `path` (creating its folder), applies
    // pragmas and pending migrations, and turns crash-orphaned "streaming"
    // replies into "interrupted". A file from a newer Kestrel (user_version
    // above latestSchemaVersion()) is refused with Code::Unsupported and left
    // untouched. Reopening closes the previous file first.
    // The first store to open a file owns it (a lock file "<path>.lock"):
    // only the owner recovers crash-orphaned replies, so a second store on the
    // same file never marks another live writer's reply as interrupted.
    StoreError open(const QString& path);
    // Flushes buffered reply text, marks replies still streaming as
    // "interrupted", and closes the connection. Safe to call twice.
    void close();
    bool isOpen() const;
    QString path() const;
    // How many crash-orphaned replies the last open() marked interrupted
    // (always 0 for a store that is not the file's owner).
    int recoveredReplyCount() const;
    // The QSqlDatabase connection name, for diagnostics and tests (run extra
    // pragmas with QSqlDatabase::database(name)); never close it yourself.
    QString connectionName() const;

    // --- conversations -------------------------------------------------------
    StoreResult<ConversationId> createConversation(const QString& title, const QString& model = {},
                                                   const QString& systemPrompt = {});
    StoreError renameConversation(ConversationId id, const QString& title);
    StoreError setConversationModel(ConversationId id, const QString& model);
    StoreError setSystemPrompt(ConversationId id, const QString& systemPrompt);
    // Soft delete: the conversation disappears from listConversations() and
    // search() but stays in the file until purged, so the UI can offer undo.
    StoreError deleteConversation(ConversationId id);
    // Undo of deleteConversation.
    StoreError restoreConversation(ConversationId id);
    // Removes, for good, soft-deleted conversations deleted before `deletedBefore`
    // (default: all of them) with their messages. Returns how many went.
    StoreResult<int> purgeDeleted(const QDateTime& deletedBefore = {});
    // Not deleted, newest first (by updatedAt, then id).
    StoreResult<QList<Conversation>> listConversations() const;
    // Soft-deleted ones, most recently deleted first.
    StoreResult<QList<Conversation>> listDeletedConversations() const;
    // Deleted or not.
    StoreResult<Conversation> conversation(ConversationId id) const;

    // --- messages and branches ----------------------------------------------
    // Adds a message under `parentId` (0 = a root) and makes it the active
    // leaf. The parent must belong to the same conversation.
    StoreResult<MessageId> addMessage(ConversationId conversationId, MessageId parentId,
                                      const NewMessage& message);
    StoreResult<Message> message(MessageId id) const;
    // The active branch: root first, active leaf last. Buffered streaming text
    // is included (it is flushed first).
    StoreResult<QList<Message>> activeBranch(ConversationId conversationId) const;
    // Every message of every branch, in creation order.
    StoreResult<QList<Message>> allMessages(ConversationId conversationId) const;
    // Direct children of `parentId` (0 = the roots) in creation order.
    StoreResult<QList<Message>> children(ConversationId conversationId, MessageId parentId) const;
    // `id` among the messages sharing its parent (itself included).
    StoreResult<SiblingInfo> siblings(MessageId id) const;
    // Makes `leafId` (any message of the conversation) the end of the shown branch.
    StoreError setActiveLeaf(ConversationId conversationId, MessageId leafId);
    // Branch switching: shows the branch through `id`, following the newest
    // child at each step below it. Returns the new active leaf.
    StoreResult<MessageId> selectBranch(MessageId id);

    // --- streaming replies ----------------------------------------------------
    // Creates an empty assistant message in state "streaming" under `parentId`
    // and makes it the active leaf.
    StoreResult<MessageId> beginStreamingReply(ConversationId conversationId, MessageId parentId,
                                               const QString& model, const QJsonObject& settings = {});
    // Re-opens a finished assistant reply (complete or interrupted) for writing, so that
    // appendToStreamingReply adds to its text and finishReply ends it again: "continue"
    // on a reply cut at its length limit. Its stop reason is cleared until then.
    StoreError resumeReply(MessageId id);
    // Appends text (and/or folded reasoning text). Buffered: written when the
    // last write is about a second old (checked here and by a timer when the
    // thread runs an event loop), so calling this per token is cheap.
    StoreError appendToStreamingReply(MessageId id, const QString& content,
                                      const QString& reasoning = {});
    // Writes every buffered piece now.
    StoreError flushStreaming();
    // Ends a reply: flushes, records the stats, state becomes `finalState`
    // (Complete, or Interrupted when the user stopped it).
    StoreError finishReply(MessageId id, const ReplyStats& stats,
                           MessageState finalState = MessageState::Complete);
    // Ends a reply with an engine error; the text so far is kept.
    StoreError failReply(MessageId id, const QString& error);
    // The longest a piece may wait in memory (default 1000 ms; tests shorten it).
    void setFlushIntervalMs(int ms);

    // --- search ---------------------------------------------------------------
    // Full-text search (FTS5) over message text and conversation titles of
    // conversations that are not deleted; best matches first. The query is
    // user text: each word is quoted, so quotes, '*', '-', "NEAR(" or "OR"
    // are searched for literally and can never cause a syntax error. All words
    // must match (prefix match on the last word, for search-as-you-type).
    // An empty query returns no hits.
    StoreResult<QList<SearchHit>> search(const QString& query, int limit = 50) const;

    // --- whole conversations (export / import) ------------------------------
    StoreResult<ConversationSnapshot> snapshot(ConversationId id) const;
    // Inserts a conversation with fresh ids, mapping parent links and the
    // active leaf through the new ids; one transaction (all or nothing).
    // Streaming states in the snapshot are stored as interrupted.
    StoreResult<ConversationId> insertSnapshot(const ConversationSnapshot& snapshot);

    struct Impl;  // store_impl.h; public only so the implementation files can share it

private:
    std::unique_ptr<Impl> d_;
};

}  // namespace kestrel::store
