#include "stop_matcher.h"

#include <algorithm>

namespace kestrel {

StopMatcher::StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
    std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

StopMatcher::Output StopMatcher::push(std::string_view piece) {
    held_.append(piece);
    Output out;
    if (stops_.empty()) {
        out.text.swap(held_);
        return out;
    }
    // The earliest complete stop string wins.
    size_t earliest = std::string::npos;
    for (const auto& stop : stops_) earliest = std::min(earliest, held_.find(stop));
    if (earliest != std::string::npos) {
        out.text = held_.substr(0, earliest);
        out.stopped = true;
        held_.clear();
        return out;
    }
    // Hold back the longest suffix of held_ that is a proper prefix of some stop string.
    size_t keep = 0;
    for (const auto& stop : stops_) {
        const size_t maxLen = std::min(stop.size() - 1, held_.size());
        for (size_t len = maxLen; len > keep; --len) {
            if (std::string_view(held_).substr(held_.size() - len) == std::string_view(stop).substr(0, len)) {
                keep = len;
                break;
            }
        }
    }
    out.text = held_.substr(0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return out;
}

std::string StopMatcher::flush() {
    std::string rest;
    rest.swap(held_);
    return rest;
}

}  // namespace kestrel
