// A fixed pool of worker threads for data-parallel kernels.
//
// parallelFor splits [0, n) into contiguous chunks, one per thread (the
// calling thread takes a share too), and returns when all are done. Workers
// spin briefly before sleeping so that the many small launches of one decode
// step do not pay a futex wake-up each. Thread-safety: one parallelFor at a
// time per pool (the engine gives each model runner its own pool).
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
