// kestrel-cli info: what a model file is and what running it costs.
#include "commands.h"
#include "kestrel/chat.h"

#include <cstdio>

namespace kestrel::cli {
namespace {

std::string mib(uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
    return buf;
}

}  // namespace

int runInfo(int argc, char** argv) {
    Args args(modelFlags(), {});
    if (!args.parse(argc, argv, 2)) return usageError("info", args.error());
    auto model = loadModel(args, false);
    if (!model) return 1;
    const ModelInfo& i = model->info();
    std::printf("file:            %s (%s)\n", i.path.c_str(), mib(i.fileBytes).c_str());
    std::printf("name:            %s\n", i.name.c_str());
    std::printf("architecture:    %s\n", i.architecture.c_str());
    std::printf("weights:         %s, %.1fM parameters\n", i.fileType.c_str(), double(i.parameterCount) / 1e6);
    std::printf("layers:          %d\n", i.layers);
    std::printf("embedding:       %d\n", i.embedding);
    std::printf("feed-forward:    %d\n", i.feedForward);
    std::printf("heads:           %d (kv %d, head dim %d)\n", i.heads, i.kvHeads, i.headDim);
    std::printf("vocabulary:      %d tokens\n", i.vocabSize);
    std::printf("trained context: %d tokens\n", i.trainedContext);
    std::printf("tensor types:   ");
    for (const auto& [type, count] : i.tensorTypes) std::printf(" %s x%d", type.c_str(), count);
    std::printf("\n");
    // What a chat with this file would use: its template, or the built-in format and why.
    const ChatFormatter formatter(*model);
    std::printf("chat template:   %s\n", formatter.usesFallback() ? formatter.warning().c_str() : "embedded");
    std::printf("KV per token:    %llu bytes (%s)\n", (unsigned long long)i.kvBytesPerToken, kvPrecisionName(i.kvPrecision));
    for (int32_t ctx : {2048, 4096, i.trainedContext}) {
        if (ctx <= 0) continue;
        std::printf("memory @ %6d: %s\n", ctx, mib(i.memoryEstimate(ctx)).c_str());
    }
    std::printf("backend:         %s\n", i.backend.c_str());
    return 0;
}

}  // namespace kestrel::cli
