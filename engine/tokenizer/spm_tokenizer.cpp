#include "spm_tokenizer.h"

#include "bpe_tokenizer.h"  // collectEndOfGeneration
#include "gguf_vocab_keys.h"  // dropSpecialIdsOutside
#include "sentencepiece_proto.h"

#include <sentencepiece_processor.h>

#include <cstdio>
#include <unordered_set>

namespace kestrel::tokenizer {
namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581 "▁", sentencepiece's escaped space

std::string replaceAll(std::string_view text, std::string_view from, std::string_view to) {
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    for (size_t hit; (hit = text.find(from, pos)) != std::string_view::npos; pos = hit + from.size())
        out.append(text.substr(pos, hit - pos)).append(to);
    out.append(text.substr(pos));
    return out;
}

// "<0xAB>" -> 0xAB, as SentencePiece spells byte pieces; -1 when not one.
int parseByteToken(const std::string& text) {
    unsigned value = 0;
    char tail = 0;
    if (text.size() == 6 && std::sscanf(text.c_str(), "<0x%2X%c", &value, &tail) == 2 && tail == '>')
        return int(value);
    return -1;
}

SpmPieceType pieceType(TokenKind kind) {
    switch (kind) {
    case TokenKind::Unknown: return SpmPieceType::Unknown;
    case TokenKind::Control: return SpmPieceType::Control;
    case TokenKind::UserDefined: return SpmPieceType::UserDefined;
    case TokenKind::Unused: return SpmPieceType::Unused;
    case TokenKind::Byte: return SpmPieceType::Byte;
    default: return SpmPieceType::Normal;
    }
}

}  // namespace

SpmTokenizer::SpmTokenizer() = default;
SpmTokenizer::~SpmTokenizer() = default;

