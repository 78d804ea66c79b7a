// Persistent workers woken by a generation counter. A decode step issues a few
// hundred parallelFor calls of tens of microseconds each, so a futex round trip
// per call would cost as much as the work: workers spin on the counter for a
// while after each job and only then sleep on the condition variable.
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

    // The job of the current generation; written before `generation` is bumped.
    const std::function<void(int64_t, int64_t, int)>* fn = nullptr;
    int64_t n = 0;
    int chunks = 0;

    std::atomic<uint64_t> generation{0};
    std::atomic<int> pending{0};
    std::atomic<int> sleepers{0};
    std::atomic<bool> stop{false};
    std::mutex mutex;
    std::condition_variable wake;

    void runChunk(int index) {
        if (index >= chunks) return;
        const int64_t begin = n * index / chunks;
        const int64_t end = n * (index + 1) / chunks;
        if (begin < end) (*fn)(begin, end, index);
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
            runChunk(index);
            pending.fetch_sub(1, std::memory_order_acq_rel);
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
    p.fn = &fn;
    p.n = n;
    p.chunks = chunks;
    p.pending.store(p.threads - 1, std::memory_order_relaxed);
    p.generation.fetch_add(1, std::memory_order_seq_cst);
    if (p.sleepers.load(std::memory_order_seq_cst) > 0) {
        // Taking the mutex orders this notify after a sleeper's predicate check.
        { std::lock_guard lock(p.mutex); }
        p.wake.notify_all();
    }
    p.runChunk(0);
    // On a busy machine a worker may be descheduled; yielding lets it run sooner
    // than spinning on its core would.
    for (int spins = 0; p.pending.load(std::memory_order_acquire) != 0; ++spins) {
        if (spins < 256)
            KESTREL_CPU_RELAX();
        else
            std::this_thread::yield();
    }
}

}  // namespace kestrel::kernels
