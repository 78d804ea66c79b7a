// kestrel::Scheduler: iteration-level (continuous) batching over the model's KV pool.
//
// One thread loops: take new requests and cancellations, admit what fits,
// run one pool step, hand the logits to the replies, finish what ended.
// A step holds one decode token of every running sequence (first, so their
// logits rows are projected together) and then prefill chunks of admitted
// requests in admission order, within the pool's step size.
//
// A request is a set of lanes (pool sequences): one for the prompt until it
// is prefilled, then one per variant (forks of the prompt's sequence). A lane
// has a `fill`, the tokens its sequence must hold before it samples or decodes
// again: the prompt at first, or, after a preemption, everything it held. So a
// preempted request resumes exactly where it stopped, its replies untouched.
#include "kestrel/scheduler.h"

#include "model_impl.h"
#include "reply_stream.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace kestrel {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Lane {
    int32_t variant = 0;
    int32_t seq = -1;           // pool sequence; -1 once closed
    std::vector<TokenId> fill;  // what the sequence must hold before it samples or decodes again
    int64_t length = 0;         // positions the sequence holds
    TokenId next = -1;          // sampled, fed at the next decode step

    bool open() const { return seq >= 0; }
    bool prefilling() const { return open() && length < static_cast<int64_t>(fill.size()); }
};

struct Request {
    RequestId id = 0;
    std::vector<TokenId> prompt;
    int32_t n = 1;
    VariantPieceCallback onPiece;
    RequestDoneCallback onDone;
    std::vector<std::unique_ptr<ReplyStream>> replies;  // one per variant
    std::vector<PieceCallback> pieceCallbacks;          // onPiece bound to each variant
    std::vector<Lane> lanes;     // the prompt's until it is prefilled, then one per variant (lane v = variant v)
    bool sampling = false;       // the prompt is prefilled and forked
    int64_t admittedAt = -1;     // admission stamp; the latest is preempted first
    int32_t reused = -1;         // prompt tokens reused at the first admission
    Clock::time_point prefillStart;
    double prefillMs = 0;
    std::optional<Status> error;

    bool finished() const {
        return sampling && std::all_of(replies.begin(), replies.end(), [](const auto& r) { return r->ended(); });
    }
    // Sequences it counts against maxRunning: its variants are reserved from admission on.
    int32_t lanesReserved() const {
        if (!sampling) return n;
        return static_cast<int32_t>(std::count_if(lanes.begin(), lanes.end(), [](const Lane& l) { return l.open(); }));
    }
};

using RequestPtr = std::unique_ptr<Request>;

// A chunk's owner in the step being built.
struct Slot {
    Request* request;
    size_t lane;
    bool decode;
};

// One wanted row of a step: the whole row, or its best logits (StepLogits::topK > 0).
struct RowLogits {
    std::span<float> row;
    std::span<const TopLogit> top;
};

}  // namespace

struct Scheduler::Impl {
    std::shared_ptr<Model> model;
    runtime::KvPool* pool = nullptr;
    SchedulerOptions options;
    int64_t context = 0;
    int32_t totalBlocks = 0, blockTokens = 0;  // the pool's, fixed: submit() never waits for the pool's lock

    mutable std::mutex mutex;  // guards everything up to `published`
    std::condition_variable wake, idleChanged;
    std::vector<RequestPtr> incoming;
    std::vector<RequestId> cancels;
    bool stopping = false;
    bool idle = true;
    RequestId nextId = 1;
    Stats published;

    // The scheduler thread's own.
    std::deque<RequestPtr> waiting;
    std::vector<RequestPtr> running;  // in admission order
    Stats counters;
    int64_t admissions = 0;
    std::vector<runtime::PoolChunk> chunks;
    std::vector<Slot> slots;
    model::StepLogits logits;
    std::vector<float> variantLogits;
    std::thread thread;

    Status admissible(std::span<const TokenId> prompt, const RequestOptions& o) const;
    void run();
    void admit();
    bool memoryFor(const Request& r) const;
    void step();
    void buildStep();
    void consumeStep();
    int32_t stepTopK();
    void startSampling(Request& r, RowLogits promptLogits);
    void advance(Request& r, Lane& lane, RowLogits laneLogits);
    void preempt(size_t runningIndex);
    void closeLanes(Request& r);
    void finish(RequestPtr r);
    void finishEnded();
    void cancelAll(std::vector<RequestId> ids);
    void publish();
};

Scheduler::Scheduler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Scheduler::~Scheduler() {
    {
        std::lock_guard lock(impl_->mutex);
        impl_->stopping = true;
    }
    impl_->wake.notify_all();
    impl_->thread.join();
}

