// Kestrel's engine API: load a GGUF model, open sessions, generate text.
//
// No Qt and no CUDA types here; errors are values (kestrel/status.h).
//
// Ownership: Model is shared (std::shared_ptr) and immutable after load; a
// Session keeps its Model alive. Thread-safety: a Model may be used by any
// number of threads and sessions at once. A Session is used by one thread at
// a time, except Session::cancel(), which any thread may call at any time;
// generation then ends within one token (or one prefill chunk).
#pragma once

#include "kestrel/sampling.h"
#include "kestrel/status.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kestrel {

using TokenId = int32_t;
class Session;

// How the KV cache stores keys and values.
//   Half (the default): f16, 2 bytes per value, a relative rounding error of 2^-11.
//   Int8: int8 codes with a float scale per 32 values (like GGUF's Q8_0), 1.125
//     bytes per value: 1.8x the context fits in the same memory, and decoding a
//     long chat on the CPU, which reads every cached value per token, gets
//     faster (SmolLM2 at 4096 positions: ~+5-10 %); the rounding error is up to
//     1/254 of a block's largest value (logits ~2.5e-2 of their range).
//     The CPU backend only: on a GPU the cache stays Half (ModelInfo says which).
enum class KvPrecision { Half, Int8 };
const char* kvPrecisionName(KvPrecision precision);  // "f16", "int8"

struct LoadOptions {
    std::string path;
    std::string device = "cpu";  // "cpu", "cuda" or "cuda:N" (once the CUDA backend exists)
    int32_t threads = 0;         // CPU threads; 0: one per core
    // KV memory shared by the model's sessions, in positions. 0: from free memory
    // (up to 40 % of what is available; at least the trained context, capped at 64k
    // on a GPU, 32k on the CPU, where pages are committed only as they fill).
    int64_t kvPoolTokens = 0;
    KvPrecision kvPrecision = KvPrecision::Half;
    // Where conversation KV snapshots go (Session::saveSnapshot); empty: none.
    std::string snapshotDir;
    uint64_t snapshotMaxBytes = uint64_t(4) << 30;  // the folder's bound; oldest snapshots go first
    // Called during loading with progress in [0, 1]; return false to cancel
    // (load() then returns ErrorCode::Cancelled). Called on the loading thread.
    std::function<bool(float)> onProgress;
};

struct ModelInfo {
    std::string path;
    std::string name;          // general.name
    std::string architecture;  // "llama", "qwen2", "qwen3", "gemma3"
    std::string fileType;      // the dominant weight type, e.g. "Q4_1"
    uint64_t fileBytes = 0;
    uint64_t parameterCount = 0;
    uint64_t weightBytesPerToken = 0;  // bytes of weights one decode step reads
    int32_t layers = 0, embedding = 0, heads = 0, kvHeads = 0, headDim = 0, feedForward = 0;
    int32_t vocabSize = 0;
    int32_t trainedContext = 0;
    uint64_t kvBytesPerToken = 0;     // KV cache cost of one token of context
    KvPrecision kvPrecision = KvPrecision::Half;  // what the KV cache uses (see LoadOptions)
    std::map<std::string, int32_t> tensorTypes;  // "Q4_1" -> number of tensors
    std::string chatTemplate;         // tokenizer.chat_template, may be empty
    std::string backend;              // "cpu (avx512vnni, 2 threads)"
    double peakBandwidthGBs = 0;      // the backend's memory bandwidth by its specifications (0: not known)

    // Resident memory for a context of `tokens`: weights + KV cache + scratch.
    uint64_t memoryEstimate(int32_t tokens) const;
};

class Model {
public:
    static Result<std::shared_ptr<Model>> load(const LoadOptions& options);
    ~Model();

    const ModelInfo& info() const;

    // addSpecial: BOS/EOS as the model's metadata says. parseSpecial: text such as
    // "<|im_start|>" becomes its control token (false for user-typed content).
    std::vector<TokenId> tokenize(std::string_view text, bool addSpecial, bool parseSpecial) const;
    std::string detokenize(std::span<const TokenId> tokens, bool renderSpecial = false) const;
    std::string tokenText(TokenId token) const;  // as stored in the vocabulary
    bool isEndOfGeneration(TokenId token) const;
    std::optional<TokenId> findToken(std::string_view text) const;

    // Drops every prefix the KV pool keeps cached for reuse (blocks that no
    // session holds); sessions keep their own. Thread-safe.
    void clearPrefixCache() const;

