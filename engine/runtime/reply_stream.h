// One reply being generated: its sampler with the penalty history, and the
// per-token output chain (UTF-8 stream decoder -> stop strings -> reasoning
// splitter -> Piece), including the final flush of held-back text.
//
// Session::generate and every variant of a scheduler request run their reply
// through this one class, so a token becomes a Piece, and a reply ends, the
// same way everywhere. It knows nothing of KV memory: the caller feeds the
// sampled token to its sequence and decides about context and cancellation.
//
// Usage:
//   ReplyStream reply(model, prompt, params, params.sampling, maxTokens);
//   while (reply.next(logits, onPiece)) {     // false: EOS, stop string, callback, maxTokens
//       if (cancelled) { reply.stop(StopReason::Cancelled); break; }
//       logits = forward(reply.token());
//   }
//   GenerateResult r = reply.finish(onPiece);  // reply fields; prompt/prefill fields are the caller's
//
// Not thread-safe: one thread drives a reply. The Model must outlive it.
#pragma once

#include "kestrel/engine.h"
#include "reasoning_splitter.h"
#include "sampler.h"
#include "stop_matcher.h"
#include "tokenizer.h"

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kestrel {

class ReplyStream {
public:
    // `sampling` is params.sampling or a variant's copy with its own seed;
    // `maxTokens` is the reply's limit with "until the context is full"
    // (GenerateParams::maxTokens < 0) already resolved by the caller.
    ReplyStream(const Model& model, std::span<const TokenId> prompt, const GenerateParams& params,
                const SamplingParams& sampling, int64_t maxTokens);

    // Samples the next token from `logits` (vocab-sized, modified in place by
    // the penalties) and streams its text: one onPiece call per kept token.
    // true: the reply goes on, token() must be fed to the sequence next.
    // false: it ended here (end of generation, stop string, onPiece returned
    // false, maxTokens); reason() says which.
    bool next(std::span<float> logits, const PieceCallback& onPiece);
    // next() from only the row's best logits: topNeeded() of them (Sampler::sampleTop);
    // topNeeded() == 0 means this step needs the whole row.
    bool nextTop(std::span<const TopLogit> top, const PieceCallback& onPiece);
    int32_t topNeeded();

    // Ends the reply for a reason of the caller's (ContextFull, Cancelled).
    void stop(StopReason reason);

    // Flushes what the decoder, stop matcher and splitter still hold (one last
    // Piece with token -1 when there is text) and returns the reply. Call once.
    GenerateResult finish(const PieceCallback& onPiece);

    TokenId token() const { return result_.tokens.empty() ? -1 : result_.tokens.back(); }
    const std::vector<TokenId>& tokens() const { return result_.tokens; }
    bool ended() const { return ended_; }
    StopReason reason() const { return result_.reason; }
    uint64_t seed() const { return result_.seed; }

private:
    void route(const std::string& shown, bool final);
    bool emit(TokenId token, const std::string& text, const PieceCallback& onPiece);
    // Takes the sampled token: end of generation, stop strings, the callback, maxTokens.
    bool accept(TokenId token, const PieceCallback& onPiece);

    const Model& model_;
    Sampler sampler_;
    std::optional<StreamDecoder> decoder_;
    StopMatcher stops_;
    ReasoningSplitter reasoning_;
    bool splitReasoning_;
    bool ignoreEndOfGeneration_;
    int64_t maxTokens_;
    std::vector<TokenId> history_;  // prompt + reply: what the penalties see
    GenerateResult result_;
    std::string answerPiece_, reasoningPiece_;  // the current Piece's text (its views point here)
    bool stoppedByString_ = false;
    bool ended_ = false;
    std::chrono::steady_clock::time_point decodeStart_;
};

}  // namespace kestrel