Result<std::unique_ptr<Scheduler>> Scheduler::create(std::shared_ptr<Model> model, const SchedulerOptions& options) {
    if (!model) return Status(ErrorCode::InvalidArgument, "no model");
    runtime::KvPool& pool = *model->impl().pool;
    if (options.prefillChunk < 1 || options.prefillChunk > pool.maxStepTokens())
        return Status(ErrorCode::InvalidArgument, "prefill chunk " + std::to_string(options.prefillChunk) +
                                                      " must be between 1 and the step size of " +
                                                      std::to_string(pool.maxStepTokens()) + " tokens");
    const int limit = std::min(pool.maxSeqs(), pool.maxStepTokens());
    if (options.maxRunning < 1 || options.maxRunning > limit)
        return Status(ErrorCode::InvalidArgument, "maxRunning " + std::to_string(options.maxRunning) +
                                                      " must be between 1 and " + std::to_string(limit) +
                                                      " (sequences per step)");
    auto impl = std::make_unique<Impl>();
    impl->pool = &pool;
    impl->options = options;
    impl->context = pool.maxPositions();
    const runtime::KvPoolStats st = pool.stats();
    impl->totalBlocks = st.blocks.totalBlocks;
    impl->blockTokens = st.blockTokens;
    impl->model = std::move(model);
    impl->publish();
    Impl* raw = impl.get();
    impl->thread = std::thread([raw] { raw->run(); });
    return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}

int32_t Scheduler::contextLength() const { return static_cast<int32_t>(impl_->context); }

Status Scheduler::Impl::admissible(std::span<const TokenId> prompt, const RequestOptions& o) const {
    if (prompt.empty()) return Status(ErrorCode::InvalidArgument, "the prompt is empty");
    if (o.n < 1 || o.n > options.maxRunning)
        return Status(ErrorCode::InvalidArgument, "n = " + std::to_string(o.n) + " variants: must be between 1 and " +
                                                      std::to_string(options.maxRunning) + " (maxRunning)");
    const int32_t vocab = pool->vocabSize();
    for (TokenId id : prompt)
        if (id < 0 || id >= vocab)
            return Status(ErrorCode::InvalidArgument, "token id " + std::to_string(id) + " is outside the vocabulary (" +
                                                          std::to_string(vocab) + " tokens)");
    const auto p = static_cast<int64_t>(prompt.size());
    if (p >= context)
        return Status(ErrorCode::InvalidArgument, "the prompt has " + std::to_string(p) + " tokens; the context holds " +
                                                      std::to_string(context) + " (one more is needed for the reply)");
    const int64_t reply = o.params.maxTokens < 0 ? context - p : o.params.maxTokens;
    if (p + reply > context)
        return Status(ErrorCode::InvalidArgument,
                      "the prompt (" + std::to_string(p) + " tokens) plus maxTokens (" + std::to_string(reply) +
                          ") exceed the context of " + std::to_string(context) +
                          " tokens; lower maxTokens, or use -1 to generate until the context is full");
    // Variants share the prompt's full blocks; each needs its own for the rest.
    const int64_t bt = blockTokens;
    const int64_t shared = p / bt;
    const int64_t blocks = shared + int64_t(o.n) * ((p - shared * bt + reply + bt - 1) / bt);
    if (blocks > totalBlocks)
        return Status(ErrorCode::OutOfMemory,
                      std::to_string(o.n) + " variants of " + std::to_string(p) + " + " + std::to_string(reply) +
                          " tokens need " + std::to_string(blocks) + " KV blocks of " + std::to_string(bt) +
                          " positions; the pool has " + std::to_string(totalBlocks) +
                          " (raise LoadOptions::kvPoolTokens, or lower n or maxTokens)");
    return Status::ok();
}

Result<RequestId> Scheduler::submit(std::vector<TokenId> prompt, const RequestOptions& options,
                                    VariantPieceCallback onPiece, RequestDoneCallback onDone) {
    Impl& s = *impl_;
    KESTREL_RETURN_IF_ERROR(s.admissible(prompt, options));
    auto r = std::make_unique<Request>();
    r->prompt = std::move(prompt);
    r->n = options.n;
    r->onPiece = std::move(onPiece);
    r->onDone = std::move(onDone);
    const GenerateParams& params = options.params;
    const int64_t maxTokens = params.maxTokens < 0 ? s.context : params.maxTokens;
    for (int32_t v = 0; v < options.n; ++v) {
        SamplingParams sampling = params.sampling;
        if (sampling.seed != 0) sampling.seed += uint64_t(v);  // 0 stays "a fresh seed per variant"
        r->replies.push_back(std::make_unique<ReplyStream>(*s.model, r->prompt, params, sampling, maxTokens));
        PieceCallback bound;
        if (r->onPiece) bound = [cb = &r->onPiece, v](const Piece& piece) { return (*cb)(v, piece); };
        r->pieceCallbacks.push_back(std::move(bound));
    }
    RequestId id;
    {
        std::lock_guard lock(s.mutex);
        id = r->id = s.nextId++;
        s.incoming.push_back(std::move(r));
        s.idle = false;
    }
    s.wake.notify_all();
    return id;
}

