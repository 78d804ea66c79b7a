// Tokenizer::fromGguf on small files written by GgufWriter: which keys it
// reads, and the errors a user sees when they are missing or mistyped.
#include "byte_level.h"
#include "gguf_file.h"
#include "gguf_writer.h"
#include "tokenizer.h"
#include "test_env.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace kestrel;
using gguf::GgufWriter;

namespace {

// 256 byte tokens, "ab", then <|im_start|> <|im_end|> as control tokens.
GgufWriter baseWriter() {
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.emplace_back(tokenizer::byteToUnicodeUtf8(uint8_t(b)));
    tokens.push_back("ab");
    tokens.push_back("<|im_start|>");
    tokens.push_back("<|im_end|>");
    std::vector<int32_t> types(tokens.size(), 1);
    types[257] = types[258] = 3;
    GgufWriter w;
    w.setString("general.architecture", "llama");
    w.setString("tokenizer.ggml.model", "gpt2");
    w.setString("tokenizer.ggml.pre", "smollm");
    w.setStringArray("tokenizer.ggml.tokens", tokens);
    w.setInt32Array("tokenizer.ggml.token_type", types);
    w.setStringArray("tokenizer.ggml.merges", {"a b"});
    w.setUInt32("tokenizer.ggml.bos_token_id", 257);
    w.setUInt32("tokenizer.ggml.eos_token_id", 258);
    w.setBool("tokenizer.ggml.add_bos_token", true);
    return w;
}

}  // namespace

class TstTokenizerGguf : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    Result<std::unique_ptr<Tokenizer>> load(const GgufWriter& w, const char* name) {
        const std::string path = (dir_.path() + "/" + name).toStdString();
        Status s = w.write(path);
        if (!s) return s;
        auto file = gguf::GgufFile::open(path);
        if (!file) return file.status();
        return Tokenizer::fromGguf(**file);
    }

private slots:
    void readsTheTokenizerKeys() {
        auto t = load(baseWriter(), "ok.gguf");
        QVERIFY2(t.isOk(), t.status().toString().c_str());
        const Tokenizer& tok = **t;
        QCOMPARE(tok.vocabSize(), 259);
        QCOMPARE(tok.special().bos, 257);
        QVERIFY(tok.special().addBos);
        QCOMPARE(tok.encode("ab<|im_end|>", true, true), (std::vector<TokenId>{257, 256, 258}));
        QCOMPARE(tok.encode("ab", false, false), (std::vector<TokenId>{256}));
        QVERIFY(tok.isEndOfGeneration(258));
        QVERIFY(tok.warnings().empty());
    }

    void unknownPreWarnsAndWorks() {
        auto w = baseWriter();
        w.setString("tokenizer.ggml.pre", "brand-new-model");
        auto t = load(w, "pre.gguf");
        QVERIFY(t.isOk());
        QCOMPARE((*t)->warnings().size(), size_t(1));
        QVERIFY((*t)->warnings()[0].find("brand-new-model") != std::string::npos);
        QVERIFY((*t)->warnings()[0].find("pre.gguf") != std::string::npos);
    }

    void missingMergesIsAnError() {
        auto w = baseWriter();
        w.set("tokenizer.ggml.merges", GgufWriter::makeArray(gguf::ValueType::String, {}));
        auto empty = load(w, "empty-merges.gguf");
        QVERIFY(empty.isOk());  // an empty list is a (useless) vocabulary, not a broken file

        GgufWriter bare;
        bare.setString("tokenizer.ggml.model", "gpt2");
        bare.setStringArray("tokenizer.ggml.tokens", {"a"});
        auto t = load(bare, "no-merges.gguf");
        QVERIFY(!t);
        QCOMPARE(t.status().code(), ErrorCode::InvalidFile);
        QVERIFY(t.status().message().find("no-merges.gguf") != std::string::npos);
        QVERIFY(t.status().message().find("tokenizer.ggml.merges") != std::string::npos);
    }

    void mistypedKeysAreErrors() {
        auto w = baseWriter();
        w.setString("tokenizer.ggml.eos_token_id", "two");
        auto t = load(w, "bad-eos.gguf");
        QVERIFY(!t);
        QVERIFY(t.status().message().find("eos_token_id") != std::string::npos);

        auto v = baseWriter();
        v.setInt32Array("tokenizer.ggml.token_type", {1, 1});
        auto u = load(v, "short-types.gguf");
        QVERIFY(!u);
        QVERIFY(u.status().message().find("token_type") != std::string::npos);
    }

    void otherModelsAreUnsupported() {
        auto w = baseWriter();
        w.setString("tokenizer.ggml.model", "bert");
        auto t = load(w, "bert.gguf");
        QVERIFY(!t);
        QCOMPARE(t.status().code(), ErrorCode::Unsupported);
        GgufWriter none;
        none.setString("general.architecture", "llama");
        auto n = load(none, "none.gguf");
        QVERIFY(!n);
        QCOMPARE(n.status().code(), ErrorCode::NotFound);
    }

    // "llama" vocabularies go to the SentencePiece tokenizer (tst_spm_* test it in depth).
    void gemmaSentencePieceLoads() {
        KESTREL_REQUIRE_MODEL(test::gemma3Path());
        auto file = gguf::GgufFile::open(test::gemma3Path().toStdString());
        QVERIFY2(file.isOk(), file.status().toString().c_str());
        auto t = Tokenizer::fromGguf(**file);
        QVERIFY2(t.isOk(), t.status().toString().c_str());
        QCOMPARE((*t)->vocabSize(), 262144);
    }
};

QTEST_APPLESS_MAIN(TstTokenizerGguf)
#include "tst_tokenizer_gguf.moc"
