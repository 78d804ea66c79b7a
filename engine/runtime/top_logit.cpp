#include "top_logit.h"

#include <algorithm>
#include <vector>

namespace kestrel {

void selectTop(std::span<const float> row, int32_t k, std::span<TopLogit> out) {
    thread_local std::vector<TopLogit> all;
    all.resize(row.size());
    for (size_t i = 0; i < row.size(); ++i) all[i] = {row[i], static_cast<int32_t>(i)};
    const auto n = static_cast<ptrdiff_t>(std::min<size_t>(static_cast<size_t>(k), all.size()));
    std::partial_sort(all.begin(), all.begin() + n, all.end(), outranks);
    std::copy_n(all.begin(), n, out.begin());
}

}  // namespace kestrel
