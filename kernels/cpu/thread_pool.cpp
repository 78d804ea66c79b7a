// Persistent workers woken by a generation counter. A decode step issues a few
// hundred parallelFor calls of tens of microseconds each, so a futex round trip
// per call would cost as much as the work: workers spin on the counter for a
// while after each job and only then sleep on the condition variable.
//
// Chunks are claimed, not assigned: every participant (the caller included)
// takes the next unclaimed chunk until none is left. On a busy machine a worker
// may not be scheduled for milliseconds; the caller then simply runs its chunks
// instead of waiting for it. The claim counter carries the generation in its
// high half, so a worker waking late cannot take a chunk of a later call.
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KESTREL_CPU_RELAX() _mm_pause()
#else
#define KESTREL_CPU_RELAX() std::this_thread::yield()
#endif

namespace kestrel::kernels {

struct ThreadPool::Impl {
    std::vector<std::thread> workers;
    int threads = 1;

    // The current job. Written before `claim` is published for its generation.
    std::atomic<const std::function<void(int64_t, int64_t, int)>*> fn{nullptr};
    std::atomic<int64_t> n{0};
    std::atomic<int> chunks{0};
    std::atomic<uint64_t> claim{0};  // (generation & 0xffffffff) << 32 | next chunk
    std::atomic<int> done{0};
    std::atomic<bool> callerWaiting{false};

    std::atomic<uint64_t> generation{0};
    std::atomic<int> sleepers{0};
    std::atomic<bool> stop{false};
    std::mutex mutex;
    std::condition_variable wake;

    static uint64_t tag(uint64_t gen) { return gen & 0xffffffffu; }

    void work(uint64_t gen, int threadIndex) {
        uint64_t v = claim.load(std::memory_order_acquire);
        for (;;) {
            if ((v >> 32) != tag(gen)) return;
            const int c = static_cast<int>(v & 0xffffffffu);
            const int nc = chunks.load(std::memory_order_relaxed);
            if (c >= nc) return;
            // A failed exchange reloads v: another thread took chunk c, or a new call began.
            if (!claim.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
            const int64_t total = n.load(std::memory_order_relaxed);
            const int64_t begin = total * c / nc, end = total * (c + 1) / nc;
            if (begin < end) (*fn.load(std::memory_order_relaxed))(begin, end, threadIndex);
            // seq_cst pairs with the caller's store of callerWaiting: one of the two sees the other.
            if (done.fetch_add(1, std::memory_order_seq_cst) + 1 == nc && callerWaiting.load(std::memory_order_seq_cst))
                done.notify_one();
            v = claim.load(std::memory_order_acquire);
        }
    }

    void workerLoop(int index) {
        uint64_t seen = 0;
        for (;;) {
            // The gaps between the launches of one decode step are a few microseconds, but the
            // caller can be descheduled for milliseconds on a busy machine: spin 2 ms, so a worker
            // is asleep only between steps, never between the ops of one.
            const auto spinUntil = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
            uint64_t g;
            int spins = 0;
            while ((g = generation.load(std::memory_order_acquire)) == seen && !stop.load(std::memory_order_relaxed)) {
                KESTREL_CPU_RELAX();
                if (++spins % 64 == 0 && std::chrono::steady_clock::now() > spinUntil) {
                    sleepers.fetch_add(1, std::memory_order_seq_cst);
                    std::unique_lock lock(mutex);
                    wake.wait(lock, [&] {
                        return generation.load(std::memory_order_seq_cst) != seen || stop.load();
                    });
                    sleepers.fetch_sub(1, std::memory_order_relaxed);
                }
            }
            if (stop.load()) return;
            seen = g;
            work(g, index);
        }
    }
};

ThreadPool::ThreadPool(int threads) : impl_(std::make_unique<Impl>()) {
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    impl_->threads = threads;
    for (int i = 1; i < threads; ++i) impl_->workers.emplace_back([this, i] { impl_->workerLoop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(impl_->mutex);
        impl_->stop.store(true);
    }
    impl_->wake.notify_all();
    for (auto& t : impl_->workers) t.join();
}

int ThreadPool::size() const { return impl_->threads; }

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn, int64_t grain) {
    if (n <= 0) return;
    grain = std::max<int64_t>(grain, 1);
    // Up to kChunksPerThread chunks per thread, claimed dynamically: on a shared machine the two
    // threads rarely run at the same speed, and a worker that is descheduled holds at most one
    // small chunk instead of half the job.
    constexpr int64_t kChunksPerThread = 4;
    const int chunks = static_cast<int>(std::min<int64_t>(impl_->threads * kChunksPerThread, (n + grain - 1) / grain));
    if (chunks <= 1 || impl_->threads <= 1) {
        fn(0, n, 0);
        return;
    }
    Impl& p = *impl_;
    p.fn.store(&fn, std::memory_order_relaxed);
    p.n.store(n, std::memory_order_relaxed);
    p.chunks.store(chunks, std::memory_order_relaxed);
    p.done.store(0, std::memory_order_relaxed);
    const uint64_t gen = p.generation.load(std::memory_order_relaxed) + 1;
    p.claim.store(Impl::tag(gen) << 32, std::memory_order_release);
    p.generation.store(gen, std::memory_order_seq_cst);
    if (p.sleepers.load(std::memory_order_seq_cst) > 0) {
        // Taking the mutex orders this notify after a sleeper's predicate check.
        { std::lock_guard lock(p.mutex); }
        p.wake.notify_all();
    }
    p.work(gen, 0);
    // Only chunks a worker already started remain. Spin briefly (they usually end within
    // microseconds); if the worker was descheduled mid-chunk, sleep on `done` so this thread's
    // core is free for it instead of spinning through its time slice.
    for (int spins = 0; spins < 4096; ++spins) {
        if (p.done.load(std::memory_order_acquire) == chunks) return;
        KESTREL_CPU_RELAX();
    }
    p.callerWaiting.store(true, std::memory_order_seq_cst);
    for (int d; (d = p.done.load(std::memory_order_seq_cst)) != chunks;) p.done.wait(d, std::memory_order_seq_cst);
    p.callerWaiting.store(false, std::memory_order_relaxed);
}

}  // namespace kestrel::kernels
