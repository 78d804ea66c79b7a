// kestrel::Session: one conversation's KV state and the generation loop.
//
// generate() reuses the longest common prefix of the new prompt with the
// tokens already in the KV cache, prefills the rest in chunks (checking for
// cancellation between chunks), then samples and decodes one token per step
// until a stop condition. Text reaches the callback only in whole UTF-8
// characters, and never as part of a stop string.
#include "model_impl.h"
#include "model_runner.h"
#include "reasoning_splitter.h"
#include "sampler.h"
#include "stop_matcher.h"

#include <algorithm>
#include <chrono>

namespace kestrel {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

constexpr int32_t kDefaultContext = 4096;

}  // namespace

struct Session::Impl {
    std::shared_ptr<Model> model;
    std::unique_ptr<model::ModelRunner> runner;
    std::vector<TokenId> tokens;  // what the KV cache holds, position by position
    std::vector<float> logits;
    std::atomic<bool> cancelRequested{false};
    int32_t batchSize = 256;

    // Appends tokens to the cache; logits of the last one land in `logits`.
    Status append(std::span<const TokenId> ids, model::LogitsMode mode, bool checkCancel) {
        for (size_t start = 0; start < ids.size(); start += size_t(batchSize)) {
            if (checkCancel && cancelRequested.load(std::memory_order_relaxed))
                return Status(ErrorCode::Cancelled, "cancelled");
            const auto chunk = ids.subspan(start, std::min(ids.size() - start, size_t(batchSize)));
            Status s;
            {
                std::lock_guard lock(model->impl().forwardMutex);
                s = runner->forward(chunk, mode, logits);
            }
            if (!s.isOk()) {
                // The runner keeps the cache consistent; drop what it did not store.
                tokens.resize(size_t(runner->position()));
                return s;
            }
            tokens.insert(tokens.end(), chunk.begin(), chunk.end());
        }
        return Status::ok();
    }
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<Model> model, const SessionOptions& options) {
    if (!model) return Status(ErrorCode::InvalidArgument, "no model");
    const auto& config = model->impl().loaded->config();
    const int64_t trained = config.contextLength > 0 ? config.contextLength : kDefaultContext;
    int64_t context = options.contextLength > 0 ? options.contextLength : std::min<int64_t>(trained, kDefaultContext);
    if (context > trained)
        return Status(ErrorCode::InvalidArgument, "context length " + std::to_string(context) +
                                                      " is longer than the model was trained for (" +
                                                      std::to_string(trained) + " tokens)");
    if (options.batchSize < 1) return Status(ErrorCode::InvalidArgument, "batch size must be >= 1");

    auto impl = std::make_unique<Impl>();
    impl->batchSize = options.batchSize;
    auto runner = model::ModelRunner::create(model->impl().loaded, *model->impl().backend, context, options.batchSize);
    if (!runner) return runner.status();
    impl->runner = std::move(runner).value();
    impl->model = std::move(model);
    impl->tokens.reserve(size_t(context));
    return std::unique_ptr<Session>(new Session(std::move(impl)));
}

void Session::cancel() { impl_->cancelRequested.store(true, std::memory_order_relaxed); }

void Session::reset() {
    impl_->runner->truncate(0);
    impl_->tokens.clear();
}

std::span<const TokenId> Session::tokens() const { return impl_->tokens; }
int32_t Session::contextLength() const { return int32_t(impl_->runner->contextLength()); }
const Model& Session::model() const { return *impl_->model; }

Result<std::vector<float>> Session::evaluate(std::span<const TokenId> tokens, bool allPositions) {
    if (tokens.empty()) return Status(ErrorCode::InvalidArgument, "no tokens to evaluate");
    impl_->cancelRequested.store(false);
    if (allPositions) {
        // One forward call per chunk; collect every chunk's rows.
        std::vector<float> all;
        for (size_t start = 0; start < tokens.size(); start += size_t(impl_->batchSize)) {
            const auto chunk = tokens.subspan(start, std::min(tokens.size() - start, size_t(impl_->batchSize)));
            KESTREL_RETURN_IF_ERROR(impl_->append(chunk, model::LogitsMode::All, false));
            all.insert(all.end(), impl_->logits.begin(), impl_->logits.end());
        }
        return all;
    }
    KESTREL_RETURN_IF_ERROR(impl_->append(tokens, model::LogitsMode::LastOnly, false));
    return impl_->logits;
}

