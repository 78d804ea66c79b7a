// kestrel-cli generate: continue a raw prompt. stdout: only the generated
// text (or, with --tokens, only the generated ids); stats on stderr.
#include "commands.h"
#include "sampling_flags.h"

#include <csignal>
#include <cstdio>

namespace kestrel::cli {
namespace {

Session* gActiveSession = nullptr;

void onInterrupt(int) {
    // Session::cancel only stores an atomic flag: safe in a signal handler.
    if (gActiveSession) gActiveSession->cancel();
}

}  // namespace

int runGenerate(int argc, char** argv) {
    auto valueFlags = modelFlags();
    for (auto& f : samplingFlags()) valueFlags.push_back(f);
    valueFlags.push_back({"-p", "--prompt"});
    valueFlags.push_back({"-n", "--n-predict"});
    valueFlags.push_back({"--stop"});
    valueFlags.push_back({"-c", "--ctx"});
    valueFlags.push_back({"--lookup"});
    for (auto& f : draftFlags()) valueFlags.push_back(f);
    Args args(valueFlags, {{"--tokens"}, {"--ignore-eos"}});
    if (!args.parse(argc, argv, 2)) return usageError("generate", args.error());
    if (!args.has("--prompt")) return usageError("generate", "no prompt given (-p TEXT)");

    SamplingParams defaults;
    auto sampling = samplingFromArgs(args, defaults);
    auto maxTokens = args.integer("--n-predict", 128);
    auto ctx = args.integer("--ctx", 0);
    auto lookup = args.integer("--lookup", 0);
    if (!sampling || !maxTokens || !ctx || !lookup) return usageError("generate", args.error());

    auto model = loadModel(args, false);
    if (!model) return 1;
    SessionOptions sessionOptions;
    sessionOptions.contextLength = int32_t(*ctx);
    auto session = Session::create(model, sessionOptions);
    if (!session) return runtimeError(session.status());
    Draft draft;
    if (!openDraft(args, *model, (*session)->contextLength(), draft)) return 1;

    const std::string prompt = *args.value("--prompt");
    const std::vector<TokenId> promptTokens = model->tokenize(prompt, /*addSpecial=*/true, /*parseSpecial=*/true);

    GenerateParams params;
    params.sampling = *sampling;
    params.maxTokens = int32_t(*maxTokens);
    params.ignoreEndOfGeneration = args.has("--ignore-eos");
    params.lookupDraft = int32_t(*lookup);
    params.draft = draft.session.get();
    params.draftTokens = draft.tokens;
    if (auto stop = args.value("--stop")) params.stopStrings.push_back(*stop);
    const bool printTokens = args.has("--tokens");

    bool firstToken = true;
    gActiveSession = session->get();
    std::signal(SIGINT, onInterrupt);
    auto result = (*session)->generate(promptTokens, params, [&](const Piece& piece) {
        if (printTokens) {
            std::printf(firstToken ? "%d" : " %d", piece.token);
            firstToken = false;
        } else {
            std::fwrite(piece.text.data(), 1, piece.text.size(), stdout);
        }
        std::fflush(stdout);
        return true;
    });
    std::signal(SIGINT, SIG_DFL);
    gActiveSession = nullptr;
    if (printTokens || !result || !result->text.empty()) std::printf("\n");
    if (!result) return runtimeError(result.status());

    const double prefillTokS = result->prefillMs > 0 ? (result->promptTokens - result->reusedTokens) * 1000.0 / result->prefillMs : 0;
    const double decodeTokS = result->decodeMs > 0 && result->tokens.size() > 1
                                  ? (result->tokens.size() - 1) * 1000.0 / result->decodeMs : 0;
    std::fprintf(stderr, "prompt: %d tokens, %.1f ms (%.1f tok/s); reply: %zu tokens, %.1f tok/s; stop: %s; seed %llu\n",
                 result->promptTokens, result->prefillMs, prefillTokS, result->tokens.size(), decodeTokS,
                 stopReasonName(result->reason), (unsigned long long)result->seed);
    if (params.lookupDraft > 0 || params.draft)
        std::fprintf(stderr, "%s: %d decode steps, %d tokens drafted, %d kept (%.2f reply tokens a step)\n",
                     params.draft ? "draft" : "lookup", result->decodeSteps, result->draftedTokens, result->acceptedDrafts,
                     result->decodeSteps > 0 ? double(result->tokens.size()) / result->decodeSteps : 0.0);
    return 0;
}

}  // namespace kestrel::cli
