// Reading a JSON export back. Everything in the file is untrusted: each field
// is type-checked, the parent links must form a forest (no dangling parents,
// no cycles, no duplicate ids), and any problem is an InvalidFile error that
// names the conversation, the message and the field.
#include "exporter.h"

#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>

namespace kestrel::store {
namespace {

using C = StoreError::Code;

// JSON numbers are doubles; ids must be positive integers that fit exactly.
bool readId(const QJsonValue& v, qint64* out) {
    if (!v.isDouble()) return false;
    const double d = v.toDouble();
    if (!(d >= 1 && d <= 9007199254740992.0) || std::floor(d) != d) return false;
    *out = qint64(d);
    return true;
}

class Reader {
public:
    StoreError error;

    bool fail(const QString& where, const QString& what) {
        if (error.isOk()) error = {C::InvalidFile, QStringLiteral("%1: %2").arg(where, what)};
        return false;
    }

    bool string(const QJsonObject& o, const char* key, const QString& where, QString* out, bool required = false) {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined() || v.isNull()) {
            if (required) return fail(where, QStringLiteral("\"%1\" is missing").arg(QLatin1String(key)));
            out->clear();
            return true;
        }
        if (!v.isString()) return fail(where, QStringLiteral("\"%1\" must be a string").arg(QLatin1String(key)));
        *out = v.toString();
        return true;
    }

    bool time(const QJsonObject& o, const char* key, const QString& where, QDateTime* out) {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined() || v.isNull()) {
            *out = QDateTime();
            return true;
        }
        const QDateTime t = v.isString() ? QDateTime::fromString(v.toString(), Qt::ISODateWithMs) : QDateTime();
        if (!t.isValid())
            return fail(where, QStringLiteral("\"%1\" must be an ISO 8601 time like 2026-01-31T12:00:00.000Z").arg(QLatin1String(key)));
        *out = t.toUTC();
        return true;
    }

