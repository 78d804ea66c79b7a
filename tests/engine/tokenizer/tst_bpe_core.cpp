// Byte-level BPE core on vocabularies built in the test: the byte alphabet,
// merge order, pre-tokenizer splits, special-token splitting, streaming
// decode, and the errors and warnings a bad vocabulary gives.
#include "bpe_tokenizer.h"
#include "byte_level.h"
#include "pre_tokenizer.h"

#include <QtTest>

#include <set>

using namespace kestrel;
using namespace kestrel::tokenizer;

namespace {

// A vocabulary with the 256 byte tokens first (id = byte), then `extra`.
BpeVocabulary byteVocab(std::vector<std::string> extra = {}, std::vector<std::string> merges = {}) {
    BpeVocabulary v;
    for (int b = 0; b < 256; ++b) v.tokens.emplace_back(byteToUnicodeUtf8(uint8_t(b)));
    for (auto& e : extra) v.tokens.push_back(std::move(e));
    v.merges = std::move(merges);
    return v;
}

std::unique_ptr<BpeTokenizer> make(BpeVocabulary v) {
    auto t = BpeTokenizer::create(std::move(v));
    if (!t) qFatal("create failed: %s", t.status().toString().c_str());
    return std::move(t.value());
}

std::vector<std::string> splitWith(std::string_view pre, std::string_view text) {
    const PreTokenizerSpec* spec = findPreTokenizerSpec(pre);
    if (!spec) qFatal("no pre-tokenizer %s", std::string(pre).c_str());
    auto p = PreTokenizer::create(*spec);
    if (!p) qFatal("%s", p.status().toString().c_str());
    std::vector<std::string_view> pieces;
    (*p)->split(text, pieces);
    return {pieces.begin(), pieces.end()};
}

using Pieces = std::vector<std::string>;

}  // namespace

class TstBpeCore : public QObject {
    Q_OBJECT

private slots:
    void byteAlphabetIsABijection() {
        std::set<std::string> seen;
        for (int b = 0; b < 256; ++b) {
            const std::string u(byteToUnicodeUtf8(uint8_t(b)));
            QVERIFY(isValidUtf8(u));
            seen.insert(u);
            std::string raw;
            appendRawFromByteLevel(u, raw);
            QCOMPARE(raw, std::string(1, char(b)));
        }
        QCOMPARE(seen.size(), size_t(256));
        QCOMPARE(std::string(byteToUnicodeUtf8(' ')), std::string("\xC4\xA0"));   // Ġ
        QCOMPARE(std::string(byteToUnicodeUtf8('\n')), std::string("\xC4\x8A"));  // Ċ
        QCOMPARE(std::string(byteToUnicodeUtf8('A')), std::string("A"));
    }

    void mergesApplyByRankNotPosition() {
        // "b c" outranks "a b", so "abc" is a + bc even though ab comes first.
        auto t = make(byteVocab({"ab", "bc", "abc"}, {"b c", "a b", "ab c"}));
        QCOMPARE(t->encode("abc", false, false), (std::vector<TokenId>{'a', 257}));
        auto u = make(byteVocab({"ab", "bc", "abc"}, {"a b", "b c", "ab c"}));
        QCOMPARE(u->encode("abc", false, false), (std::vector<TokenId>{258}));
    }

    void equalRanksMergeLeftmostFirst() {
        auto t = make(byteVocab({"aa"}, {"a a"}));
        QCOMPARE(t->encode("aaa", false, false), (std::vector<TokenId>{256, 'a'}));
        QCOMPARE(t->encode("aaaa", false, false), (std::vector<TokenId>{256, 256}));
    }

    void longPieceIsMergedCompletely() {
        // Powers of two of 'a': 2^17 bytes collapse into 2 tokens of 2^16, in a
        // single pre-token (the linked list + heap keeps this O(n log n)).
        std::vector<std::string> extra, merges;
        std::string s = "a";
        for (int i = 0; i < 16; ++i) {
            merges.push_back(s + " " + s);
            s += s;
            extra.push_back(s);
        }
        auto t = make(byteVocab(extra, merges));
        const auto ids = t->encode(std::string(1 << 17, 'a'), false, false);
        QCOMPARE(ids, (std::vector<TokenId>{256 + 15, 256 + 15}));
        QCOMPARE(t->decode(ids), std::string(1 << 17, 'a'));
    }

