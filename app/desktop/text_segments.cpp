#include "text_segments.h"

#include <QRegularExpression>
#include <QStringList>
#include <QVariantMap>

namespace kestrel::desktop {

namespace {
const QString kOpen = QStringLiteral("<think>");
const QString kClose = QStringLiteral("</think>");

// Length of the longest suffix of `text` that is a proper prefix of `tag`:
// those characters may become the tag once the next piece arrives.
qsizetype partialTagSuffix(const QString& text, const QString& tag) {
    for (qsizetype n = qMin(text.size(), tag.size() - 1); n > 0; --n)
        if (tag.startsWith(QStringView(text).right(n))) return n;
    return 0;
}
}  // namespace

ThinkSplitter::Delta ThinkSplitter::push(const QString& piece) {
    Delta out;
    held_ += piece;
    if (phase_ == Phase::Start) {
        const QString trimmed = QString(held_).remove(QRegularExpression(QStringLiteral("^\\s+")));
        if (trimmed.startsWith(kOpen)) {
            phase_ = Phase::Reasoning;
            held_ = trimmed.mid(kOpen.size());
        } else if (kOpen.startsWith(trimmed)) {
            return out;  // still could be "<think>"
        } else {
            phase_ = Phase::Content;
        }
    }
    if (phase_ == Phase::Reasoning) {
        const qsizetype end = held_.indexOf(kClose);
        if (end < 0) {
            const qsizetype keep = partialTagSuffix(held_, kClose);
            out.reasoning = held_.left(held_.size() - keep);
            held_ = held_.right(keep);
            return out;
        }
        out.reasoning = held_.left(end);
        held_ = held_.mid(end + kClose.size());
        phase_ = Phase::AnswerStart;
    }
    if (phase_ == Phase::AnswerStart) {
        // The answer usually starts after a blank line; that is layout, not text,
        // and it may arrive in pieces of its own.
        while (!held_.isEmpty() && held_.front().isSpace()) held_.remove(0, 1);
        if (held_.isEmpty()) return out;
        phase_ = Phase::Content;
    }
    out.content += held_;
    held_.clear();
    return out;
}

ThinkSplitter::Delta ThinkSplitter::flush() {
    Delta out;
    if (phase_ == Phase::Reasoning) out.reasoning = held_;
    else out.content = held_;
    held_.clear();
    return out;
}

QVariantList splitMarkdownSegments(const QString& markdown) {
    QVariantList segments;
    auto add = [&](const QString& kind, const QString& text, const QString& language) {
        if (kind == QLatin1String("markdown") && text.trimmed().isEmpty()) return;
        segments.append(QVariantMap{{QStringLiteral("kind"), kind},
                                    {QStringLiteral("text"), text},
                                    {QStringLiteral("language"), language}});
    };
    const QStringList lines = markdown.split(QLatin1Char('\n'));
    QStringList prose, code;
    QString fence, language;
    bool inCode = false;
    for (const QString& line : lines) {
        const QString t = line.trimmed();
        if (!inCode && (t.startsWith(QLatin1String("```")) || t.startsWith(QLatin1String("~~~")))) {
            add(QStringLiteral("markdown"), prose.join(QLatin1Char('\n')), {});
            prose.clear();
            qsizetype n = 0;
            while (n < t.size() && t[n] == t[0]) ++n;
            fence = t.left(n);
            language = t.mid(n).trimmed().section(QLatin1Char(' '), 0, 0);
            inCode = true;
        } else if (inCode && t.startsWith(fence) && t.mid(fence.size()).trimmed().isEmpty()) {
            add(QStringLiteral("code"), code.join(QLatin1Char('\n')), language);
            code.clear();
            inCode = false;
        } else if (inCode) {
            code.append(line);
        } else {
            prose.append(line);
        }
    }
    if (inCode) add(QStringLiteral("code"), code.join(QLatin1Char('\n')), language);
    else add(QStringLiteral("markdown"), prose.join(QLatin1Char('\n')), {});
    return segments;
}

}  // namespace kestrel::desktop
