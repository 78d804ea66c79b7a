// Schema and migrations: a fresh file, an old (v0) file, a version-1 file with
// data (v2 adds the stop reason), a file from a newer Kestrel, a multi-step
// upgrade through a test-only extra version, a failing migration, and files
// that are not databases at all.
#include "conversation_store.h"
#include "store_schema.h"
#include "store_test_util.h"

#include <QFile>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QtTest>

using namespace kestrel::store;
using namespace kestrel::store::test;

namespace {

// A raw connection for building old files and inspecting results without the store.
class RawDb {
public:
    explicit RawDb(const QString& path) : name_(QStringLiteral("raw_%1").arg(++counter_)) {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name_);
        db.setDatabaseName(path);
        ok_ = db.open();
    }
    ~RawDb() {
        { QSqlDatabase::database(name_, false).close(); }
        QSqlDatabase::removeDatabase(name_);
    }
    bool ok() const { return ok_; }
    QSqlDatabase db() const { return QSqlDatabase::database(name_, false); }
    bool exec(const QString& sql) {
        QSqlQuery q(db());
        return q.exec(sql);
    }
    QString value(const QString& sql) {
        QSqlQuery q(db());
        if (!q.exec(sql) || !q.next()) return QStringLiteral("<none>");
        return q.value(0).toString();
    }

private:
    static inline int counter_ = 0;
    QString name_;
    bool ok_ = false;
};

}  // namespace

class TestStoreSchema : public QObject {
    Q_OBJECT
private slots:
    void freshDatabase();
    void upgradesVersionZeroFile();
    void upgradesVersionOneFile();
    void refusesNewerFile();
    void upgradesThroughExtraMigration();
    void failedMigrationRollsBack();
    void garbageFileIsAnError();
    void unusablePathIsAnError();
};

void TestStoreSchema::freshDatabase() {
    QTemporaryDir dir;
    ConversationStore store;
    const QString path = dir.filePath(QStringLiteral("sub/folder/kestrel.sqlite"));
    STORE_VERIFY_OK(store.open(path));
    QVERIFY(QFile::exists(path));
    QCOMPARE(ConversationStore::latestSchemaVersion(), 2);
    QCOMPARE(queryValue(store, QStringLiteral("PRAGMA user_version")), QStringLiteral("2"));
    QCOMPARE(queryValue(store, QStringLiteral("PRAGMA journal_mode")), QStringLiteral("wal"));
    QCOMPARE(queryValue(store, QStringLiteral("PRAGMA foreign_keys")), QStringLiteral("1"));
    QCOMPARE(queryValue(store, QStringLiteral("PRAGMA synchronous")), QStringLiteral("1"));  // NORMAL
    // Debian's libsqlite3 (which Qt's driver uses) must have FTS5 with trigram.
    QCOMPARE(queryValue(store, QStringLiteral("SELECT sqlite_compileoption_used('ENABLE_FTS5')")), QStringLiteral("1"));
    const QStringList tables = queryColumn(store, QStringLiteral(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN "
        "('conversations', 'messages', 'messages_fts', 'conversations_fts') ORDER BY name"));
    QCOMPARE(tables, (QStringList{"conversations", "conversations_fts", "messages", "messages_fts"}));
    QCOMPARE(queryValue(store, QStringLiteral("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'")),
             QStringLiteral("6"));
    // Opening again is a no-op migration.
    store.close();
    STORE_VERIFY_OK(store.open(path));
    QCOMPARE(queryValue(store, QStringLiteral("PRAGMA user_version")), QStringLiteral("2"));
}

