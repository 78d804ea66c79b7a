#include "step_timeline.h"

#include <algorithm>

namespace kestrel::backend {

namespace {
double usBetween(uint64_t from, uint64_t to) { return to > from ? 1e-3 * static_cast<double>(to - from) : 0.0; }
}  // namespace

bool StepTimeline::addStep(const std::vector<std::string>& labels, std::vector<KernelStamp> stamps) {
    if (labels.empty() || stamps.size() < labels.size()) return false;
    std::sort(stamps.begin(), stamps.end(), [](const KernelStamp& a, const KernelStamp& b) { return a.released < b.released; });
    for (size_t i = 0; i < labels.size(); ++i) {
        auto it = std::find_if(rows_.begin(), rows_.end(), [&](const TimelineRow& r) { return r.label == labels[i]; });
        if (it == rows_.end()) {
            rows_.push_back(TimelineRow{labels[i], 0, 0.0, 0.0});
            it = rows_.end() - 1;
        }
        ++it->calls;
        if (i + 1 < stamps.size()) it->criticalUs += usBetween(stamps[i].released, stamps[i + 1].released);
        it->residentUs += usBetween(stamps[i].arrived, stamps[i].released);
    }
    spanUs_ += usBetween(stamps.front().released, stamps[labels.size() - 1].released);
    ++steps_;
    return true;
}

std::vector<TimelineRow> StepTimeline::rowsByCost() const {
    std::vector<TimelineRow> rows = rows_;
    std::stable_sort(rows.begin(), rows.end(),
                     [](const TimelineRow& a, const TimelineRow& b) { return a.criticalUs > b.criticalUs; });
    return rows;
}

}  // namespace kestrel::backend
