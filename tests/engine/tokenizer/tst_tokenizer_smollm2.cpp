// SmolLM2's tokenizer read from its GGUF file, compared id for id with Hugging
// Face `tokenizers` (tests/reference/tokenizer_reference.py, run by the
// tokenizer_reference_smollm2 fixture) on tests/data/tokenizer_corpus.txt,
// with control-token text parsed and not parsed, and under other models'
// pre-tokenizers (same vocabulary, pre replaced). Bound: exact equality.
#include "bpe_tokenizer.h"
#include "gguf_file.h"
#include "tokenizer.h"
#include "byte_level.h"
#include "test_env.h"

#include <QElapsedTimer>
#include <QFile>
#include <QtTest>

#include <map>
#include <thread>

using namespace kestrel;

namespace {

// The corpus escapes (\n \r \t \\), as the reference script reads them.
std::string unescape(const std::string& line) {
    std::string out;
    for (size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '\\' && i + 1 < line.size()) {
            const char c = line[i + 1];
            const char* rep = c == 'n' ? "\n" : c == 'r' ? "\r" : c == 't' ? "\t" : c == '\\' ? "\\" : nullptr;
            if (rep) {
                out += rep;
                ++i;
                continue;
            }
        }
        out += line[i];
    }
    return out;
}

std::string readAll(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll().toStdString();
}

}  // namespace

class TstTokenizerSmollm2 : public QObject {
    Q_OBJECT

    std::unique_ptr<gguf::GgufFile> file_;
    std::unique_ptr<Tokenizer> tok_;
    std::map<std::string, std::string> cases_;  // "0".."n", "all" -> text
    std::map<std::string, std::unique_ptr<Tokenizer>> others_;  // by tokenizer.ggml.pre

    // SmolLM2's vocabulary with another model's pre-tokenizer.
    const Tokenizer* withPre(const std::string& pre) {
        auto& slot = others_[pre];
        if (!slot) {
            auto vocab = tokenizer::bpeVocabularyFromGguf(*file_);
            if (!vocab) return nullptr;
            vocab->preTokenizer = pre;
            auto t = tokenizer::BpeTokenizer::create(std::move(vocab.value()));
            if (!t || !t.value()->warnings().empty()) return nullptr;  // an unknown pre would warn
            slot = std::move(t.value());
        }
        return slot.get();
    }

private slots:
    void initTestCase() {
        KESTREL_REQUIRE_MODEL(test::smollm2Path());
        auto file = gguf::GgufFile::open(test::smollm2Path().toStdString());
        QVERIFY2(file.isOk(), file.status().toString().c_str());
        file_ = std::move(file.value());
        auto tok = Tokenizer::fromGguf(*file_);
        QVERIFY2(tok.isOk(), tok.status().toString().c_str());
        tok_ = std::move(tok.value());

        const std::string corpus = readAll(test::sourceDir() + "/tests/data/tokenizer_corpus.txt");
        QVERIFY(!corpus.empty());
        size_t start = 0, index = 0;
        for (size_t nl; (nl = corpus.find('\n', start)) != std::string::npos; start = nl + 1)
            cases_[std::to_string(index++)] = unescape(corpus.substr(start, nl - start));
        cases_["all"] = corpus;
        QVERIFY(cases_.size() > 50);
    }

    void metadata() {
        QCOMPARE(tok_->vocabSize(), 49152);
        QVERIFY(tok_->warnings().empty());
        const SpecialTokens& s = tok_->special();
        QCOMPARE(s.bos, 1);
        QCOMPARE(s.eos, 2);
        QVERIFY(!s.addBos);
        QCOMPARE(tok_->tokenKind(1), TokenKind::Control);
        QCOMPARE(tok_->findToken("<|im_end|>").value_or(-1), 2);
        QVERIFY(tok_->isEndOfGeneration(2));  // <|im_end|>
        QVERIFY(tok_->isEndOfGeneration(0));  // <|endoftext|>
        QVERIFY(!tok_->isEndOfGeneration(1));
        QCOMPARE(tok_->tokenText(216), std::string_view("\xC4\xA0"));  // "Ġ"
    }