void TestStoreSchema::upgradesVersionZeroFile() {
    // A pre-release file: user_version 0 and a table of its own, which an
    // upgrade must leave alone.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("old.sqlite"));
    {
        RawDb raw(path);
        QVERIFY(raw.ok());
        QVERIFY(raw.exec(QStringLiteral("CREATE TABLE legacy_notes (text TEXT)")));
        QVERIFY(raw.exec(QStringLiteral("INSERT INTO legacy_notes VALUES ('keep me')")));
        QCOMPARE(raw.value(QStringLiteral("PRAGMA user_version")), QStringLiteral("0"));
    }
    ConversationStore store;
    STORE_VERIFY_OK(store.open(path));
    QCOMPARE(queryValue(store, QStringLiteral("PRAGMA user_version")), QStringLiteral("2"));
    QCOMPARE(queryValue(store, QStringLiteral("SELECT text FROM legacy_notes")), QStringLiteral("keep me"));
    auto id = store.createConversation(QStringLiteral("after upgrade"));
    STORE_VERIFY_OK(id);
    QCOMPARE(store.listConversations()->size(), 1);
}

void TestStoreSchema::upgradesVersionOneFile() {
    // A file of the first release, with a finished reply: version 2 adds the stop
    // reason, empty (unknown) for what was there, and the reply reads as before.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("v1-data.sqlite"));
    {
        RawDb raw(path);
        QSqlDatabase db = raw.db();
        STORE_VERIFY_OK(schema::migrate(db, path, schema::migrations().first(1)));
        QCOMPARE(raw.value(QStringLiteral("PRAGMA user_version")), QStringLiteral("1"));
        QVERIFY(raw.exec(QStringLiteral("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (1, 'old', 1, 1)")));
        QVERIFY(raw.exec(QStringLiteral("INSERT INTO messages (id, conversation_id, role, content, created_at) "
                                        "VALUES (1, 1, 'user', 'hi', 1)")));
        QVERIFY(raw.exec(QStringLiteral("INSERT INTO messages (id, conversation_id, parent_id, role, content, created_at, "
                                        "completion_tokens) VALUES (2, 1, 1, 'assistant', 'hello there', 2, 3)")));
    }
    ConversationStore store;
    STORE_VERIFY_OK(store.open(path));
    QCOMPARE(queryValue(store, QStringLiteral("PRAGMA user_version")), QStringLiteral("2"));
    auto reply = store.message(2);
    STORE_VERIFY_OK(reply);
    QCOMPARE(reply->content, QStringLiteral("hello there"));
    QCOMPARE(reply->completionTokens, 3);
    QCOMPARE(reply->stopReason, QString());
    QCOMPARE(store.search(QStringLiteral("hello"))->size(), 1);  // the index came through
    // And it can be continued like any finished reply.
    STORE_VERIFY_OK(store.resumeReply(2));
    STORE_VERIFY_OK(store.appendToStreamingReply(2, QStringLiteral(", friend")));
    ReplyStats stats;
    stats.stopReason = QStringLiteral("eos");
    STORE_VERIFY_OK(store.finishReply(2, stats));
    QCOMPARE(store.message(2)->content, QStringLiteral("hello there, friend"));
    QCOMPARE(store.message(2)->stopReason, QStringLiteral("eos"));
}

void TestStoreSchema::refusesNewerFile() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("future.sqlite"));
    {
        RawDb raw(path);
        QVERIFY(raw.exec(QStringLiteral("CREATE TABLE future_things (x)")));
        QVERIFY(raw.exec(QStringLiteral("PRAGMA user_version = 99")));
    }
    ConversationStore store;
    const StoreError err = store.open(path);
    QVERIFY(!err.isOk());
    QCOMPARE(err.code(), StoreError::Code::Unsupported);
    QVERIFY2(err.message().contains(QLatin1String("99")), qPrintable(err.message()));
    QVERIFY(!store.isOpen());
    RawDb raw(path);
    QCOMPARE(raw.value(QStringLiteral("PRAGMA user_version")), QStringLiteral("99"));
    QCOMPARE(raw.value(QStringLiteral("SELECT count(*) FROM sqlite_master WHERE name = 'messages'")), QStringLiteral("0"));
}

