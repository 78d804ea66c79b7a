// Markdown export: the branch each conversation shows, for reading and
// pasting. Message text is kept as written (replies are Markdown already);
// only control characters are made visible.
#include "exporter.h"

#include "export_common.h"

namespace kestrel::store {

using namespace exportfmt;

QByteArray renderMarkdown(const QList<ConversationSnapshot>& conversations) {
    QString out;
    bool first = true;
    for (const ConversationSnapshot& s : conversations) {
        if (!first) out += QStringLiteral("\n---\n\n");
        first = false;
        const Conversation& c = s.conversation;
        const QString title = c.title.isEmpty() ? QStringLiteral("Untitled conversation") : c.title;
        out += QStringLiteral("# %1\n\n").arg(visibleControls(title).simplified());
        out += QStringLiteral("*%1*").arg(displayTime(c.createdAt));
        if (!c.model.isEmpty()) out += QStringLiteral(" · *%1*").arg(visibleControls(c.model));
        out += QStringLiteral("\n\n");
        if (!c.systemPrompt.isEmpty()) {
            out += QStringLiteral("> **System prompt**\n>\n");
            for (const QString& line : visibleControls(c.systemPrompt).split(QLatin1Char('\n')))
                out += QStringLiteral("> %1\n").arg(line);
            out += QLatin1Char('\n');
        }
        const auto positions = branchPositions(s);
        for (const Message* m : activePath(s)) {
            out += QStringLiteral("## %1").arg(roleLabel(m->role));
            if (m->role == MessageRole::Assistant && !m->model.isEmpty())
                out += QStringLiteral(" · %1").arg(visibleControls(m->model).simplified());
            out += QLatin1Char('\n');
            const BranchPosition p = positions.value(m->id);
            if (p.count > 1)
                out += QStringLiteral("*Version %1 of %2; the JSON export keeps the others.*\n").arg(p.index + 1).arg(p.count);
            out += QLatin1Char('\n');
            if (!m->reasoning.isEmpty()) {
                out += QStringLiteral("<details><summary>Reasoning</summary>\n\n");
                out += visibleControls(m->reasoning).toHtmlEscaped();
                out += QStringLiteral("\n\n</details>\n\n");
            }
            out += visibleControls(m->content);
            out += QStringLiteral("\n\n");
            const QString note = stateNote(*m);
            if (!note.isEmpty()) out += QStringLiteral("*%1*\n\n").arg(visibleControls(note).simplified());
        }
    }
    return out.toUtf8();
}

}  // namespace kestrel::store
