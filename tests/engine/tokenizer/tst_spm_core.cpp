// The SentencePiece tokenizer on small hand-made vocabularies (no model file):
// the ModelProto bytes, merges by score, byte fallback and stream decoding of
// byte tokens, the dummy prefix, special tokens, and vocabulary defects.
#include "sentencepiece_proto.h"
#include "spm_tokenizer.h"

#include <QtTest>

using namespace kestrel;
using namespace kestrel::tokenizer;

namespace {

const std::string kMark = "\xE2\x96\x81";  // "▁"

// <unk> <s> </s> <|ctl|> <0x00>..<0xFF> then merges a b ab ▁ ▁ab ...
SpmVocabulary smallVocab() {
    SpmVocabulary v;
    v.where = "small.gguf: ";
    auto add = [&](std::string text, float score, TokenKind kind) {
        v.tokens.push_back(std::move(text));
        v.scores.push_back(score);
        v.kinds.push_back(kind);
    };
    add("<unk>", 0, TokenKind::Unknown);
    add("<s>", 0, TokenKind::Control);
    add("</s>", 0, TokenKind::Control);
    add("<|ctl|>", 0, TokenKind::Control);
    char name[8];
    for (int b = 0; b < 256; ++b) {
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        add(name, 0, TokenKind::Byte);
    }
    add(kMark + "ab", -1, TokenKind::Normal);  // 260: merged last but best-scored
    add("ab", -2, TokenKind::Normal);          // 261
    add("bc", -1.5f, TokenKind::Normal);       // 262: beats ab for "abc"
    add(kMark, -3, TokenKind::Normal);         // 263
    add("a", -4, TokenKind::Normal);           // 264
    add("b", -5, TokenKind::Normal);           // 265
    add("c", -6, TokenKind::Normal);           // 266
    add("<u>", 0, TokenKind::UserDefined);     // 267
    v.special.bos = 1;
    v.special.eos = 2;
    v.special.unk = 0;
    v.special.addBos = true;
    v.addSpacePrefix = false;
    return v;
}

std::unique_ptr<SpmTokenizer> make(SpmVocabulary v) {
    auto t = SpmTokenizer::create(std::move(v));
    if (!t) qWarning("%s", t.status().toString().c_str());
    return t ? std::move(t.value()) : nullptr;
}

using Ids = std::vector<TokenId>;

// Well-formed UTF-8 (no QString round trip: Qt drops a leading U+FEFF).
bool validUtf8(const std::string& s) {
    for (size_t i = 0; i < s.size();) {
        const auto c = uint8_t(s[i]);
        const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        uint32_t cp = n == 1 ? c : c & (0x7F >> n);
        for (size_t k = 1; k < n; ++k) {
            if ((uint8_t(s[i + k]) & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (uint8_t(s[i + k]) & 0x3F);
        }
        static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += n;
    }
    return true;
}

}  // namespace

class TstSpmCore : public QObject {
    Q_OBJECT

private slots:
    void protoWireFormat() {
        SpmModelSpec spec;
        spec.pieces = {{"ab", 1.0f, SpmPieceType::UserDefined}};
        spec.bosId = -1;
        const std::string bytes = serializeModelProto(spec);
        // pieces: tag 1/LEN, length 11: piece "ab" (0A 02 61 62), score 1.0f (15 00 00 80 3F), type 4 (18 04)
        const std::string piece("\x0A\x0B\x0A\x02" "ab" "\x15\x00\x00\x80\x3F\x18\x04", 13);
        QCOMPARE(bytes.substr(0, piece.size()), piece);
        // trainer_spec.bos_id = -1 is a ten-byte varint after tag 41 (0xC8 0x02).
        const std::string bos("\xC8\x02\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x01", 12);
        QVERIFY(bytes.find(bos) != std::string::npos);
        // normalizer_spec.name = "identity" (field 1 inside field 3).
        QVERIFY(bytes.find(std::string("\x0A\x08identity", 10)) != std::string::npos);
    }

    void mergesFollowScores() {
        auto t = make(smallVocab());
        QVERIFY(t);
        QVERIFY2(t->warnings().empty(), t->warnings().empty() ? "" : t->warnings()[0].c_str());
        QCOMPARE(t->encode("ab", false, false), (Ids{261}));
        QCOMPARE(t->encode("abc", false, false), (Ids{264, 262}));  // bc scores above ab
        QCOMPARE(t->encode(" ab", false, false), (Ids{260}));
        QCOMPARE(t->encode("ab", true, false), (Ids{1, 261}));
        QCOMPARE(t->tokenBytes(260), std::string(" ab"));
        QCOMPARE(t->tokenText(260), std::string_view(kMark + "ab"));
        QCOMPARE(t->findToken(kMark + "ab").value_or(-1), 260);
        QCOMPARE(t->encode("", true, true), (Ids{1}));
    }

    void dummyPrefixOnlyAtTheStart() {
        auto v = smallVocab();
        v.addSpacePrefix = true;
        auto t = make(std::move(v));
        QVERIFY(t);
        QCOMPARE(t->encode("ab", false, false), (Ids{260}));
        QCOMPARE(t->encode("<|ctl|>ab", false, true), (Ids{3, 261}));
        QCOMPARE(t->encode("ab<|ctl|>ab", false, true), (Ids{260, 3, 261}));
        QCOMPARE(t->encode("", false, false), Ids{});
    }

    void byteFallbackAndStreamDecoding() {
        auto t = make(smallVocab());
        QVERIFY(t);
        const std::string text = "a\xE4\xB8\x96" "b";  // a世b
        const Ids ids = t->encode(text, false, false);
        QCOMPARE(ids, (Ids{264, 4 + 0xE4, 4 + 0xB8, 4 + 0x96, 265}));
        QCOMPARE(t->tokenKind(4 + 0xE4), TokenKind::Byte);
        QCOMPARE(t->tokenBytes(4 + 0xE4), std::string("\xE4"));
        QCOMPARE(t->decode(ids), text);

        StreamDecoder stream(*t);
        std::vector<std::string> pieces;
        for (TokenId id : ids) pieces.push_back(stream.push(id));
        pieces.push_back(stream.flush());
        QCOMPARE(pieces, (std::vector<std::string>{"a", "", "", "\xE4\xB8\x96", "b", ""}));
        // A character cut short ends as U+FFFD, never as a broken byte.
        StreamDecoder cut(*t);
        std::string out = cut.push(4 + 0xE4) + cut.push(4 + 0xB8) + cut.flush();
        QVERIFY(validUtf8(out));
        QCOMPARE(out, std::string("\xEF\xBF\xBD"));
    }

    void specialTokens() {
        auto t = make(smallVocab());
        QVERIFY(t);
        QCOMPARE(t->encode("a<|ctl|>b", false, true), (Ids{264, 3, 265}));
        const Ids plain = t->encode("a<|ctl|>b", false, false);
        QVERIFY(std::find(plain.begin(), plain.end(), 3) == plain.end());
        QCOMPARE(t->decode(plain), std::string("a<|ctl|>b"));
        // User-defined tokens are matched whether or not special text is parsed.
        QCOMPARE(t->encode("a<u>b", false, false), (Ids{264, 267, 265}));
        QCOMPARE(t->encode("a<u>b", false, true), (Ids{264, 267, 265}));
        QCOMPARE(t->tokenBytes(3), std::string());
        QCOMPARE(t->tokenBytes(3, true), std::string("<|ctl|>"));
        QVERIFY(t->isEndOfGeneration(2));
        QVERIFY(!t->isEndOfGeneration(3));
    }

    void spaceSpelledTokens() {
        auto v = smallVocab();
        v.tokens.push_back("  ");  // Gemma spells whitespace runs with real spaces
        v.scores.push_back(0);
        v.kinds.push_back(TokenKind::UserDefined);
        auto t = make(std::move(v));
        QVERIFY(t);
        QCOMPARE(t->encode("a  b", false, false), (Ids{264, 268, 265}));
        QCOMPARE(t->tokenBytes(268), std::string("  "));
    }

    void defectsAreWarningsOrErrors() {
        auto dup = smallVocab();
        dup.tokens.push_back("ab");
        dup.scores.push_back(10);
        dup.kinds.push_back(TokenKind::Normal);
        auto t = make(std::move(dup));
        QVERIFY(t);
        QCOMPARE(t->warnings().size(), size_t(1));
        QCOMPARE(t->vocabSize(), 269);
        QCOMPARE(t->encode("ab", false, false), (Ids{261}));  // the first "ab" keeps its place

        auto noUnk = smallVocab();
        noUnk.kinds[0] = TokenKind::Control;
        noUnk.special.unk = -1;
        auto u = make(std::move(noUnk));
        QVERIFY(u);
        QVERIFY(!u->warnings().empty());
        QCOMPARE(u->encode("ab", false, false), (Ids{261}));

        auto badId = smallVocab();
        badId.special.eos = 100000;
        auto w = make(std::move(badId));
        QVERIFY(w);
        QCOMPARE(w->special().eos, -1);
        QVERIFY(w->warnings()[0].find("eos_token_id") != std::string::npos);

        auto shortScores = smallVocab();
        shortScores.scores.pop_back();
        auto s = SpmTokenizer::create(std::move(shortScores));
        QVERIFY(!s);
        QCOMPARE(s.status().code(), ErrorCode::InvalidFile);
        QVERIFY(s.status().message().find("tokenizer.ggml.scores") != std::string::npos);

        auto s2 = SpmTokenizer::create(SpmVocabulary{});
        QVERIFY(!s2);
        QVERIFY(s2.status().message().find("tokenizer.ggml.tokens") != std::string::npos);
    }

    void invalidUtf8InputDoesNotBreak() {
        auto t = make(smallVocab());
        QVERIFY(t);
        const Ids ids = t->encode("a\xFF\xC3", false, false);
        QVERIFY(!ids.empty());
        QVERIFY(validUtf8(t->decode(ids)));
    }
};

QTEST_APPLESS_MAIN(TstSpmCore)
#include "tst_spm_core.moc"
