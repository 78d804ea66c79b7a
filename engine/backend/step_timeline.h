// The arithmetic of the in-graph kernel timeline (kernels/cuda/step_trace.h),
// apart from CUDA so that it is tested on any machine: each kernel's block 0
// stamps when it reaches its wait for the previous kernel (arrived) and when
// that wait returns (released). A wait returns once the previous kernel has
// completed, so the releases in time order are the step's critical path, and a
// kernel's share of it is the gap from its release to the next one's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kestrel::backend {

// Nanoseconds on one clock.
struct KernelStamp {
    uint64_t arrived = 0, released = 0;
};

struct TimelineRow {
    std::string label;
    int64_t calls = 0;
    double criticalUs = 0;  // release to the next kernel's release, summed over calls
    double residentUs = 0;  // arrival to release (how early its blocks were there), summed
};

class StepTimeline {
public:
    // One step: `labels` are its kernels in launch order; `stamps` hold at least as
    // many, in any order (the slots are taken by an atomic), and those of kernels
    // launched after the step follow its own in time, giving its last kernel an end.
    // False, and nothing counted, when a kernel's stamp is missing.
    bool addStep(const std::vector<std::string>& labels, std::vector<KernelStamp> stamps);

    // The rows, the largest share of the critical path first.
    std::vector<TimelineRow> rowsByCost() const;
    int64_t steps() const { return steps_; }
    // Microseconds from the step's first release to its last kernel's release, summed.
    double spanUs() const { return spanUs_; }

private:
    std::vector<TimelineRow> rows_;
    int64_t steps_ = 0;
    double spanUs_ = 0;
};

}  // namespace kestrel::backend
