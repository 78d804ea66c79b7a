// kestrel: the desktop chat app.
//
// Wires the C++ behind the UI (settings, chat controller with its engine
// worker thread, translations) to the QML module "Kestrel" from ui/, whose
// views reach it through the singletons Kestrel.Backend/Chat and
// Kestrel.Backend/AppSettings.
#include "chat_controller.h"
#include "language_manager.h"
#include "settings_model.h"
#include "test_driver.h"

#include <QCommandLineParser>
#include <QGuiApplication>
#include <QIcon>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QtQml/qqmlextensionplugin.h>

Q_IMPORT_QML_PLUGIN(KestrelPlugin)

using namespace kestrel::desktop;

int main(int argc, char* argv[]) {
    QGuiApplication app(argc, argv);
    QGuiApplication::setOrganizationName(QStringLiteral("Kestrel"));
    QGuiApplication::setApplicationName(QStringLiteral("Kestrel"));
    QGuiApplication::setApplicationDisplayName(QStringLiteral("Kestrel"));
    QGuiApplication::setApplicationVersion(QStringLiteral("0.1.0"));
    QGuiApplication::setDesktopFileName(QStringLiteral("kestrel"));
    QGuiApplication::setWindowIcon(QIcon(QStringLiteral(":/Kestrel/kestrel.svg")));
    // Basic is the one Quick Controls style that leaves every color to us, so the
    // Theme singleton decides how the app looks on every desktop.
    QQuickStyle::setStyle(QStringLiteral("Basic"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Kestrel: chat with language models on your own computer."));
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption databaseOption(QStringLiteral("database"), QStringLiteral("Use this conversation database file."),
                                      QStringLiteral("path"));
    parser.addOption(databaseOption);
    parser.process(app);

    SettingsModel settings;
    LanguageManager languages;
    languages.apply(settings.appliedLanguage());
    QObject::connect(&settings, &SettingsModel::languageChanged, &languages, &LanguageManager::apply);

    ChatController chat(&settings, parser.value(databaseOption));
    qmlRegisterSingletonInstance("Kestrel.Backend", 1, 0, "Chat", &chat);
    qmlRegisterSingletonInstance("Kestrel.Backend", 1, 0, "AppSettings", &settings);

    QQmlApplicationEngine engine;
    languages.setEngine(&engine);
    engine.addImportPath(QStringLiteral("qrc:/"));
    QObject::connect(&engine, &QQmlApplicationEngine::objectCreationFailed, &app,
                     [] { QCoreApplication::exit(2); }, Qt::QueuedConnection);
    engine.load(QUrl(QStringLiteral("qrc:/Kestrel/Main.qml")));
    if (engine.rootObjects().isEmpty()) return 2;
    auto* window = qobject_cast<QQuickWindow*>(engine.rootObjects().constFirst());

    chat.start();

    std::unique_ptr<TestDriver> driver;
    const QString scenario = qEnvironmentVariable("KESTREL_TEST_SCENARIO");
    if (!scenario.isEmpty()) {
        driver = std::make_unique<TestDriver>(scenario, &chat, &settings, window);
        driver->start();
    }
    return QGuiApplication::exec();
}
