// A Backend that hands every call to another one: tests derive from it to
// watch or change a few calls (what the model layer tells the backend) while
// the inner backend computes.
#pragma once

#include "backend.h"

namespace kestrel::test {

class ForwardingBackend : public backend::Backend {
public:
    explicit ForwardingBackend(backend::Backend& inner) : in_(inner) {}

    std::string name() const override { return in_.name(); }
    uint64_t availableMemoryBytes() const override { return in_.availableMemoryBytes(); }
    double peakBandwidthGBs() const override { return in_.peakBandwidthGBs(); }
    Result<std::unique_ptr<backend::Weight>> uploadWeight(const gguf::TensorInfo& info) override {
        return in_.uploadWeight(info);
    }
    Result<std::unique_ptr<backend::Tensor>> createTensor(int64_t rows, int64_t cols) override {
        return in_.createTensor(rows, cols);
    }
    Result<std::unique_ptr<backend::IndexTensor>> createIndexTensor(int64_t capacity) override {
        return in_.createIndexTensor(capacity);
    }
    Result<std::vector<std::unique_ptr<backend::IndexTensor>>> createIndexTensors(std::span<const int64_t> c) override {
        return in_.createIndexTensors(c);
    }
    Result<std::unique_ptr<runtime::KvCache>> createKvCache(const runtime::KvCacheSpec& spec) override {
        return in_.createKvCache(spec);
    }
    Status upload(backend::IndexTensor& dst, std::span<const int32_t> v) override { return in_.upload(dst, v); }
    Status upload(backend::Tensor& dst, std::span<const float> v) override { return in_.upload(dst, v); }
    Status download(const backend::Tensor& src, std::span<float> out) override { return in_.download(src, out); }
    Status downloadTop(const backend::Tensor& src, int32_t k, std::span<TopLogit> out) override {
        return in_.downloadTop(src, k, out);
    }
    void embed(const backend::Weight& t, const backend::IndexTensor& ids, backend::Tensor& out) override {
        in_.embed(t, ids, out);
    }
    void matmul(const backend::Weight& w, const backend::Tensor& x, backend::Tensor& y) override { in_.matmul(w, x, y); }
    void matmulShared(const backend::Tensor& x, std::span<const MatmulTarget> targets) override {
        in_.matmulShared(x, targets);
    }
    bool replayStep(std::span<const int64_t> shape) override { return in_.replayStep(shape); }
    void setDecodeRows(int64_t rows, int64_t lone) override { in_.setDecodeRows(rows, lone); }
    int64_t setKeyBound(int64_t keys) override { return in_.setKeyBound(keys); }
    void addBias(backend::Tensor& x, const backend::Weight& b) override { in_.addBias(x, b); }
    void rmsNorm(const backend::Tensor& x, const backend::Weight& g, float eps, backend::Tensor& y, int group) override {
        in_.rmsNorm(x, g, eps, y, group);
    }
    void rope(backend::Tensor& x, int headDim, const backend::IndexTensor& pos, const backend::RopeParams& p) override {
        in_.rope(x, headDim, pos, p);
    }
    void storeKv(const backend::Tensor& k, const backend::Tensor& v, runtime::KvCache& kv, int layer,
                 const backend::KvBatch& batch) override {
        in_.storeKv(k, v, kv, layer, batch);
    }
    void attention(const backend::Tensor& q, runtime::KvCache& kv, int layer, const backend::KvBatch& batch,
                   const backend::AttentionParams& p, backend::Tensor& out) override {
        in_.attention(q, kv, layer, batch, p, out);
    }
    void glu(const backend::Tensor& g, const backend::Tensor& u, backend::GluKind kind, backend::Tensor& out) override {
        in_.glu(g, u, kind, out);
    }
    void add(const backend::Tensor& a, const backend::Tensor& b, backend::Tensor& out) override { in_.add(a, b, out); }
    void scale(backend::Tensor& x, float s) override { in_.scale(x, s); }
    void softcap(backend::Tensor& x, float cap) override { in_.softcap(x, cap); }
    void copyRows(const backend::Tensor& src, int64_t row, int64_t count, backend::Tensor& dst) override {
        in_.copyRows(src, row, count, dst);
    }
    Status copyKvBlock(runtime::KvCache& kv, int32_t src, int32_t dst) override { return in_.copyKvBlock(kv, src, dst); }
    Status readKv(runtime::KvCache& kv, std::span<const int32_t> table, int64_t tokens, std::span<uint8_t> out) override {
        return in_.readKv(kv, table, tokens, out);
    }
    Status writeKv(runtime::KvCache& kv, std::span<const int32_t> table, int64_t tokens,
                   std::span<const uint8_t> in) override {
        return in_.writeKv(kv, table, tokens, in);
    }

private:
    backend::Backend& in_;
};

}  // namespace kestrel::test
