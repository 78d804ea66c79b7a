#include "reply_stream.h"

#include "model_impl.h"

namespace kestrel {
namespace {

double msSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

ReplyStream::ReplyStream(const Model& model, std::span<const TokenId> prompt, const GenerateParams& params,
                         const SamplingParams& sampling, int64_t maxTokens)
    : model_(model),
      sampler_(sampling),
      stops_(params.stopStrings),
      reasoning_(params.startsInReasoning),
      splitReasoning_(params.splitReasoning),
      ignoreEndOfGeneration_(params.ignoreEndOfGeneration),
      maxTokens_(maxTokens),
      history_(prompt.begin(), prompt.end()) {
    if (const Tokenizer* tokenizer = model.impl().tokenizer.get()) decoder_.emplace(*tokenizer);
    result_.seed = sampler_.seed();
    result_.reason = StopReason::MaxTokens;
}

// Shown text goes through the stop matcher, then the reasoning splitter.
void ReplyStream::route(const std::string& shown, bool final) {
    answerPiece_.clear();
    reasoningPiece_.clear();
    if (!splitReasoning_) {
        answerPiece_ = shown;
    } else {
        auto segments = reasoning_.push(shown);
        if (final)
            for (auto& seg : reasoning_.flush()) segments.push_back(std::move(seg));
        for (const auto& seg : segments) (seg.kind == TextKind::Reasoning ? reasoningPiece_ : answerPiece_) += seg.text;
    }
    result_.text += answerPiece_;
    result_.reasoning += reasoningPiece_;
}

// Each kept token gets exactly one callback, even when its text is held back.
bool ReplyStream::emit(TokenId token, const std::string& text, const PieceCallback& onPiece) {
    auto out = stops_.push(text);
    stoppedByString_ = out.stopped;
    route(out.text, out.stopped);
    const bool keepGoing = !onPiece || onPiece(Piece{token, answerPiece_, reasoningPiece_});
    return keepGoing && !out.stopped;
}

bool ReplyStream::next(std::span<float> logits, const PieceCallback& onPiece) {
    if (ended_) return false;
    return accept(sampler_.sample(logits, history_), onPiece);
}

bool ReplyStream::nextTop(std::span<const TopLogit> top, const PieceCallback& onPiece) {
    if (ended_) return false;
    return accept(sampler_.sampleTop(top, history_), onPiece);
}

int32_t ReplyStream::topNeeded() { return sampler_.topNeeded(history_); }

bool ReplyStream::accept(TokenId token, const PieceCallback& onPiece) {
    if (result_.tokens.empty()) decodeStart_ = std::chrono::steady_clock::now();
    if (!ignoreEndOfGeneration_ && model_.isEndOfGeneration(token)) {
        stop(StopReason::EndOfGeneration);
        return false;
    }
    result_.tokens.push_back(token);
    history_.push_back(token);
    if (!emit(token, decoder_ ? decoder_->push(token) : std::string(), onPiece)) {
        stop(stoppedByString_ ? StopReason::StopString : StopReason::Callback);
        return false;
    }
    if (static_cast<int64_t>(result_.tokens.size()) >= maxTokens_) {
        stop(StopReason::MaxTokens);
        return false;
    }
    return true;
}

void ReplyStream::stop(StopReason reason) {
    if (ended_) return;
    ended_ = true;
    result_.reason = reason;
}

GenerateResult ReplyStream::finish(const PieceCallback& onPiece) {
    ended_ = true;
    if (!result_.tokens.empty()) result_.decodeMs = msSince(decodeStart_);
    if (!stoppedByString_) {
        // What the decoder, the stop matcher and the splitter still hold belongs to the reply.
        std::string rest = decoder_ ? decoder_->flush() : std::string();
        auto out = stops_.push(rest);
        std::string tail = out.text + (out.stopped ? std::string() : stops_.flush());
        if (out.stopped) result_.reason = StopReason::StopString;
        route(tail, true);
        if (onPiece && (!answerPiece_.empty() || !reasoningPiece_.empty()))
            onPiece(Piece{-1, answerPiece_, reasoningPiece_});
    }
    return std::move(result_);
}

}  // namespace kestrel
