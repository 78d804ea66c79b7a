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
    const std::vector<std::string>& labels = *pending_;
    unsigned long long count = 0;
    if (cudaMemcpy(&count, dev_, sizeof count, cudaMemcpyDeviceToHost) != cudaSuccess) return;
    const size_t n = std::min<size_t>(count, steptrace::kCapacity);
    // Stamps of kernels launched after the graph (the top-k selection) follow its own,
    // so the graph's last kernel has an end too.
    if (n < labels.size()) {
        ++unread_;
        return;
    }
    std::vector<steptrace::Stamp> s(n);
    if (cudaMemcpy(s.data(), dev_ + 2, n * sizeof(steptrace::Stamp), cudaMemcpyDeviceToHost) != cudaSuccess) return;
    // Releases are ordered by the dependency chain; the slots only by the atomic's arrival.
    std::sort(s.begin(), s.end(), [](const auto& a, const auto& b) { return a.released < b.released; });
    auto g = std::find_if(graphs_.begin(), graphs_.end(), [&](const GraphRows& x) { return x.labels == pending_; });
    if (g == graphs_.end()) {
        graphs_.push_back(GraphRows{pending_, {}, 0, 0.0});
        g = graphs_.end() - 1;
    }
    std::vector<Row>& rows = g->rows;
    for (size_t i = 0; i < labels.size(); ++i) {
        auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.label == labels[i]; });
        if (it == rows.end()) {
            rows.push_back(Row{labels[i], 0, 0.0, 0.0});
            it = rows.end() - 1;
        }
        ++it->calls;
        if (i + 1 < n) it->criticalUs += 1e-3 * static_cast<double>(s[i + 1].released - s[i].released);
        it->waitedUs += 1e-3 * static_cast<double>(s[i].released - s[i].arrived);
    }
    g->spanUs += 1e-3 * static_cast<double>(s[labels.size() - 1].released - s[0].released);
    ++g->steps;
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
    auto g = std::max_element(graphs_.begin(), graphs_.end(),
                              [](const GraphRows& a, const GraphRows& b) { return a.steps < b.steps; });
    if (g == graphs_.end()) {
        std::fprintf(stderr, "cuda step trace: no replayed step read (%lld with missing stamps)\n",
                     static_cast<long long>(unread_));
        return;
    }
    int64_t others = 0;
    for (const GraphRows& x : graphs_) others += &x == &*g ? 0 : x.steps;
    std::vector<Row>& rows = g->rows;
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.criticalUs > b.criticalUs; });
    double total = 0;
    for (const Row& r : rows) total += r.criticalUs;
    const double steps = static_cast<double>(g->steps);
    std::fprintf(stderr,
                 "cuda step trace (the step graph replayed most: %lld steps of %zu kernels; %lld steps of %zu other "
                 "graphs and %lld with missing stamps not shown; %.1f us per step from the first kernel's release to "
                 "the last's; critical path = from a kernel's release to the next one's; the last kernel ends at the "
                 "next launch's release):\n",
                 static_cast<long long>(g->steps), g->labels->size(), static_cast<long long>(others),
                 graphs_.size() - 1, static_cast<long long>(unread_), g->spanUs / steps);
    std::fprintf(stderr, "  %-30s %8s %10s %10s %7s %12s\n", "kernel", "per step", "us/step", "us/call", "share",
                 "resident us");
    for (const Row& r : rows) {
        const double calls = static_cast<double>(r.calls);
        std::fprintf(stderr, "  %-30s %8.1f %10.1f %10.2f %6.1f%% %12.2f\n", r.label.c_str(), calls / steps,
                     r.criticalUs / steps, r.criticalUs / calls, total > 0 ? 100.0 * r.criticalUs / total : 0.0,
                     r.waitedUs / calls);
    }
}

}  // namespace kestrel::backend::cudaimpl
