// The real `kestrel` binary, offscreen, with a fresh HOME: it loads SmolLM2,
// a message gets a streamed reply, a second one is stopped, the conversation
// is exported; a restart finds it again by search. The app runs the scripted
// scenario itself (KESTREL_TEST_SCENARIO, app/desktop/test_driver.h) and
// reports what it saw as JSON; screenshots go to $KESTREL_TEST_DATA/screenshots.
#include "test_env.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

class TestEndToEnd : public QObject {
    Q_OBJECT
    QTemporaryDir home_;

    QJsonObject runApp(const QString& scenario, const QString& modelsDir = kestrel::test::modelsDir()) {
        const QString result = home_.filePath(scenario + ".json");
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("HOME", home_.path());
        env.insert("XDG_DATA_HOME", home_.filePath("data"));
        env.insert("XDG_CONFIG_HOME", home_.filePath("config"));
        env.insert("XDG_RUNTIME_DIR", home_.filePath("runtime"));
        env.insert("KESTREL_MODELS_DIR", modelsDir);
        env.insert("QT_QPA_PLATFORM", "offscreen");
        env.insert("QT_QUICK_BACKEND", "software");
        env.insert("LANG", "en_US.UTF-8");
        env.insert("KESTREL_TEST_SCENARIO", scenario);
        env.insert("KESTREL_TEST_RESULT", result);
        env.insert("KESTREL_TEST_EXPORTS", home_.filePath("exports"));
        const QString data = kestrel::test::testDataDir();
        env.insert("KESTREL_TEST_SCREENSHOTS", (data.isEmpty() ? home_.path() : data) + "/screenshots");
        QDir().mkpath(home_.filePath("runtime"));
        QFile::setPermissions(home_.filePath("runtime"), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);

        QProcess app;
        app.setProcessEnvironment(env);
        app.setProcessChannelMode(QProcess::MergedChannels);
        app.start(KESTREL_APP_BINARY, {});
        if (!app.waitForStarted(10000)) return {{"failed", "the app did not start"}};
        if (!app.waitForFinished(240000)) {
            app.kill();
            app.waitForFinished();
            return {{"failed", "the app did not finish"}};
        }
        const QByteArray log = app.readAll();
        QFile file(result);
        if (!file.open(QIODevice::ReadOnly)) return {{"failed", "no result file; log: " + QString::fromUtf8(log)}};
        QJsonObject out = QJsonDocument::fromJson(file.readAll()).object();
        out.insert("exitCode", app.exitCode());
        out.insert("log", QString::fromUtf8(log.right(2000)));
        return out;
    }

private slots:
    void initTestCase() {
        KESTREL_REQUIRE_MODEL(kestrel::test::smollm2Path());
        QVERIFY(home_.isValid());
    }
    // Each scenario's settings and database live under home_, shared in order:
    // first-run (no model), chat, then reopen.

    void firstRunWithoutModelOpensSettings() {
        QTemporaryDir empty;
        const QJsonObject r = runApp("first-run", empty.path());
        QVERIFY2(r.value("ok").toBool(), qPrintable(r.value("failed").toString() + r.value("log").toString()));
        QVERIFY(r.value("settingsOpened").toBool());
        QVERIFY2(r.value("reason").toString().contains("SmolLM2-135M-Instruct.Q4_1.gguf"), qPrintable(r.value("reason").toString()));
        QCOMPARE(r.value("modelState").toString(), QString("none"));
        // Nothing was written as the user's model choice: the next start still looks for the default.
    }

    void chatStopExport() {
        const QJsonObject r = runApp("chat");
        qInfo("%s", QJsonDocument(r).toJson().constData());
        QVERIFY2(r.value("ok").toBool(), qPrintable(r.value("failed").toString()));
        QCOMPARE(r.value("exitCode").toInt(), 0);
        QCOMPARE(r.value("modelState").toString(), QString("ready"));
        QVERIFY(!r.value("firstReply").toString().isEmpty());
        QVERIFY(r.value("firstReplyUpdates").toInt() > 1);
        QCOMPARE(r.value("stoppedStopReason").toString(), QString("cancelled"));
        QCOMPARE(r.value("stoppedState").toString(), QString("interrupted"));
        QVERIFY(r.value("exportMd").toBool());
        QVERIFY(r.value("exportJson").toBool());
        QFile md(home_.filePath("exports/chat.md"));
        QVERIFY(md.open(QIODevice::ReadOnly));
        QVERIFY(md.readAll().contains("kestrel"));
        for (const char* shot : {"screenshot_main-window", "screenshot_settings-dialog", "screenshot_main-window-dark"})
            QVERIFY2(QFile::exists(r.value(shot).toString()), shot);
    }

    void restartFindsTheConversation() {
        const QJsonObject r = runApp("reopen");
        qInfo("%s", QJsonDocument(r).toJson().constData());
        QVERIFY2(r.value("ok").toBool(), qPrintable(r.value("failed").toString()));
        QVERIFY(r.value("searchHits").toInt() >= 1);
        QCOMPARE(r.value("messages").toInt(), 4);
    }
};

QTEST_GUILESS_MAIN(TestEndToEnd)
#include "tst_end_to_end.moc"
