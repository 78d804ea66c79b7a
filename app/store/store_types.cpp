#include "store_types.h"

namespace kestrel::store {
namespace {

struct RoleRow {
    MessageRole role;
    const char* name;
};
constexpr RoleRow kRoles[] = {
    {MessageRole::System, "system"},
    {MessageRole::User, "user"},
    {MessageRole::Assistant, "assistant"},
    {MessageRole::Tool, "tool"},
};

struct StateRow {
    MessageState state;
    const char* name;
};
constexpr StateRow kStates[] = {
    {MessageState::Complete, "complete"},
    {MessageState::Streaming, "streaming"},
    {MessageState::Interrupted, "interrupted"},
    {MessageState::Error, "error"},
};

}  // namespace

QString roleName(MessageRole role) {
    for (const auto& r : kRoles)
        if (r.role == role) return QString::fromLatin1(r.name);
    return QStringLiteral("user");
}

bool roleFromName(const QString& name, MessageRole* out) {
    for (const auto& r : kRoles)
        if (name == QLatin1String(r.name)) {
            *out = r.role;
            return true;
        }
    return false;
}

QString stateName(MessageState state) {
    for (const auto& s : kStates)
        if (s.state == state) return QString::fromLatin1(s.name);
    return QStringLiteral("complete");
}

bool stateFromName(const QString& name, MessageState* out) {
    for (const auto& s : kStates)
        if (name == QLatin1String(s.name)) {
            *out = s.state;
            return true;
        }
    return false;
}

bool isKnownStopReason(const QString& reason) {
    static const char* const kReasons[] = {"", "eos", "max_tokens", "stop_string", "context_full", "cancelled", "edited"};
    for (const char* r : kReasons)
        if (reason == QLatin1String(r)) return true;
    return false;
}

QString SearchHit::highlightedHtml() const {
    QString html;
    int pos = 0;
    for (const auto& [start, length] : highlights) {
        if (start < pos || start + length > snippet.size()) continue;
        html += snippet.mid(pos, start - pos).toHtmlEscaped();
        html += QLatin1String("<b>") + snippet.mid(start, length).toHtmlEscaped() + QLatin1String("</b>");
        pos = start + length;
    }
    html += snippet.mid(pos).toHtmlEscaped();
    return html;
}

}  // namespace kestrel::store
