// A fixed pool of worker threads for data-parallel kernels.
//
// parallelFor splits [0, n) into contiguous chunks of whole `grain`s (the
// last may be short) and returns when all are done. The calling thread takes
// part; chunks are claimed by whichever participant is free, each taking
// 1/(2 * size()) of what is left, so the chunks shrink towards the end, one
// thread may run several (one after another, with its own threadIndex) and a
// slow or descheduled thread gets fewer. threadIndex (0 = caller) is unique among
// threads running at once, so it can index per-thread scratch. Workers spin
// ~2 ms before sleeping so the many small launches of one decode step do not
// pay a futex wake-up each.
// Thread-safety: one parallelFor at a time per pool (the engine gives each model
// runner its own pool); fn must not call parallelFor on the same pool.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace kestrel::kernels {

class ThreadPool {
public:
    explicit ThreadPool(int threads);  // threads <= 0: the number of cores
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const;

    // fn(begin, end, threadIndex) on disjoint chunks covering [0, n).
    // `grain` is the smallest chunk worth a thread.
    void parallelFor(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn, int64_t grain = 1);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace kestrel::kernels
