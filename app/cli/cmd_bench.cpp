// kestrel-cli bench: prefill and decode speed, and the memory bandwidth the
// decode reaches (weights read per token x tokens per second). Each number is
// the median of --repeat runs; one warm-up run is not counted.
#include "commands.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace kestrel::cli {
namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

// A prompt of ordinary tokens: ids from the middle of the vocabulary, so no
// control token ends or bends the run.
std::vector<TokenId> benchPrompt(const Model& model, int32_t n) {
    std::vector<TokenId> tokens(static_cast<size_t>(n));
    const int32_t vocab = model.info().vocabSize;
    for (int32_t i = 0; i < n; ++i) tokens[size_t(i)] = 1000 + (i * 7919) % std::max(1, vocab / 2);
    return tokens;
}

// "0,1024,4096" -> {0, 1024, 4096}; each value >= minimum. Empty text: empty list.
std::optional<std::vector<int32_t>> intList(const std::string& text, int32_t minimum) {
    std::vector<int32_t> out;
    size_t start = 0;
    while (start < text.size()) {
        const size_t end = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, end - start);
        char* stop = nullptr;
        const long v = std::strtol(item.c_str(), &stop, 10);
        if (item.empty() || *stop != '\0' || v < minimum || v > (1 << 24)) return std::nullopt;
        out.push_back(int32_t(v));
        start = end + 1;
    }
    return out;
}

}  // namespace

int runBench(int argc, char** argv) {
    auto flags = modelFlags();
    flags.push_back({"-p", "--prompt-tokens"});
    flags.push_back({"-n", "--gen-tokens"});
    flags.push_back({"-r", "--repeat"});
    flags.push_back({"--turns"});
    flags.push_back({"--restore"});
    flags.push_back({"--streams"});
    flags.push_back({"--turn-tokens"});
    Args args(flags, {{"--json"}});
    if (!args.parse(argc, argv, 2)) return usageError("bench", args.error());
    auto promptTokens = args.integer("--prompt-tokens", 512);
    auto genTokens = args.integer("--gen-tokens", 128);
    auto repeat = args.integer("--repeat", 3);
    if (!promptTokens || !genTokens || !repeat) return usageError("bench", args.error());
    if (*promptTokens < 1 || *genTokens < 1 || *repeat < 1) return usageError("bench", "-p, -n and -r must be >= 1");
    if (args.has("--turns") || args.has("--restore") || args.has("--streams")) {
        KvBenchPlan plan;
        auto turns = intList(args.value("--turns", ""), 0), streams = intList(args.value("--streams", ""), 1);
        auto restore = args.integer("--restore", 0), turnTokens = args.integer("--turn-tokens", 64);
        if (!turns || !streams) return usageError("bench", "--turns and --streams take comma-separated counts");
        if (!restore || !turnTokens || *restore < 0 || *turnTokens < 1)
            return usageError("bench", "--restore must be >= 0 and --turn-tokens >= 1");
        plan.turns = *turns;
        plan.streams = *streams;
        plan.restore = int32_t(*restore);
        plan.turnTokens = int32_t(*turnTokens);
        plan.genTokens = int32_t(*genTokens);
        plan.repeat = int32_t(*repeat);
        plan.json = args.has("--json");
        return runKvBench(args, plan);
    }

    auto model = loadModel(args, false);
    if (!model) return 1;
    SessionOptions options;
    options.contextLength = int32_t(*promptTokens + *genTokens + 1);
    options.batchSize = int32_t(std::min<long long>(*promptTokens, 512));
    auto session = Session::create(model, options);
    if (!session) return runtimeError(session.status());

    const auto prompt = benchPrompt(*model, int32_t(*promptTokens));
    GenerateParams params;
    params.sampling.temperature = 0.0f;
    params.maxTokens = int32_t(*genTokens);
    params.ignoreEndOfGeneration = true;

    std::vector<double> prefill, decode;
    for (long long run = 0; run <= *repeat; ++run) {
        (*session)->reset();
        model->clearPrefixCache();  // every run prefills the whole prompt
        auto result = (*session)->generate(prompt, params);
        if (!result) return runtimeError(result.status());
        if (run == 0) continue;  // warm-up: page cache, thread spin-up, allocator
        prefill.push_back(result->promptTokens * 1000.0 / std::max(result->prefillMs, 1e-9));
        if (result->tokens.size() > 1)
            decode.push_back((result->tokens.size() - 1) * 1000.0 / std::max(result->decodeMs, 1e-9));
    }
    const double prefillTokS = median(prefill);
    const double decodeTokS = median(decode);
    const ModelInfo& info = model->info();
    const double gbS = decodeTokS * double(info.weightBytesPerToken) / 1e9;

    if (args.has("--json")) {
        std::printf("{\"model\": \"%s\", \"backend\": \"%s\", \"kv_cache\": \"%s\", \"prompt_tokens\": %lld, "
                    "\"gen_tokens\": %lld, \"prefill_tok_s\": %.2f, \"decode_tok_s\": %.2f, \"gb_s\": %.3f, "
                    "\"weight_bytes_per_token\": %llu, \"repeat\": %lld}\n",
                    info.name.c_str(), info.backend.c_str(), kvPrecisionName(info.kvPrecision), *promptTokens,
                    *genTokens, prefillTokS, decodeTokS, gbS, (unsigned long long)info.weightBytesPerToken, *repeat);
    } else {
        std::printf("model:    %s (%s, %s, %s KV cache)\n", info.name.c_str(), info.fileType.c_str(),
                    info.backend.c_str(), kvPrecisionName(info.kvPrecision));
        std::printf("prefill:  %8.1f tok/s  (%lld tokens)\n", prefillTokS, *promptTokens);
        std::printf("decode:   %8.1f tok/s  (%lld tokens)\n", decodeTokS, *genTokens);
        std::printf("weights:  %8.2f GB/s   (%.1f MB read per token)\n", gbS, info.weightBytesPerToken / 1e6);
    }
    return 0;
}

}  // namespace kestrel::cli
