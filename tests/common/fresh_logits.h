// Reference logits for prefix-reuse tests: the last token of a token list run
// alone in a new sequence, with the prefix cache cleared before and after (so
// nothing is reused and nothing is left behind). Shared by the CPU suite
// (tst_kv_pool) and the GPU checks (kestrel-cuda-check, no Qt).
#pragma once

#include "model_impl.h"

#include <span>
#include <vector>

namespace kestrel::test {

// Empty on an error, which goes to `error` when given.
inline std::vector<float> freshLogits(Model& model, std::span<const int32_t> tokens, Status* error = nullptr) {
    runtime::KvPool& pool = *model.impl().pool;
    model.clearPrefixCache();
    const int32_t seq = pool.open();
    std::vector<float> logits;
    const runtime::PoolChunk ch{seq, tokens, model::LogitsWanted::Last};
    const Status s = pool.step({&ch, 1}, logits);
    pool.close(seq);
    model.clearPrefixCache();
    if (!s.isOk()) logits.clear();
    if (error) *error = s;
    return logits;
}

}  // namespace kestrel::test
