#include "store_schema.h"

#include "store_sql.h"

#include <QSqlQuery>
#include <QVariant>

namespace kestrel::store::schema {
namespace {

// Version 1. Notes on choices:
// - Times are INTEGER ms (UTC); ids are rowids, so id order is creation order.
// - Deleting a message deletes its subtree (parent_id ON DELETE CASCADE); a
//   conversation's deleted_at is the soft delete behind undo.
// - Full-text search uses two external-content FTS5 tables with the trigram
//   tokenizer: substring matching works for languages written without spaces
//   (Chinese, Japanese) as well as for English. A reply is indexed only once
//   it stops streaming, so the once-a-second flushes of a growing reply do not
//   re-index it every time; the triggers index exactly the rows whose state is
//   not 'streaming', which keeps the external-content 'delete' commands exact.
const QStringList kV1 = {
    QStringLiteral(R"(CREATE TABLE conversations (
        id             INTEGER PRIMARY KEY,
        title          TEXT    NOT NULL DEFAULT '',
        created_at     INTEGER NOT NULL,
        updated_at     INTEGER NOT NULL,
        model          TEXT    NOT NULL DEFAULT '',
        system_prompt  TEXT    NOT NULL DEFAULT '',
        active_leaf_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
        deleted_at     INTEGER))"),
    QStringLiteral(R"(CREATE TABLE messages (
        id                INTEGER PRIMARY KEY,
        conversation_id   INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        parent_id         INTEGER REFERENCES messages(id) ON DELETE CASCADE,
        role              TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
        content           TEXT    NOT NULL DEFAULT '',
        reasoning         TEXT    NOT NULL DEFAULT '',
        created_at        INTEGER NOT NULL,
        model             TEXT    NOT NULL DEFAULT '',
        prompt_tokens     INTEGER,
        completion_tokens INTEGER,
        tokens_per_second REAL,
        settings_json     TEXT    NOT NULL DEFAULT '{}',
        state             TEXT    NOT NULL DEFAULT 'complete'
                          CHECK (state IN ('complete', 'streaming', 'interrupted', 'error')),
        error             TEXT    NOT NULL DEFAULT ''))"),
    QStringLiteral("CREATE INDEX messages_by_parent ON messages(conversation_id, parent_id, id)"),
    QStringLiteral("CREATE INDEX messages_by_parent_id ON messages(parent_id)"),
    QStringLiteral("CREATE INDEX messages_streaming ON messages(state) WHERE state = 'streaming'"),
    QStringLiteral("CREATE INDEX conversations_by_updated ON conversations(deleted_at, updated_at)"),
    QStringLiteral("CREATE INDEX conversations_by_leaf ON conversations(active_leaf_id)"),
    QStringLiteral("CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', "
                   "content_rowid='id', tokenize='trigram case_sensitive 0')"),
    QStringLiteral("CREATE VIRTUAL TABLE conversations_fts USING fts5(title, content='conversations', "
                   "content_rowid='id', tokenize='trigram case_sensitive 0')"),
    QStringLiteral(R"(CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
        WHEN new.state != 'streaming' BEGIN
        INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
    END)"),
    QStringLiteral(R"(CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
        WHEN old.state != 'streaming' BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END)"),
    QStringLiteral(R"(CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, state ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content)
            SELECT 'delete', old.id, old.content WHERE old.state != 'streaming';
        INSERT INTO messages_fts(rowid, content)
            SELECT new.id, new.content WHERE new.state != 'streaming';
    END)"),
    QStringLiteral(R"(CREATE TRIGGER conversations_fts_insert AFTER INSERT ON conversations BEGIN
        INSERT INTO conversations_fts(rowid, title) VALUES (new.id, new.title);
    END)"),
    QStringLiteral(R"(CREATE TRIGGER conversations_fts_delete AFTER DELETE ON conversations BEGIN
        INSERT INTO conversations_fts(conversations_fts, rowid, title) VALUES ('delete', old.id, old.title);
    END)"),
    QStringLiteral(R"(CREATE TRIGGER conversations_fts_update AFTER UPDATE OF title ON conversations BEGIN
        INSERT INTO conversations_fts(conversations_fts, rowid, title) VALUES ('delete', old.id, old.title);
        INSERT INTO conversations_fts(rowid, title) VALUES (new.id, new.title);
    END)"),
};

