// kestrel::Session: one conversation's KV state and the generation loop.
//
// A session is one sequence of the model's shared KV pool. generate() reuses
// the longest prefix of the new prompt that the session still holds or that
// the pool's prefix cache has from any other sequence, prefills the rest in
// chunks (checking for cancellation between chunks), then samples and decodes
// one token per step until a stop condition. Sampling and the text of each
// token go through ReplyStream (shared with the scheduler): text reaches the
// callback only in whole UTF-8 characters, and never as part of a stop string.
#include "lookup_drafter.h"
#include "model_drafter.h"
#include "model_impl.h"
#include "reply_stream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

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
    runtime::KvPool* pool = nullptr;
    int32_t seq = -1;
    int64_t context = 0;
    std::vector<TokenId> tokens;  // what the sequence holds, position by position (a copy of the pool's)
    std::vector<float> logits;  // whole rows of the last step that wanted them
    model::StepLogits stepOut;  // a step's output; its top list when the sampler needs only that
    std::atomic<bool> cancelRequested{false};
    int32_t batchSize = 256;

    ~Impl() {
        if (pool) pool->close(seq);  // full blocks stay in the prefix cache
    }

    void syncTokens() { tokens = pool->tokens(seq); }

    // Appends tokens to the sequence; logits of the last one (or of all) land in
    // `logits`, or with topK > 0 the last one's (or every one's) topK best in
    // stepOut.top. All with topK > 0: at most batchSize tokens (one step).
    Status append(std::span<const TokenId> ids, model::LogitsWanted wanted, bool checkCancel, int32_t topK = 0,
                  bool speculative = false) {
        if (static_cast<int64_t>(tokens.size() + ids.size()) > context)
            return Status(ErrorCode::InvalidArgument, "context full: " + std::to_string(tokens.size()) + " tokens + " +
                                                          std::to_string(ids.size()) +
                                                          " new exceed the context length of " + std::to_string(context));
        std::vector<float> chunkLogits;
        if (wanted == model::LogitsWanted::All) logits.clear();
        for (size_t start = 0; start < ids.size(); start += size_t(batchSize)) {
            if (checkCancel && cancelRequested.load(std::memory_order_relaxed))
                return Status(ErrorCode::Cancelled, "cancelled");
            const auto chunk = ids.subspan(start, std::min(ids.size() - start, size_t(batchSize)));
            const bool last = start + chunk.size() == ids.size();
            const runtime::PoolChunk pc{seq, chunk,
                                        wanted == model::LogitsWanted::All ? wanted
                                        : last                             ? wanted
                                                                           : model::LogitsWanted::None,
                                        speculative};
            stepOut.topK = wanted == model::LogitsWanted::All || (wanted == model::LogitsWanted::Last && last) ? topK : 0;
            stepOut.rows.swap(wanted == model::LogitsWanted::All ? chunkLogits : logits);
            Status s = pool->step({&pc, 1}, stepOut);
            stepOut.rows.swap(wanted == model::LogitsWanted::All ? chunkLogits : logits);
            if (!s.isOk()) {
                syncTokens();  // the pool keeps the sequence consistent; mirror what it stored
                return s;
            }
            if (wanted == model::LogitsWanted::All) logits.insert(logits.end(), chunkLogits.begin(), chunkLogits.end());
            tokens.insert(tokens.end(), chunk.begin(), chunk.end());
        }
        return Status::ok();
    }
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<Model> model, const SessionOptions& options) {
    if (!model) return Status(ErrorCode::InvalidArgument, "no model");
    runtime::KvPool& pool = *model->impl().pool;
    const auto& config = model->impl().loaded->config();
    const int64_t trained = config.contextLength > 0 ? config.contextLength : kDefaultContext;
    int64_t context = options.contextLength > 0 ? options.contextLength : std::min<int64_t>(trained, kDefaultContext);
    if (context > trained)
        return Status(ErrorCode::InvalidArgument, "context length " + std::to_string(context) +
                                                      " is longer than the model was trained for (" +
                                                      std::to_string(trained) + " tokens)");
    if (context > pool.maxPositions())
        return Status(ErrorCode::InvalidArgument, "context length " + std::to_string(context) +
                                                      " does not fit the KV pool (" +
                                                      std::to_string(pool.maxPositions()) +
                                                      " positions; raise the KV pool size)");
    if (options.batchSize < 1) return Status(ErrorCode::InvalidArgument, "batch size must be >= 1");

    auto impl = std::make_unique<Impl>();
    impl->batchSize = std::min(options.batchSize, pool.maxStepTokens());
    impl->context = context;
    impl->pool = &pool;
    impl->seq = pool.open();
    impl->model = std::move(model);
    impl->tokens.reserve(size_t(context));
    return std::unique_ptr<Session>(new Session(std::move(impl)));
}

void Session::cancel() { impl_->cancelRequested.store(true, std::memory_order_relaxed); }

void Session::reset() {
    impl_->pool->truncate(impl_->seq, 0);
    impl_->tokens.clear();
}

