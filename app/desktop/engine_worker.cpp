#include "engine_worker.h"

#include "kestrel/chat.h"
#include "kestrel/engine.h"

#include <QElapsedTimer>

namespace kestrel::desktop {

QVariantMap ModelSummary::toVariantMap() const {
    return {
        {QStringLiteral("path"), path},
        {QStringLiteral("name"), name},
        {QStringLiteral("architecture"), architecture},
        {QStringLiteral("fileType"), fileType},
        {QStringLiteral("backend"), backend},
        {QStringLiteral("kvCache"), kvCache},
        {QStringLiteral("fileBytes"), double(fileBytes)},
        {QStringLiteral("parameterCount"), double(parameterCount)},
        {QStringLiteral("trainedContext"), trainedContext},
        {QStringLiteral("contextLength"), contextLength},
        {QStringLiteral("memoryBytes"), double(memoryBytes)},
        {QStringLiteral("hasChatTemplate"), hasChatTemplate},
        {QStringLiteral("templateWarning"), templateWarning},
        {QStringLiteral("draftName"), draftName},
        {QStringLiteral("draftWarning"), draftWarning},
    };
}

void registerEngineMetaTypes() {
    qRegisterMetaType<ModelLoadRequest>();
    qRegisterMetaType<GenerationRequest>();
    qRegisterMetaType<ModelSummary>();
    qRegisterMetaType<GenerationStats>();
}

namespace {

QString stopReasonKey(StopReason reason) {
    switch (reason) {
    case StopReason::EndOfGeneration: return QStringLiteral("eos");
    case StopReason::MaxTokens: return QStringLiteral("max_tokens");
    case StopReason::StopString: return QStringLiteral("stop_string");
    case StopReason::ContextFull: return QStringLiteral("context_full");
    case StopReason::Cancelled:
    case StopReason::Callback: return QStringLiteral("cancelled");
    }
    return QStringLiteral("unknown");
}

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), qsizetype(s.size())); }

}  // namespace

EngineWorker::EngineWorker(QObject* parent) : QObject(parent) { registerEngineMetaTypes(); }

EngineWorker::~EngineWorker() { unloadModel(); }

void EngineWorker::stop(quint64 requestId) {
    quint64 current = stopUpTo_.load();
    while (current < requestId && !stopUpTo_.compare_exchange_weak(current, requestId)) {
    }
    std::lock_guard lock(sessionMutex_);
    if (session_) session_->cancel();
}

void EngineWorker::cancelLoad() { loadCancelled_.store(true); }

void EngineWorker::saveActiveConversation() {
    if (!session_ || activeConversation_.isEmpty() || session_->tokens().empty()) return;
    const Status s = session_->saveSnapshot(activeConversation_.toStdString());
    if (!s.isOk()) qWarning("kestrel: could not save the KV snapshot of %s: %s", qPrintable(activeConversation_), s.message().c_str());
}

void EngineWorker::enterConversation(const QString& key) {
    if (key == activeConversation_) return;
    saveActiveConversation();
    activeConversation_ = key;
    if (key.isEmpty() || visitedConversations_.contains(key)) return;
    visitedConversations_.insert(key);
    std::string note;
    auto restored = session_->restoreSnapshot(key.toStdString(), &note);
    if (!restored) qWarning("kestrel: restoring %s failed: %s", qPrintable(key), restored.status().message().c_str());
    else if (!note.empty()) qInfo("kestrel: %s: %s", qPrintable(key), note.c_str());
}

void EngineWorker::unloadModel() {
    saveActiveConversation();
    activeConversation_.clear();
    visitedConversations_.clear();
    std::lock_guard lock(sessionMutex_);
    formatter_.reset();
    session_.reset();
    model_.reset();
    draftSession_.reset();
    draftModel_.reset();
}

QString EngineWorker::loadDraft(const ModelLoadRequest& request, const LoadOptions& mainOptions, const Model& model,
                                int32_t contextLength) {
    LoadOptions options = mainOptions;
    options.path = request.draftPath.toStdString();
    options.snapshotDir.clear();
    options.onProgress = [this](float) { return !loadCancelled_.load(); };
    options.kvPoolTokens = draftKvPoolTokens(contextLength);
    auto draft = Model::load(options);
    if (!draft) return tr("The draft model could not be loaded: %1").arg(fromStd(draft.status().message()));
    if (const Status ok = draftCompatible(model, *draft.value()); !ok.isOk())
        return tr("The draft model is not used: %1").arg(fromStd(ok.message()));
    SessionOptions sessionOptions;
    sessionOptions.contextLength = contextLength;
    auto session = Session::create(draft.value(), sessionOptions);
    if (!session) return tr("The draft model could not be opened: %1").arg(fromStd(session.status().message()));
    draftModel_ = std::move(draft.value());
    draftSession_ = std::move(session.value());
    return {};
}

