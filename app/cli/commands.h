// kestrel-cli's subcommands. Each returns the process exit code: 0 on
// success, 1 on a runtime error (message on stderr), 2 on bad usage.
#pragma once

#include "cli_args.h"
#include "kestrel/engine.h"

#include <functional>
#include <map>
#include <memory>
#include <vector>

namespace kestrel::cli {

int runGenerate(int argc, char** argv);
int runTokenize(int argc, char** argv);
int runBench(int argc, char** argv);
int runInfo(int argc, char** argv);
int runChat(int argc, char** argv);
int runTemplate(int argc, char** argv);
int runSynth(int argc, char** argv);  // cmd_synth.cpp

// Shared by the subcommands: the options every one that loads a model takes.
std::vector<std::vector<std::string>> modelFlags();  // -m, --threads, --device
// Loads the model named by -m; prints the error and returns nullptr on failure.
// `adjust` may change the options before loading (e.g. a snapshot folder).
std::shared_ptr<Model> loadModel(Args& args, bool showProgress, const std::function<void(LoadOptions&)>& adjust = {});

// --draft FILE (--draft-n N): a draft model for speculative decoding, loaded as
// the model was (device, threads, KV), checked against it, with its session.
std::vector<std::vector<std::string>> draftFlags();
struct Draft {
    std::shared_ptr<Model> model;
    std::unique_ptr<Session> session;
    int32_t tokens = 0;  // GenerateParams::draftTokens
};
// False (error printed) when --draft names a model that cannot draft for `target`;
// `out` stays empty without --draft.
bool openDraft(Args& args, const Model& target, int32_t contextLength, Draft& out);

// bench_kv.cpp: the KV-reuse benchmarks of `bench` (--turns, --restore, --streams).
struct KvBenchPlan {
    std::vector<int32_t> turns;    // history lengths
    int32_t restore = 0;           // history length; 0: none
    std::vector<int32_t> streams;  // stream counts
    int32_t turnTokens = 64;       // the new turn (and each stream's prompt)
    int32_t genTokens = 64;        // decoded per stream
    int32_t repeat = 3;
    bool json = false;
};
int runKvBench(Args& args, const KvBenchPlan& plan);
// bench_streams.cpp: aggregate decode tok/s of N concurrent streams, per N.
// occupancy: mean live-token share of the KV blocks in use while they ran.
Status benchStreams(const std::shared_ptr<Model>& model, const KvBenchPlan& plan, std::map<int32_t, double>& out,
                    std::map<int32_t, double>& occupancy);
// The middle value of `v` (the upper one of an even count); 0 when empty. The benchmarks'
// figure for repeated runs.
double median(std::vector<double> v);
int usageError(const std::string& command, const std::string& message);
int runtimeError(const Status& status);

}  // namespace kestrel::cli
