#include "cuda_step_trace.h"

#include "step_trace.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace kestrel::backend::cudaimpl {

namespace steptrace = kestrel::cuda::steptrace;

StepTracer::~StepTracer() {
    if (!dev_) return;
    steptrace::setBuffer(nullptr);
    cudaFree(dev_);
}

void StepTracer::start() {
    if (dev_ || !steptrace::compiledIn()) return;
    if (cudaMalloc(&dev_, steptrace::kBufferWords * sizeof(unsigned long long)) != cudaSuccess) {
        cudaGetLastError();
        dev_ = nullptr;
        std::fprintf(stderr, "kestrel: step trace: no memory for the stamps; tracing off\n");
        return;
    }
    cudaMemset(dev_, 0, sizeof(unsigned long long));
    steptrace::setBuffer(dev_);
    std::fprintf(stderr, "kestrel: step trace build: every replayed step's kernels are stamped\n");
}

void StepTracer::noteOp(const std::string& label, int64_t launchesBefore, std::vector<std::string>& labels) const {
    const int64_t n = steptrace::launches() - launchesBefore;
    for (int64_t k = 0; k < n; ++k) labels.push_back(n > 1 ? label + " #" + std::to_string(k + 1) : label);
}

void StepTracer::harvest() {
    unsigned long long count = 0;
    if (cudaMemcpy(&count, dev_, sizeof count, cudaMemcpyDeviceToHost) != cudaSuccess) return;
    static_assert(sizeof(KernelStamp) == sizeof(steptrace::Stamp), "the kernels' stamp is (arrived, released)");
    std::vector<KernelStamp> stamps(std::min<size_t>(count, steptrace::kCapacity));
    if (!stamps.empty() &&
        cudaMemcpy(stamps.data(), dev_ + 2, stamps.size() * sizeof(KernelStamp), cudaMemcpyDeviceToHost) != cudaSuccess)
        return;
    auto g = std::find_if(graphs_.begin(), graphs_.end(), [&](const GraphTimeline& x) { return x.labels == pending_; });
    if (g == graphs_.end()) {
        graphs_.push_back(GraphTimeline{pending_, {}});
        g = graphs_.end() - 1;
    }
    if (!g->timeline.addStep(*pending_, std::move(stamps))) ++unread_;
}

void StepTracer::beforeLaunch(Labels labels, cudaStream_t stream) {
    if (!dev_) return;
    if (pending_) {
        cudaStreamSynchronize(stream);
        harvest();
    }
    pending_ = labels && !labels->empty() ? std::move(labels) : nullptr;
    cudaMemsetAsync(dev_, 0, sizeof(unsigned long long), stream);
}

void StepTracer::print() {
    if (!dev_) return;
    if (pending_) harvest();
    pending_ = nullptr;
    auto g = std::max_element(graphs_.begin(), graphs_.end(), [](const GraphTimeline& a, const GraphTimeline& b) {
        return a.timeline.steps() < b.timeline.steps();
    });
    if (g == graphs_.end() || g->timeline.steps() == 0) {
        std::fprintf(stderr, "cuda step trace: no replayed step read (%lld with missing stamps)\n",
                     static_cast<long long>(unread_));
        return;
    }
    int64_t others = 0;
    for (const GraphTimeline& x : graphs_) others += &x == &*g ? 0 : x.timeline.steps();
    const std::vector<TimelineRow> rows = g->timeline.rowsByCost();
    double total = 0;
    for (const TimelineRow& r : rows) total += r.criticalUs;
    const double steps = static_cast<double>(g->timeline.steps());
    std::fprintf(stderr,
                 "cuda step trace (the step graph replayed most: %lld steps of %zu kernels; %lld steps of %zu other "
                 "graphs and %lld with missing stamps not shown; %.1f us per step from the first kernel's release to "
                 "the last's; critical path = from a kernel's release to the next one's; the last kernel ends at the "
                 "next launch's release):\n",
                 static_cast<long long>(g->timeline.steps()), g->labels->size(), static_cast<long long>(others),
                 graphs_.size() - 1, static_cast<long long>(unread_), g->timeline.spanUs() / steps);
    std::fprintf(stderr, "  %-30s %8s %10s %10s %7s %12s\n", "kernel", "per step", "us/step", "us/call", "share",
                 "resident us");
    for (const TimelineRow& r : rows) {
        const double calls = static_cast<double>(r.calls);
        std::fprintf(stderr, "  %-30s %8.1f %10.1f %10.2f %6.1f%% %12.2f\n", r.label.c_str(), calls / steps,
                     r.criticalUs / steps, r.criticalUs / calls, total > 0 ? 100.0 * r.criticalUs / total : 0.0,
                     r.residentUs / calls);
    }
}

}  // namespace kestrel::backend::cudaimpl
