// kestrel-cli chat: a terminal chat through the model's chat template. Each
// turn re-sends the whole conversation; the session reuses the KV of
// everything already seen, so only the new message is prefilled (and says so
// when the template rewrote history). Reasoning (<think>) is shown dimmed.
// Ctrl+C stops a reply; /reset starts over; /exit or end of input quits.
#include "commands.h"
#include "kestrel/chat.h"
#include "sampling_flags.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

namespace kestrel::cli {
namespace {

Session* gChatSession = nullptr;
void onInterrupt(int) {
    if (gChatSession) gChatSession->cancel();
}

std::string defaultModelPath() {
    const char* xdg = std::getenv("XDG_DATA_HOME");
    const char* home = std::getenv("HOME");
    std::string base = xdg && *xdg ? xdg : std::string(home ? home : ".") + "/.local/share";
    return base + "/kestrel/models/SmolLM2-135M-Instruct.Q4_1.gguf";
}

}  // namespace

int runChat(int argc, char** argv) {
    auto flags = modelFlags();
    for (auto& f : samplingFlags()) flags.push_back(f);
    flags.push_back({"--system"});
    flags.push_back({"--template"});
    flags.push_back({"-n", "--n-predict"});
    flags.push_back({"-c", "--ctx"});
    flags.push_back({"--lookup"});
    for (auto& f : draftFlags()) flags.push_back(f);
    Args args(flags, {});
    if (!args.parse(argc, argv, 2)) return usageError("chat", args.error());
    SamplingParams defaults;
    auto sampling = samplingFromArgs(args, defaults);
    auto maxTokens = args.integer("--n-predict", 512);
    auto ctx = args.integer("--ctx", 0);
    auto lookup = args.integer("--lookup", 6);  // as the app does (kLookupDraftTokens)
    if (!sampling || !maxTokens || !ctx || !lookup) return usageError("chat", args.error());
    if (!args.has("--model")) {
        // `kestrel-cli chat` alone opens the default model the set-up fetched.
        std::vector<std::string> storage = {"kestrel-cli", "chat", "-m", defaultModelPath()};
        for (int i = 2; i < argc; ++i) storage.push_back(argv[i]);
        std::vector<char*> argv2;
        for (auto& s : storage) argv2.push_back(s.data());
        Args withModel(flags, {});
        withModel.parse(int(argv2.size()), argv2.data(), 2);
        args = withModel;
    }

    auto model = loadModel(args, true);
    if (!model) return 1;
    SessionOptions options;
    options.contextLength = int32_t(*ctx);
    auto session = Session::create(model, options);
    if (!session) return runtimeError(session.status());
    Draft draft;
    if (!openDraft(args, *model, (*session)->contextLength(), draft)) return 1;

    std::string templateOverride;
    if (auto file = args.value("--template")) {
        std::ifstream in(*file, std::ios::binary);
        if (!in) return runtimeError(Status(ErrorCode::NotFound, *file + ": cannot read the template file"));
        templateOverride.assign(std::istreambuf_iterator<char>(in), {});
    }
    ChatFormatter formatter(*model, templateOverride);
    if (!formatter.warning().empty()) std::fprintf(stderr, "warning: %s\n", formatter.warning().c_str());

    std::vector<ChatMessage> messages;
    if (auto system = args.value("--system")) messages.push_back({"system", *system});
    GenerateParams params;
    params.sampling = *sampling;
    params.maxTokens = int32_t(*maxTokens);
    params.lookupDraft = int32_t(*lookup);
    params.draft = draft.session.get();
    params.draftTokens = draft.tokens;
    params.stopStrings = formatter.stopStrings();

    std::fprintf(stderr, "%s on %s. /reset starts over, /exit quits, Ctrl+C stops a reply.\n",
                 model->info().name.c_str(), model->info().backend.c_str());
    gChatSession = session->get();
    std::signal(SIGINT, onInterrupt);
    std::string line;
    while (true) {
        std::fprintf(stderr, "\n> ");
        if (!std::getline(std::cin, line) || line == "/exit") break;
        if (line == "/reset") {
            messages.resize(args.has("--system") ? 1 : 0);
            (*session)->reset();
            continue;
        }
        if (line.empty()) continue;
        messages.push_back({"user", line});
        auto prompt = formatter.format(messages);
        if (!prompt) {
            runtimeError(prompt.status());
            messages.pop_back();
            continue;
        }
        const auto reuse = comparePrompts((*session)->tokens(), prompt->tokens);
        if (!reuse.extendsPrevious && !(*session)->tokens().empty())
            // The template rewrote history (e.g. dropped reasoning), or the reply's text
            // tokenizes differently from the tokens the model generated.
            std::fprintf(stderr, "[the prompt departs from the cached tokens after %zu of %zu: re-reading the rest]\n",
                         reuse.commonPrefix, (*session)->tokens().size());
        params.startsInReasoning = prompt->startsInReasoning;
        bool inReasoning = false;
        auto result = (*session)->generate(prompt->tokens, params, [&inReasoning](const Piece& piece) {
            if (!piece.reasoning.empty()) {
                if (!inReasoning) std::fputs("\033[2m", stdout);  // dim
                inReasoning = true;
                std::fwrite(piece.reasoning.data(), 1, piece.reasoning.size(), stdout);
            }
            if (!piece.text.empty()) {
                if (inReasoning) std::fputs("\033[0m\n", stdout);
                inReasoning = false;
                std::fwrite(piece.text.data(), 1, piece.text.size(), stdout);
            }
            std::fflush(stdout);
            return true;
        });
        if (inReasoning) std::fputs("\033[0m", stdout);
        std::printf("\n");
        if (!result) {
            runtimeError(result.status());
            messages.pop_back();
            continue;
        }
        ChatMessage reply{"assistant", result->text};
        reply.reasoning = result->reasoning;
        messages.push_back(std::move(reply));
        const double tokS = result->decodeMs > 0 ? (result->tokens.size() - 1) * 1000.0 / result->decodeMs : 0;
        std::fprintf(stderr, "[%zu tokens, %.1f tok/s, prompt %d (%d reused), %s]\n", result->tokens.size(), tokS,
                     result->promptTokens, result->reusedTokens, stopReasonName(result->reason));
        if (result->reason == StopReason::ContextFull) {
            std::fprintf(stderr, "The context is full; /reset to start a new conversation.\n");
        }
    }
    std::signal(SIGINT, SIG_DFL);
    gChatSession = nullptr;
    return 0;
}

}  // namespace kestrel::cli