Result<GenerateResult> Session::generate(std::span<const TokenId> prompt, const GenerateParams& params,
                                         const PieceCallback& onPiece) {
    Impl& s = *impl_;
    s.cancelRequested.store(false);
    if (prompt.empty()) return Status(ErrorCode::InvalidArgument, "the prompt is empty");
    const int64_t context = s.runner->contextLength();
    if (int64_t(prompt.size()) >= context)
        return Status(ErrorCode::InvalidArgument, "the prompt has " + std::to_string(prompt.size()) +
                                                      " tokens; the context holds " + std::to_string(context) +
                                                      " (one more is needed for the reply)");
    const int32_t vocab = s.runner->vocabSize();
    for (TokenId id : prompt)
        if (id < 0 || id >= vocab)
            return Status(ErrorCode::InvalidArgument, "token id " + std::to_string(id) + " is outside the vocabulary (" +
                                                          std::to_string(vocab) + " tokens)");

    GenerateResult result;
    result.promptTokens = int32_t(prompt.size());

    // Reuse the common prefix, but always recompute at least the last prompt
    // token: its logits start the reply.
    size_t common = 0;
    while (common < s.tokens.size() && common < prompt.size() && s.tokens[common] == prompt[common]) ++common;
    common = std::min(common, prompt.size() - 1);
    s.runner->truncate(int64_t(common));
    s.tokens.resize(common);
    result.reusedTokens = int32_t(common);

    const auto prefillStart = Clock::now();
    Status prefill = s.append(prompt.subspan(common), model::LogitsMode::LastOnly, true);
    result.prefillMs = msSince(prefillStart);
    if (prefill.code() == ErrorCode::Cancelled) {
        result.reason = StopReason::Cancelled;
        return result;
    }
    if (!prefill.isOk()) return prefill;

    Sampler sampler(params.sampling);
    result.seed = sampler.seed();
    const Tokenizer* tokenizer = s.model->impl().tokenizer.get();
    std::optional<StreamDecoder> decoder;
    if (tokenizer) decoder.emplace(*tokenizer);
    StopMatcher stops(params.stopStrings);
    ReasoningSplitter reasoning(params.startsInReasoning);
    std::vector<TokenId> history(prompt.begin(), prompt.end());  // penalties see prompt + reply

    // Shown text goes through the stop matcher, then the reasoning splitter;
    // each token gets exactly one callback.
    std::string answerPiece, reasoningPiece;
    auto route = [&](const std::string& shown, bool final) {
        answerPiece.clear();
        reasoningPiece.clear();
        if (!params.splitReasoning) {
            answerPiece = shown;
        } else {
            auto segments = reasoning.push(shown);
            if (final)
                for (auto& seg : reasoning.flush()) segments.push_back(std::move(seg));
            for (const auto& seg : segments) (seg.kind == TextKind::Reasoning ? reasoningPiece : answerPiece) += seg.text;
        }
        result.text += answerPiece;
        result.reasoning += reasoningPiece;
    };
    bool stoppedByString = false;
    auto emit = [&](TokenId token, const std::string& text) -> bool {
        auto out = stops.push(text);
        stoppedByString = out.stopped;
        route(out.text, out.stopped);
        const bool keepGoing = !onPiece || onPiece(Piece{token, answerPiece, reasoningPiece});
        return keepGoing && !out.stopped;
    };

    Clock::time_point decodeStart;
    const int64_t maxTokens = params.maxTokens < 0 ? context : params.maxTokens;
    result.reason = StopReason::MaxTokens;
    while (true) {
        const TokenId token = sampler.sample(s.logits, history);
        if (result.tokens.empty()) decodeStart = Clock::now();
        if (!params.ignoreEndOfGeneration && s.model->isEndOfGeneration(token)) {
            result.reason = StopReason::EndOfGeneration;
            break;
        }
        result.tokens.push_back(token);
        history.push_back(token);
        if (!emit(token, decoder ? decoder->push(token) : std::string())) {
            result.reason = stoppedByString ? StopReason::StopString : StopReason::Callback;
            break;
        }
        if (int64_t(result.tokens.size()) >= maxTokens) break;
        if (s.runner->position() >= context) {
            result.reason = StopReason::ContextFull;
            break;
        }
        if (s.cancelRequested.load(std::memory_order_relaxed)) {
            result.reason = StopReason::Cancelled;
            break;
        }
        const TokenId one[1] = {token};
        Status step = s.append(one, model::LogitsMode::LastOnly, false);
        if (!step.isOk()) return step;
    }
    if (!result.tokens.empty()) result.decodeMs = msSince(decodeStart);

    if (!stoppedByString) {
        // What the decoder, the stop matcher and the splitter still hold belongs to the reply.
        std::string rest = decoder ? decoder->flush() : std::string();
        auto out = stops.push(rest);
        std::string tail = out.text + (out.stopped ? std::string() : stops.flush());
        if (out.stopped) result.reason = StopReason::StopString;
        route(tail, true);
        if (onPiece && (!answerPiece.empty() || !reasoningPiece.empty()))
            onPiece(Piece{-1, answerPiece, reasoningPiece});
    }
    return result;
}

}  // namespace kestrel
