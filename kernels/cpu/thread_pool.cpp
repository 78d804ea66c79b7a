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
            done.fetch_add(1, std::memory_order_release);
            v = claim.load(std::memory_order_acquire);
        }
    }

    void workerLoop(int index) {
        uint64_t seen = 0;
        for (;;) {
            // About 100 µs of spinning covers the gap between the launches of one step.
            const auto spinUntil = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
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
    const int chunks = static_cast<int>(std::min<int64_t>(impl_->threads, (n + grain - 1) / grain));
    if (chunks <= 1) {
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
    // Only chunks a worker already started remain; yield if that worker is descheduled.
    for (int spins = 0; p.done.load(std::memory_order_acquire) != chunks; ++spins) {
        if (spins < 256)
            KESTREL_CPU_RELAX();
        else
            std::this_thread::yield();
    }
}

}  // namespace kestrel::kernels
