// kestrel-cli bench --turns / --restore / --streams: what paged KV memory, the
// prefix cache, snapshots and continuous batching buy.
//
// --turns H1,H2,..: a conversation holds H tokens of history; a new turn of
//   --turn-tokens tokens arrives. ttft_ms[H] is the time to its first reply
//   token with the history reused from the KV pool; reprefill_ms[H] the same
//   with the cache cleared (what an engine without reuse pays).
// --restore H: the H-token history is saved as a snapshot, the cache cleared
//   (as after a restart), and the conversation reopened: restore_ms is restore
//   + the turn's first token, reprefill_ms the same turn re-prefilled whole.
// --streams N1,N2,..: N requests decode at once through the scheduler;
//   streams_tok_s[N] is their aggregate decode rate.
// Each number is the median of --repeat runs after one warm-up.
#include "commands.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <unistd.h>

namespace kestrel::cli {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Ordinary tokens from the middle of the vocabulary; `salt` gives each stream
// and the turn their own text, so no two share a prefix by accident.
std::vector<TokenId> tokensFor(const Model& model, int32_t n, int32_t salt) {
    std::vector<TokenId> t(static_cast<size_t>(n));
    const int32_t span = std::max(1, model.info().vocabSize / 2);
    for (int32_t i = 0; i < n; ++i) t[size_t(i)] = 1000 + int32_t(((int64_t(i) + int64_t(salt) * 104729) * 7919) % span);
    return t;
}

GenerateParams oneToken() {
    GenerateParams p;
    p.sampling.temperature = 0.0f;
    p.maxTokens = 1;
    p.ignoreEndOfGeneration = true;
    return p;
}

// Wall time until the first reply token of `prompt`.
Result<double> timeFirstToken(Session& session, std::span<const TokenId> prompt) {
    const auto start = Clock::now();
    auto r = session.generate(prompt, oneToken());
    if (!r) return r.status();
    return msSince(start);
}

std::string jsonMap(const std::map<int32_t, double>& m) {
    std::string s = "{";
    for (const auto& [k, v] : m) {
        if (s.size() > 1) s += ", ";
        char buf[64];
        std::snprintf(buf, sizeof buf, "\"%d\": %.3f", k, v);
        s += buf;
    }
    return s + "}";
}

struct Measured {
    std::map<int32_t, double> ttft, reprefill, streams, occupancy;
    double restoreMs = -1, restoreReprefillMs = -1;
    int32_t restoredTokens = 0;
};

Status benchTurns(const std::shared_ptr<Model>& model, const KvBenchPlan& plan, int32_t context, Measured& m) {
    SessionOptions so;
    so.contextLength = context;
    for (int32_t history : plan.turns) {
        std::vector<double> warm, cold;
        auto prompt = tokensFor(*model, history, 1);
        const std::vector<TokenId> past = prompt;
        const auto turn = tokensFor(*model, plan.turnTokens, 2);
        prompt.insert(prompt.end(), turn.begin(), turn.end());
        for (int32_t run = 0; run <= plan.repeat; ++run) {
            double coldMs = 0, warmMs = 0;
            {  // Re-prefilling: nothing cached.
                model->clearPrefixCache();
                auto s = Session::create(model, so);
                if (!s) return s.status();
                auto t = timeFirstToken(**s, prompt);
                if (!t) return t.status();
                coldMs = *t;
            }
            {  // Reuse: the session holds the history and its last reply token; the turn follows.
                model->clearPrefixCache();
                auto s = Session::create(model, so);
                if (!s) return s.status();
                if (history > 0) {
                    auto r = (*s)->generate(past, oneToken());
                    if (!r) return r.status();
                }
                auto t = timeFirstToken(**s, prompt);
                if (!t) return t.status();
                warmMs = *t;
            }
            if (run == 0) continue;
            cold.push_back(coldMs);
            warm.push_back(warmMs);
        }
        m.ttft[history] = median(warm);
        m.reprefill[history] = median(cold);
    }
    return Status::ok();
}

Status benchRestore(const std::shared_ptr<Model>& model, const KvBenchPlan& plan, int32_t context, Measured& m) {
    auto prompt = tokensFor(*model, plan.restore, 1);
    const auto turn = tokensFor(*model, plan.turnTokens, 2);
    const std::span<const TokenId> history(prompt.data(), prompt.size());
    auto whole = prompt;
    whole.insert(whole.end(), turn.begin(), turn.end());
    std::vector<double> restored, cold;
    SessionOptions so;
    so.contextLength = context;
    for (int32_t run = 0; run <= plan.repeat; ++run) {
        {
            auto s = Session::create(model, so);
            if (!s) return s.status();
            auto r = (*s)->generate(history, oneToken());  // also measures the prefill speed the engine compares with
            if (!r) return r.status();
            KESTREL_RETURN_IF_ERROR((*s)->saveSnapshot("bench-restore"));
        }
        double restoreMs = 0, coldMs = 0;
        {  // A restart: nothing cached, the conversation reopened from disk.
            model->clearPrefixCache();
            auto s = Session::create(model, so);
            if (!s) return s.status();
            const auto start = Clock::now();
            std::string note;
            auto n = (*s)->restoreSnapshot("bench-restore", &note);
            if (!n) return n.status();
            auto r = (*s)->generate(whole, oneToken());
            if (!r) return r.status();
            restoreMs = msSince(start);
            if (!note.empty()) std::fprintf(stderr, "restore: %s\n", note.c_str());
            m.restoredTokens = *n;
        }
        {  // Re-prefilling the same reopened conversation (the restored session is gone).
            model->clearPrefixCache();
            auto c = Session::create(model, so);
            if (!c) return c.status();
            auto t = timeFirstToken(**c, whole);
            if (!t) return t.status();
            coldMs = *t;
        }
        if (run == 0) continue;
        restored.push_back(restoreMs);
        cold.push_back(coldMs);
    }
    m.restoreMs = median(restored);
    m.restoreReprefillMs = median(cold);
    return Status::ok();
}

}  // namespace

