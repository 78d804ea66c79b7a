#include "reasoning_splitter.h"

#include <algorithm>

namespace kestrel {
namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

// Length of the longest suffix of `text` that is a proper prefix of `tag`.
size_t partialTagSuffix(std::string_view text, std::string_view tag) {
    for (size_t len = std::min(tag.size() - 1, text.size()); len > 0; --len)
        if (text.substr(text.size() - len) == tag.substr(0, len)) return len;
    return 0;
}

void emit(std::vector<TextSegment>& out, TextKind kind, std::string_view text) {
    if (text.empty()) return;
    if (!out.empty() && out.back().kind == kind)
        out.back().text.append(text);
    else
        out.push_back({kind, std::string(text)});
}

}  // namespace

std::vector<TextSegment> ReasoningSplitter::push(std::string_view text) {
    held_.append(text);
    std::vector<TextSegment> out;
    while (true) {
        const std::string_view tag = inReasoning_ ? kClose : kOpen;
        const size_t at = held_.find(tag);
        const TextKind kind = inReasoning_ ? TextKind::Reasoning : TextKind::Answer;
        if (at == std::string::npos) {
            const size_t keep = partialTagSuffix(held_, tag);
            emit(out, kind, std::string_view(held_).substr(0, held_.size() - keep));
            held_.erase(0, held_.size() - keep);
            return out;
        }
        emit(out, kind, std::string_view(held_).substr(0, at));
        held_.erase(0, at + tag.size());
        inReasoning_ = !inReasoning_;
    }
}

std::vector<TextSegment> ReasoningSplitter::flush() {
    std::vector<TextSegment> out;
    emit(out, inReasoning_ ? TextKind::Reasoning : TextKind::Answer, held_);
    held_.clear();
    return out;
}

}  // namespace kestrel
