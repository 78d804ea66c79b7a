// Persistent workers woken by a generation counter. A decode step issues a few
// hundred parallelFor calls of tens of microseconds each, so a futex round trip
// per call would cost as much as the work: workers spin on the counter for a
// while after each job and only then sleep on the condition variable.
//
// Chunks are claimed, not assigned: every participant (the caller included)
// takes the next unclaimed chunk until none is left. On a busy machine a worker
// may not be scheduled for milliseconds; the caller then simply runs its chunks
// instead of waiting for it. Chunks shrink as the work runs out (each claims
// 1/(2 * threads) of what is left, at least one grain), so the big first
// chunks keep claims few and the small last ones leave little for one thread
// to finish alone while the other waits.
//
// One 64-bit claim word holds the call's generation, its number of units and
// the next unclaimed unit, and a claim is a compare-exchange on it. A worker
// that read the word during one call and tries to claim after the next call
// has begun fails (the generation differs), and the bound it checks comes from
// the same word, never from a later call; so a successful claim always belongs
// to a call that cannot finish before that chunk does.
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
    std::atomic<int64_t> grain{1};
    std::atomic<uint64_t> claim{0};   // generation << 32 | units << 16 | next unclaimed unit
    std::atomic<uint32_t> done{0};    // units finished
    std::atomic<bool> callerWaiting{false};

    std::atomic<uint64_t> generation{0};
    std::atomic<int> sleepers{0};
    std::atomic<bool> stop{false};
    std::mutex mutex;
    std::condition_variable wake;

    static constexpr int64_t kMaxUnits = 0xffff;
    static uint64_t tag(uint64_t gen) { return gen & 0xffffffffu; }
    static uint64_t claimWord(uint64_t gen, uint32_t units) { return tag(gen) << 32 | uint64_t{units} << 16; }

    void work(uint64_t gen, int threadIndex) {
        uint64_t v = claim.load(std::memory_order_acquire);
        for (;;) {
            if ((v >> 32) != tag(gen)) return;
            const auto c = static_cast<uint32_t>(v & 0xffffu), nu = static_cast<uint32_t>((v >> 16) & 0xffffu);
            if (c >= nu) return;
            const uint32_t take = std::max<uint32_t>(1, (nu - c) / static_cast<uint32_t>(2 * threads));
            // A failed exchange reloads v: another thread claimed, or a new call began.
            if (!claim.compare_exchange_weak(v, v + take, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
            const int64_t g = grain.load(std::memory_order_relaxed), total = n.load(std::memory_order_relaxed);
            (*fn.load(std::memory_order_relaxed))(int64_t{c} * g, std::min(total, int64_t{c + take} * g), threadIndex);
            // seq_cst pairs with the caller's store of callerWaiting: one of the two sees the other.
            if (done.fetch_add(take, std::memory_order_seq_cst) + take == nu &&
                callerWaiting.load(std::memory_order_seq_cst))
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
    // Units of work must count in 16 bits (their field of the claim word).
    grain = std::max<int64_t>(grain, (n + Impl::kMaxUnits - 1) / Impl::kMaxUnits);
    const int64_t units = (n + grain - 1) / grain;
    if (units <= 1 || impl_->threads <= 1) {
        fn(0, n, 0);
        return;
    }
    Impl& p = *impl_;
    p.fn.store(&fn, std::memory_order_relaxed);
    p.n.store(n, std::memory_order_relaxed);
    p.grain.store(grain, std::memory_order_relaxed);
    p.done.store(0, std::memory_order_relaxed);
    const uint64_t gen = p.generation.load(std::memory_order_relaxed) + 1;
    p.claim.store(Impl::claimWord(gen, static_cast<uint32_t>(units)), std::memory_order_release);
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
    const auto all = static_cast<uint32_t>(units);
    for (int spins = 0; spins < 4096; ++spins) {
        if (p.done.load(std::memory_order_acquire) == all) return;
        KESTREL_CPU_RELAX();
    }
    p.callerWaiting.store(true, std::memory_order_seq_cst);
    for (uint32_t d; (d = p.done.load(std::memory_order_seq_cst)) != all;) p.done.wait(d, std::memory_order_seq_cst);
    p.callerWaiting.store(false, std::memory_order_relaxed);
}

}  // namespace kestrel::kernels
