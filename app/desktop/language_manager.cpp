#include "language_manager.h"

#include <QCoreApplication>
#include <QLocale>
#include <QQmlEngine>

namespace kestrel::desktop {

LanguageManager::LanguageManager(QObject* parent) : QObject(parent) {}

void LanguageManager::apply(const QString& language) {
    QCoreApplication::removeTranslator(&translator_);
    // The .qm files are compiled in (qt_add_translations, prefix /i18n).
    const QLocale locale = language.isEmpty() ? QLocale::system() : QLocale(language);
    if (translator_.load(locale, QStringLiteral("kestrel"), QStringLiteral("_"), QStringLiteral(":/i18n"))) {
        QCoreApplication::installTranslator(&translator_);
        current_ = translator_.language();
    } else {
        current_ = QStringLiteral("en");
    }
    if (engine_) engine_->retranslate();
}

}  // namespace kestrel::desktop
