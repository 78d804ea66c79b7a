// kestrel-cli bench --streams: N requests decoding at once through the
// continuous-batching scheduler. The aggregate rate counts the tokens all
// streams decoded while every one of them was decoding: from the last stream's
// first token to the first stream's last (before, some prompts are still
// being prefilled; after, fewer than N streams remain), so it measures N-row
// decode steps, not the prompts' prefill. Block occupancy (live positions /
// capacity of the blocks in use) is sampled at every token of the first stream.
#include "commands.h"
#include "kestrel/scheduler.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <vector>

namespace kestrel::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<TokenId> streamPrompt(const Model& model, int32_t n, int32_t stream) {
    std::vector<TokenId> t(static_cast<size_t>(n));
    const int32_t span = std::max(1, model.info().vocabSize / 2);
    for (int32_t i = 0; i < n; ++i) t[size_t(i)] = 1000 + int32_t(((int64_t(i) + int64_t(stream + 7) * 104729) * 7919) % span);
    return t;
}

struct StreamClock {
    std::vector<Clock::time_point> tokens;  // when each token arrived
};

// One run of n streams through `scheduler`: the aggregate rate (tok/s) while all n decoded;
// the first stream's occupancy samples are appended to `occupied`.
Result<double> runStreams(const std::shared_ptr<Model>& model, Scheduler& scheduler, const KvBenchPlan& plan,
                          int32_t n, int32_t run, std::vector<double>& occupied) {
    model->clearPrefixCache();
    std::mutex mu;
    std::vector<StreamClock> clocks(static_cast<size_t>(n));
    Status failed;
    for (int32_t i = 0; i < n; ++i) {
        RequestOptions ro;
        ro.params.sampling.temperature = 0.0f;
        ro.params.maxTokens = plan.genTokens;
        ro.params.ignoreEndOfGeneration = true;
        auto id = scheduler.submit(
            streamPrompt(*model, plan.turnTokens, i + run * n), ro,
            [&, i](int32_t, const Piece& piece) {
                if (piece.token < 0) return true;
                std::lock_guard lock(mu);
                clocks[size_t(i)].tokens.push_back(Clock::now());
                // Block occupancy sampled while the streams decode (callbacks may read stats()).
                if (i == 0) occupied.push_back(scheduler.stats().occupancy());
                return true;
            },
            [&](Result<std::vector<GenerateResult>> r) {
                if (!r) {
                    std::lock_guard lock(mu);
                    failed = r.status();
                }
            });
        if (!id) return id.status();
    }
    scheduler.waitIdle();
    KESTREL_RETURN_IF_ERROR(failed);
    Clock::time_point begin = clocks[0].tokens.front(), end = clocks[0].tokens.back();
    for (const StreamClock& c : clocks) {
        if (c.tokens.empty()) return Status(ErrorCode::Internal, "bench --streams: a stream produced no token");
        begin = std::max(begin, c.tokens.front());
        end = std::min(end, c.tokens.back());
    }
    int64_t decoded = 0;  // tokens that arrived in (begin, end]
    for (const StreamClock& c : clocks)
        for (const auto& t : c.tokens) decoded += t > begin && t <= end;
    const double ms = std::chrono::duration<double, std::milli>(end - begin).count();
    if (ms <= 0.0) return Status(ErrorCode::Internal, "bench --streams: the streams never decoded together (raise -n)");
    return decoded * 1000.0 / ms;
}

}  // namespace

// The stream counts take turns run by run (1, 4, 1, 4, ...), each after a warm-up run,
// so that a machine whose speed drifts (a shared VM) slows every count alike and
// the ratios between them hold; each count reports its median run.
Status benchStreams(const std::shared_ptr<Model>& model, const KvBenchPlan& plan, std::map<int32_t, double>& out,
                    std::map<int32_t, double>& occupancy) {
    std::vector<std::unique_ptr<Scheduler>> schedulers;
    for (int32_t n : plan.streams) {
        SchedulerOptions so;
        so.maxRunning = n;
        auto scheduler = Scheduler::create(model, so);
        if (!scheduler) return scheduler.status();
        schedulers.push_back(std::move(scheduler).value());
    }
    const size_t counts = plan.streams.size();
    std::vector<std::vector<double>> rates(counts), occupied(counts);
    for (int32_t run = 0; run <= plan.repeat; ++run) {
        for (size_t c = 0; c < counts; ++c) {
            std::vector<double> samples;
            auto rate = runStreams(model, *schedulers[c], plan, plan.streams[c], run, samples);
            if (!rate) return rate.status();
            if (run == 0) continue;  // warm-up
            rates[c].push_back(*rate);
            occupied[c].insert(occupied[c].end(), samples.begin(), samples.end());
        }
    }
    for (size_t c = 0; c < counts; ++c) {
        out[plan.streams[c]] = median(rates[c]);
        double sum = 0;
        for (double o : occupied[c]) sum += o;
        occupancy[plan.streams[c]] = occupied[c].empty() ? 0.0 : sum / double(occupied[c].size());
    }
    return Status::ok();
}

}  // namespace kestrel::cli