    struct Impl;
    Impl& impl() const { return *impl_; }

private:
    explicit Model(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

struct SessionOptions {
    int32_t contextLength = 0;  // 0: the trained context, capped at 4096
    int32_t batchSize = 256;    // tokens per prefill chunk
};

struct GenerateParams {
    SamplingParams sampling;
    int32_t maxTokens = 512;                // < 0: until the context is full
    std::vector<std::string> stopStrings;   // never shown; generation ends before them
    bool ignoreEndOfGeneration = false;     // benchmarks: keep going past EOS
    // Text between <think> and </think> comes out as Piece::reasoning instead
    // of Piece::text; startsInReasoning when the prompt already opened the block
    // (ChatPrompt::startsInReasoning).
    bool splitReasoning = true;
    bool startsInReasoning = false;
    // Speculative decoding by lookup (Session::generate): when the last tokens
    // occurred earlier in the prompt or the reply, up to this many of the tokens
    // that followed them are checked in the same step as the next token, and
    // each one the sampler draws anyway is kept. The reply is the one it would
    // have been (the sampler draws every token, in order, from its own row of
    // logits); repetitive replies (code edits, rewrites, lists) take fewer steps.
    // 0: off.
    int32_t lookupDraft = 0;
    // Speculative decoding with a draft model: `draft`, a session of a smaller
    // model of the same vocabulary (draftCompatible), guesses up to draftTokens
    // tokens a step, each its most likely next one, and the model checks them in
    // one step, keeping those its sampler draws, as for lookupDraft (which a
    // draft replaces). Not owned; used by this call only, on this thread. The
    // reply is the plain one (on a GPU, whose several-token steps round apart from
    // one-token steps, it may part from it at near-ties).
    Session* draft = nullptr;
    int32_t draftTokens = 6;
};

// One streamed piece per token: the token and the complete UTF-8 text it
// finished, as answer text and reasoning text (either may be empty when a
// character spans tokens or text is held back for a stop string or a tag).
// The last call after generation ends may carry token -1 with held-back text.
struct Piece {
    TokenId token = -1;
    std::string_view text;
    std::string_view reasoning;
};
// Return false to stop generation (StopReason::Callback).
using PieceCallback = std::function<bool(const Piece&)>;

enum class StopReason { EndOfGeneration, MaxTokens, StopString, ContextFull, Cancelled, Callback };
const char* stopReasonName(StopReason reason);

struct GenerateResult {
    StopReason reason = StopReason::MaxTokens;
    std::string text;             // the reply's answer, stop string excluded
    std::string reasoning;        // the reply's <think> text, tags excluded
    std::vector<TokenId> tokens;  // the reply's tokens (the EOS/EOT token excluded)
    int32_t promptTokens = 0;
    int32_t reusedTokens = 0;     // prompt tokens whose KV was already in the session
    double prefillMs = 0;
    double decodeMs = 0;          // from the first sampled token to the last
    uint64_t seed = 0;
    int32_t decodeSteps = 0;      // forward steps after the prefill
    int32_t draftedTokens = 0;    // tokens proposed by lookup or the draft model
    int32_t acceptedDrafts = 0;   // of those, kept in the reply
};

class Session {
public:
    static Result<std::unique_ptr<Session>> create(std::shared_ptr<Model> model, const SessionOptions& options = {});
    ~Session();

    // Generates a continuation of `prompt`, the whole token history of the
    // conversation. The longest prefix of `prompt` already in the session's KV
    // cache is reused; the rest is prefilled. After return, the session holds
    // prompt + reply, so the next turn's prompt can extend it.
    Result<GenerateResult> generate(std::span<const TokenId> prompt, const GenerateParams& params,
                                    const PieceCallback& onPiece = {});

    // Appends `tokens` and returns the logits of the last one (allPositions:
    // of every appended token, row-major [tokens, vocab]).
    Result<std::vector<float>> evaluate(std::span<const TokenId> tokens, bool allPositions = false);

    // Drafting for speculative decoding (GenerateParams::draft): makes the
    // session hold `tokens` (reusing the longest prefix it holds) and proposes up
    // to `max` tokens, each the most likely after those before it, ending before
    // one the model gives less than `minProbability` (among its 16 likeliest).
    // The session then holds `tokens` and every proposal but the last.
    Result<std::vector<TokenId>> propose(std::span<const TokenId> tokens, int32_t max, float minProbability);

    // KV snapshots (LoadOptions::snapshotDir): save the tokens and KV this
    // session holds under `key` (e.g. a conversation id); restore them into
    // this session, so the next generate() reuses them instead of prefilling.
    // restoreSnapshot returns the positions restored: 0 when there is no
    // snapshot, when it is corrupt or for another model or engine (removed,
    // reason in *note), or when re-prefilling is estimated to be faster.
    Status saveSnapshot(const std::string& key);
    Result<int32_t> restoreSnapshot(const std::string& key, std::string* note = nullptr);

    void cancel();  // thread-safe
    void reset();   // forget the KV cache
    std::span<const TokenId> tokens() const;
    int32_t contextLength() const;
    const Model& model() const;

    struct Impl;

private:
    explicit Session(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// Whether `draft` may draft for `target` (GenerateParams::draft): the same
// token texts under the same ids (vocabulary sizes may differ by padding).
Status draftCompatible(const Model& target, const Model& draft);

// The KV pool a draft model needs (LoadOptions::kvPoolTokens): one sequence as
// long as the target's context (with room for the guesses past it), not the
// share of free memory a main model takes.
int64_t draftKvPoolTokens(int32_t contextLength);

}  // namespace kestrel
