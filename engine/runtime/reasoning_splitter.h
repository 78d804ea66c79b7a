// Splits a reply stream into reasoning and answer text.
//
// DeepSeek-R1 and Qwen3 write their reasoning between <think> and </think>
// (R1's template opens the block in the prompt, so the reply starts inside it).
// The tags themselves are dropped; text is held back only while it could still
// be the start of a tag, so a tag split across tokens is recognised. Per-stream
// state; not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kestrel {

enum class TextKind { Answer, Reasoning };

struct TextSegment {
    TextKind kind;
    std::string text;
};

class ReasoningSplitter {
public:
    explicit ReasoningSplitter(bool startsInReasoning = false) : inReasoning_(startsInReasoning) {}

    std::vector<TextSegment> push(std::string_view text);
    std::vector<TextSegment> flush();
    bool inReasoning() const { return inReasoning_; }

private:
    bool inReasoning_;
    std::string held_;
};

}  // namespace kestrel
