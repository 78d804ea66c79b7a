// The registry behind step_trace.h: without relocatable device code every .cu
// file is its own module with its own copy of the trace pointer, so each one
// registers a setter (cuda_common.cuh) and setBuffer calls them all.
#include "cuda_common.cuh"
#include "step_trace.h"

#include <atomic>
#include <mutex>
#include <vector>

namespace kestrel::cuda::steptrace {
namespace {

std::mutex& registryMutex() {
    static std::mutex m;
    return m;
}
std::vector<void (*)(unsigned long long*)>& setters() {
    static std::vector<void (*)(unsigned long long*)> v;
    return v;
}
std::atomic<int64_t> launchCount{0};

}  // namespace

void registerModule(void (*setter)(unsigned long long*)) {
    const std::lock_guard<std::mutex> lock(registryMutex());
    setters().push_back(setter);
}

void countLaunch() { launchCount.fetch_add(1, std::memory_order_relaxed); }

bool compiledIn() {
#ifdef KESTREL_CUDA_STEP_TRACE
    return true;
#else
    return false;
#endif
}

void setBuffer(unsigned long long* dev) {
    const std::lock_guard<std::mutex> lock(registryMutex());
    for (auto* set : setters()) set(dev);
}

int64_t launches() { return launchCount.load(std::memory_order_relaxed); }

}  // namespace kestrel::cuda::steptrace