void Scheduler::cancel(RequestId id) {
    {
        std::lock_guard lock(impl_->mutex);
        impl_->cancels.push_back(id);
    }
    impl_->wake.notify_all();
}

Scheduler::Stats Scheduler::stats() const {
    std::lock_guard lock(impl_->mutex);
    Stats st = impl_->published;
    st.waiting += static_cast<int32_t>(impl_->incoming.size());
    return st;
}

void Scheduler::waitIdle() {
    std::unique_lock lock(impl_->mutex);
    impl_->idleChanged.wait(lock, [&] { return impl_->idle && impl_->incoming.empty(); });
}

void Scheduler::Impl::run() {
    std::vector<RequestId> cancelNow;
    while (true) {
        publish();
        {
            std::unique_lock lock(mutex);
            if (running.empty() && waiting.empty() && incoming.empty() && cancels.empty()) {
                idle = true;
                idleChanged.notify_all();
            }
            wake.wait(lock, [&] {
                return stopping || !incoming.empty() || !cancels.empty() || !running.empty() || !waiting.empty();
            });
            for (auto& r : incoming) waiting.push_back(std::move(r));
            incoming.clear();
            cancelNow.swap(cancels);
            cancels.clear();
            if (stopping) break;
        }
        cancelAll(std::move(cancelNow));
        cancelNow.clear();
        admit();
        step();
    }
    // Shutting down: whatever is left ends as cancelled.
    std::vector<RequestId> all;
    for (const auto& r : running) all.push_back(r->id);
    for (const auto& r : waiting) all.push_back(r->id);
    cancelAll(std::move(all));
    publish();
    std::lock_guard lock(mutex);
    idle = true;
    idleChanged.notify_all();
}

// On the scheduler thread (or before it starts): the pool's figures are read
// here, so stats() never waits for the pool's lock, which steps hold.
void Scheduler::Impl::publish() {
    counters.running = static_cast<int32_t>(running.size());
    counters.waiting = static_cast<int32_t>(waiting.size());
    const runtime::KvPoolStats st = pool->stats();
    counters.blockTokens = st.blockTokens;
    counters.totalBlocks = st.blocks.totalBlocks;
    counters.usedBlocks = st.blocks.usedBlocks;
    counters.freeBlocks = st.blocks.freeBlocks;
    counters.cachedBlocks = st.blocks.cachedBlocks;
    counters.liveTokens = st.blocks.liveTokens;
    std::lock_guard lock(mutex);
    published = counters;
}

void Scheduler::Impl::cancelAll(std::vector<RequestId> ids) {
    for (RequestId id : ids) {
        auto match = [id](const RequestPtr& r) { return r->id == id; };
        RequestPtr r;
        if (auto it = std::find_if(running.begin(), running.end(), match); it != running.end()) {
            r = std::move(*it);
            running.erase(it);
        } else if (auto wt = std::find_if(waiting.begin(), waiting.end(), match); wt != waiting.end()) {
            r = std::move(*wt);
            waiting.erase(wt);
        } else {
            continue;  // finished already, or a repeated cancel
        }
        for (auto& reply : r->replies) reply->stop(StopReason::Cancelled);
        finish(std::move(r));
    }
}

// Admits queued requests in order while sequences and (roughly) memory allow.
// With nothing running the first one always goes in: submit() checked it fits alone.
void Scheduler::Impl::admit() {
    int32_t lanes = 0;
    for (const auto& r : running) lanes += r->lanesReserved();
    while (!waiting.empty()) {
        Request& r = *waiting.front();
        const int32_t need = r.lanesReserved();
        if (lanes + need > options.maxRunning) break;
        if (!running.empty() && !memoryFor(r)) break;
        if (r.lanes.empty()) r.lanes.push_back(Lane{0, pool->open(), r.prompt});
        for (Lane& l : r.lanes) {
            if (!l.open()) continue;
            // The prompt's last token is always recomputed: its logits start the replies.
            const auto limit = static_cast<int64_t>(l.fill.size()) - (r.sampling ? 0 : 1);
            l.length = pool->reuse(l.seq, l.fill, limit);
        }
        if (r.reused < 0) {
            r.reused = static_cast<int32_t>(r.lanes.front().length);
            r.prefillStart = Clock::now();
        }
        r.admittedAt = admissions++;
        lanes += need;
        running.push_back(std::move(waiting.front()));
        waiting.pop_front();
    }
}

