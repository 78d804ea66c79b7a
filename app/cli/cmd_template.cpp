// kestrel-cli template: the prompt a conversation renders to, exactly —
// nothing added, no trailing newline — through the model's chat template (or
// --template FILE). FILE.json: {"messages": [{"role", "content", "tool_calls"?}],
// "tools"?: [...], "add_generation_prompt"?: bool, other template variables}.
#include "commands.h"
#include "kestrel/chat.h"

#include <cstdio>
#include <fstream>
#include <iterator>

namespace kestrel::cli {
namespace {

std::optional<std::string> readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

int runTemplate(int argc, char** argv) {
    auto flags = modelFlags();
    flags.push_back({"--messages"});
    flags.push_back({"--template"});
    Args args(flags, {{"--tokens"}});
    if (!args.parse(argc, argv, 2)) return usageError("template", args.error());
    if (!args.has("--messages")) return usageError("template", "no conversation given (--messages FILE.json)");
    const auto json = readFile(*args.value("--messages"));
    if (!json) return runtimeError(Status(ErrorCode::NotFound, *args.value("--messages") + ": cannot read"));
    std::string override;
    if (auto t = args.value("--template")) {
        auto text = readFile(*t);
        if (!text) return runtimeError(Status(ErrorCode::NotFound, *t + ": cannot read"));
        override = std::move(*text);
    }
    auto model = loadModel(args, false);
    if (!model) return 1;
    ChatFormatter formatter(*model, override);
    if (!formatter.warning().empty()) std::fprintf(stderr, "warning: %s\n", formatter.warning().c_str());
    auto text = formatter.renderJson(*json);
    if (!text) return runtimeError(text.status());
    if (args.has("--tokens")) {
        const auto ids = formatter.tokenize(*text);
        for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? " %d" : "%d", ids[i]);
        std::printf("\n");
    } else {
        std::fwrite(text->data(), 1, text->size(), stdout);
    }
    return 0;
}

}  // namespace kestrel::cli
