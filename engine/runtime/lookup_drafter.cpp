#include "lookup_drafter.h"

#include <algorithm>

namespace kestrel {

LookupDrafter::LookupDrafter(int minNgram, int maxNgram)
    : minNgram_(std::clamp(minNgram, 1, kMaxNgram)), maxNgram_(std::clamp(maxNgram, minNgram_, kMaxNgram)) {}

uint64_t LookupDrafter::key(int64_t end, int n) const {
    // FNV-1a over the ids: collisions are possible, so a hit is compared token by token (same()).
    uint64_t h = 1469598103934665603ull;
    for (int64_t i = end - n + 1; i <= end; ++i) {
        h ^= static_cast<uint32_t>(history_[size_t(i)]);
        h *= 1099511628211ull;
    }
    return h;
}

bool LookupDrafter::same(int64_t endA, int64_t endB, int n) const {
    for (int i = 0; i < n; ++i)
        if (history_[size_t(endA - i)] != history_[size_t(endB - i)]) return false;
    return true;
}

void LookupDrafter::reset(std::span<const TokenId> history) {
    history_.clear();
    length_ = kMaxLength;
    for (auto& table : lastEnd_) table.clear();
    history_.reserve(history.size() + 1024);
    for (TokenId t : history) push(t);
}

void LookupDrafter::push(TokenId token) {
    history_.push_back(token);
    // The n-grams ending just before the new token now have a successor: index them.
    const int64_t end = static_cast<int64_t>(history_.size()) - 2;
    for (int n = minNgram_; n <= maxNgram_ && end - n + 1 >= 0; ++n) lastEnd_[n][key(end, n)] = end;
}

void LookupDrafter::checked(size_t guessed, size_t kept) {
    if (guessed == 0) return;
    if (kept == guessed) length_ = std::min(kMaxLength, std::max(length_, int(guessed)) + 1);
    else if (kept == 0) length_ = std::max(1, std::min(length_, int(guessed)) / 2);
}

void LookupDrafter::draft(int max, std::vector<TokenId>& out) {
    out.clear();
    max = std::min(max, length_);
    const int64_t last = static_cast<int64_t>(history_.size()) - 1;
    for (int n = maxNgram_; n >= minNgram_ && max > 0; --n) {
        if (last - n + 1 < 0) continue;
        const auto& table = lastEnd_[n];
        const auto it = table.find(key(last, n));
        if (it == table.end() || !same(it->second, last, n)) continue;
        // history_[e + 1 + j], reading drafted tokens once it passes the end (periodic continuation).
        const int64_t e = it->second;
        for (int j = 0; j < max; ++j) {
            const int64_t at = e + 1 + j;
            out.push_back(at <= last ? history_[size_t(at)] : out[size_t(at - last - 1)]);
        }
        return;
    }
}

}  // namespace kestrel