bool Scheduler::Impl::memoryFor(const Request& r) const {
    const runtime::KvPoolStats st = pool->stats();
    const int64_t bt = st.blockTokens;
    int64_t need = r.lanesReserved();
    if (r.lanes.empty()) need += (static_cast<int64_t>(r.prompt.size()) + bt - 1) / bt;
    for (const Lane& l : r.lanes)
        if (l.open()) need += (static_cast<int64_t>(l.fill.size()) + bt - 1) / bt;
    return need <= int64_t(st.blocks.freeBlocks) + st.blocks.cachedBlocks;
}

void Scheduler::Impl::buildStep() {
    chunks.clear();
    slots.clear();
    int tokensLeft = pool->maxStepTokens();
    int seqsLeft = pool->maxSeqs();
    // Decode chunks first: their logits rows are adjacent and projected in one pass.
    for (const auto& r : running) {
        if (!r->sampling) continue;
        for (size_t i = 0; i < r->lanes.size(); ++i) {
            Lane& l = r->lanes[i];
            if (!l.open() || l.prefilling()) continue;
            chunks.push_back({l.seq, {&l.next, 1}, model::LogitsWanted::Last});
            slots.push_back({r.get(), i, true});
            --tokensLeft;
            --seqsLeft;
        }
    }
    for (const auto& r : running) {
        int budget = std::min(options.prefillChunk, tokensLeft);
        for (size_t i = 0; i < r->lanes.size() && budget > 0 && seqsLeft > 0; ++i) {
            Lane& l = r->lanes[i];
            if (!l.prefilling()) continue;
            const auto take = static_cast<int>(std::min<int64_t>(budget, int64_t(l.fill.size()) - l.length));
            const bool last = l.length + take == static_cast<int64_t>(l.fill.size());
            const auto wanted = last && !r->sampling ? model::LogitsWanted::Last : model::LogitsWanted::None;
            chunks.push_back({l.seq, std::span<const TokenId>(l.fill).subspan(size_t(l.length), size_t(take)), wanted});
            slots.push_back({r.get(), i, false});
            budget -= take;
            tokensLeft -= take;
            --seqsLeft;
        }
    }
}

void Scheduler::Impl::step() {
    while (true) {
        buildStep();
        if (chunks.empty()) return;
        logits.topK = stepTopK();
        const Status s = pool->step(chunks, logits);
        if (s.isOk()) {
            consumeStep();
            break;
        }
        if (s.code() == ErrorCode::OutOfMemory && running.size() > 1) {
            auto latest = std::max_element(running.begin(), running.end(), [](const auto& a, const auto& b) {
                return a->admittedAt < b->admittedAt;
            });
            preempt(size_t(latest - running.begin()));
            continue;  // the same step without it
        }
        const Status error = s.code() == ErrorCode::OutOfMemory
                                 ? Status(ErrorCode::OutOfMemory,
                                          "the request does not fit in the KV memory left beside other sessions (" +
                                              s.message() + ")")
                                 : s;
        for (const Slot& slot : slots) slot.request->error = error;
        break;
    }
    finishEnded();
}

// Whether the step's sampling rows can come back as their best logits only (a
// 16-row step of a 128k vocabulary moves 8 MB as whole rows): the most any
// sampler needs, or 0 when one needs the whole row.
int32_t Scheduler::Impl::stepTopK() {
    int32_t k = 0;
    for (size_t i = 0; i < chunks.size(); ++i) {
        if (chunks[i].logits == model::LogitsWanted::None) continue;
        Request& r = *slots[i].request;
        const size_t variant = slots[i].decode ? size_t(r.lanes[slots[i].lane].variant) : 0;
        const int32_t need = topLogitsFor(r.replies[variant]->topNeeded(), pool->vocabSize());
        if (need == 0) return 0;
        k = std::max(k, need);
    }
    return k;
}

