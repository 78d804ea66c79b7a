// kestrel-cli bench: prefill and decode speed, and the memory bandwidth the
// decode reaches (bytes read per token x tokens per second) against a roofline:
// the one stated with --roofline, else the device's own (its specifications).
// --depth 0,4096 measures the decode after each many tokens of context (its
// bytes then include the KV cache read at the run's mean depth); --profile
// turns on the backends' per-op timers, which print their tables at exit.
// Each number is the median of --repeat runs; one warm-up run is not counted.
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

struct Speeds {
    double prefillTokS = 0, decodeTokS = 0;
};

// Medians over `repeat` runs of the prompt followed by params.maxTokens decoded tokens.
Result<Speeds> measure(Model& model, Session& session, const std::vector<TokenId>& prompt,
                       const GenerateParams& params, long long repeat) {
    std::vector<double> prefill, decode;
    for (long long run = 0; run <= repeat; ++run) {
        session.reset();
        model.clearPrefixCache();  // every run prefills the whole prompt
        auto result = session.generate(prompt, params);
        if (!result) return result.status();
        if (run == 0) continue;  // warm-up: page cache, thread spin-up, allocator
        prefill.push_back(result->promptTokens * 1000.0 / std::max(result->prefillMs, 1e-9));
        if (result->tokens.size() > 1)
            decode.push_back((result->tokens.size() - 1) * 1000.0 / std::max(result->decodeMs, 1e-9));
    }
    return Speeds{median(prefill), median(decode)};
}

// The decode's share of the roofline in percent; 0 when there is none.
double rooflinePercent(double gbS, double rooflineGbS) { return rooflineGbS > 0 ? 100.0 * gbS / rooflineGbS : 0.0; }

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
    flags.push_back({"--depth"});
    flags.push_back({"--roofline"});
    Args args(flags, {{"--json"}, {"--profile"}});
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

    auto depths = intList(args.value("--depth", ""), 0);
    auto statedRoofline = args.number("--roofline", 0.0);
    if (!depths) return usageError("bench", "--depth takes comma-separated token counts >= 0");
    if (!statedRoofline || *statedRoofline < 0) return usageError("bench", "--roofline takes GB/s >= 0");
    if (args.has("--profile")) {  // the backends read these when they are created
        setenv("KESTREL_CUDA_PROFILE", "1", 1);
        setenv("KESTREL_CPU_PROFILE", "1", 1);
    }

    auto model = loadModel(args, false);
    if (!model) return 1;
    // Without --depth, one measurement after -p prompt tokens (its bytes: the weights).
    const bool byDepth = !depths->empty();
    long long longest = *promptTokens;
    if (byDepth) longest = std::max<long long>(1, *std::max_element(depths->begin(), depths->end()));
    SessionOptions options;
    options.contextLength = int32_t(longest + *genTokens + 1);
    options.batchSize = int32_t(std::min<long long>(longest, 512));
    auto session = Session::create(model, options);
    if (!session) return runtimeError(session.status());

    GenerateParams params;
    params.sampling.temperature = 0.0f;
    params.maxTokens = int32_t(*genTokens);
    params.ignoreEndOfGeneration = true;

    const ModelInfo& info = model->info();
    const bool stated = *statedRoofline > 0;
    const double roofline = stated ? *statedRoofline : info.peakBandwidthGBs;
    struct Row {
        long long depth, promptTokens;  // depth 0 still needs one prompt token
        Speeds speeds;
        double gbS;
    };
    std::vector<Row> rows;
    const std::vector<long long> points =
        byDepth ? std::vector<long long>(depths->begin(), depths->end()) : std::vector<long long>{*promptTokens};
    for (const long long depth : points) {
        const long long prompt = std::max<long long>(1, depth);
        auto speeds = measure(*model, **session, benchPrompt(*model, int32_t(prompt)), params, *repeat);
        if (!speeds) return runtimeError(speeds.status());
        // At a depth the step also reads the KV cache: on average the prompt and half the reply.
        const double kvTokens = byDepth ? double(prompt) + 0.5 * double(*genTokens) : 0.0;
        const double bytes = double(info.weightBytesPerToken) + kvTokens * double(info.kvBytesPerToken);
        rows.push_back(Row{depth, prompt, *speeds, speeds->decodeTokS * bytes / 1e9});
    }

    const Row& first = rows.front();
    if (args.has("--json")) {
        std::string byDepthJson;
        if (byDepth) {
            byDepthJson = ", \"depths\": {";
            for (size_t i = 0; i < rows.size(); ++i) {
                char item[256];
                std::snprintf(item, sizeof item,
                              "%s\"%lld\": {\"prefill_tok_s\": %.2f, \"decode_tok_s\": %.2f, \"gb_s\": %.3f, "
                              "\"roofline_pct\": %.2f}",
                              i ? ", " : "", rows[i].depth, rows[i].speeds.prefillTokS, rows[i].speeds.decodeTokS,
                              rows[i].gbS, rooflinePercent(rows[i].gbS, roofline));
                byDepthJson += item;
            }
            byDepthJson += "}";
        }
        std::printf("{\"model\": \"%s\", \"backend\": \"%s\", \"kv_cache\": \"%s\", \"prompt_tokens\": %lld, "
                    "\"gen_tokens\": %lld, \"prefill_tok_s\": %.2f, \"decode_tok_s\": %.2f, \"gb_s\": %.3f, "
                    "\"weight_bytes_per_token\": %llu, \"roofline_gb_s\": %.1f, \"roofline_source\": \"%s\", "
                    "\"roofline_pct\": %.2f, \"repeat\": %lld%s}\n",
                    info.name.c_str(), info.backend.c_str(), kvPrecisionName(info.kvPrecision), first.promptTokens,
                    *genTokens, first.speeds.prefillTokS, first.speeds.decodeTokS, first.gbS,
                    (unsigned long long)info.weightBytesPerToken, roofline,
                    stated ? "stated" : roofline > 0 ? "device" : "none", rooflinePercent(first.gbS, roofline),
                    *repeat, byDepthJson.c_str());
        return 0;
    }
    std::printf("model:    %s (%s, %s, %s KV cache)\n", info.name.c_str(), info.fileType.c_str(),
                info.backend.c_str(), kvPrecisionName(info.kvPrecision));
    if (roofline > 0)
        std::printf("roofline: %8.1f GB/s   (%s)\n", roofline,
                    stated ? "stated with --roofline" : "the device's memory bandwidth by its specifications");
    const auto ofRoofline = [&](double gbS) {
        char text[64] = "";
        if (roofline > 0) std::snprintf(text, sizeof text, ", %.1f %% of the roofline", rooflinePercent(gbS, roofline));
        return std::string(text);
    };
    if (!byDepth) {
        std::printf("prefill:  %8.1f tok/s  (%lld tokens)\n", first.speeds.prefillTokS, first.promptTokens);
        std::printf("decode:   %8.1f tok/s  (%lld tokens)\n", first.speeds.decodeTokS, *genTokens);
        std::printf("weights:  %8.2f GB/s   (%.1f MB read per token%s)\n", first.gbS, info.weightBytesPerToken / 1e6,
                    ofRoofline(first.gbS).c_str());
        return 0;
    }
    for (size_t i = 0; i < rows.size(); ++i)
        std::printf("decode at depth %-6lld %8.1f tok/s  %8.2f GB/s (weights + KV%s); prefill %.1f tok/s\n", rows[i].depth,
                    rows[i].speeds.decodeTokS, rows[i].gbS, ofRoofline(rows[i].gbS).c_str(),
                    rows[i].speeds.prefillTokS);
    return 0;
}

}  // namespace kestrel::cli
