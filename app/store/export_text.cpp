// Plain-text export: the branch each conversation shows, as a transcript.
#include "exporter.h"

#include "export_common.h"

namespace kestrel::store {

using namespace exportfmt;

QByteArray renderPlainText(const QList<ConversationSnapshot>& conversations) {
    QString out;
    bool first = true;
    for (const ConversationSnapshot& s : conversations) {
        if (!first) out += QStringLiteral("\n\n");
        first = false;
        const Conversation& c = s.conversation;
        const QString title = visibleControls(c.title.isEmpty() ? QStringLiteral("Untitled conversation") : c.title).simplified();
        out += title + QLatin1Char('\n') + QString(std::max<qsizetype>(3, title.size()), QLatin1Char('=')) + QLatin1Char('\n');
        out += displayTime(c.createdAt);
        if (!c.model.isEmpty()) out += QStringLiteral(" | ") + visibleControls(c.model);
        out += QLatin1Char('\n');
        if (!c.systemPrompt.isEmpty()) out += QStringLiteral("System prompt: %1\n").arg(visibleControls(c.systemPrompt));
        const auto positions = branchPositions(s);
        for (const Message* m : activePath(s)) {
            out += QStringLiteral("\n[%1").arg(roleLabel(m->role));
            if (m->role == MessageRole::Assistant && !m->model.isEmpty())
                out += QStringLiteral(" | %1").arg(visibleControls(m->model).simplified());
            out += QStringLiteral(" | %1").arg(displayTime(m->createdAt));
            const BranchPosition p = positions.value(m->id);
            if (p.count > 1) out += QStringLiteral(" | version %1 of %2").arg(p.index + 1).arg(p.count);
            out += QStringLiteral("]\n");
            if (!m->reasoning.isEmpty()) out += QStringLiteral("(reasoning) %1\n").arg(visibleControls(m->reasoning));
            out += visibleControls(m->content) + QLatin1Char('\n');
            const QString note = stateNote(*m);
            if (!note.isEmpty()) out += QStringLiteral("(%1)\n").arg(visibleControls(note));
        }
    }
    return out.toUtf8();
}

}  // namespace kestrel::store
