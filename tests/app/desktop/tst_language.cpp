// The compiled-in translations: switching to Simplified Chinese and back
// changes what tr()/qsTr() return, for C++ and QML strings alike.
#include "language_manager.h"

#include <QCoreApplication>
#include <QFile>
#include <QtTest>

using namespace kestrel::desktop;

class TestLanguage : public QObject {
    Q_OBJECT
private slots:
    void compiledIn() {
        QVERIFY(QFile::exists(":/i18n/kestrel_zh_CN.qm"));
        QVERIFY(QFile::exists(":/i18n/kestrel_en.qm"));
    }
    void switchesAtRunTime() {
        LanguageManager languages;
        languages.apply("zh_CN");
        QCOMPARE(QCoreApplication::translate("kestrel::desktop::ChatController", "New chat"), QString::fromUtf8("新对话"));
        QCOMPARE(QCoreApplication::translate("Composer", "Message Kestrel…"), QString::fromUtf8("给 Kestrel 发消息…"));
        QCOMPARE(QCoreApplication::translate("kestrel::desktop::SettingsModel", "The model was trained on %1 tokens; a longer context produces garbage. Use %1 or less.")
                     .arg(2048)
                     .contains("2048"),
                 true);
        languages.apply("en");
        QCOMPARE(QCoreApplication::translate("Composer", "Message Kestrel…"), QString::fromUtf8("Message Kestrel…"));
    }
};

QTEST_GUILESS_MAIN(TestLanguage)
#include "tst_language.moc"
