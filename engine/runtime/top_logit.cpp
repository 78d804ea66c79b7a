#include "top_logit.h"

#include <algorithm>

namespace kestrel {

// One pass with a min-heap of the k best so far: most values lose one comparison
// against the heap's worst and are skipped (k is small: top-k sampling's k).
void selectTop(std::span<const float> row, int32_t k, std::span<TopLogit> out) {
    const auto n = std::min<size_t>(static_cast<size_t>(std::max(k, 0)), row.size());
    if (n == 0) return;
    auto worseFirst = [](const TopLogit& a, const TopLogit& b) { return outranks(a, b); };  // heap top: the worst kept
    std::span<TopLogit> heap = out.first(n);
    for (size_t i = 0; i < n; ++i) heap[i] = {row[i], static_cast<int32_t>(i)};
    std::make_heap(heap.begin(), heap.end(), worseFirst);
    for (size_t i = n; i < row.size(); ++i) {
        const TopLogit c{row[i], static_cast<int32_t>(i)};
        if (!outranks(c, heap.front())) continue;
        std::pop_heap(heap.begin(), heap.end(), worseFirst);
        heap.back() = c;
        std::push_heap(heap.begin(), heap.end(), worseFirst);
    }
    std::sort_heap(heap.begin(), heap.end(), worseFirst);  // ascending by worseFirst: best first
}

}  // namespace kestrel