    void matchesHuggingFace() {
        const QString refPath = test::testDataDir() + "/tokenizer_smollm2.txt";
        if (!QFileInfo::exists(refPath))
            QSKIP(qPrintable("no reference " + refPath + "; run ctest (fixture tokenizer_reference_smollm2) "
                             "with pip install -r tests/reference/requirements.txt"));
        const std::string ref = readAll(refPath);
        size_t compared = 0, start = 0;
        std::map<std::string, size_t> perMode;
        for (size_t nl; (nl = ref.find('\n', start)) != std::string::npos; start = nl + 1) {
            const std::string line = ref.substr(start, nl - start);
            if (line.empty() || line[0] == '#') continue;
            const size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
            QVERIFY(t1 != std::string::npos && t2 != std::string::npos);
            const std::string name = line.substr(0, t1), mode = line.substr(t1 + 1, t2 - t1 - 1);
            QVERIFY2(cases_.count(name), ("reference case " + name + " is not in the corpus; rerun the fixture").c_str());
            std::vector<TokenId> expected;
            for (const QString& id : QString::fromStdString(line.substr(t2 + 1)).split(' ', Qt::SkipEmptyParts))
                expected.push_back(id.toInt());
            const Tokenizer* tok = tok_.get();
            if (mode.rfind("pre=", 0) == 0) {
                tok = withPre(mode.substr(4));
                QVERIFY2(tok, ("cannot build a tokenizer with " + mode).c_str());
            } else {
                QVERIFY(mode == "special" || mode == "plain");
            }
            const auto got = tok->encode(cases_[name], false, mode != "plain");
            if (got != expected) {
                QString g, e;
                for (auto id : got) g += QString::number(id) + ' ';
                for (auto id : expected) e += QString::number(id) + ' ';
                QFAIL(qPrintable(QString("case %1 (%2) \"%3\"\n  kestrel: %4\n  HF:      %5")
                                     .arg(QString::fromStdString(name), QString::fromStdString(mode),
                                          QString::fromStdString(cases_[name]).left(80), g, e)));
            }
            ++compared;
            ++perMode[mode];
        }
        QVERIFY(perMode.size() >= 2);
        for (const auto& [mode, n] : perMode) QCOMPARE(n, cases_.size());
        qInfo("compared %zu encodings in %zu modes", compared, perMode.size());
    }

    void decodeInvertsEncode() {
        for (const auto& [name, text] : cases_) {
            for (bool parseSpecial : {false, true}) {
                const auto ids = tok_->encode(text, false, parseSpecial);
                QCOMPARE(tok_->decode(ids, /*renderSpecial=*/true), text);
            }
        }
    }

    void streamDecoderNeverSplitsACharacter() {
        int held = 0;  // pushes that returned nothing: a character was split across tokens
        for (const auto& [name, text] : cases_) {
            const auto ids = tok_->encode(text, false, true);
            StreamDecoder d(*tok_, /*renderSpecial=*/true);
            std::string joined;
            for (TokenId id : ids) {
                const std::string piece = d.push(id);
                QVERIFY2(tokenizer::isValidUtf8(piece), ("case " + name).c_str());
                if (piece.empty()) ++held;
                joined += piece;
            }
            joined += d.flush();
            QCOMPARE(joined, text);
        }
        QVERIFY(held > 0);  // the corpus has characters split across tokens, so holding was exercised
    }

    void specialTextIsPlainWhenNotParsed() {
        const auto parsed = tok_->encode("<|im_start|>user", false, true);
        QCOMPARE(parsed.front(), 1);
        const auto plain = tok_->encode("<|im_start|>user", false, false);
        QVERIFY(plain.size() > 2);
        for (TokenId id : plain) QCOMPARE(tok_->tokenKind(id), TokenKind::Normal);
    }

    // The header promises concurrent encode/decode on one Tokenizer.
    void encodesConcurrently() {
        const std::string& text = cases_["all"];
        const auto expected = tok_->encode(text, false, true);
        std::vector<std::vector<TokenId>> results(4);
        std::vector<std::thread> threads;
        for (auto& r : results)
            threads.emplace_back([&] {
                for (int i = 0; i < 20; ++i) r = tok_->encode(text, false, true);
            });
        for (auto& t : threads) t.join();
        for (const auto& r : results) QCOMPARE(r, expected);
    }

    // Not a timed assertion: prints the throughput, asserts only the result.
    void largeInputsEncode() {
        std::string big;
        while (big.size() < 100 * 1024) big += cases_["all"];
        QElapsedTimer timer;
        timer.start();
        const auto ids = tok_->encode(big, false, true);
        const qint64 ms = timer.elapsed();
        qInfo("encode %zu bytes -> %zu tokens in %lld ms", big.size(), ids.size(), ms);
        QCOMPARE(tok_->decode(ids, true), big);

        const std::string letters(100 * 1024, 'x');  // one 100 KB pre-token
        timer.restart();
        const auto one = tok_->encode(letters, false, false);
        qInfo("encode 100 KB single word -> %zu tokens in %lld ms", one.size(), timer.elapsed());
        QCOMPARE(tok_->decode(one), letters);
    }
};

QTEST_APPLESS_MAIN(TstTokenizerSmollm2)
#include "tst_tokenizer_smollm2.moc"