    bool count(const QJsonObject& o, const char* key, const QString& where, int* out) {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined() || v.isNull()) {
            *out = -1;
            return true;
        }
        const double d = v.toDouble(-1);
        if (!v.isDouble() || d < 0 || d > 2147483647.0 || std::floor(d) != d)
            return fail(where, QStringLiteral("\"%1\" must be a non-negative integer or null").arg(QLatin1String(key)));
        *out = int(d);
        return true;
    }

    bool optionalId(const QJsonObject& o, const char* key, const QString& where, qint64* out) {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined() || v.isNull()) {
            *out = 0;
            return true;
        }
        if (!readId(v, out)) return fail(where, QStringLiteral("\"%1\" must be a positive integer or null").arg(QLatin1String(key)));
        return true;
    }

    bool message(const QJsonValue& value, const QString& where, Message* m) {
        if (!value.isObject()) return fail(where, QStringLiteral("a message must be an object"));
        const QJsonObject o = value.toObject();
        if (!readId(o.value(QLatin1String("id")), &m->id)) return fail(where, QStringLiteral("\"id\" must be a positive integer"));
        const QString here = QStringLiteral("%1 (id %2)").arg(where, QString::number(m->id));
        QString role, state, tps;
        if (!optionalId(o, "parentId", here, &m->parentId)) return false;
        if (!string(o, "role", here, &role, true)) return false;
        if (!roleFromName(role, &m->role))
            return fail(here, QStringLiteral("unknown role \"%1\" (expected system, user, assistant or tool)").arg(role.left(40)));
        if (!string(o, "content", here, &m->content, true) || !string(o, "reasoning", here, &m->reasoning) ||
            !time(o, "createdAt", here, &m->createdAt) || !string(o, "model", here, &m->model) ||
            !count(o, "promptTokens", here, &m->promptTokens) || !count(o, "completionTokens", here, &m->completionTokens) ||
            !string(o, "error", here, &m->error) || !string(o, "stopReason", here, &m->stopReason))
            return false;
        if (!isKnownStopReason(m->stopReason))
            return fail(here, QStringLiteral("unknown stopReason \"%1\"").arg(m->stopReason.left(40)));
        const QJsonValue speed = o.value(QLatin1String("tokensPerSecond"));
        if (speed.isDouble() && std::isfinite(speed.toDouble()) && speed.toDouble() >= 0) m->tokensPerSecond = speed.toDouble();
        else if (!speed.isUndefined() && !speed.isNull()) return fail(here, QStringLiteral("\"tokensPerSecond\" must be a number or null"));
        const QJsonValue settings = o.value(QLatin1String("settings"));
        if (settings.isObject()) m->settings = settings.toObject();
        else if (!settings.isUndefined() && !settings.isNull()) return fail(here, QStringLiteral("\"settings\" must be an object"));
        if (!string(o, "state", here, &state)) return false;
        if (state.isEmpty()) m->state = MessageState::Complete;
        else if (!stateFromName(state, &m->state))
            return fail(here, QStringLiteral("unknown state \"%1\" (expected complete, streaming, interrupted or error)").arg(state.left(40)));
        return true;
    }

    // Orders messages parents-first, keeping the file's order among siblings
    // (that order is the branch order the UI shows), and rejects anything
    // that is not a forest.
    bool orderTree(QList<Message>& messages, const QString& where) {
        QHash<qint64, int> index;
        for (int i = 0; i < messages.size(); ++i) {
            if (index.contains(messages[i].id))
                return fail(where, QStringLiteral("message id %1 appears twice").arg(messages[i].id));
            index.insert(messages[i].id, i);
        }
        QHash<qint64, QList<int>> children;  // parent id (0 = root) -> indices in file order
        for (int i = 0; i < messages.size(); ++i) {
            const qint64 parent = messages[i].parentId;
            if (parent != 0 && !index.contains(parent))
                return fail(where, QStringLiteral("message %1 has parentId %2, which is not in the conversation")
                                       .arg(messages[i].id).arg(parent));
            children[parent].append(i);
        }
        QList<Message> ordered;
        ordered.reserve(messages.size());
        QList<int> stack;  // iterative DFS: deep conversations cannot overflow the stack
        const QList<int> roots = children.value(0);
        for (auto it = roots.crbegin(); it != roots.crend(); ++it) stack.append(*it);
        while (!stack.isEmpty()) {
            const int i = stack.takeLast();
            ordered.append(messages[i]);
            const QList<int> kids = children.value(messages[i].id);
            for (auto it = kids.crbegin(); it != kids.crend(); ++it) stack.append(*it);
        }
        if (ordered.size() != messages.size())
            return fail(where, QStringLiteral("%1 messages are in a parent cycle (not reachable from a first message)")
                                   .arg(messages.size() - ordered.size()));
        messages = std::move(ordered);
        return true;
    }

    bool conversation(const QJsonValue& value, const QString& where, ConversationSnapshot* s) {
        if (!value.isObject()) return fail(where, QStringLiteral("a conversation must be an object"));
        const QJsonObject o = value.toObject();
        Conversation& c = s->conversation;
        if (!string(o, "title", where, &c.title)) return false;
        const QString here = QStringLiteral("%1 (\"%2\")").arg(where, c.title.left(60));
        qint64 id = 0;
        if (!optionalId(o, "id", here, &id)) return false;
        c.id = id;
        if (!time(o, "createdAt", here, &c.createdAt) || !time(o, "updatedAt", here, &c.updatedAt) ||
            !string(o, "model", here, &c.model) || !string(o, "systemPrompt", here, &c.systemPrompt) ||
            !optionalId(o, "activeLeafId", here, &c.activeLeafId))
            return false;
        const QJsonValue list = o.value(QLatin1String("messages"));
        if (!list.isArray()) return fail(here, QStringLiteral("\"messages\" must be an array"));
        const QJsonArray array = list.toArray();
        s->messages.reserve(array.size());
        for (int i = 0; i < array.size(); ++i) {
            Message m;
            if (!message(array.at(i), QStringLiteral("%1, message %2").arg(here, QString::number(i + 1)), &m)) return false;
            s->messages.append(std::move(m));
        }
        if (!orderTree(s->messages, here)) return false;
        if (c.activeLeafId != 0) {
            bool found = false;
            for (const Message& m : s->messages) found = found || m.id == c.activeLeafId;
            if (!found) return fail(here, QStringLiteral("\"activeLeafId\" %1 is not one of its messages").arg(c.activeLeafId));
        }
        return true;
    }
};

}  // namespace