Result<std::unique_ptr<SpmTokenizer>> SpmTokenizer::create(SpmVocabulary vocab) {
    const std::string& where = vocab.where;
    const size_t n = vocab.tokens.size();
    if (n == 0) return Status(ErrorCode::InvalidFile, where + "tokenizer.ggml.tokens is empty");
    if (n >= size_t(INT32_MAX))
        return Status(ErrorCode::InvalidFile, where + "tokenizer.ggml.tokens has more than 2^31 entries");
    if (vocab.kinds.empty()) vocab.kinds.assign(n, TokenKind::Normal);
    if (vocab.scores.empty()) vocab.scores.assign(n, 0.0f);
    if (vocab.kinds.size() != n)
        return Status(ErrorCode::InvalidFile, where + "tokenizer.ggml.token_type has " + std::to_string(vocab.kinds.size()) +
                                                  " entries but tokenizer.ggml.tokens has " + std::to_string(n));
    if (vocab.scores.size() != n)
        return Status(ErrorCode::InvalidFile, where + "tokenizer.ggml.scores has " + std::to_string(vocab.scores.size()) +
                                                  " entries but tokenizer.ggml.tokens has " + std::to_string(n));

    std::unique_ptr<SpmTokenizer> t(new SpmTokenizer());
    t->tokens_ = std::move(vocab.tokens);
    t->kinds_ = std::move(vocab.kinds);
    t->addSpacePrefix_ = vocab.addSpacePrefix;

    t->special_ = vocab.special;
    dropSpecialIdsOutside(t->special_, vocab.eom, static_cast<int64_t>(n), where, t->warnings_);
    if (t->special_.unk < 0)
        for (size_t i = 0; i < n; ++i)
            if (t->kinds_[i] == TokenKind::Unknown) {
                t->special_.unk = TokenId(i);
                break;
            }
    t->special_.endOfGeneration = collectEndOfGeneration(t->special_, vocab.eom, t->tokens_, t->kinds_);

    SpmModelSpec spec;
    spec.pieces.resize(n);
    spec.unkId = t->special_.unk;
    spec.bosId = t->special_.bos;
    spec.eosId = t->special_.eos;
    spec.padId = t->special_.pad;
    spec.addDummyPrefix = false;  // added by encode(), see the header
    spec.removeExtraWhitespaces = vocab.removeExtraWhitespaces;
    if (!vocab.precompiledCharsmap.empty()) {
        spec.normalizerName = "precompiled";
        spec.precompiledCharsmap = std::move(vocab.precompiledCharsmap);
    }

    t->bytes_.resize(n);
    t->byText_.reserve(n);
    std::unordered_set<std::string_view> seen;
    seen.reserve(n);
    std::vector<SpecialTokenMatcher::Entry> controls;
    size_t unreachable = 0, byteTokens = 0;
    for (size_t i = 0; i < n; ++i) {
        const std::string& text = t->tokens_[i];
        const TokenKind kind = t->kinds_[i];
        t->byText_.emplace(std::string_view(text), TokenId(i));  // the first of duplicate texts wins
        SpmPiece& piece = spec.pieces[i];
        piece.score = vocab.scores[i];
        piece.type = TokenId(i) == t->special_.unk ? SpmPieceType::Unknown : pieceType(kind);
        // A second UNKNOWN piece is refused by sentencepiece; only unk is one.
        if (piece.type == SpmPieceType::Unknown && TokenId(i) != t->special_.unk) piece.type = SpmPieceType::Control;

        if (kind == TokenKind::Byte) {
            const int value = parseByteToken(text);
            if (value >= 0) {
                t->bytes_[i] = std::string(1, char(value));
                ++byteTokens;
            } else {
                piece.type = SpmPieceType::Normal;  // sentencepiece only takes <0xAB> as a byte piece
                t->bytes_[i] = text;
            }
            piece.piece = text;
        } else if (kind == TokenKind::Control) {
            t->bytes_[i] = text;
            piece.piece = text;
            controls.push_back({text, TokenId(i), false});
        } else {
            t->bytes_[i] = replaceAll(text, kSpaceMark, " ");
            piece.piece = replaceAll(text, " ", kSpaceMark);
        }
        if (piece.piece.empty() || !seen.insert(piece.piece).second) {
            // Kept as a control piece no text can reach, so later ids do not shift.
            piece.piece = "<kestrel-unreachable-" + std::to_string(i) + ">";
            piece.type = SpmPieceType::Control;
            ++unreachable;
        }
    }
    spec.byteFallback = byteTokens > 0;
    if (unreachable)
        t->warnings_.push_back(where + std::to_string(unreachable) +
                               " tokens are empty or repeat an earlier token's text; text never encodes to them");

    // sentencepiece needs exactly one UNKNOWN piece; a vocabulary without one
    // gets an extra piece past the end, which encode() never returns.
    if (spec.unkId < 0) {
        spec.unkId = int32_t(n);
        spec.pieces.push_back({"<kestrel-unk>", 0.0f, SpmPieceType::Unknown});
        t->warnings_.push_back(where + "the vocabulary has no unknown token; characters it cannot spell are dropped");
    }

    t->processor_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
    const auto status = t->processor_->LoadFromSerializedProto(serializeModelProto(spec));
    if (!status.ok())
        return Status(ErrorCode::InvalidFile,
                      where + "sentencepiece refused the vocabulary built from tokenizer.ggml.*: " + status.ToString());
    t->matcher_ = SpecialTokenMatcher(std::move(controls));
    return t;
}

void SpmTokenizer::encodeText(std::string_view text, bool prefix, std::vector<TokenId>& out) const {
    std::string buffer;
    if (prefix) {
        buffer.reserve(text.size() + 1);
        buffer.push_back(' ');
        buffer.append(text);
        text = buffer;
    }
    std::vector<int> ids;
    if (!processor_->Encode(text, &ids).ok()) ids.clear();
    for (int id : ids)
        if (id >= 0 && id < vocabSize()) out.push_back(id);
        else if (special_.unk >= 0) out.push_back(special_.unk);
}

std::vector<TokenId> SpmTokenizer::encode(std::string_view text, bool addSpecial, bool parseSpecial) const {
    std::vector<TokenId> out;
    out.reserve(text.size() / 3 + 2);
    if (addSpecial && special_.addBos && special_.bos >= 0) out.push_back(special_.bos);
    std::vector<TextSegment> segments;
    matcher_.split(text, parseSpecial, segments);
    bool first = true;
    for (const TextSegment& seg : segments) {
        if (seg.token >= 0) out.push_back(seg.token);
        else encodeText(seg.text, first && addSpacePrefix_, out);
        first = false;
    }
    if (addSpecial && special_.addEos && special_.eos >= 0) out.push_back(special_.eos);
    return out;
}

}  // namespace kestrel::tokenizer
