// LanguageManager: installs the translation for the chosen language and asks
// the QML engine to re-evaluate every qsTr() binding, so switching languages in
// the settings takes effect without a restart. UI thread only.
#pragma once

#include <QObject>
#include <QString>
#include <QTranslator>

class QQmlEngine;

namespace kestrel::desktop {

class LanguageManager : public QObject {
    Q_OBJECT
public:
    explicit LanguageManager(QObject* parent = nullptr);
    void setEngine(QQmlEngine* engine) { engine_ = engine; }
    // "" follows the system locale; "en" or "zh_CN" override it.
    void apply(const QString& language);
    QString current() const { return current_; }

private:
    QTranslator translator_;
    QQmlEngine* engine_ = nullptr;
    QString current_;
};

}  // namespace kestrel::desktop
