// The lossless JSON export: every field of every message of every branch.
// parseJsonExport (importer.cpp) reads exactly this shape.
#include "exporter.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace kestrel::store {
namespace {

QJsonValue timeValue(const QDateTime& t) {
    return t.isValid() ? QJsonValue(t.toUTC().toString(Qt::ISODateWithMs)) : QJsonValue(QJsonValue::Null);
}

QJsonValue idValue(qint64 id) { return id > 0 ? QJsonValue(double(id)) : QJsonValue(QJsonValue::Null); }
QJsonValue countValue(int n) { return n >= 0 ? QJsonValue(n) : QJsonValue(QJsonValue::Null); }

QJsonObject messageJson(const Message& m) {
    return QJsonObject{
        {"id", double(m.id)},
        {"parentId", idValue(m.parentId)},
        {"role", roleName(m.role)},
        {"content", m.content},
        {"reasoning", m.reasoning},
        {"createdAt", timeValue(m.createdAt)},
        {"model", m.model},
        {"promptTokens", countValue(m.promptTokens)},
        {"completionTokens", countValue(m.completionTokens)},
        {"tokensPerSecond", m.tokensPerSecond > 0 ? QJsonValue(m.tokensPerSecond) : QJsonValue(QJsonValue::Null)},
        {"settings", m.settings},
        {"state", stateName(m.state)},
        {"error", m.error},
        {"stopReason", m.stopReason},
    };
}

QJsonObject conversationJson(const ConversationSnapshot& s) {
    QJsonArray messages;
    for (const Message& m : s.messages) messages.append(messageJson(m));
    const Conversation& c = s.conversation;
    return QJsonObject{
        {"id", double(c.id)},
        {"title", c.title},
        {"createdAt", timeValue(c.createdAt)},
        {"updatedAt", timeValue(c.updatedAt)},
        {"model", c.model},
        {"systemPrompt", c.systemPrompt},
        {"activeLeafId", idValue(c.activeLeafId)},
        {"deletedAt", timeValue(c.deletedAt)},  // informational: imports are never deleted
        {"messages", messages},
    };
}

}  // namespace

QByteArray renderJson(const QList<ConversationSnapshot>& conversations) {
    QJsonArray list;
    for (const ConversationSnapshot& s : conversations) list.append(conversationJson(s));
    const QJsonObject root{
        {"format", QLatin1String(kJsonFormatName)},
        {"version", kJsonFormatVersion},
        {"exportedAt", QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
        {"conversations", list},
    };
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

}  // namespace kestrel::store