// Version 2: why a reply stopped ('' when unknown: replies of version 1, user
// messages), so that a reply cut at its length limit can be continued after a
// restart too.
const QStringList kV2 = {
    QStringLiteral("ALTER TABLE messages ADD COLUMN stop_reason TEXT NOT NULL DEFAULT ''"),
};

const Migration kMigrations[] = {
    {1, "create conversations, messages and the search index", kV1},
    {2, "record why each reply stopped", kV2},
};

StoreError pragma(QSqlDatabase& db, const QString& dbPath, const QString& sql, const QString& doing) {
    QSqlQuery q(db);
    if (!q.exec(sql)) return sql::toStoreError(q.lastError(), doing, dbPath);
    return StoreError::ok();
}

}  // namespace

std::span<const Migration> migrations() { return kMigrations; }
int latestVersion() { return kMigrations[std::size(kMigrations) - 1].version; }

StoreError configureConnection(QSqlDatabase& db, const QString& dbPath) {
    // journal_mode answers with the mode it ended up in; anything but "wal"
    // (e.g. a file on a filesystem without shared memory) is reported.
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("PRAGMA journal_mode=WAL")))
        return sql::toStoreError(q.lastError(), QStringLiteral("switch to WAL journaling"), dbPath);
    if (q.next() && q.value(0).toString().compare(QLatin1String("wal"), Qt::CaseInsensitive) != 0)
        return {StoreError::Code::Io,
                QStringLiteral("%1: SQLite refused WAL journaling (got '%2'); is the folder on a network "
                               "or read-only filesystem?").arg(dbPath, q.value(0).toString())};
    KESTREL_STORE_TRY(pragma(db, dbPath, QStringLiteral("PRAGMA foreign_keys=ON"),
                             QStringLiteral("enable foreign keys")));
    KESTREL_STORE_TRY(pragma(db, dbPath, QStringLiteral("PRAGMA synchronous=NORMAL"),
                             QStringLiteral("set synchronous=NORMAL")));
    return pragma(db, dbPath, QStringLiteral("PRAGMA busy_timeout=5000"), QStringLiteral("set a busy timeout"));
}

StoreResult<int> userVersion(QSqlDatabase& db, const QString& dbPath) {
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next())
        return sql::toStoreError(q.lastError(), QStringLiteral("read the schema version"), dbPath);
    return q.value(0).toInt();
}

StoreError migrate(QSqlDatabase& db, const QString& dbPath, std::span<const Migration> steps) {
    auto current = userVersion(db, dbPath);
    if (!current) return current.error();
    const int latest = steps.empty() ? 0 : steps.back().version;
    if (*current > latest)
        return {StoreError::Code::Unsupported,
                QStringLiteral("%1: the database has schema version %2 but this Kestrel knows only up to "
                               "version %3; it was written by a newer Kestrel. Update Kestrel, or move the "
                               "file away to start fresh.").arg(dbPath).arg(*current).arg(latest)};
    for (const Migration& m : steps) {
        if (m.version <= *current) continue;
        const QString doing = QStringLiteral("upgrade the schema to version %1 (%2)")
                                  .arg(m.version).arg(QString::fromUtf8(m.purpose));
        sql::Transaction tx(db, dbPath);
        KESTREL_STORE_TRY(tx.begin(doing));
        for (const QString& statement : m.statements) {
            QSqlQuery q(db);
            if (!q.exec(statement)) return sql::toStoreError(q.lastError(), doing, dbPath);
        }
        QSqlQuery bump(db);
        if (!bump.exec(QStringLiteral("PRAGMA user_version=%1").arg(m.version)))
            return sql::toStoreError(bump.lastError(), doing, dbPath);
        KESTREL_STORE_TRY(tx.commit(doing));
    }
    return StoreError::ok();
}

}  // namespace kestrel::store::schema
