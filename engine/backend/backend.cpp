#include "backend.h"

#include <vector>

namespace kestrel::backend {

Status Backend::checkTopArgs(const Tensor& src, int32_t k, size_t outSize) {
    if (k <= 0 || k > src.cols() || static_cast<int64_t>(outSize) != src.rows() * k)
        return Status(ErrorCode::InvalidArgument, "top-k download: k must be in [1, cols] and out rows * k long");
    return Status::ok();
}

Status Backend::downloadTop(const Tensor& src, int32_t k, std::span<TopLogit> out) {
    KESTREL_RETURN_IF_ERROR(checkTopArgs(src, k, out.size()));
    const int64_t rows = src.rows(), cols = src.cols();
    thread_local std::vector<float> host;
    host.resize(static_cast<size_t>(rows * cols));
    KESTREL_RETURN_IF_ERROR(download(src, host));
    for (int64_t r = 0; r < rows; ++r)
        selectTop(std::span<const float>(host).subspan(static_cast<size_t>(r * cols), static_cast<size_t>(cols)), k,
                  out.subspan(static_cast<size_t>(r * k), static_cast<size_t>(k)));
    return Status::ok();
}

Result<std::vector<std::unique_ptr<IndexTensor>>> Backend::createIndexTensors(std::span<const int64_t> capacities) {
    std::vector<std::unique_ptr<IndexTensor>> out;
    for (int64_t c : capacities) {
        auto t = createIndexTensor(c);
        if (!t) return t.status();
        out.push_back(std::move(t).value());
    }
    return out;
}

}  // namespace kestrel::backend
