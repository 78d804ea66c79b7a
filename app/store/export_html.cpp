// HTML export: one self-contained page. Inline CSS only, no scripts, no
// external resources (a Content-Security-Policy says so to the browser too),
// light and dark themes through prefers-color-scheme. Every string that comes
// from a user, a model or a file goes through escape(); message text is shown
// as pre-wrapped text, never interpreted as markup.
#include "exporter.h"

#include "export_common.h"

namespace kestrel::store {

using namespace exportfmt;

namespace {

QString escape(const QString& text) {
    QString out = visibleControls(text).toHtmlEscaped();  // & < > "
    out.replace(QLatin1Char('\''), QLatin1String("&#39;"));
    return out;
}

const char* const kStyle = R"(
:root { color-scheme: light dark; --bg: #fafafa; --fg: #1d1d1f; --muted: #6e6e73; --user: #e8f0fe;
        --assistant: #ffffff; --border: #d9d9de; --note: #b3261e; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #161618; --fg: #ececf1; --muted: #a1a1aa; --user: #1f2a44; --assistant: #222226;
          --border: #3a3a40; --note: #f2b8b5; }
}
body { background: var(--bg); color: var(--fg); margin: 0 auto; max-width: 52rem; padding: 2rem 1rem;
       font: 16px/1.55 system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", sans-serif; }
article { margin-bottom: 3rem; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; overflow-wrap: anywhere; }
.meta, .msg header { color: var(--muted); font-size: .85rem; }
.system { border-left: 3px solid var(--border); padding: .25rem .75rem; margin: 1rem 0; white-space: pre-wrap; }
.msg { border: 1px solid var(--border); border-radius: 10px; padding: .75rem 1rem; margin: .75rem 0;
       background: var(--assistant); }
.msg.user { background: var(--user); }
.text { white-space: pre-wrap; overflow-wrap: anywhere; unicode-bidi: plaintext; }
details { margin: .25rem 0 .5rem; color: var(--muted); }
details .text { font-size: .9rem; }
.note { color: var(--note); font-size: .85rem; margin-top: .5rem; }
footer { color: var(--muted); font-size: .8rem; text-align: center; }
)";

}  // namespace

QByteArray renderHtml(const QList<ConversationSnapshot>& conversations) {
    QString out;
    out += QStringLiteral(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
        "<meta name=\"generator\" content=\"Kestrel\">\n");
    const QString pageTitle = conversations.size() == 1 && !conversations.first().conversation.title.isEmpty()
                                  ? conversations.first().conversation.title
                                  : QStringLiteral("Kestrel conversations");
    out += QStringLiteral("<title>%1</title>\n<style>%2</style>\n</head>\n<body>\n")
               .arg(escape(pageTitle.simplified()), QString::fromLatin1(kStyle));
    for (const ConversationSnapshot& s : conversations) {
        const Conversation& c = s.conversation;
        out += QStringLiteral("<article>\n<h1 dir=\"auto\">%1</h1>\n")
                   .arg(escape(c.title.isEmpty() ? QStringLiteral("Untitled conversation") : c.title));
        out += QStringLiteral("<p class=\"meta\">%1").arg(escape(displayTime(c.createdAt)));
        if (!c.model.isEmpty()) out += QStringLiteral(" · %1").arg(escape(c.model));
        out += QStringLiteral("</p>\n");
        if (!c.systemPrompt.isEmpty())
            out += QStringLiteral("<div class=\"system\" dir=\"auto\"><strong>System prompt</strong>\n%1</div>\n")
                       .arg(escape(c.systemPrompt));
        const auto positions = branchPositions(s);
        for (const Message* m : activePath(s)) {
            out += QStringLiteral("<section class=\"msg %1\">\n<header>%2")
                       .arg(roleName(m->role), escape(roleLabel(m->role)));
            if (m->role == MessageRole::Assistant && !m->model.isEmpty()) out += QStringLiteral(" · ") + escape(m->model);
            out += QStringLiteral(" · ") + escape(displayTime(m->createdAt));
            const BranchPosition p = positions.value(m->id);
            if (p.count > 1) out += QStringLiteral(" · version %1 of %2").arg(p.index + 1).arg(p.count);
            out += QStringLiteral("</header>\n");
            if (!m->reasoning.isEmpty())
                out += QStringLiteral("<details><summary>Reasoning</summary><div class=\"text\" dir=\"auto\">%1</div></details>\n")
                           .arg(escape(m->reasoning));
            out += QStringLiteral("<div class=\"text\" dir=\"auto\">%1</div>\n").arg(escape(m->content));
            const QString note = stateNote(*m);
            if (!note.isEmpty()) out += QStringLiteral("<div class=\"note\">%1</div>\n").arg(escape(note));
            out += QStringLiteral("</section>\n");
        }
        out += QStringLiteral("</article>\n");
    }
    out += QStringLiteral("<footer>Exported from Kestrel</footer>\n</body>\n</html>\n");
    return out.toUtf8();
}

}  // namespace kestrel::store
