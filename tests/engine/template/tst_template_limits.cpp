// A chat template is untrusted input: loops, recursion, output bombs and deep nesting
// must end quickly with an error that says what happened, never hang or overflow the stack.
#include "template/chat_template.h"

#include <QtTest>

#include <string>

using namespace kestrel;

namespace {

Status renderStatus(const std::string& source) {
    auto t = ChatTemplate::parse(source);
    if (!t) return t.status();
    auto out = t->render(TemplateContext{});
    return out.status();
}

std::string repeat(const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
}

}  // namespace

class TstTemplateLimits : public QObject {
    Q_OBJECT
private slots:
    void limitErrorsAreClear_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("expected");
        QTest::newRow("range of a billion") << "{% for i in range(10**9) %}x{% endfor %}" << "Range too big";
        QTest::newRow("nested loops") << "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
                                      << "steps";
        QTest::newRow("self recursion") << "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}" << "recursed";
        QTest::newRow("mutual recursion")
            << "{% macro a(n) %}{{ b(n) }}{% endmacro %}{% macro b(n) %}{{ a(n) }}{% endmacro %}{{ a(1) }}" << "recursed";
        QTest::newRow("exponential recursion")
            << "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}" << "steps";
        QTest::newRow("output loop") << "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}" << "bytes";
        QTest::newRow("string multiply") << "{{ 'x' * 10**12 }}" << "bytes";
        QTest::newRow("list multiply") << "{{ ([1] * 10**12) | length }}" << "bytes";
        QTest::newRow("doubling") << "{% set ns = namespace(s='xx') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"
                                  << "bytes";
        QTest::newRow("doubling +") << "{% set ns = namespace(s='xx') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}"
                                    << "bytes";
        QTest::newRow("replace bomb") << "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s.replace('x', 'xx') %}{% endfor %}"
                                      << "bytes";
        QTest::newRow("deep list values")
            << "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}"
            << "nested deeper";
        QTest::newRow("namespace in namespace")
            << "{% set ns = namespace(x=1) %}{% set ns.me = [ns] %}{{ ns }}" << "namespace cannot";
        QTest::newRow("integer overflow") << "{{ 2 ** 64 }}" << "overflow";
        QTest::newRow("parentheses") << QString::fromStdString("{{ " + repeat("(", 100000) + "1" + repeat(")", 100000) + " }}")
                                     << "nested deeper";
        QTest::newRow("list literal") << QString::fromStdString("{{ " + repeat("[", 50000) + repeat("]", 50000) + " }}")
                                      << "nested deeper";
        QTest::newRow("unary minus") << QString::fromStdString("{{ " + repeat("-", 100000) + "1 }}") << "nested";
        QTest::newRow("not chain") << QString::fromStdString("{{ " + repeat("not ", 100000) + "1 }}") << "nested";
        QTest::newRow("if blocks") << QString::fromStdString(repeat("{% if true %}", 20000) + repeat("{% endif %}", 20000))
                                   << "nested deeper";
        QTest::newRow("for blocks") << QString::fromStdString(repeat("{% for x in [1] %}", 20000) + repeat("{% endfor %}", 20000))
                                    << "nested deeper";
        QTest::newRow("filter chain") << QString::fromStdString("{{ 'x'" + repeat(" | upper", 200000) + " }}") << "nested";
        QTest::newRow("plus chain") << QString::fromStdString("{{ 1" + repeat(" + 1", 200000) + " }}") << "nested";
        QTest::newRow("attribute chain") << QString::fromStdString("{{ x" + repeat(".a", 200000) + " }}") << "nested";
        QTest::newRow("ternary chain") << QString::fromStdString("{{ 1" + repeat(" if 1 else 1", 5000) + " }}") << "nested";
    }

    void limitErrorsAreClear() {
        QFETCH(QString, source);
        QFETCH(QString, expected);
        const Status s = renderStatus(source.toStdString());
        QVERIFY2(!s.isOk(), "a hostile template rendered without error");
        QVERIFY2(s.message().find(expected.toStdString()) != std::string::npos, s.message().c_str());
    }

    void limitsAreConfigurable() {
        TemplateLimits small;
        small.render.maxSteps = 1000;
        auto t = ChatTemplate::parse("{% for i in range(2000) %}{% endfor %}", small);
        QVERIFY(t.isOk());
        QVERIFY(!t->render(TemplateContext{}).isOk());
        auto roomy = ChatTemplate::parse("{% for i in range(2000) %}{% endfor %}ok");
        QCOMPARE(QString::fromStdString(*roomy->render(TemplateContext{})), QStringLiteral("ok"));
    }

    // A long but honest conversation stays far inside the limits.
    void longConversationFits() {
        std::string json = "{\"messages\": [";
        for (int i = 0; i < 2000; ++i) {
            if (i) json += ",";
            json += std::string("{\"role\": \"") + (i % 2 ? "assistant" : "user") + "\", \"content\": \"message " +
                    std::to_string(i) + " with some words in it\"}";
        }
        json += "]}";
        auto ctx = TemplateContext::fromJson(json);
        QVERIFY(ctx.isOk());
        auto t = ChatTemplate::parse(
            "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] | trim + "
            "'<|im_end|>\\n' }}{% endfor %}");
        QVERIFY(t.isOk());
        auto out = t->render(*ctx);
        QVERIFY2(out.isOk(), out.status().message().c_str());
        QVERIFY(out->size() > 2000 * 30);
    }
};

QTEST_APPLESS_MAIN(TstTemplateLimits)
#include "tst_template_limits.moc"
