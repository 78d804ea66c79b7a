#include "export_common.h"

namespace kestrel::store::exportfmt {

QList<const Message*> activePath(const ConversationSnapshot& snapshot) {
    QHash<MessageId, const Message*> byId;
    for (const Message& m : snapshot.messages) byId.insert(m.id, &m);
    MessageId leaf = snapshot.conversation.activeLeafId;
    if (!byId.contains(leaf)) leaf = snapshot.messages.isEmpty() ? 0 : snapshot.messages.last().id;
    QList<const Message*> path;
    // The size bound stops a parent cycle in hand-made data.
    for (const Message* m = byId.value(leaf); m && path.size() <= snapshot.messages.size();
         m = byId.value(m->parentId))
        path.prepend(m);
    return path;
}

QHash<MessageId, BranchPosition> branchPositions(const ConversationSnapshot& snapshot) {
    QHash<MessageId, int> childCount;  // by parent id (0 = roots)
    QHash<MessageId, BranchPosition> out;
    for (const Message& m : snapshot.messages) {
        out.insert(m.id, {childCount.value(m.parentId), 0});
        childCount[m.parentId] += 1;
    }
    for (const Message& m : snapshot.messages) out[m.id].count = childCount.value(m.parentId);
    return out;
}

QString displayTime(const QDateTime& t) {
    if (!t.isValid()) return QStringLiteral("unknown time");
    return t.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm")) + QStringLiteral(" UTC");
}

QString roleLabel(MessageRole role) {
    switch (role) {
    case MessageRole::System: return QStringLiteral("System");
    case MessageRole::User: return QStringLiteral("User");
    case MessageRole::Assistant: return QStringLiteral("Assistant");
    case MessageRole::Tool: return QStringLiteral("Tool");
    }
    return QStringLiteral("User");
}

QString visibleControls(const QString& text) {
    QString out = text;
    for (QChar& c : out) {
        const ushort u = c.unicode();
        if (u < 0x20 && u != '\t' && u != '\n' && u != '\r') c = QChar(0x2400 + u);
        else if (u == 0x7f) c = QChar(0x2421);
    }
    return out;
}

QString stateNote(const Message& m) {
    switch (m.state) {
    case MessageState::Complete: return {};
    case MessageState::Streaming: return QStringLiteral("This reply was still being written.");
    case MessageState::Interrupted: return QStringLiteral("This reply was interrupted.");
    case MessageState::Error:
        return m.error.isEmpty() ? QStringLiteral("This reply failed.")
                                 : QStringLiteral("This reply failed: %1").arg(m.error);
    }
    return {};
}

}  // namespace kestrel::store::exportfmt