int runKvBench(Args& args, const KvBenchPlan& plan) {
    // Snapshots go to a private temporary folder, removed at the end.
    std::string dir;
    if (plan.restore > 0) {
        char tmpl[] = "/tmp/kestrel-bench-XXXXXX";
        if (!mkdtemp(tmpl)) return runtimeError(Status(ErrorCode::Io, "cannot create a temporary snapshot folder"));
        dir = tmpl;
    }
    auto model = loadModel(args, false, [&](LoadOptions& o) { o.snapshotDir = dir; });
    if (!model) return 1;
    int32_t longest = plan.restore;
    for (int32_t h : plan.turns) longest = std::max(longest, h);
    const int32_t context = longest + plan.turnTokens + 2;

    Measured m;
    Status st;
    if (!plan.turns.empty()) st = benchTurns(model, plan, context, m);
    if (st.isOk() && plan.restore > 0) st = benchRestore(model, plan, context, m);
    if (st.isOk() && !plan.streams.empty()) st = benchStreams(model, plan, m.streams, m.occupancy);
    if (!dir.empty()) std::filesystem::remove_all(dir);
    if (!st.isOk()) return runtimeError(st);

    const ModelInfo& info = model->info();
    if (plan.json) {
        std::string out = "{\"model\": \"" + info.name + "\", \"backend\": \"" + info.backend + "\", \"kv_cache\": \"" +
                          kvPrecisionName(info.kvPrecision) + "\"";
        char buf[160];
        std::snprintf(buf, sizeof buf, ", \"turn_tokens\": %d, \"repeat\": %d", plan.turnTokens, plan.repeat);
        out += buf;
        if (!plan.turns.empty()) out += ", \"ttft_ms\": " + jsonMap(m.ttft) + ", \"reprefill_ms\": " + jsonMap(m.reprefill);
        if (plan.restore > 0) {
            std::snprintf(buf, sizeof buf, ", \"restore\": {\"tokens\": %d, \"restored\": %d, \"restore_ms\": %.3f, \"reprefill_ms\": %.3f}",
                          plan.restore, m.restoredTokens, m.restoreMs, m.restoreReprefillMs);
            out += buf;
        }
        if (!plan.streams.empty())
            out += ", \"streams_tok_s\": " + jsonMap(m.streams) + ", \"kv_occupancy\": " + jsonMap(m.occupancy);
        std::printf("%s}\n", out.c_str());
        return 0;
    }
    std::printf("model:    %s (%s, %s)\n", info.name.c_str(), info.fileType.c_str(), info.backend.c_str());
    for (const auto& [h, ms] : m.ttft)
        std::printf("turn after %6d tokens: first token %9.1f ms reused, %9.1f ms re-prefilled (%.1fx)\n", h, ms,
                    m.reprefill[h], m.reprefill[h] / std::max(ms, 1e-9));
    if (plan.restore > 0)
        std::printf("reopen %d tokens: %.1f ms from the snapshot (%d restored), %.1f ms re-prefilled (%.1fx)\n",
                    plan.restore, m.restoreMs, m.restoredTokens, m.restoreReprefillMs,
                    m.restoreReprefillMs / std::max(m.restoreMs, 1e-9));
    for (const auto& [n, tokS] : m.streams) {
        // The ratio only where this run also measured one stream (a run of --streams 4 alone has no baseline).
        char ratio[48] = "";
        if (m.streams.count(1) && n != 1)
            std::snprintf(ratio, sizeof ratio, " (%.2fx one stream)", tokS / std::max(m.streams.at(1), 1e-9));
        std::printf("%3d %s %9.1f tok/s together%s, KV blocks %.1f %% full\n", n, n == 1 ? "stream: " : "streams:",
                    tokS, ratio, 100.0 * m.occupancy[n]);
    }
    return 0;
}

}  // namespace kestrel::cli
