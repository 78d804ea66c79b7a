// Value types that cross the thread boundary between the UI and the engine
// worker (queued signals copy them). Plain Qt values: no engine types leak
// into QML, and no UI object ever reaches the worker.
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>
#include <QVariantMap>

namespace kestrel::desktop {

struct ModelLoadRequest {
    QString path;
    QString device = QStringLiteral("cpu");  // "cpu", "cuda", "split"
    int threads = 0;                         // 0: one per core
    QString kvCache = QStringLiteral("f16");  // "f16" or "int8" (LoadOptions::kvPrecision)
    int contextLength = 0;                   // 0: trained context, capped at 4096
    QString chatTemplate;                    // overrides the model's template when not empty
    // KV snapshots of conversations (kept across restarts); empty: off.
    QString snapshotDir;
    // A smaller model of the same vocabulary for speculative decoding (GenerateParams::draft),
    // loaded beside the model on the same device; empty: none.
    QString draftPath;
};

struct ChatTurn {
    QString role;  // "system", "user", "assistant"
    QString content;
    QString reasoning;  // an assistant turn's folded <think> text
};

struct GenerationRequest {
    QString conversationKey;   // names the conversation's KV snapshot ("conversation-<id>")
    QList<ChatTurn> messages;  // the whole branch, system prompt first
    float temperature = 0.7f;
    int topK = 40;
    float topP = 0.95f;
    float minP = 0.05f;
    float repeatPenalty = 1.0f;
    quint64 seed = 0;
    int maxTokens = 512;
    // The last message is an assistant reply to go on writing ("continue"): the prompt
    // ends after its text, and the pieces that come add to it.
    bool continueLast = false;
    // Speculative decoding by lookup (GenerateParams::lookupDraft): the same reply, often in fewer steps.
    int lookupDraft = 0;
    // Speculative decoding with the draft model loaded beside the model (GenerateParams::draftTokens);
    // 0: not used.
    int draftTokens = 0;
};

// The most tokens a step guesses from the conversation when lookup decoding is on. Measured
// (SmolLM2 on the CPU, six chat prompts, adaptive length): 6 gave 1.37-1.56x plain decoding's
// tokens a second greedy and 1.20-1.22x at temperature 0.7, against 1.36-1.38x and 1.12x for a
// fixed 4 (docs/PERFORMANCE.md).
constexpr int kLookupDraftTokens = 6;
// The most tokens the draft model guesses a step (llama.cpp's and LM Studio's default range is 4-16;
// the draft stops earlier where it is not confident: ModelDrafter::kMinProbability).
constexpr int kDraftModelTokens = 6;

// What the UI shows about a loaded model (from kestrel::ModelInfo).
struct ModelSummary {
    QString path, name, architecture, fileType, backend;
    QString kvCache;            // what the engine used: "f16" or "int8" (int8 is CPU-only)
    quint64 fileBytes = 0;
    quint64 parameterCount = 0;
    int trainedContext = 0;
    int contextLength = 0;      // of the session that was opened
    quint64 memoryBytes = 0;    // estimate for contextLength
    bool hasChatTemplate = false;
    QString templateWarning;    // why a built-in format is used (and which); empty when the model's template is
    QString draftName;          // the draft model in use (its name), or empty
    QString draftWarning;       // why the requested draft model is not used, or empty

    QVariantMap toVariantMap() const;
};

struct GenerationStats {
    QString stopReason;  // "eos", "max_tokens", "stop_string", "context_full", "cancelled"
    int promptTokens = 0;
    int reusedTokens = 0;
    int completionTokens = 0;
    double prefillMs = 0;
    double decodeMs = 0;
    double tokensPerSecond = 0;
    int contextUsed = 0;
    int contextLength = 0;
    int draftedTokens = 0;   // guessed by speculative decoding (lookup or the draft model)
    int acceptedDrafts = 0;  // of those, kept in the reply
};

void registerEngineMetaTypes();

}  // namespace kestrel::desktop

Q_DECLARE_METATYPE(kestrel::desktop::ModelLoadRequest)
Q_DECLARE_METATYPE(kestrel::desktop::GenerationRequest)
Q_DECLARE_METATYPE(kestrel::desktop::ModelSummary)
Q_DECLARE_METATYPE(kestrel::desktop::GenerationStats)