void Scheduler::Impl::consumeStep() {
    ++counters.steps;
    const auto vocab = static_cast<size_t>(pool->vocabSize());
    size_t row = 0;
    for (size_t i = 0; i < chunks.size(); ++i) {
        Request& r = *slots[i].request;
        Lane& l = r.lanes[slots[i].lane];
        const auto n = static_cast<int64_t>(chunks[i].tokens.size());
        l.length += n;
        (slots[i].decode ? counters.decodeTokens : counters.prefillTokens) += n;
        if (chunks[i].logits == model::LogitsWanted::None) continue;  // mid-prompt, or a replay that now decodes again
        const size_t k = static_cast<size_t>(logits.topK);
        RowLogits rowLogits;
        if (k > 0) rowLogits.top = std::span<const TopLogit>(logits.top).subspan(row * k, k);
        else rowLogits.row = std::span<float>(logits.rows).subspan(row * vocab, vocab);
        ++row;
        if (slots[i].decode)
            advance(r, l, rowLogits);
        else
            startSampling(r, rowLogits);  // may add lanes: `l` is not used after this
    }
}

// The prompt is prefilled: fork it for the other variants, and every variant samples its first token.
void Scheduler::Impl::startSampling(Request& r, RowLogits promptLogits) {
    r.prefillMs = msSince(r.prefillStart);
    r.sampling = true;
    const int32_t promptSeq = r.lanes.front().seq;
    const int64_t promptLength = r.lanes.front().length;
    for (int32_t v = 1; v < r.n; ++v) {
        auto forked = pool->fork(promptSeq);
        if (!forked) {
            r.error = forked.status();
            return;
        }
        r.lanes.push_back(Lane{v, forked.value(), {}, promptLength});
    }
    for (Lane& l : r.lanes) {
        RowLogits mine = promptLogits;
        if (!mine.row.empty()) {
            variantLogits.assign(mine.row.begin(), mine.row.end());  // the penalties edit them per variant
            mine.row = variantLogits;
        }
        advance(r, l, mine);
    }
}

void Scheduler::Impl::advance(Request& r, Lane& lane, RowLogits laneLogits) {
    ReplyStream& reply = *r.replies[size_t(lane.variant)];
    const PieceCallback& onPiece = r.pieceCallbacks[size_t(lane.variant)];
    if (laneLogits.top.empty() ? reply.next(laneLogits.row, onPiece) : reply.nextTop(laneLogits.top, onPiece)) {
        if (lane.length < context) {
            lane.next = reply.token();
            return;
        }
        reply.stop(StopReason::ContextFull);
    }
    pool->close(lane.seq);  // this variant is done: its blocks go back now
    lane.seq = -1;
}

// Drops the request's KV (full blocks stay cached) and queues it first; its
// lanes keep what they held as their fill, so it resumes where it stopped.
void Scheduler::Impl::preempt(size_t runningIndex) {
    RequestPtr r = std::move(running[runningIndex]);
    running.erase(running.begin() + ptrdiff_t(runningIndex));
    for (Lane& l : r->lanes) {
        if (!l.open()) continue;
        if (r->sampling && !l.prefilling()) l.fill = pool->tokens(l.seq);
        pool->truncate(l.seq, 0);
        l.length = 0;
    }
    r->admittedAt = -1;
    ++counters.preemptions;
    waiting.push_front(std::move(r));
}

void Scheduler::Impl::closeLanes(Request& r) {
    for (Lane& l : r.lanes) {
        if (l.open()) pool->close(l.seq);
        l.seq = -1;
    }
}

// Frees the request's KV, then reports it (the blocks are back, and stats()
// no longer counts it, before onDone runs).
void Scheduler::Impl::finish(RequestPtr r) {
    closeLanes(*r);
    publish();
    if (r->error) {
        if (r->onDone) r->onDone(*r->error);
        return;
    }
    std::vector<GenerateResult> results;
    results.reserve(r->replies.size());
    for (size_t v = 0; v < r->replies.size(); ++v) {
        GenerateResult g = r->replies[v]->finish(r->pieceCallbacks[v]);
        g.promptTokens = static_cast<int32_t>(r->prompt.size());
        g.reusedTokens = std::max(r->reused, 0);
        g.prefillMs = r->prefillMs;
        results.push_back(std::move(g));
    }
    if (r->onDone) r->onDone(std::move(results));
}

void Scheduler::Impl::finishEnded() {
    for (size_t i = 0; i < running.size();) {
        if (running[i]->error || running[i]->finished()) {
            RequestPtr r = std::move(running[i]);
            running.erase(running.begin() + ptrdiff_t(i));
            finish(std::move(r));
        } else {
            ++i;
        }
    }
}

}  // namespace kestrel