StoreResult<QList<ConversationSnapshot>> parseJsonExport(const QByteArray& json) {
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return {C::InvalidFile, QStringLiteral("not valid JSON at byte %1: %2")
                                    .arg(parseError.offset).arg(parseError.errorString())};
    if (!doc.isObject()) return {C::InvalidFile, QStringLiteral("not a Kestrel export: the top level must be an object")};
    const QJsonObject root = doc.object();
    if (root.value(QLatin1String("format")).toString() != QLatin1String(kJsonFormatName))
        return {C::InvalidFile, QStringLiteral("not a Kestrel export: \"format\" must be \"%1\"").arg(QLatin1String(kJsonFormatName))};
    const QJsonValue version = root.value(QLatin1String("version"));
    const double v = version.toDouble(-1);
    if (!version.isDouble() || v < 1 || std::floor(v) != v)
        return {C::InvalidFile, QStringLiteral("\"version\" must be a positive integer")};
    if (v > kJsonFormatVersion)
        return {C::Unsupported, QStringLiteral("the export has format version %1; this Kestrel reads version %2. "
                                               "Update Kestrel to import it.").arg(qint64(v)).arg(kJsonFormatVersion)};
    const QJsonValue list = root.value(QLatin1String("conversations"));
    if (!list.isArray()) return {C::InvalidFile, QStringLiteral("\"conversations\" must be an array")};
    const QJsonArray array = list.toArray();
    QList<ConversationSnapshot> out;
    out.reserve(array.size());
    Reader reader;
    for (int i = 0; i < array.size(); ++i) {
        ConversationSnapshot s;
        if (!reader.conversation(array.at(i), QStringLiteral("conversation %1").arg(i + 1), &s)) return reader.error;
        out.append(std::move(s));
    }
    return out;
}

Importer::Importer(ConversationStore& store) : store_(store) {}

void Importer::setMaxFileSize(qint64 bytes) { maxFileSize_ = bytes; }

StoreResult<QList<ConversationId>> Importer::importBytes(const QByteArray& json) {
    if (json.size() > maxFileSize_)
        return {C::InvalidFile, QStringLiteral("the import is %1 MiB, more than the %2 MiB limit")
                                    .arg(json.size() >> 20).arg(maxFileSize_ >> 20)};
    auto parsed = parseJsonExport(json);
    if (!parsed) return parsed.error();
    QList<ConversationId> ids;
    for (const ConversationSnapshot& s : *parsed) {
        auto id = store_.insertSnapshot(s);
        if (!id) return id.error();
        ids.append(*id);
    }
    return ids;
}

StoreResult<QList<ConversationId>> Importer::importFile(const QString& path) {
    const QFileInfo info(path);
    if (!info.isFile()) return {C::NotFound, QStringLiteral("%1: no such file").arg(path)};
    if (info.size() > maxFileSize_)
        return {C::InvalidFile, QStringLiteral("%1: %2 MiB, more than the %3 MiB import limit")
                                    .arg(path).arg(info.size() >> 20).arg(maxFileSize_ >> 20)};
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {C::Io, QStringLiteral("%1: cannot read: %2").arg(path, file.errorString())};
    auto result = importBytes(file.readAll());
    if (!result) return StoreError(result.error().code(), QStringLiteral("%1: %2").arg(path, result.error().message()));
    return result;
}

}  // namespace kestrel::store