    void unusableMergesAreSkippedWithAWarning() {
        auto t = make(byteVocab({"ab"}, {"a b", "x yz", "q r"}));  // "yz", "qr" are not tokens
        QCOMPARE(t->encode("ab", false, false), (std::vector<TokenId>{256}));
        QCOMPARE(t->warnings().size(), size_t(1));
        QVERIFY(t->warnings()[0].find("2 merges") != std::string::npos);
    }

    void malformedVocabulariesAreErrors() {
        auto v = byteVocab({}, {"nospace"});
        v.where = "m.gguf: ";
        auto r = BpeTokenizer::create(v);
        QVERIFY(!r);
        QCOMPARE(r.status().code(), ErrorCode::InvalidFile);
        QVERIFY(r.status().message().find("m.gguf: tokenizer.ggml.merges[0]") != std::string::npos);

        auto w = byteVocab();
        w.kinds.assign(3, TokenKind::Normal);
        QVERIFY(!BpeTokenizer::create(w));
        QVERIFY(!BpeTokenizer::create(BpeVocabulary{}));
    }

    void outOfRangeSpecialIdsAreDroppedWithAWarning() {
        auto v = byteVocab();
        v.special.bos = 100000;
        v.special.eos = 5;
        auto t = make(v);
        QCOMPARE(t->special().bos, -1);
        QCOMPARE(t->special().eos, 5);
        QCOMPARE(t->warnings().size(), size_t(1));
        QVERIFY(t->warnings()[0].find("bos_token_id") != std::string::npos);
    }

    void unknownPreTokenizerFallsBackToGpt2() {
        auto v = byteVocab();
        v.preTokenizer = "no-such-pre";
        auto t = make(v);
        QCOMPARE(t->preTokenizer().spec().name, std::string("gpt2"));
        QCOMPARE(t->warnings().size(), size_t(1));
        QVERIFY(t->warnings()[0].find("no-such-pre") != std::string::npos);
        QVERIFY(findPreTokenizerSpec("default") == &gpt2PreTokenizerSpec());
    }

    void everyTableRegexCompiles() {
        for (const std::string& name : knownPreTokenizerNames()) {
            const auto* spec = findPreTokenizerSpec(name);
            QVERIFY(spec);
            auto p = PreTokenizer::create(*spec);
            QVERIFY2(p.isOk(), p.status().toString().c_str());
        }
    }

    void gpt2Splits() {
        QCOMPARE(splitWith("gpt2", "Hello world"), (Pieces{"Hello", " world"}));
        QCOMPARE(splitWith("gpt2", "I'm here's"), (Pieces{"I", "'m", " here", "'s"}));
        QCOMPARE(splitWith("gpt2", "IT'S"), (Pieces{"IT", "'", "S"}));  // contractions are lower case only
        QCOMPARE(splitWith("gpt2", "a  b"), (Pieces{"a", " ", " b"}));
        QCOMPARE(splitWith("gpt2", "x\n\n y"), (Pieces{"x", "\n\n", " y"}));
        QCOMPARE(splitWith("gpt2", "year 2026!?"), (Pieces{"year", " 2026", "!?"}));
        QCOMPARE(splitWith("gpt2", "end   "), (Pieces{"end", "   "}));
        QCOMPARE(splitWith("gpt2", "caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87"), (Pieces{"caf\xC3\xA9", " \xE4\xB8\xAD\xE6\x96\x87"}));
    }

    void smollmIsolatesEveryDigitFirst() {
        QCOMPARE(splitWith("smollm", "abc 123"), (Pieces{"abc", " ", "1", "2", "3"}));
        QCOMPARE(splitWith("smollm", "3.14"), (Pieces{"3", ".", "1", "4"}));
        QCOMPARE(splitWith("starcoder", "x1y"), (Pieces{"x", "1", "y"}));
    }

    void llama3AndQwen2Splits() {
        QCOMPARE(splitWith("llama-bpe", "1234567"), (Pieces{"123", "456", "7"}));
        QCOMPARE(splitWith("llama-bpe", "HELLO'S"), (Pieces{"HELLO", "'S"}));
        QCOMPARE(splitWith("llama-bpe", "foo\n\nbar"), (Pieces{"foo", "\n\n", "bar"}));
        QCOMPARE(splitWith("llama-bpe", "(hi)"), (Pieces{"(hi", ")"}));
        QCOMPARE(splitWith("qwen2", "x 123"), (Pieces{"x", " ", "1", "2", "3"}));
        QCOMPARE(splitWith("gpt-4o", "HelloWorld's"), (Pieces{"Hello", "World's"}));
    }