std::span<const TokenId> Session::tokens() const { return impl_->tokens; }
int32_t Session::contextLength() const { return int32_t(impl_->context); }
const Model& Session::model() const { return *impl_->model; }

Result<std::vector<float>> Session::evaluate(std::span<const TokenId> tokens, bool allPositions) {
    if (tokens.empty()) return Status(ErrorCode::InvalidArgument, "no tokens to evaluate");
    impl_->cancelRequested.store(false);
    const int32_t vocab = impl_->pool->vocabSize();
    for (TokenId id : tokens)
        if (id < 0 || id >= vocab)
            return Status(ErrorCode::InvalidArgument, "token id " + std::to_string(id) + " is outside the vocabulary (" +
                                                          std::to_string(vocab) + " tokens)");
    KESTREL_RETURN_IF_ERROR(
        impl_->append(tokens, allPositions ? model::LogitsWanted::All : model::LogitsWanted::Last, false));
    return impl_->logits;
}

Result<std::vector<TokenId>> Session::propose(std::span<const TokenId> tokens, int32_t max, float minProbability) {
    Impl& s = *impl_;
    s.cancelRequested.store(false);
    if (tokens.empty()) return Status(ErrorCode::InvalidArgument, "no tokens to continue");
    const int32_t vocab = s.pool->vocabSize();
    for (TokenId id : tokens)
        if (id < 0 || id >= vocab)
            return Status(ErrorCode::InvalidArgument, "token id " + std::to_string(id) + " is outside the vocabulary (" +
                                                          std::to_string(vocab) + " tokens)");
    std::vector<TokenId> out;
    // Every proposal but the last is appended: tokens + max - 1 positions.
    max = int32_t(std::min<int64_t>(max, s.context - int64_t(tokens.size()) + 1));
    if (max <= 0) return out;
    const int64_t common = s.pool->reuse(s.seq, tokens, int64_t(tokens.size()) - 1);
    s.tokens.assign(tokens.begin(), tokens.begin() + common);
    // The 16 likeliest logits suffice for the argmax and a confidence (a
    // softmax over them overstates the probability a little; a GPU then
    // returns 16 values instead of the vocabulary).
    const int32_t topK = topLogitsFor(16, vocab);
    // What a draft lacks between two calls is a token or two (the last guess
    // kept and the model's next token): computed as decode rows, as one-token
    // steps are, not as a prefill (on the CPU a two-token prefill chunk costs
    // ~2x a one-token step: the model drafting for itself measured 123.6 ->
    // 155.0 tok/s with this, docs/PERFORMANCE.md).
    const auto rest = tokens.subspan(size_t(common));
    constexpr size_t kDecodeRows = 8;
    KESTREL_RETURN_IF_ERROR(
        s.append(rest, model::LogitsWanted::Last, true, topK, rest.size() <= kDecodeRows && rest.size() > 1));
    for (;;) {
        TokenId best = 0;
        double sum = 0;
        if (topK > 0) {
            best = s.stepOut.top[0].id;
            for (int32_t i = 0; i < topK; ++i) sum += std::exp(double(s.stepOut.top[size_t(i)].logit - s.stepOut.top[0].logit));
        } else {
            best = TokenId(std::max_element(s.logits.begin(), s.logits.end()) - s.logits.begin());
            for (float l : s.logits) sum += std::exp(double(l - s.logits[size_t(best)]));
        }
        if (1.0 / sum < double(minProbability)) break;
        out.push_back(best);
        if (int32_t(out.size()) >= max) break;
        KESTREL_RETURN_IF_ERROR(s.append(std::span(&out.back(), 1), model::LogitsWanted::Last, true, topK));
    }
    return out;
}

Status Session::saveSnapshot(const std::string& key) {
    auto* store = impl_->model->impl().snapshots.get();
    if (!store) return Status(ErrorCode::InvalidArgument, "snapshots are off (no snapshot folder was given at load)");
    return impl_->pool->save(impl_->seq, *store, key);
}

Result<int32_t> Session::restoreSnapshot(const std::string& key, std::string* note) {
    auto* store = impl_->model->impl().snapshots.get();
    if (!store) return Status(ErrorCode::InvalidArgument, "snapshots are off (no snapshot folder was given at load)");
    auto restored = impl_->pool->restore(impl_->seq, *store, key, note);
    impl_->syncTokens();
    if (!restored) return restored.status();
    if (static_cast<int64_t>(impl_->tokens.size()) > impl_->context) {
        impl_->pool->truncate(impl_->seq, 0);
        impl_->tokens.clear();
        if (note) *note = "snapshot ignored: longer than this session's context";
        return int32_t{0};
    }
    return static_cast<int32_t>(restored.value());
}

