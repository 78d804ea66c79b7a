// EngineWorker: the one object that owns the engine's Model and Session.
//
// Threading: construct on the UI thread, then moveToThread() onto a thread of
// its own; every slot except stop() and cancelLoad() must then be invoked by
// a queued connection (or QMetaObject::invokeMethod with Qt::QueuedConnection)
// and runs on the worker thread. stop() and cancelLoad() are meant to be
// called directly from any thread: they only set atomics and call
// Session::cancel(), which the engine documents as thread-safe, so a stop
// takes effect within one decode step instead of waiting behind a queued call.
// The worker never touches UI objects; results leave through signals only.
#pragma once

#include "engine_types.h"

#include <QObject>
#include <QSet>

#include <atomic>
#include <memory>
#include <mutex>

namespace kestrel {
class ChatFormatter;
class Model;
class Session;
struct LoadOptions;
}  // namespace kestrel

namespace kestrel::desktop {

class EngineWorker : public QObject {
    Q_OBJECT
public:
    explicit EngineWorker(QObject* parent = nullptr);
    ~EngineWorker() override;

    // Thread-safe. Ends the reply `requestId` (and any earlier one) as soon as
    // the engine checks its flag; a request that has not started yet finishes
    // at once with stopReason "cancelled".
    void stop(quint64 requestId);
    // Thread-safe. Makes a running loadModel() fail with "cancelled".
    void cancelLoad();

public slots:
    void loadModel(const kestrel::desktop::ModelLoadRequest& request);
    void unloadModel();
    void generate(quint64 requestId, const kestrel::desktop::GenerationRequest& request);

signals:
    void loadProgress(double fraction);
    void modelLoaded(const kestrel::desktop::ModelSummary& summary);
    void loadFailed(const QString& message, bool cancelled);
    // The prompt is ready and generation starts; `startsInReasoning`: the
    // template opened a <think> block, so the first pieces are reasoning.
    void replyStarted(quint64 requestId, bool startsInReasoning);
    // One streamed piece; `tokens` is how many tokens it took (a multi-byte
    // character may span several), so the UI can count tokens per second.
    void pieceGenerated(quint64 requestId, const QString& text, int tokens);
    void replyFinished(quint64 requestId, const kestrel::desktop::GenerationStats& stats);
    void replyFailed(quint64 requestId, const QString& message);

private:
    // Conversation snapshots: the one the session holds is saved when another
    // conversation generates or the model is unloaded; a conversation's first
    // reply after a model load restores its snapshot (the engine skips it when
    // re-prefilling is faster, and ignores a corrupt or foreign one).
    void saveActiveConversation();
    void enterConversation(const QString& key);
    // Loads request.draftPath beside `model` into draftModel_ and draftSession_; returns why
    // it cannot be used (empty: it is).
    QString loadDraft(const ModelLoadRequest& request, const kestrel::LoadOptions& mainOptions,
                      const kestrel::Model& model, int32_t contextLength);

    std::shared_ptr<kestrel::Model> model_;
    // Speculative decoding (GenerationRequest::lookupDraft, draftTokens) on the CPU only, for now:
    // CUDA's checked rows take the multi-token products, so replies part from plain decoding's at
    // near-ties, and on an H100 lookup gave SmolLM2 1.13x greedy and 0.97x at temperature 0.7, while
    // a draft model's step (~0.8 ms for a 135M shape) and a several-row check (~1.5x a step) cost an
    // 8B model more than plausible guesses save (docs/PERFORMANCE.md). The draft model is not loaded.
    bool speculationHelps_ = false;
    QString activeConversation_;
    QSet<QString> visitedConversations_;
    std::unique_ptr<kestrel::Session> session_;
    std::unique_ptr<kestrel::ChatFormatter> formatter_;
    // The draft model (GenerationRequest::draftTokens), on the model's device, and its session.
    std::shared_ptr<kestrel::Model> draftModel_;
    std::unique_ptr<kestrel::Session> draftSession_;
    std::mutex sessionMutex_;  // guards the session_ pointer against stop() from other threads
    std::atomic<quint64> stopUpTo_{0};
    std::atomic<bool> loadCancelled_{false};
};

}  // namespace kestrel::desktop