    void invalidUtf8PassesThroughByteForByte() {
        const std::string text = "ab\xFF\xFE cd\xC3";
        const auto pieces = splitWith("gpt2", text);
        std::string joined;
        for (auto& p : pieces) joined += p;
        QCOMPARE(joined, text);
        auto t = make(byteVocab());
        const auto ids = t->encode(text, false, false);
        QCOMPARE(ids.size(), text.size());  // byte tokens only
        std::string bytes;
        for (TokenId id : ids) bytes += t->tokenBytes(id);
        QCOMPARE(bytes, text);
    }

    void specialTokensLongestFirstOnlyWhenParsed() {
        auto v = byteVocab({"<|a|>", "<|a|>x", "<u>"});
        v.kinds.assign(v.tokens.size(), TokenKind::Normal);
        v.kinds[256] = v.kinds[257] = TokenKind::Control;
        v.kinds[258] = TokenKind::UserDefined;
        auto t = make(v);
        QCOMPARE(t->encode("q<|a|>xz<|a|>", false, true), (std::vector<TokenId>{'q', 257, 'z', 256}));
        // Not parsed: plain text, byte by byte here; user-defined tokens still match.
        const auto plain = t->encode("<|a|><u>", false, false);
        QCOMPARE(plain, (std::vector<TokenId>{'<', '|', 'a', '|', '>', 258}));
        QCOMPARE(t->tokenBytes(256), std::string());
        QCOMPARE(t->tokenBytes(256, true), std::string("<|a|>"));
        QCOMPARE(t->tokenBytes(258), std::string("<u>"));
    }

    void addSpecialAndEndOfGeneration() {
        auto v = byteVocab({"<s>", "</s>", "<|im_end|>", "<|eot_id|>"});
        v.kinds.assign(v.tokens.size(), TokenKind::Normal);
        v.kinds[256] = v.kinds[257] = v.kinds[258] = TokenKind::Control;  // 259 stays Normal
        v.special.bos = 256;
        v.special.eos = 257;
        v.special.addBos = true;
        auto t = make(v);
        QCOMPARE(t->encode("a", true, false), (std::vector<TokenId>{256, 'a'}));
        QCOMPARE(t->encode("a", false, false), (std::vector<TokenId>{'a'}));
        QCOMPARE(t->special().endOfGeneration, (std::vector<TokenId>{257, 258}));
        QVERIFY(t->isEndOfGeneration(258));
        QVERIFY(!t->isEndOfGeneration(259));  // a normal token spelled like a marker is text
        QVERIFY(!t->isEndOfGeneration(256));
    }

    void outOfRangeIdsDecodeToNothing() {
        auto t = make(byteVocab());
        QCOMPARE(t->tokenBytes(-1), std::string());
        QCOMPARE(t->tokenBytes(1 << 20), std::string());
        QCOMPARE(t->tokenText(999), std::string_view());
        QCOMPARE(t->tokenKind(999), TokenKind::Unused);
    }

    void streamDecoderHoldsPartialCharacters() {
        auto t = make(byteVocab());
        StreamDecoder d(*t);
        QCOMPARE(d.push(0xC3), std::string());
        QCOMPARE(d.push(0xA9), std::string("\xC3\xA9"));
        QCOMPARE(d.push(0xF0), std::string());
        QCOMPARE(d.push(0x9F), std::string());
        QCOMPARE(d.push(0x98), std::string());
        QCOMPARE(d.push(0x80), std::string("\xF0\x9F\x98\x80"));
        QCOMPARE(d.push(0xFF), std::string("\xEF\xBF\xBD"));            // never valid
        QCOMPARE(d.push(0xE2), std::string());
        QCOMPARE(d.push('x'), std::string("\xEF\xBF\xBDx"));           // E2 cut short
        QCOMPARE(d.push(0xE2), std::string());
        QCOMPARE(d.flush(), std::string("\xEF\xBF\xBD"));                // dangling at the end
        QCOMPARE(d.flush(), std::string());
    }

    void decodeReplacesIllFormedBytes() {
        auto t = make(byteVocab());
        const std::vector<TokenId> ids{'a', 0xED, 0xA0, 0x80, 'b', 0xC3};  // a surrogate, then a cut character
        QCOMPARE(t->decode(ids), std::string("a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" "b\xEF\xBF\xBD"));
    }
};

QTEST_APPLESS_MAIN(TstBpeCore)
#include "tst_bpe_core.moc"