void TestStoreSchema::upgradesThroughExtraMigration() {
    // The upgrade path a real v2 will take: append one entry, the data stays.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("v1.sqlite"));
    {
        ConversationStore store;
        STORE_VERIFY_OK(store.open(path));
        auto c = store.createConversation(QStringLiteral("from v1"));
        STORE_VERIFY_OK(c);
        NewMessage m;
        m.content = QStringLiteral("hello from version one");
        STORE_VERIFY_OK(store.addMessage(*c, 0, m));
    }
    QList<schema::Migration> steps(schema::migrations().begin(), schema::migrations().end());
    const int next = ConversationStore::latestSchemaVersion() + 1;
    steps.append({next, "add a pinned flag", {QStringLiteral("ALTER TABLE conversations ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0"),
                                             QStringLiteral("CREATE INDEX conversations_pinned ON conversations(pinned)")}});
    {
        RawDb raw(path);
        QSqlDatabase db = raw.db();
        STORE_VERIFY_OK(schema::migrate(db, path, steps));
        QCOMPARE(raw.value(QStringLiteral("PRAGMA user_version")), QString::number(next));
        QCOMPARE(raw.value(QStringLiteral("SELECT title || ':' || pinned FROM conversations")), QStringLiteral("from v1:0"));
        QCOMPARE(raw.value(QStringLiteral("SELECT content FROM messages")), QStringLiteral("hello from version one"));
    }
    // This build does not know that version, so it refuses the file rather than guess.
    ConversationStore store;
    QCOMPARE(store.open(path).code(), StoreError::Code::Unsupported);
}

void TestStoreSchema::failedMigrationRollsBack() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("v1.sqlite"));
    {
        ConversationStore store;
        STORE_VERIFY_OK(store.open(path));
    }
    QList<schema::Migration> steps(schema::migrations().begin(), schema::migrations().end());
    const int next = ConversationStore::latestSchemaVersion() + 1;
    steps.append({next, "a broken migration", {QStringLiteral("CREATE TABLE half_done (x)"),
                                                 QStringLiteral("ALTER TABLE no_such_table ADD COLUMN y")}});
    RawDb raw(path);
    QSqlDatabase db = raw.db();
    const StoreError err = schema::migrate(db, path, steps);
    QVERIFY(!err.isOk());
    QVERIFY2(err.message().contains(QStringLiteral("version %1").arg(next)), qPrintable(err.message()));
    QCOMPARE(raw.value(QStringLiteral("PRAGMA user_version")), QString::number(next - 1));
    QCOMPARE(raw.value(QStringLiteral("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'")), QStringLiteral("0"));
}

void TestStoreSchema::garbageFileIsAnError() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("garbage.sqlite"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QByteArray junk(64 * 1024, '\0');
    for (int i = 0; i < junk.size(); ++i) junk[i] = char((i * 131 + 7) & 0xff);
    f.write(junk);
    f.close();
    ConversationStore store;
    const StoreError err = store.open(path);
    QVERIFY(!err.isOk());
    QCOMPARE(err.code(), StoreError::Code::Corrupt);
    QVERIFY2(err.message().contains(path), qPrintable(err.message()));
    QVERIFY(!store.isOpen());
    // Calls on a store that failed to open are errors, not crashes.
    QCOMPARE(store.createConversation(QStringLiteral("x")).error().code(), StoreError::Code::Internal);
    QVERIFY(!store.listConversations().isOk());
}

void TestStoreSchema::unusablePathIsAnError() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("a-file"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.close();
    ConversationStore store;
    const StoreError err = store.open(file + QStringLiteral("/kestrel.sqlite"));  // a folder that is a file
    QCOMPARE(err.code(), StoreError::Code::Io);
    QCOMPARE(store.open(dir.path()).code(), StoreError::Code::Io);  // a folder, not a file
    QCOMPARE(store.open(QString()).code(), StoreError::Code::InvalidArgument);
}

QTEST_APPLESS_MAIN(TestStoreSchema)
#include "tst_store_schema.moc"
