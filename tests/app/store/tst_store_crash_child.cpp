// Helper process for tst_store_crash: streams a reply into the database given
// on the command line until it is killed. After every append it prints
//   progress <pieces> <utf16-chars> <elapsed-ms>
// so the parent knows what had been handed to the store before the SIGKILL.
// usage: tst_store_crash_child DB_PATH PIECE_CHARS SLEEP_MS
#include "conversation_store.h"
#include "crash_child_protocol.h"

#include <QElapsedTimer>
#include <QThread>

#include <cstdio>

using namespace kestrel::store;

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s DB_PATH PIECE_CHARS SLEEP_MS\n", argv[0]);
        return 2;
    }
    const QString path = QString::fromLocal8Bit(argv[1]);
    const int pieceChars = std::atoi(argv[2]);
    const int sleepMs = std::atoi(argv[3]);
    ConversationStore store;
    if (StoreError err = store.open(path); !err) {
        std::fprintf(stderr, "open: %s\n", qPrintable(err.message()));
        return 1;
    }
    auto conv = store.createConversation(QStringLiteral("crash test"));
    NewMessage user;
    user.content = QStringLiteral("write forever");
    auto userId = conv ? store.addMessage(*conv, 0, user) : StoreResult<MessageId>(conv.error());
    auto reply = userId ? store.beginStreamingReply(*conv, *userId, QStringLiteral("child")) : userId;
    if (!reply) {
        std::fprintf(stderr, "setup: %s\n", qPrintable(reply.error().message()));
        return 1;
    }
    std::printf("ready %lld\n", static_cast<long long>(*reply));
    std::fflush(stdout);
    QElapsedTimer clock;
    clock.start();
    qint64 chars = 0;
    for (int i = 0; clock.elapsed() < 60000; ++i) {  // the parent kills us long before
        const QString piece = kestrel::store::test::crashPiece(i, pieceChars);
        if (StoreError err = store.appendToStreamingReply(*reply, piece); !err) {
            std::fprintf(stderr, "append: %s\n", qPrintable(err.message()));
            return 1;
        }
        chars += piece.size();
        std::printf("progress %d %lld %lld\n", i + 1, static_cast<long long>(chars),
                    static_cast<long long>(clock.elapsed()));
        std::fflush(stdout);
        if (sleepMs > 0) QThread::msleep(sleepMs);
    }
    return 3;
}
