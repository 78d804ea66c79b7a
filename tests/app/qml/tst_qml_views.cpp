// Runs tests/app/qml/tst_*.qml. Before the first file, a ChatController and a
// SettingsModel (temporary store and settings, the real SmolLM2) are
// registered as Kestrel.Backend/Chat and /AppSettings, as main.cpp does.
#include "chat_controller.h"
#include "settings_model.h"
#include "test_env.h"

#include <QGuiApplication>
#include <QQmlContext>
#include <QQmlEngine>
#include <QQuickStyle>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtQuickTest>

Q_IMPORT_QML_PLUGIN(KestrelPlugin)

using namespace kestrel::desktop;

class Setup : public QObject {
    Q_OBJECT
public slots:
    void applicationAvailable() {
        QQuickStyle::setStyle("Basic");
        QCoreApplication::setOrganizationName("KestrelTest");
        QCoreApplication::setApplicationName("QmlViews");
        qputenv("XDG_CONFIG_HOME", dir_.filePath("config").toLocal8Bit());
        qputenv("KESTREL_MODELS_DIR", kestrel::test::modelsDir().toLocal8Bit());
        settings_ = std::make_unique<SettingsModel>();
        settings_->setProperty("temperature", 0.0);
        settings_->setProperty("maxTokens", 16);
        settings_->setProperty("contextLength", 1024);
        settings_->apply();
        chat_ = std::make_unique<ChatController>(settings_.get(), dir_.filePath("qml.sqlite"));
        qmlRegisterSingletonInstance("Kestrel.Backend", 1, 0, "Chat", chat_.get());
        qmlRegisterSingletonInstance("Kestrel.Backend", 1, 0, "AppSettings", settings_.get());
        chat_->start();
    }
    void qmlEngineAvailable(QQmlEngine* engine) {
        engine->addImportPath("qrc:/");
        engine->rootContext()->setContextProperty("modelAvailable", QFileInfo::exists(kestrel::test::smollm2Path()));
    }
    void cleanupTestCase() {
        chat_.reset();
        settings_.reset();
    }

private:
    QTemporaryDir dir_;
    std::unique_ptr<SettingsModel> settings_;
    std::unique_ptr<ChatController> chat_;
};

QUICK_TEST_MAIN_WITH_SETUP(kestrel_views, Setup)
#include "tst_qml_views.moc"
