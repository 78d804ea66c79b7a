// Reads the in-graph kernel timeline (kernels/cuda/step_trace.h) of replayed
// steps and prints, per kernel, what it cost the step's critical path (the
// arithmetic is engine/backend/step_timeline.h). Active only in builds
// configured with -DKESTREL_CUDA_STEP_TRACE=ON.
#pragma once

#include "step_timeline.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kestrel::backend::cudaimpl {

class StepTracer {
public:
    StepTracer() = default;
    ~StepTracer();
    StepTracer(const StepTracer&) = delete;
    StepTracer& operator=(const StepTracer&) = delete;

    // Allocates the stamp buffer when the kernels were built with the trace.
    void start();
    bool active() const { return dev_ != nullptr; }

    // While a step is captured: the op labelled `label` has launched the kernels
    // counted since `launchesBefore` (kernels/cuda/step_trace.h launches()).
    void noteOp(const std::string& label, int64_t launchesBefore, std::vector<std::string>& labels) const;

    // Before a graph launch on `stream` (idle: the previous step was waited for):
    // reads the previous replay's stamps, then clears the counter for this one.
    // `labels`: this graph's kernels in launch order (null: not a replay to read).
    using Labels = std::shared_ptr<const std::vector<std::string>>;
    void beforeLaunch(Labels labels, cudaStream_t stream);
    void print();

private:
    void harvest();

    unsigned long long* dev_ = nullptr;
    Labels pending_;  // the labels of the replay in flight
    // Per step graph: a bench's decode step and its prefill chunks are kept apart, and
    // the graph replayed most often (the decode step) is printed.
    struct GraphTimeline {
        Labels labels;
        StepTimeline timeline;
    };
    std::vector<GraphTimeline> graphs_;
    int64_t unread_ = 0;
};

}  // namespace kestrel::backend::cudaimpl
