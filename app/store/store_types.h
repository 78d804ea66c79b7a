// Plain value types the conversation store hands out. They are snapshots:
// changing one changes nothing in the database.
#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QtGlobal>

#include <utility>

namespace kestrel::store {

using ConversationId = qint64;  // > 0; 0 means "none"
using MessageId = qint64;       // > 0; 0 means "none" (a root message has parentId 0)

enum class MessageRole { System, User, Assistant, Tool };

// complete: finished normally. streaming: being written now (only while the
// store that began it is open). interrupted: stopped by the user, or found
// still "streaming" after a crash (its text up to the last flush is kept).
// error: the engine failed; Message::error says why.
enum class MessageState { Complete, Streaming, Interrupted, Error };

// Stable lower-case names used in the database and in exported files
// ("user", "assistant", "complete", "interrupted", ...).
QString roleName(MessageRole role);
bool roleFromName(const QString& name, MessageRole* out);
QString stateName(MessageState state);
bool stateFromName(const QString& name, MessageState* out);

struct Conversation {
    ConversationId id = 0;
    QString title;
    QDateTime createdAt;  // UTC, millisecond precision
    QDateTime updatedAt;  // bumped by every change to the conversation or its messages
    QString model;        // the model last used in it (a display name or file name)
    QString systemPrompt;
    MessageId activeLeafId = 0;  // the last message of the branch shown; 0 when empty
    QDateTime deletedAt;         // invalid unless soft-deleted (see deleteConversation)
};

struct Message {
    MessageId id = 0;
    ConversationId conversationId = 0;
    MessageId parentId = 0;  // 0 for the first message of a conversation
    MessageRole role = MessageRole::User;
    QString content;
    QString reasoning;  // folded <think> text, kept apart from the answer
    QDateTime createdAt;
    QString model;             // the model that wrote an assistant reply
    int promptTokens = -1;     // -1 when unknown / not applicable
    int completionTokens = -1;
    double tokensPerSecond = 0.0;  // 0 when unknown
    QJsonObject settings;  // the sampling settings the reply was made with (free-form)
    MessageState state = MessageState::Complete;
    QString error;  // set when state == Error
    // Why a reply stopped, as the engine says it ("eos", "max_tokens", "stop_string",
    // "context_full", "cancelled"), or "edited" for a reply the user rewrote; empty when
    // unknown (older files, user messages).
    QString stopReason;
};

// What addMessage needs; ids, times and the conversation come from the store.
struct NewMessage {
    MessageRole role = MessageRole::User;
    QString content;
    QString reasoning;
    QString model;
    int promptTokens = -1;
    int completionTokens = -1;
    double tokensPerSecond = 0.0;
    QJsonObject settings;
    MessageState state = MessageState::Complete;
    QString error;
    QString stopReason;  // as Message::stopReason
};

// What finishReply records about a finished generation.
struct ReplyStats {
    int promptTokens = -1;
    int completionTokens = -1;
    double tokensPerSecond = 0.0;
    QString stopReason;  // as Message::stopReason
};

// The stop reasons a message may record (isKnownStopReason: one of them, or empty).
bool isKnownStopReason(const QString& reason);

// Where a message sits among the messages that share its parent, for the
// "2/3" branch switcher. Siblings are in creation order.
struct SiblingInfo {
    int index = 0;  // 0-based position of the message itself
    int count = 1;  // including the message itself
    QList<MessageId> ids;
};

// One full-text search result. A hit in a title has messageId 0.
// `snippet` is plain text (a window around the match, "…" where cut);
// `highlights` are (start, length) ranges into `snippet` of the matched terms.
// Render with highlightedHtml() or apply the ranges yourself; never treat the
// snippet as markup, it is user text.
struct SearchHit {
    ConversationId conversationId = 0;
    MessageId messageId = 0;
    QString conversationTitle;
    QString snippet;
    QList<std::pair<int, int>> highlights;

    // The snippet HTML-escaped with each highlight wrapped in <b>...</b>.
    QString highlightedHtml() const;
};

// A conversation with every message of every branch, in creation order
// (a parent always precedes its children). What exporters read and the
// importer writes.
struct ConversationSnapshot {
    Conversation conversation;
    QList<Message> messages;
};

}  // namespace kestrel::store
