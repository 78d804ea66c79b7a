// The Jinja interpreter feature by feature, against outputs recorded from Python jinja2
// (jinja_cases.inc, made by tests/reference/template_unit_cases.py), plus the JSON layer,
// strftime_now on a fixed clock and error positions. Bound: byte-exact equality.
#include "template/chat_template.h"
#include "template/json_value.h"

#include <QtTest>

#include <string>

using namespace kestrel;

namespace {

struct Case {
    const char* name;
    const char* templ;
    const char* variables;
    const char* expected;
    bool isError;
};

const Case kCases[] = {
#include "jinja_cases.inc"
};

Result<std::string> renderWith(const std::string& source, const std::string& variablesJson) {
    auto t = ChatTemplate::parse(source);
    if (!t) return t.status();
    auto vars = jinja::parseJson(variablesJson);
    if (!vars) return vars.status();
    TemplateContext c;
    for (const auto& [k, v] : vars->asDict().entries()) c.extra.emplace_back(k.asString(), v);
    c.now = 1700000000;  // 2023-11-14 22:13:20 UTC
    return t->render(c);
}

// Where two byte strings first differ, with some context, for a readable failure.
QString firstDifference(const std::string& got, const std::string& want) {
    size_t i = 0;
    while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
    const size_t from = i > 30 ? i - 30 : 0;
    return QStringLiteral("first difference at byte %1\n   got: %2\n  want: %3")
        .arg(i)
        .arg(QString::fromUtf8(got.substr(from, 80).c_str()).toHtmlEscaped())
        .arg(QString::fromUtf8(want.substr(from, 80).c_str()).toHtmlEscaped());
}

}  // namespace

class TstJinjaInterpreter : public QObject {
    Q_OBJECT
private slots:
    void matchesJinja2_data() {
        QTest::addColumn<int>("index");
        for (int i = 0; i < static_cast<int>(std::size(kCases)); ++i) QTest::newRow(kCases[i].name) << i;
    }

    void matchesJinja2() {
        QFETCH(int, index);
        const Case& c = kCases[index];
        auto out = renderWith(c.templ, c.variables);
        if (c.isError) {
            QVERIFY2(!out.isOk(), qPrintable(QStringLiteral("jinja2 failed (%1) but Kestrel rendered: %2")
                                                 .arg(c.expected, QString::fromStdString(out.isOk() ? *out : ""))));
            // The message carries a position and, for raise_exception, the template's words.
            QVERIFY2(out.status().message().find("template ") != std::string::npos, out.status().message().c_str());
            const std::string expected = c.expected;
            if (expected.rfind("TemplateError: ", 0) == 0)
                QVERIFY2(out.status().message().find(expected.substr(15)) != std::string::npos,
                         out.status().message().c_str());
            return;
        }
        QVERIFY2(out.isOk(), out.status().message().c_str());
        QVERIFY2(*out == c.expected, qPrintable(firstDifference(*out, c.expected)));
    }

    void errorsNameLineAndColumn() {
        auto out = renderWith("line one\n{% if x %}\n  {{ x.y.z }}\n{% endif %}", "{\"x\": {\"a\": 1}}");
        QVERIFY(!out.isOk());
        QVERIFY2(out.status().message().find("template 3:") != std::string::npos, out.status().message().c_str());
        auto syntax = ChatTemplate::parse("ok\n{{ 1 + }}");
        QVERIFY(!syntax.isOk());
        QVERIFY2(syntax.status().message().find("2:8") != std::string::npos, syntax.status().message().c_str());
        QCOMPARE(syntax.status().code(), ErrorCode::InvalidFile);
    }

    void strftimeNowUsesTheGivenClock() {
        qputenv("TZ", "UTC");
        tzset();
        auto out = renderWith("{{ strftime_now(\"%d %b %Y\") }}|{{ strftime_now(\"%Y-%m-%d %H:%M\") }}", "{}");
        QVERIFY2(out.isOk(), out.status().message().c_str());
        QCOMPARE(QString::fromStdString(*out), QStringLiteral("14 Nov 2023|2023-11-14 22:13"));
    }

    void jsonRoundTrip() {
        const std::string text = "{\"a\": [1, -2.5e3, true, false, null], \"é\": \"\\u00e9\\ud83d\\ude42\\n\\\"\", \"e\": {}, \"l\": []}";
        auto v = jinja::parseJson(text);
        QVERIFY2(v.isOk(), v.status().message().c_str());
        auto back = jinja::dumpJson(*v);
        QVERIFY(back.isOk());
        QCOMPARE(QString::fromStdString(*back),
                 QString::fromUtf8("{\"a\": [1, -2500.0, true, false, null], \"é\": \"é🙂\\n\\\"\", \"e\": {}, \"l\": []}"));
        jinja::JsonDumpOptions ascii;
        ascii.ensureAscii = true;
        QCOMPARE(QString::fromStdString(*jinja::dumpJson(jinja::Value("é🙂"), ascii)),
                 QStringLiteral("\"\\u00e9\\ud83d\\ude42\""));
    }

    void jsonRejectsMalformedInput() {
        for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "\"\\x\"", "01x", "[1] 2", "{\"a\": tru}", "\"\n\""}) {
            auto v = jinja::parseJson(bad);
            QVERIFY2(!v.isOk(), bad);
            QVERIFY(v.status().message().find("JSON ") != std::string::npos);
        }
        std::string deep(1000, '[');
        QVERIFY(!jinja::parseJson(deep).isOk());
    }

    void contextFromJson() {
        auto c = TemplateContext::fromJson(
            "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"add_generation_prompt\": true,\n                \"bos_token\": \"<s>\", \"enable_thinking\": false}");
        QVERIFY2(c.isOk(), c.status().message().c_str());
        QVERIFY(c->addGenerationPrompt);
        QCOMPARE(QString::fromStdString(*c->bosToken), QStringLiteral("<s>"));
        QCOMPARE(c->extra.size(), size_t(1));
        QVERIFY(c->tools.isNone());
        QVERIFY(!TemplateContext::fromJson("{\"tools\": []}").isOk());
        QVERIFY(!TemplateContext::fromJson("{\"messages\": {}}").isOk());
    }

    void chatMlFallbackRenders() {
        auto t = ChatTemplate::parse(chatMlTemplate());
        QVERIFY2(t.isOk(), t.status().message().c_str());
        auto c = TemplateContext::fromJson("{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"add_generation_prompt\": true}");
        auto out = t->render(*c);
        QVERIFY(out.isOk());
        QCOMPARE(QString::fromStdString(*out), QStringLiteral("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"));
    }

    void parsedTemplateRendersRepeatedly() {
        auto t = ChatTemplate::parse("{% set ns = namespace(n=0) %}{% set ns.n = ns.n + 1 %}{{ ns.n }}");
        QVERIFY(t.isOk());
        TemplateContext c;
        QCOMPARE(QString::fromStdString(*t->render(c)), QStringLiteral("1"));
        QCOMPARE(QString::fromStdString(*t->render(c)), QStringLiteral("1"));  // no state leaks between renders
    }
};

QTEST_APPLESS_MAIN(TstJinjaInterpreter)
#include "tst_jinja_interpreter.moc"
