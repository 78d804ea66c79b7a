#include "test_driver.h"

#include "chat_controller.h"
#include "conversation_list_model.h"
#include "message_model.h"
#include "settings_model.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QQuickItem>
#include <QQuickWindow>
#include <QThread>
#include <QTimer>

namespace kestrel::desktop {

TestDriver::TestDriver(QString scenario, ChatController* chat, SettingsModel* settings, QQuickWindow* window,
                       QObject* parent)
    : QObject(parent), scenario_(std::move(scenario)), chat_(chat), settings_(settings), window_(window) {}

void TestDriver::start() { QTimer::singleShot(0, this, &TestDriver::run); }

bool TestDriver::waitFor(const std::function<bool()>& done, int timeoutMs) {
    QElapsedTimer clock;
    clock.start();
    while (!done()) {
        if (clock.elapsed() > timeoutMs) return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(5);
    }
    return true;
}

void TestDriver::screenshot(const QString& name) {
    const QString dir = qEnvironmentVariable("KESTREL_TEST_SCREENSHOTS");
    if (dir.isEmpty() || !window_) return;
    QDir().mkpath(dir);
    // Let bindings, layouts and the scroll position settle before grabbing.
    waitFor([] { return false; }, 400);
    const QString path = dir + QLatin1Char('/') + name + QStringLiteral(".png");
    const bool saved = window_->grabWindow().save(path);
    result_.insert(QStringLiteral("screenshot_") + name, saved ? path : QStringLiteral("(not saved)"));
}

bool TestDriver::check(bool ok, const QString& what) {
    if (!ok && !result_.contains(QStringLiteral("failed"))) result_.insert(QStringLiteral("failed"), what);
    return ok;
}

void TestDriver::finish(bool ok) {
    result_.insert(QStringLiteral("ok"), ok);
    result_.insert(QStringLiteral("lastError"), chat_->lastError());
    const QString path = qEnvironmentVariable("KESTREL_TEST_RESULT");
    if (!path.isEmpty()) {
        QFile file(path);
        if (file.open(QIODevice::WriteOnly)) file.write(QJsonDocument(result_).toJson());
    }
    QCoreApplication::exit(ok ? 0 : 3);
}

void TestDriver::run() {
    if (scenario_ == QLatin1String("first-run")) {
        finish(runFirstRun());
        return;
    }
    const bool ready = waitFor([this] { return chat_->modelState() != QLatin1String("loading") &&
                                               chat_->modelState() != QLatin1String("none"); }, 120000);
    result_.insert(QStringLiteral("modelState"), chat_->modelState());
    result_.insert(QStringLiteral("modelName"), chat_->modelInfo().value(QStringLiteral("name")).toString());
    if (!check(ready && chat_->modelState() == QLatin1String("ready"), QStringLiteral("model did not load"))) {
        finish(false);
        return;
    }
    finish(scenario_ == QLatin1String("reopen") ? runReopen() : runChat());
}

bool TestDriver::runChat() {
    int pieces = 0;
    auto counter = connect(chat_->messageModel(), &QAbstractItemModel::dataChanged, this, [&] { ++pieces; });
    QString stopReason;
    connect(chat_, &ChatController::replyEnded, this, [&](qint64, const QString& reason) { stopReason = reason; });

    // Short replies keep the run quick; the mild penalty keeps a 135M model from looping.
    settings_->setProperty("maxTokens", 200);
    settings_->setProperty("repeatPenalty", 1.1);
    settings_->setProperty("seed", QStringLiteral("1"));
    settings_->apply();
    if (!check(chat_->send(QStringLiteral("Write a C function that adds two numbers, for my kestrel tracker.")),
               QStringLiteral("send refused")))
        return false;
    if (!check(waitFor([&] { return !chat_->generating(); }, 120000), QStringLiteral("reply did not end")))
        return false;
    const auto& items = chat_->messageModel()->items();
    result_.insert(QStringLiteral("firstReplyUpdates"), pieces);
    result_.insert(QStringLiteral("firstReplyStopReason"), stopReason);
    result_.insert(QStringLiteral("firstReply"), items.isEmpty() ? QString() : items.back().content);
    result_.insert(QStringLiteral("tokensPerSecond"), chat_->tokensPerSecond());
    if (!check(items.size() == 2 && !items.back().content.isEmpty() && pieces > 1,
               QStringLiteral("no streamed reply")))
        return false;
    screenshot(QStringLiteral("main-window"));

    // A second question, stopped after a few pieces.
    pieces = 0;
    if (!check(chat_->send(QStringLiteral("Count from 1 to 300, one number per line.")), QStringLiteral("second send")))
        return false;
    waitFor([&] { return pieces >= 3 || !chat_->generating(); }, 60000);
    const int piecesAtStop = pieces;
    chat_->stop();
    if (!check(waitFor([&] { return !chat_->generating(); }, 10000), QStringLiteral("stop did not end the reply")))
        return false;
    disconnect(counter);
    result_.insert(QStringLiteral("stoppedStopReason"), stopReason);
    result_.insert(QStringLiteral("updatesAfterStop"), pieces - piecesAtStop);
    result_.insert(QStringLiteral("stoppedState"), chat_->messageModel()->items().back().state);
    check(stopReason == QLatin1String("cancelled"), QStringLiteral("stop did not cancel"));

    const QString exportDir = qEnvironmentVariable("KESTREL_TEST_EXPORTS");
    if (!exportDir.isEmpty()) {
        QDir().mkpath(exportDir);
        result_.insert(QStringLiteral("exportMd"),
                       chat_->exportConversations(QStringLiteral("md"), exportDir + QStringLiteral("/chat.md")));
        result_.insert(QStringLiteral("exportJson"),
                       chat_->exportConversations(QStringLiteral("json"), exportDir + QStringLiteral("/chat.json")));
    }
    result_.insert(QStringLiteral("conversationId"), chat_->currentConversationId());

    // Dark mode, then the settings dialog, for the screenshots.
    settings_->setProperty("theme", QStringLiteral("dark"));
    settings_->apply();
    screenshot(QStringLiteral("main-window-dark"));
    settings_->setProperty("theme", QStringLiteral("light"));
    settings_->apply();
    QMetaObject::invokeMethod(window_, "openSettings");
    screenshot(QStringLiteral("settings-dialog"));
    QMetaObject::invokeMethod(window_, "closeSettings");
    return !result_.contains(QStringLiteral("failed"));
}

bool TestDriver::runFirstRun() {
    // No model where the set-up puts it: the settings dialog must open by
    // itself and say why.
    QObject* dialog = window_->findChild<QObject*>(QStringLiteral("settingsDialog"));
    if (!check(dialog != nullptr, QStringLiteral("no settings dialog in the window"))) return false;
    const bool opened = waitFor([dialog] { return dialog->property("opened").toBool(); }, 10000);
    result_.insert(QStringLiteral("settingsOpened"), opened);
    result_.insert(QStringLiteral("reason"), dialog->property("reason").toString());
    result_.insert(QStringLiteral("modelState"), chat_->modelState());
    screenshot(QStringLiteral("first-run"));
    return check(opened, QStringLiteral("the settings dialog did not open")) &&
           check(!dialog->property("reason").toString().isEmpty(), QStringLiteral("the dialog does not say why"));
}

bool TestDriver::runReopen() {
    auto* list = chat_->conversationModel();
    result_.insert(QStringLiteral("conversations"), list->rowCount());
    list->setQuery(QStringLiteral("kestrel"));
    result_.insert(QStringLiteral("searchHits"), list->rowCount());
    if (!check(list->rowCount() >= 1, QStringLiteral("search found nothing"))) return false;
    const qint64 id = list->idAt(0);
    result_.insert(QStringLiteral("foundConversationId"), id);
    if (!check(chat_->selectConversation(id), QStringLiteral("could not open the conversation"))) return false;
    const auto& items = chat_->messageModel()->items();
    result_.insert(QStringLiteral("messages"), int(items.size()));
    QJsonObject states;
    for (const MessageItem& m : items) states.insert(QString::number(m.id), m.state);
    result_.insert(QStringLiteral("states"), states);
    screenshot(QStringLiteral("reopened"));
    return check(items.size() == 4, QStringLiteral("expected 4 messages after restart"));
}

}  // namespace kestrel::desktop
