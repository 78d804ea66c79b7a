// TestDriver: scripted end-to-end scenarios run inside the real app, for
// tests/app/desktop/tst_end_to_end (KESTREL_TEST_SCENARIO=chat|reopen|first-run).
//
// It drives the same ChatController and window the user does, waits with a
// nested event loop (acceptable in a test hook, never used otherwise), saves
// screenshots to $KESTREL_TEST_SCREENSHOTS and writes what it observed to the
// JSON file $KESTREL_TEST_RESULT, then quits with exit code 0 (or 3 when a
// step failed; the JSON says which).
#pragma once

#include <QJsonObject>
#include <QObject>
#include <QString>

#include <functional>

class QQuickWindow;

namespace kestrel::desktop {

class ChatController;
class SettingsModel;

class TestDriver : public QObject {
    Q_OBJECT
public:
    TestDriver(QString scenario, ChatController* chat, SettingsModel* settings, QQuickWindow* window,
               QObject* parent = nullptr);
    void start();  // runs the scenario from the event loop

private:
    void run();
    bool runChat();
    bool runReopen();
    bool runFirstRun();
    bool waitFor(const std::function<bool()>& done, int timeoutMs);
    void screenshot(const QString& name);
    bool check(bool ok, const QString& what);
    void finish(bool ok);

    QString scenario_;
    ChatController* chat_;
    SettingsModel* settings_;
    QQuickWindow* window_;
    QJsonObject result_;
};

}  // namespace kestrel::desktop
