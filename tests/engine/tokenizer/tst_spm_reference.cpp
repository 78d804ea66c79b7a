// SentencePiece vocabularies read from GGUF files, compared id for id with
// independent references (tests/reference/tokenizer_spm_reference.py, run by
// the tokenizer_spm_*_ref fixtures) on tests/data/tokenizer_corpus.txt plus
// chat-shaped cases, with control-token text parsed and not parsed:
//  - tiny:   a Llama-2-style vocabulary trained by the sentencepiece trainer,
//            reference = python sentencepiece on the trained model file;
//  - gemma3: Gemma 3 270M, reference = HF transformers' GGUF tokenizer.
// Bound: exact equality. Also: decode gives the text back (plus the dummy
// prefix space), and stream decoding gives the same text in valid UTF-8 pieces.
#include "gguf_file.h"
#include "test_env.h"
#include "tokenizer.h"

#include <QFile>
#include <QtTest>

#include <map>

using namespace kestrel;

namespace {

struct Case {
    std::string text;
    std::map<std::string, std::vector<TokenId>> ids;  // by mode
};

std::string fromHex(const QByteArray& hex) { return QByteArray::fromHex(hex).toStdString(); }

// The reference file: "<case>\ttext\t<hex>" and "<case>\t<mode>\t<ids>".
std::map<std::string, Case> readReference(const QString& path) {
    std::map<std::string, Case> cases;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return cases;
    while (!f.atEnd()) {
        QByteArray line = f.readLine();
        if (line.endsWith('\n')) line.chop(1);
        if (line.isEmpty() || line.startsWith('#')) continue;
        const QList<QByteArray> parts = line.split('\t');
        if (parts.size() != 3) continue;
        Case& c = cases[parts[0].toStdString()];
        if (parts[1] == "text") {
            c.text = fromHex(parts[2]);
            continue;
        }
        std::vector<TokenId>& ids = c.ids[parts[1].toStdString()];
        for (const QByteArray& id : parts[2].split(' '))
            if (!id.isEmpty()) ids.push_back(id.toInt());
    }
    return cases;
}

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

std::string show(const std::vector<TokenId>& ids) {
    std::string s;
    for (TokenId id : ids) s += std::to_string(id) + " ";
    return s;
}

}  // namespace

class TstSpmReference : public QObject {
    Q_OBJECT

    // Compares every case and mode; returns the number of mismatches (each printed).
    void compareAll(const Tokenizer& tok, const QString& refPath, bool dummyPrefix) {
        const auto cases = readReference(refPath);
        if (cases.empty())
            QSKIP(qPrintable(QStringLiteral("reference %1 missing; run ctest -L reference "
                                            "(pip install -r tests/reference/requirements.txt)").arg(refPath)));
        int compared = 0, mismatches = 0;
        for (const auto& [name, c] : cases) {
            for (const auto& [mode, expected] : c.ids) {
                const bool parse = mode == "special";
                const std::vector<TokenId> got = tok.encode(c.text, false, parse);
                ++compared;
                if (got != expected) {
                    if (++mismatches <= 10)
                        qWarning("case %s (%s):\n  kestrel   %s\n  reference %s", name.c_str(), mode.c_str(),
                                 show(got).c_str(), show(expected).c_str());
                    continue;
                }
                // Round trip: the text again, with the dummy prefix where one was added.
                const bool prefixed = dummyPrefix && !got.empty() &&
                                      tok.tokenKind(got.front()) != TokenKind::Control;
                const std::string want = (prefixed ? " " : "") + c.text;
                const std::string back = tok.decode(got, /*renderSpecial=*/true);
                QVERIFY2(back == want, qPrintable(QStringLiteral("decode of case %1 (%2) differs from its text")
                                                      .arg(name.c_str(), mode.c_str())));
                StreamDecoder stream(tok, /*renderSpecial=*/true);
                std::string streamed;
                for (TokenId id : got) {
                    const std::string piece = stream.push(id);
                    QVERIFY2(validUtf8(piece), qPrintable(QStringLiteral("case %1: a streamed piece is not "
                                                                         "valid UTF-8").arg(name.c_str())));
                    streamed += piece;
                }
                streamed += stream.flush();
                QCOMPARE(streamed, want);
            }
        }
        qInfo("%d encodings compared, %d mismatches", compared, mismatches);
        QCOMPARE(mismatches, 0);
    }

    static std::unique_ptr<Tokenizer> load(const QString& path, std::unique_ptr<gguf::GgufFile>& file) {
        auto f = gguf::GgufFile::open(path.toStdString());
        if (!f) {
            qWarning("%s", f.status().toString().c_str());
            return nullptr;
        }
        file = std::move(f.value());
        auto t = Tokenizer::fromGguf(*file);
        if (!t) qWarning("%s", t.status().toString().c_str());
        return t ? std::move(t.value()) : nullptr;
    }

private slots:
    void tinyLlamaStyleVocabulary() {
        const QString gguf = test::testDataDir() + "/tokenizer_spm_tiny.gguf";
        if (!QFileInfo::exists(gguf))
            QSKIP(qPrintable(QStringLiteral("%1 missing; run ctest -L reference").arg(gguf)));
        std::unique_ptr<gguf::GgufFile> file;
        auto tok = load(gguf, file);
        QVERIFY(tok);
        QVERIFY(tok->warnings().empty());
        QCOMPARE(tok->special().bos, 1);
        QCOMPARE(tok->encode("x", true, false).front(), 1);  // add_bos_token
        compareAll(*tok, test::testDataDir() + "/tokenizer_spm_tiny.txt", /*dummyPrefix=*/true);
    }

    void gemma3() {
        KESTREL_REQUIRE_MODEL(test::gemma3Path());
        std::unique_ptr<gguf::GgufFile> file;
        auto tok = load(test::gemma3Path(), file);
        QVERIFY(tok);
        const SpecialTokens& s = tok->special();
        QCOMPARE(s.bos, 2);
        QCOMPARE(s.eos, 1);
        QVERIFY(s.addBos);
        QCOMPARE(tok->findToken("<end_of_turn>").value_or(-1), 106);
        QVERIFY(tok->isEndOfGeneration(1));
        QVERIFY(tok->isEndOfGeneration(106));
        QCOMPARE(tok->encode("Hello", true, true).front(), 2);
        compareAll(*tok, test::testDataDir() + "/tokenizer_spm_gemma3.txt", /*dummyPrefix=*/false);
    }
};

QTEST_APPLESS_MAIN(TstSpmReference)
#include "tst_spm_reference.moc"
