#include "bpe_tokenizer.h"

#include "byte_level.h"
#include "gguf_vocab_keys.h"

#include <algorithm>
#include <cstdio>
#include <queue>

namespace kestrel::tokenizer {
namespace {

// Texts that end a turn in the chat formats Kestrel knows; a control token
// spelled like one of these stops generation even when the metadata names
// only eos.
constexpr std::string_view kEndOfTurnTexts[] = {
    "<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|endoftext|>", "<|end_of_text|>", "<end_of_turn>",
    "<|end|>", "<EOT>", "<|return|>", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
};

}  // namespace

std::vector<TokenId> collectEndOfGeneration(const SpecialTokens& special, TokenId eom,
                                            const std::vector<std::string>& tokens,
                                            const std::vector<TokenKind>& kinds) {
    std::vector<TokenId> ids;
    for (TokenId id : {special.eos, special.eot, eom})
        if (id >= 0) ids.push_back(id);
    for (size_t i = 0; i < tokens.size(); ++i) {
        if (i >= kinds.size() || kinds[i] != TokenKind::Control) continue;
        if (std::find(std::begin(kEndOfTurnTexts), std::end(kEndOfTurnTexts), tokens[i]) !=
            std::end(kEndOfTurnTexts))
            ids.push_back(TokenId(i));
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

struct BpeTokenizer::Scratch {
    struct Symbol {
        TokenId id;
        int32_t prev, next;
        bool alive;
    };
    struct Candidate {
        int32_t rank, left, right;
        TokenId leftId, rightId, result;
        bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
    };
    std::vector<Symbol> symbols;
    std::vector<Candidate> heap;
    std::string byteLevel;
    std::vector<TextSegment> segments;
    std::vector<std::string_view> pieces;
};

Result<std::unique_ptr<BpeTokenizer>> BpeTokenizer::create(BpeVocabulary vocab) {
    const std::string& where = vocab.where;
    if (vocab.tokens.empty())
        return Status(ErrorCode::InvalidFile, where + "tokenizer.ggml.tokens is empty");
    if (vocab.tokens.size() > size_t(INT32_MAX))
        return Status(ErrorCode::InvalidFile, where + "tokenizer.ggml.tokens has more than 2^31 entries");
    if (vocab.kinds.empty()) vocab.kinds.assign(vocab.tokens.size(), TokenKind::Normal);
    if (vocab.kinds.size() != vocab.tokens.size())
        return Status(ErrorCode::InvalidFile, where + "tokenizer.ggml.token_type has " +
                                                  std::to_string(vocab.kinds.size()) + " entries but tokenizer.ggml.tokens has " +
                                                  std::to_string(vocab.tokens.size()));

    std::unique_ptr<BpeTokenizer> t(new BpeTokenizer());
    t->tokens_ = std::move(vocab.tokens);
    t->kinds_ = std::move(vocab.kinds);
    const int32_t n = int32_t(t->tokens_.size());

    t->special_ = vocab.special;
    dropSpecialIdsOutside(t->special_, vocab.eom, n, where, t->warnings_);
    t->special_.endOfGeneration = collectEndOfGeneration(t->special_, vocab.eom, t->tokens_, t->kinds_);

    t->byText_.reserve(t->tokens_.size());
    t->bytes_.resize(t->tokens_.size());
    std::vector<SpecialTokenMatcher::Entry> specials;
    for (int32_t i = 0; i < n; ++i) {
        const std::string& text = t->tokens_[i];
        t->byText_.emplace(std::string_view(text), i);  // the first of duplicate texts wins
        switch (t->kinds_[i]) {
        case TokenKind::Normal:
            appendRawFromByteLevel(text, t->bytes_[i]);
            break;
        case TokenKind::Byte: {  // "<0xAB>", as SentencePiece vocabularies spell bytes
            unsigned value = 0;
            if (text.size() == 6 && std::sscanf(text.c_str(), "<0x%2X>", &value) == 1) t->bytes_[i] = char(value);
            else t->bytes_[i] = text;
            break;
        }
        case TokenKind::Control:
        case TokenKind::UserDefined:
            specials.push_back({text, i, t->kinds_[i] == TokenKind::UserDefined});
            t->bytes_[i] = text;
            break;
        default:
            t->bytes_[i] = text;
            break;
        }
    }
    t->matcher_ = SpecialTokenMatcher(std::move(specials));

    for (int b = 0; b < 256; ++b) {
        const auto it = t->byText_.find(byteToUnicodeUtf8(uint8_t(b)));
        t->byteToken_[b] = it == t->byText_.end() ? -1 : it->second;
    }

    size_t skipped = 0;
    std::string joined;
    t->merges_.reserve(vocab.merges.size());
    for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
        const std::string& m = vocab.merges[rank];
        const size_t space = m.find(' ');
        if (space == std::string::npos || space == 0 || space + 1 >= m.size())
            return Status(ErrorCode::InvalidFile, where + "tokenizer.ggml.merges[" + std::to_string(rank) +
                                                      "] = '" + m + "' is not two tokens separated by a space");
        const std::string_view left(m.data(), space), right(m.data() + space + 1, m.size() - space - 1);
        joined.assign(left).append(right);
        const auto a = t->byText_.find(left), b = t->byText_.find(right), ab = t->byText_.find(joined);
        if (a == t->byText_.end() || b == t->byText_.end() || ab == t->byText_.end()) {
            ++skipped;
            continue;
        }
        t->merges_.emplace(pairKey(a->second, b->second), Merge{int32_t(rank), ab->second});
    }
    if (skipped)
        t->warnings_.push_back(where + std::to_string(skipped) +
                               " merges name tokens that are not in the vocabulary; they are ignored");

    const PreTokenizerSpec* spec = findPreTokenizerSpec(vocab.preTokenizer);
    if (!spec) {
        t->warnings_.push_back(where + "unknown pre-tokenizer '" + vocab.preTokenizer +
                               "' (tokenizer.ggml.pre); using GPT-2's, so tokens may differ from the model's own");
        spec = &gpt2PreTokenizerSpec();
    }
    auto pre = PreTokenizer::create(*spec);
    if (!pre) return pre.status();
    t->pre_ = std::move(pre.value());
    return t;
}

void BpeTokenizer::encodePiece(std::string_view piece, Scratch& s, std::vector<TokenId>& out) const {
    if (pre_->spec().ignoreMerges || piece.size() == 1) {
        s.byteLevel.clear();
        appendByteLevel(piece, s.byteLevel);
        const auto it = byText_.find(s.byteLevel);
        if (it != byText_.end()) {
            out.push_back(it->second);
            return;
        }
    }

    auto& sym = s.symbols;
    sym.clear();
    for (unsigned char c : piece) {
        TokenId id = byteToken_[c];
        if (id < 0) id = special_.unk;  // a vocabulary without this byte: unk, or drop it
        if (id < 0) continue;
        const int32_t index = int32_t(sym.size());
        sym.push_back({id, index - 1, index + 1, true});
    }
    if (sym.empty()) return;
    sym.back().next = -1;

    auto& heap = s.heap;
    heap.clear();
    const auto greater = std::greater<Scratch::Candidate>();
    auto consider = [&](int32_t left) {
        if (left < 0 || sym[left].next < 0) return;
        const int32_t right = sym[left].next;
        const auto it = merges_.find(pairKey(sym[left].id, sym[right].id));
        if (it == merges_.end()) return;
        heap.push_back({it->second.rank, left, right, sym[left].id, sym[right].id, it->second.result});
        std::push_heap(heap.begin(), heap.end(), greater);
    };
    for (int32_t i = 0; i + 1 < int32_t(sym.size()); ++i) consider(i);

    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), greater);
        const Scratch::Candidate c = heap.back();
        heap.pop_back();
        // Entries go stale when either side has merged since; the ids tell.
        auto& l = sym[c.left];
        if (!l.alive || l.next != c.right || l.id != c.leftId || sym[c.right].id != c.rightId) continue;
        auto& r = sym[c.right];
        l.id = c.result;
        l.next = r.next;
        if (r.next >= 0) sym[r.next].prev = c.left;
        r.alive = false;
        if (l.prev >= 0) consider(l.prev);
        consider(c.left);
    }
    for (int32_t i = 0; i >= 0; i = sym[i].next) out.push_back(sym[i].id);
}

std::vector<TokenId> BpeTokenizer::encode(std::string_view text, bool addSpecial, bool parseSpecial) const {
    std::vector<TokenId> out;
    out.reserve(text.size() / 3 + 2);
    if (addSpecial && special_.addBos && special_.bos >= 0) out.push_back(special_.bos);
    Scratch s;
    matcher_.split(text, parseSpecial, s.segments);
    for (const TextSegment& seg : s.segments) {
        if (seg.token >= 0) {
            out.push_back(seg.token);
            continue;
        }
        s.pieces.clear();
        pre_->split(seg.text, s.pieces);
        for (std::string_view piece : s.pieces) encodePiece(piece, s, out);
    }
    if (addSpecial && special_.addEos && special_.eos >= 0) out.push_back(special_.eos);
    return out;
}

}  // namespace kestrel::tokenizer
