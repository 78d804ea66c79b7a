// Continuous batching: many requests of one model generate at once.
//
// A Scheduler owns one thread that runs iteration-level steps over the
// model's shared KV pool: every step decodes one token of every running
// sequence together and adds chunks of the prompts being prefilled (at most
// SchedulerOptions::prefillChunk tokens of one request per step), so a long
// paste in one chat never stalls another chat's stream. A prompt reuses the
// longest prefix held in the pool's prefix cache. `n` variants of one reply
// (parallel sampling) fork the prompt's KV once it is prefilled; variant v
// samples with seed + v.
//
// Memory: a request that can never fit (its prompt plus maxTokens beyond the
// context, or its variants beyond the whole pool) is refused by submit(). When
// the pool runs out during a step, the most recently admitted request is
// preempted: its KV is dropped (full blocks stay in the prefix cache, so it
// re-prefills cheaply), it goes back to the front of the queue and resumes
// where it was, without repeating streamed text. A request that does not fit
// even alone (the rest of the pool held by sessions) ends with OutOfMemory.
//
// Ownership: the Scheduler keeps its Model alive; Sessions of the same model
// may run beside it (they share the pool and take turns with its steps).
// Thread-safety: submit(), cancel(), stats() and waitIdle() may be called from
// any thread. Callbacks run on the scheduler thread, one at a time, with no
// scheduler lock held: they may call submit(), cancel() and stats() (never
// waitIdle(), and never destroy the Scheduler). A callback that blocks stalls
// every stream.
#pragma once

#include "kestrel/engine.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace kestrel {

struct RequestOptions {
    GenerateParams params;
    int32_t n = 1;  // variants; they share the prompt's KV (no recompute)
};

using RequestId = int64_t;

struct SchedulerOptions {
    int32_t prefillChunk = 256;  // prompt tokens of one request per step, mixed into decode steps
    int32_t maxRunning = 16;     // sequences (variants) admitted at once
};

// Per token of variant `variant`; return false to stop that variant (StopReason::Callback).
using VariantPieceCallback = std::function<bool(int32_t variant, const Piece&)>;
// Once per request: one GenerateResult per variant, in variant order, or the error.
using RequestDoneCallback = std::function<void(Result<std::vector<GenerateResult>>)>;

class Scheduler {
public:
    // prefillChunk must be in [1, the pool's step size]; maxRunning in [1, the pool's sequences per step].
    static Result<std::unique_ptr<Scheduler>> create(std::shared_ptr<Model> model, const SchedulerOptions& options = {});
    // Cancels every request (their onDone runs with StopReason::Cancelled) and joins the thread.
    ~Scheduler();

    // Queues a request and returns at once (admission control: an error here
    // means it can never run). `prompt` is the whole token history.
    Result<RequestId> submit(std::vector<TokenId> prompt, const RequestOptions& options, VariantPieceCallback onPiece,
                             RequestDoneCallback onDone);

    // Ends a request at the next step boundary: its sequences are closed (KV
    // blocks freed) before its onDone, which gets StopReason::Cancelled for
    // every unfinished variant. Unknown or finished ids are ignored.
    void cancel(RequestId id);

    struct Stats {
        int64_t steps = 0;          // forward steps run
        int64_t decodeTokens = 0;   // tokens decoded (one per running sequence per step)
        int64_t prefillTokens = 0;  // prompt (and re-prefill after preemption) tokens computed
        int64_t preemptions = 0;
        int32_t running = 0;        // requests admitted (prefilling or decoding)
        int32_t waiting = 0;        // requests queued
        // The model's KV pool (shared with its sessions), as of the last step
        // boundary or finished request (read then, so stats() never waits for a step).
        int32_t blockTokens = 0;
        int32_t totalBlocks = 0, usedBlocks = 0, freeBlocks = 0, cachedBlocks = 0;
        int64_t liveTokens = 0;     // positions filled in used blocks
        double occupancy() const {  // live tokens / capacity of used blocks
            return usedBlocks > 0 ? double(liveTokens) / (double(usedBlocks) * blockTokens) : 1.0;
        }
    };
    Stats stats() const;

    // Blocks until nothing is queued or running and every onDone has returned.
    void waitIdle();

    // The longest sequence a request may reach (prompt + reply).
    int32_t contextLength() const;

    struct Impl;

private:
    explicit Scheduler(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace kestrel
