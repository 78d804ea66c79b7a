// SettingsModel: validation messages per field, per-model persistence, and
// the values a reply is generated with. QSettings writes under a temporary
// XDG_CONFIG_HOME.
#include "engine_types.h"
#include "settings_model.h"

#include <QCoreApplication>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace kestrel::desktop;

class TestSettingsModel : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString modelA_, modelB_;

    static void touch(const QString& path) {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("GGUF");
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        qputenv("XDG_CONFIG_HOME", dir_.filePath("config").toLocal8Bit());
        qputenv("KESTREL_MODELS_DIR", dir_.filePath("models").toLocal8Bit());
        QCoreApplication::setOrganizationName("KestrelTest");
        QCoreApplication::setApplicationName("SettingsModel");
        modelA_ = dir_.filePath("a.gguf");
        modelB_ = dir_.filePath("b.gguf");
        touch(modelA_);
        touch(modelB_);
    }

    void defaultModelPathFollowsEnvironment() {
        QCOMPARE(SettingsModel::defaultModelPath(), dir_.filePath("models") + "/SmolLM2-135M-Instruct.Q4_1.gguf");
    }

    void missingModelIsReported() {
        SettingsModel s;
        s.setModelPath(dir_.filePath("nope.gguf"));
        QVERIFY(!s.validate());
        QVERIFY(s.fieldError("modelPath").contains("nope.gguf"));
        QVERIFY(!s.apply());
        s.setModelPath(dir_.path());  // a folder
        QVERIFY(!s.validate());
        QVERIFY(!s.fieldError("modelPath").isEmpty());
    }

    void rangesHaveMessages() {
        SettingsModel s;
        s.setModelPath(modelA_);
        QVERIFY2(s.validate(), qPrintable(QStringList(s.fieldErrors().keys()).join(',')));
        s.setProperty("temperature", 7.0);
        s.setProperty("topP", 0.0);
        s.setProperty("minP", 1.5);
        s.setProperty("topK", -3);
        s.setProperty("repeatPenalty", 9.0);
        s.setProperty("seed", "12x");
        s.setProperty("maxTokens", 0);
        s.setProperty("contextLength", 100);
        s.setProperty("device", "tpu");
        s.setProperty("kvCache", "int4");
        s.setProperty("speculation", "sometimes");
        s.setProperty("chatTemplate", "not a template");
        QSignalSpy errors(&s, &SettingsModel::fieldErrorsChanged);
        QVERIFY(!s.validate());
        QCOMPARE(errors.size(), 1);
        for (const char* field : {"temperature", "topP", "minP", "topK", "repeatPenalty", "seed", "maxTokens",
                                  "contextLength", "device", "kvCache", "speculation", "chatTemplate"})
            QVERIFY2(!s.fieldError(field).isEmpty(), field);
        QVERIFY(s.fieldError("modelPath").isEmpty());
        QVERIFY(!s.apply());
    }

    void contextLongerThanTrainedIsRefused() {
        SettingsModel s;
        s.setModelPath(modelA_);
        s.setLoadedModelInfo({{"path", modelA_}, {"trainedContext", 2048}, {"architecture", "llama"}});
        QCOMPARE(s.trainedContext(), 2048);
        QCOMPARE(s.modelFile().value("architecture").toString(), QString("llama"));
        s.setProperty("contextLength", 4096);
        QVERIFY(!s.validate());
        QVERIFY(s.fieldError("contextLength").contains("2048"));
        s.setProperty("contextLength", 2048);
        QVERIFY(s.validate());
        // Info about another file does not apply to this one.
        s.setModelPath(modelB_);
        QCOMPARE(s.trainedContext(), 0);
        QCOMPARE(s.modelFile().value("loaded").toBool(), false);
    }

    void savedPerModel() {
        {
            SettingsModel s;
            s.setModelPath(modelA_);
            s.setProperty("temperature", 0.2);
            s.setProperty("seed", "42");
            s.setProperty("systemPrompt", "Be brief.");
            QCOMPARE(s.property("kvCache").toString(), QString("f16"));  // the default
            s.setProperty("kvCache", "int8");
            QCOMPARE(s.property("speculation").toString(), QString("lookup"));  // the default
            s.setProperty("speculation", "off");
            QSignalSpy applied(&s, &SettingsModel::applied);
            QVERIFY(s.apply());
            QCOMPARE(applied.size(), 1);
            s.setModelPath(modelB_);
            QCOMPARE(s.property("temperature").toDouble(), 0.7);  // B has its own (default) values
            s.setProperty("temperature", 1.3);
            QVERIFY(s.apply());
            GenerationRequest r;
            s.fillGenerationRequest(&r);
            QCOMPARE(r.lookupDraft, kLookupDraftTokens);  // B: speculative decoding by lookup, the default
        }
        SettingsModel again;
        QCOMPARE(again.modelPath(), modelB_);
        QCOMPARE(again.property("temperature").toDouble(), 1.3);
        again.setModelPath(modelA_);
        QCOMPARE(again.property("temperature").toDouble(), 0.2);
        QCOMPARE(again.property("seed").toString(), QString("42"));
        QVERIFY(again.apply());
        GenerationRequest r;
        again.fillGenerationRequest(&r);
        QCOMPARE(r.temperature, 0.2f);
        QCOMPARE(r.seed, quint64(42));
        QCOMPARE(r.lookupDraft, 0);  // A: turned off
        QCOMPARE(again.appliedSystemPrompt(), QString("Be brief."));
        QCOMPARE(again.appliedLoadRequest().path, modelA_);
        QCOMPARE(again.appliedLoadRequest().kvCache, QString("int8"));
    }

    void draftModelSpeculation() {
        SettingsModel s;
        s.setModelPath(modelA_);
        s.setProperty("speculation", "draft");
        QVERIFY(!s.validate());  // no draft model chosen
        QVERIFY(!s.fieldError("speculation").isEmpty());
        s.setProperty("draftModelPath", modelB_);
        QVERIFY2(s.validate(), qPrintable(QStringList(s.fieldErrors().keys()).join(',')));
        QVERIFY(s.apply());
        GenerationRequest r;
        s.fillGenerationRequest(&r);
        QCOMPARE(r.draftTokens, kDraftModelTokens);
        QCOMPARE(r.lookupDraft, 0);
        QCOMPARE(s.appliedLoadRequest().draftPath, modelB_);
        // The draft model stays chosen but unused when speculation is from the conversation.
        s.setProperty("speculation", "lookup");
        QVERIFY(s.apply());
        s.fillGenerationRequest(&r);
        QCOMPARE(r.draftTokens, 0);
        QCOMPARE(r.lookupDraft, kLookupDraftTokens);
        QVERIFY(s.appliedLoadRequest().draftPath.isEmpty());
    }

    void revertDropsEdits() {
        SettingsModel s;
        const double before = s.property("temperature").toDouble();
        s.setProperty("temperature", 4.0);
        s.revert();
        QCOMPARE(s.property("temperature").toDouble(), before);
    }

    void languageChangeIsSignalled() {
        SettingsModel s;
        QSignalSpy language(&s, &SettingsModel::languageChanged);
        s.setProperty("language", "zh_CN");
        QVERIFY(s.apply());
        QCOMPARE(language.size(), 1);
        QCOMPARE(s.appliedLanguage(), QString("zh_CN"));
        s.setProperty("language", "xx");
        QVERIFY(!s.validate());
    }
};

QTEST_GUILESS_MAIN(TestSettingsModel)
#include "tst_settings_model.moc"
