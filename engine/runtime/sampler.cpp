#include "sampler.h"

#include "ops.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>

namespace kestrel {
namespace {

uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t freshSeed() {
    std::random_device device;
    uint64_t seed = (uint64_t(device()) << 32) ^ device();
    seed ^= uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
    return seed ? seed : 1;
}

}  // namespace

Rng::Rng(uint64_t seed) {
    for (auto& s : s_) s = splitmix64(seed);
}

uint64_t Rng::next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
}

double Rng::uniform() { return double(next() >> 11) * 0x1.0p-53; }

TokenId argmax(std::span<const float> logits) {
    return logits.empty() ? 0 : TokenId(kernels::argmaxRow(logits.data(), static_cast<int64_t>(logits.size())));
}

Sampler::Sampler(const SamplingParams& params)
    : params_(params), seed_(params.seed ? params.seed : freshSeed()), rng_(seed_) {}

bool Sampler::penalising(std::span<const TokenId> history) const {
    const bool repeat = params_.repeatPenalty != 1.0f;
    const bool additive = params_.frequencyPenalty != 0.0f || params_.presencePenalty != 0.0f;
    return (repeat || additive) && params_.repeatLastN != 0 && !history.empty();
}

void Sampler::countWindow(std::span<const TokenId> history, size_t vocab) {
    size_t window = params_.repeatLastN < 0 ? history.size() : size_t(params_.repeatLastN);
    window = std::min(window, history.size());
    // Count occurrences in the window; a sorted small vector beats a hash map at these sizes.
    counts_.clear();
    for (TokenId id : history.subspan(history.size() - window)) {
        if (id < 0 || size_t(id) >= vocab) continue;
        counts_.push_back({id, 1});
    }
    std::sort(counts_.begin(), counts_.end());
    size_t unique = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
        if (unique > 0 && counts_[unique - 1].first == counts_[i].first)
            ++counts_[unique - 1].second;
        else
            counts_[unique++] = counts_[i];
    }
    counts_.resize(unique);
}

float Sampler::penalised(float logit, int32_t count) const {
    if (params_.repeatPenalty != 1.0f) logit = logit > 0 ? logit / params_.repeatPenalty : logit * params_.repeatPenalty;
    return logit - (float(count) * params_.frequencyPenalty + params_.presencePenalty);
}

void Sampler::applyPenalties(std::span<float> logits, std::span<const TokenId> history) {
    if (!penalising(history)) return;
    countWindow(history, logits.size());
    for (auto [id, count] : counts_) logits[size_t(id)] = penalised(logits[size_t(id)], count);
}

int32_t Sampler::topNeeded(std::span<const TokenId> history) {
    int32_t distinct = 0;
    if (penalising(history)) {
        // Only penalties that lower logits keep the best of the row the best after them.
        if (params_.repeatPenalty < 1.0f || params_.frequencyPenalty < 0.0f || params_.presencePenalty < 0.0f) return 0;
        countWindow(history, std::numeric_limits<size_t>::max());
        distinct = static_cast<int32_t>(counts_.size());
    }
    if (params_.temperature <= 0.0f) return 1 + distinct;
    return params_.topK > 0 ? params_.topK + distinct : 0;
}

TokenId Sampler::sample(std::span<float> logits, std::span<const TokenId> history) {
    if (logits.empty()) return -1;
    applyPenalties(logits, history);
    if (params_.temperature <= 0.0f) return argmax(logits);
    candidates_.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) candidates_[i] = {logits[i], TokenId(i)};
    return choose();
}

TokenId Sampler::sampleTop(std::span<const TopLogit> top, std::span<const TokenId> history) {
    if (top.empty()) return -1;
    candidates_.assign(top.begin(), top.end());
    if (penalising(history)) {
        countWindow(history, std::numeric_limits<size_t>::max());
        for (Candidate& c : candidates_) {
            auto it = std::lower_bound(counts_.begin(), counts_.end(), std::pair<TokenId, int32_t>{c.id, 0});
            if (it != counts_.end() && it->first == c.id) c.logit = penalised(c.logit, it->second);
        }
    }
    if (params_.temperature <= 0.0f) {
        // argmax's order: the highest logit, the lowest id among equals.
        return std::min_element(candidates_.begin(), candidates_.end(), outranks)->id;
    }
    return choose();
}

TokenId Sampler::choose() {
    // top-k: a partial sort keeps this O(V log k) instead of sorting the whole vocabulary.
    size_t keep = candidates_.size();
    if (params_.topK > 0 && size_t(params_.topK) < keep) keep = size_t(params_.topK);
    std::partial_sort(candidates_.begin(), candidates_.begin() + ptrdiff_t(keep), candidates_.end(), outranks);
    candidates_.resize(keep);

    // Softmax of the survivors at temperature 1 for top-p and min-p.
    probs_.resize(keep);
    const float maxLogit = candidates_.front().logit;
    double sum = 0.0;
    for (size_t i = 0; i < keep; ++i) sum += (probs_[i] = std::exp(candidates_[i].logit - maxLogit));
    for (auto& p : probs_) p = float(p / sum);

    if (params_.topP < 1.0f) {
        double cumulative = 0.0;
        size_t cut = keep;
        for (size_t i = 0; i < keep; ++i) {
            cumulative += probs_[i];
            if (cumulative >= params_.topP) {
                cut = i + 1;
                break;
            }
        }
        keep = std::max<size_t>(1, cut);
    }
    if (params_.minP > 0.0f) {
        const float threshold = params_.minP * probs_[0];
        size_t cut = 1;
        while (cut < keep && probs_[cut] >= threshold) ++cut;
        keep = cut;
    }
    candidates_.resize(keep);

    // Temperature on the survivors, then one draw.
    sum = 0.0;
    probs_.resize(keep);
    for (size_t i = 0; i < keep; ++i)
        sum += (probs_[i] = std::exp((candidates_[i].logit - maxLogit) / params_.temperature));
    double target = rng_.uniform() * sum;
    for (size_t i = 0; i < keep; ++i) {
        target -= probs_[i];
        if (target < 0.0) return candidates_[i].id;
    }
    return candidates_[keep - 1].id;
}

}  // namespace kestrel