Result<GenerateResult> Session::generate(std::span<const TokenId> prompt, const GenerateParams& params,
                                         const PieceCallback& onPiece) {
    Impl& s = *impl_;
    s.cancelRequested.store(false);
    if (prompt.empty()) return Status(ErrorCode::InvalidArgument, "the prompt is empty");
    const int64_t context = s.context;
    if (int64_t(prompt.size()) >= context)
        return Status(ErrorCode::InvalidArgument, "the prompt has " + std::to_string(prompt.size()) +
                                                      " tokens; the context holds " + std::to_string(context) +
                                                      " (one more is needed for the reply)");
    const int32_t vocab = s.pool->vocabSize();
    for (TokenId id : prompt)
        if (id < 0 || id >= vocab)
            return Status(ErrorCode::InvalidArgument, "token id " + std::to_string(id) + " is outside the vocabulary (" +
                                                          std::to_string(vocab) + " tokens)");

    if (params.draft == this)
        return Status(ErrorCode::InvalidArgument, "a session cannot draft for itself (open a second session)");

    GenerateResult result;
    result.promptTokens = int32_t(prompt.size());

    // Reuse the longest held or cached prefix, but always recompute at least
    // the last prompt token: its logits start the reply.
    const int64_t common = s.pool->reuse(s.seq, prompt, int64_t(prompt.size()) - 1);
    s.tokens.assign(prompt.begin(), prompt.begin() + common);
    result.reusedTokens = int32_t(common);

    const int64_t maxTokens = params.maxTokens < 0 ? context : params.maxTokens;
    ReplyStream reply(*s.model, prompt, params, params.sampling, maxTokens);
    // Each step returns only the logits the next draw needs when that is a few (greedy, top-k).
    int32_t topK = topLogitsFor(reply.topNeeded(), vocab);
    const auto prefillStart = Clock::now();
    Status prefill = s.append(prompt.subspan(size_t(common)), model::LogitsWanted::Last, true, topK);
    result.prefillMs = msSince(prefillStart);
    if (prefill.code() == ErrorCode::Cancelled) {
        result.reason = StopReason::Cancelled;
        return result;
    }
    if (!prefill.isOk()) return prefill;

    // Each step feeds the sampled token, and with a drafter the tokens guessed to follow it;
    // row i of the step's logits follows batch[i], and the sampler draws from the rows in turn
    // while it draws the guessed tokens. The KV of guesses it did not draw is dropped.
    LookupDrafter lookup;
    std::optional<ModelDrafter> byModel;
    Drafter* drafter = &lookup;
    if (params.draft) byModel.emplace(*params.draft, vocab), drafter = &*byModel;
    const int32_t maxDraft = std::clamp(params.draft ? params.draftTokens : params.lookupDraft, 0, s.batchSize - 1);
    if (maxDraft > 0) drafter->reset(prompt);
    std::vector<TokenId> batch, draft;
    int32_t steps = 0, drafted = 0, accepted = 0;
    const auto sampleRow = [&](size_t row) {
        if (topK > 0) return reply.nextTop(std::span(s.stepOut.top).subspan(row * size_t(topK), size_t(topK)), onPiece);
        return reply.next(std::span(s.logits).subspan(row * size_t(vocab), size_t(vocab)), onPiece);
    };
    bool going = sampleRow(0);
    while (going) {
        const int64_t held = int64_t(s.tokens.size());
        if (held >= context) {
            reply.stop(StopReason::ContextFull);
            break;
        }
        if (s.cancelRequested.load(std::memory_order_relaxed)) {
            reply.stop(StopReason::Cancelled);
            break;
        }
        batch.assign(1, reply.token());
        if (maxDraft > 0) {
            drafter->push(reply.token());
            // No guess past the context, nor past the last token the reply may still take.
            const int64_t room = std::min<int64_t>(context - held - 1, maxTokens - int64_t(reply.tokens().size()) - 1);
            drafter->draft(int(std::min<int64_t>(maxDraft, room)), draft);
            batch.insert(batch.end(), draft.begin(), draft.end());
        }
        const size_t guesses = batch.size() - 1;
        // Each kept guess may add one distinct token to the penalties' window: ask for that many more.
        const int32_t need = reply.topNeeded();
        topK = need > 0 ? topLogitsFor(need + int32_t(guesses), vocab) : 0;
        Status step = s.append(batch, guesses > 0 ? model::LogitsWanted::All : model::LogitsWanted::Last, false, topK,
                               guesses > 0);
        if (!step.isOk()) return step;
        ++steps;
        size_t kept = 0;
        going = sampleRow(0);
        while (going && kept < guesses && reply.token() == batch[kept + 1]) going = sampleRow(++kept);
        drafted += int32_t(guesses);
        accepted += int32_t(kept);
        if (kept < guesses) {
            s.pool->truncate(s.seq, held + 1 + int64_t(kept));
            s.tokens.resize(size_t(held + 1 + int64_t(kept)));
        }
        if (maxDraft > 0) {
            drafter->checked(guesses, kept);
            for (size_t j = 1; j <= kept; ++j) drafter->push(batch[j]);
        }
    }
    GenerateResult out = reply.finish(onPiece);
    out.promptTokens = result.promptTokens;
    out.reusedTokens = result.reusedTokens;
    out.prefillMs = result.prefillMs;
    out.decodeSteps = steps;
    out.draftedTokens = drafted;
    out.acceptedDrafts = accepted;
    return out;
}

}  // namespace kestrel
