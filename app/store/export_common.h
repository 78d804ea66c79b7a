// Helpers the export formats share. Internal to app/store.
#pragma once

#include "store_types.h"

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QString>

namespace kestrel::store::exportfmt {

// The active branch of a snapshot, root first. Falls back to the newest
// message's branch when the active leaf is missing.
QList<const Message*> activePath(const ConversationSnapshot& snapshot);

// How many messages share each message's parent (for "branch 2 of 3").
struct BranchPosition {
    int index = 0;  // 0-based
    int count = 1;
};
QHash<MessageId, BranchPosition> branchPositions(const ConversationSnapshot& snapshot);

// "2026-12-02 16:05 UTC"
QString displayTime(const QDateTime& t);
// "User", "Assistant", "System", "Tool"
QString roleLabel(MessageRole role);

// C0 controls other than tab/newline/CR (and DEL) become their visible
// Unicode "control pictures" (U+2400...), so NUL or ESC in a message cannot
// corrupt a text file, a terminal or an HTML page. JSON keeps them exactly.
QString visibleControls(const QString& text);

// A note for a reply that did not complete ("" when complete).
QString stateNote(const Message& m);

}  // namespace kestrel::store::exportfmt