void EngineWorker::loadModel(const ModelLoadRequest& request) {
    loadCancelled_.store(false);
    unloadModel();  // free the old weights first: two models may not fit in memory together

    LoadOptions options;
    options.path = request.path.toStdString();
    // Until the CUDA backend can split a model, "split" asks for the first GPU;
    // the engine answers with an actionable error where there is none.
    options.device = request.device == QLatin1String("split") ? std::string("cuda") : request.device.toStdString();
    options.threads = request.threads;
    options.kvPrecision = request.kvCache == QLatin1String("int8") ? KvPrecision::Int8 : KvPrecision::Half;
    options.snapshotDir = request.snapshotDir.toStdString();
    options.onProgress = [this](float fraction) {
        emit loadProgress(double(fraction));
        return !loadCancelled_.load();
    };
    auto model = Model::load(options);
    if (!model) {
        const bool cancelled = model.status().code() == ErrorCode::Cancelled;
        emit loadFailed(fromStd(model.status().message()), cancelled);
        return;
    }
    SessionOptions sessionOptions;
    sessionOptions.contextLength = request.contextLength;
    auto session = Session::create(model.value(), sessionOptions);
    if (!session) {
        emit loadFailed(fromStd(session.status().message()), false);
        return;
    }
    speculationHelps_ = options.device == "cpu";
    const ModelInfo& info = model.value()->info();
    ModelSummary summary;
    summary.path = request.path;
    summary.name = fromStd(info.name);
    summary.architecture = fromStd(info.architecture);
    summary.fileType = fromStd(info.fileType);
    summary.backend = fromStd(info.backend);
    summary.kvCache = QString::fromLatin1(kvPrecisionName(info.kvPrecision));
    summary.fileBytes = info.fileBytes;
    summary.parameterCount = info.parameterCount;
    summary.trainedContext = info.trainedContext;
    summary.contextLength = session.value()->contextLength();
    summary.memoryBytes = info.memoryEstimate(summary.contextLength);
    summary.hasChatTemplate = !info.chatTemplate.empty();
    auto formatter = std::make_unique<ChatFormatter>(*model.value(), request.chatTemplate.toStdString());
    summary.templateWarning = fromStd(formatter->warning());
    if (!request.draftPath.isEmpty()) {
        // A draft that cannot be used leaves the model usable, with a note why.
        summary.draftWarning = options.device != "cpu"
                                   ? tr("The draft model is not used on a GPU yet: there its guesses cost more time "
                                        "than they save.")
                                   : loadDraft(request, options, *model.value(), summary.contextLength);
        if (draftModel_) summary.draftName = fromStd(draftModel_->info().name);
    }
    {
        std::lock_guard lock(sessionMutex_);
        model_ = std::move(model.value());
        session_ = std::move(session.value());
        formatter_ = std::move(formatter);
    }
    emit loadProgress(1.0);
    emit modelLoaded(summary);
}

void EngineWorker::generate(quint64 requestId, const GenerationRequest& request) {
    GenerationStats stats;
    if (requestId <= stopUpTo_.load()) {
        stats.stopReason = QStringLiteral("cancelled");
        emit replyFinished(requestId, stats);
        return;
    }
    if (!session_ || !formatter_) {
        emit replyFailed(requestId, tr("No model is loaded. Open Settings (Ctrl+,) and choose a .gguf model file."));
        return;
    }
    std::vector<ChatMessage> messages;
    messages.reserve(size_t(request.messages.size()));
    for (const ChatTurn& turn : request.messages) {
        ChatMessage m;
        m.role = turn.role.toStdString();
        m.content = turn.content.toStdString();
        m.reasoning = turn.reasoning.toStdString();
        messages.push_back(std::move(m));
    }
    enterConversation(request.conversationKey);
    ChatPromptOptions promptOptions;
    promptOptions.continueFinalMessage = request.continueLast;
    auto prompt = formatter_->format(messages, promptOptions);
    if (!prompt) {
        emit replyFailed(requestId, tr("The chat template failed: %1").arg(fromStd(prompt.status().message())));
        return;
    }

    GenerateParams params;
    params.sampling.temperature = request.temperature;
    params.sampling.topK = request.topK;
    params.sampling.topP = request.topP;
    params.sampling.minP = request.minP;
    params.sampling.repeatPenalty = request.repeatPenalty;
    params.sampling.seed = request.seed;
    params.maxTokens = request.maxTokens;
    params.lookupDraft = speculationHelps_ ? request.lookupDraft : 0;
    if (draftSession_ && request.draftTokens > 0) {
        params.draft = draftSession_.get();
        params.draftTokens = request.draftTokens;
    }
    params.stopStrings = formatter_->stopStrings();

    // Pieces are whole UTF-8 characters (the engine holds back partial ones),
    // so an empty piece only means "a token with nothing to show yet".
    int pendingTokens = 0;
    auto onPiece = [&](const Piece& piece) {
        ++pendingTokens;
        if (!piece.text.empty()) {
            emit pieceGenerated(requestId, QString::fromUtf8(piece.text.data(), qsizetype(piece.text.size())),
                                pendingTokens);
            pendingTokens = 0;
        }
        // Also checked here so that a stop() racing with the start of generate()
        // (which clears the session's cancel flag) still ends this request.
        return requestId > stopUpTo_.load(std::memory_order_relaxed);
    };
    emit replyStarted(requestId, prompt->startsInReasoning);
    auto result = session_->generate(prompt->tokens, params, onPiece);
    if (!result) {
        if (result.status().code() == ErrorCode::Cancelled) {
            stats.stopReason = QStringLiteral("cancelled");
            emit replyFinished(requestId, stats);
        } else {
            emit replyFailed(requestId, fromStd(result.status().message()));
        }
        return;
    }
    const GenerateResult& r = result.value();
    stats.stopReason = stopReasonKey(r.reason);
    stats.promptTokens = r.promptTokens;
    stats.reusedTokens = r.reusedTokens;
    stats.completionTokens = int(r.tokens.size());
    stats.prefillMs = r.prefillMs;
    stats.decodeMs = r.decodeMs;
    stats.tokensPerSecond = r.decodeMs > 0 && r.tokens.size() > 1 ? 1000.0 * double(r.tokens.size() - 1) / r.decodeMs : 0.0;
    stats.contextUsed = int(session_->tokens().size());
    stats.contextLength = session_->contextLength();
    stats.draftedTokens = r.draftedTokens;
    stats.acceptedDrafts = r.acceptedDrafts;
    emit replyFinished(requestId, stats);
}

}  // namespace kestrel::desktop
