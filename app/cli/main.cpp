// kestrel-cli: the engine from a terminal. Its output formats are a contract
// that tests and tools rely on: stdout carries only the requested result,
// everything else (progress, statistics) goes to stderr.
#include "commands.h"

#include <cstdio>
#include <cstring>
#include <string_view>

namespace {

struct Command {
    std::string_view name;
    int (*run)(int, char**);
    std::string_view usage;
};

constexpr Command kCommands[] = {
    {"generate", kestrel::cli::runGenerate,
     "generate -m FILE -p TEXT [-n N] [--temp T] [--top-k K] [--top-p P] [--min-p P]\n"
     "           [--repeat-penalty R] [--seed S] [--threads K] [--device D] [--kv f16|int8] [--tokens]\n"
     "           [--stop STR] [--ctx N] [--lookup N] [--draft FILE [--draft-n N]]\n"
     "           continue the raw prompt (no chat template); speculative decoding: --lookup N guesses up to\n"
     "           N tokens a step from earlier text, --draft FILE has a smaller model of the same vocabulary\n"
     "           guess up to --draft-n (6) tokens a step"},
    {"tokenize", kestrel::cli::runTokenize, "tokenize -m FILE TEXT [--no-special]   print token ids"},
    {"bench", kestrel::cli::runBench,
     "bench -m FILE [-p 512] [-n 128] [--depth 0,4096] [--roofline GBPS] [--profile] [--threads K] [--device D] "
     "[--kv f16|int8] [--repeat R] [--json]"},
    {"info", kestrel::cli::runInfo, "info -m FILE   architecture, hyperparameters, tensor types, memory"},
    {"synth", kestrel::cli::runSynth, "synth -o FILE --shape llama3-8b|llama2-7b|llama3-70b|smollm2-135m [--type q4_0] [--layers N] [--seed S]   random-weight GGUF"},
    {"chat", kestrel::cli::runChat,
     "chat [-m FILE] [--system TEXT] [--template FILE] [--temp T] [--seed S] [--threads K] [--kv f16|int8] [-n N]\n"
     "           [--lookup N] [--draft FILE [--draft-n N]]   terminal chat (--lookup: as generate's, 6 by\n"
     "           default, 0 turns it off; --draft: as generate's)"},
    {"template", kestrel::cli::runTemplate,
     "template -m FILE --messages FILE.json [--template FILE] [--tokens]   print the rendered chat prompt"},
};

int printUsage(FILE* out) {
    std::fprintf(out, "usage: kestrel-cli COMMAND [OPTIONS]\n\ncommands:\n");
    for (const auto& c : kCommands) std::fprintf(out, "  %.*s\n", int(c.usage.size()), c.usage.data());
    return out == stdout ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return printUsage(stderr);
    const std::string_view name = argv[1];
    if (name == "-h" || name == "--help" || name == "help") return printUsage(stdout);
    for (const auto& c : kCommands)
        if (c.name == name) return c.run(argc, argv);
    std::fprintf(stderr, "kestrel-cli: unknown command '%s'\n", argv[1]);
    return printUsage(stderr);
}
