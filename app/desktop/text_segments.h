// Splitting model output for display and storage.
//
// ThinkSplitter separates a leading <think>...</think> block (reasoning models)
// from the answer while the text streams in, piece by piece, so the store and
// the UI get each kind of text as it arrives. splitMarkdownSegments() cuts a
// Markdown text at fenced code blocks so QML can render prose with
// Text.MarkdownText and code in a CodeBlock with a copy button. Both are pure
// and reentrant.
#pragma once

#include <QString>
#include <QVariantList>

namespace kestrel::desktop {

class ThinkSplitter {
public:
    struct Delta {
        QString content;
        QString reasoning;
    };
    Delta push(const QString& piece);
    // Whatever is still held back (a partial tag at the very end).
    Delta flush();
    // The prompt already opened the <think> block: what comes first is reasoning.
    void startInReasoning() { phase_ = Phase::Reasoning; }

private:
    enum class Phase { Start, Reasoning, AnswerStart, Content };
    Phase phase_ = Phase::Start;
    QString held_;
};

// Each segment: {"kind": "markdown" | "code", "text": ..., "language": ...}.
// An unterminated fence (a reply still streaming) is a code segment up to the end.
QVariantList splitMarkdownSegments(const QString& markdown);

}  // namespace kestrel::desktop
