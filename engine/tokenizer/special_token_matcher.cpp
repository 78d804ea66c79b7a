#include "special_token_matcher.h"

#include <algorithm>

namespace kestrel::tokenizer {

SpecialTokenMatcher::SpecialTokenMatcher(std::vector<Entry> entries) : entries_(std::move(entries)) {
    std::erase_if(entries_, [](const Entry& e) { return e.text.empty(); });
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.text.size() > b.text.size(); });
    for (uint32_t i = 0; i < entries_.size(); ++i) {
        byFirstByte_[uint8_t(entries_[i].text[0])].push_back(i);
        anyAlwaysMatched_ = anyAlwaysMatched_ || entries_[i].alwaysMatched;
    }
}

void SpecialTokenMatcher::split(std::string_view text, bool parseSpecial, std::vector<TextSegment>& out) const {
    if (entries_.empty() || (!parseSpecial && !anyAlwaysMatched_)) {
        if (!text.empty()) out.push_back({text, -1});
        return;
    }
    size_t plainStart = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        const Entry* hit = nullptr;
        for (uint32_t index : byFirstByte_[uint8_t(text[pos])]) {
            const Entry& e = entries_[index];
            if (!parseSpecial && !e.alwaysMatched) continue;
            if (text.compare(pos, e.text.size(), e.text) == 0) {
                hit = &e;
                break;
            }
        }
        if (!hit) {
            ++pos;
            continue;
        }
        if (pos > plainStart) out.push_back({text.substr(plainStart, pos - plainStart), -1});
        out.push_back({{}, hit->id});
        pos += hit->text.size();
        plainStart = pos;
    }
    if (plainStart < text.size()) out.push_back({text.substr(plainStart), -1});
}

}  // namespace kestrel::tokenizer
