// Opening, closing and the conversation-level operations of ConversationStore.
#include "conversation_store.h"

#include "store_impl.h"
#include "store_schema.h"

#include <QAtomicInteger>
#include <QDir>
#include <QFileInfo>
#include <QSqlQuery>
#include <QStandardPaths>

#include <limits>

namespace kestrel::store {
namespace {

QAtomicInteger<int> gConnectionCounter;

QString cleanTitle(const QString& title) { return title.simplified(); }

}  // namespace

Conversation conversationFromQuery(const QSqlQuery& q) {
    Conversation c;
    c.id = q.value(0).toLongLong();
    c.title = q.value(1).toString();
    c.createdAt = sql::fromMs(q.value(2));
    c.updatedAt = sql::fromMs(q.value(3));
    c.model = q.value(4).toString();
    c.systemPrompt = q.value(5).toString();
    c.activeLeafId = q.value(6).isNull() ? 0 : q.value(6).toLongLong();
    c.deletedAt = sql::fromMs(q.value(7));
    return c;
}

StoreError ConversationStore::Impl::touch(ConversationId id) const {
    QSqlQuery q(db());
    return run(q, QStringLiteral("UPDATE conversations SET updated_at = max(updated_at, ?) WHERE id = ?"),
               {sql::nowMs(), id}, QStringLiteral("update conversation %1").arg(id));
}

ConversationStore::ConversationStore() : d_(std::make_unique<Impl>()) {
    d_->connectionName = QStringLiteral("kestrel_store_%1").arg(gConnectionCounter.fetchAndAddRelaxed(1));
}

ConversationStore::~ConversationStore() { close(); }

QString ConversationStore::defaultPath() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/kestrel.sqlite");
}

int ConversationStore::latestSchemaVersion() { return schema::latestVersion(); }

StoreError ConversationStore::open(const QString& path) {
    close();
    if (path.isEmpty()) return {StoreError::Code::InvalidArgument, QStringLiteral("no database path given")};
    const QFileInfo info(path);
    if (!QDir().mkpath(info.absolutePath()))
        return {StoreError::Code::Io,
                QStringLiteral("%1: cannot create the folder %2 for the database (check permissions, or that "
                               "no file has the folder's name)").arg(path, info.absolutePath())};
    if (info.exists() && !info.isFile())
        return {StoreError::Code::Io, QStringLiteral("%1: exists but is not a file").arg(path)};

    d_->path = path;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), d_->connectionName);
        if (!db.isValid()) {
            QSqlDatabase::removeDatabase(d_->connectionName);
            return {StoreError::Code::Internal,
                    QStringLiteral("the Qt SQLite driver (QSQLITE) is not available; install libqt6sql6-sqlite")};
        }
        db.setDatabaseName(path);
        if (!db.open()) {
            const StoreError err = sql::toStoreError(db.lastError(), QStringLiteral("open the database"), path);
            db = QSqlDatabase();
            QSqlDatabase::removeDatabase(d_->connectionName);
            return err;
        }
        StoreError err = schema::configureConnection(db, path);
        if (err) err = schema::migrate(db, path, schema::migrations());
        if (!err) {
            db.close();
            db = QSqlDatabase();
            QSqlDatabase::removeDatabase(d_->connectionName);
            return err;
        }
    }
    d_->open = true;

    // Replies a crashed (or killed) process was writing: keep their text, mark
    // them interrupted so the UI shows them as such and they become searchable.
    // Only the owner of the file does this; while another store holds the lock
    // its "streaming" rows may be live.
    StoreError err;
    d_->ownerLock = std::make_unique<QLockFile>(path + QStringLiteral(".lock"));
    d_->ownerLock->setStaleLockTime(0);  // stale only when the owner process is gone
    if (d_->ownerLock->tryLock(0)) {
        QSqlQuery q(d_->db());
        err = d_->run(q, QStringLiteral("UPDATE messages SET state = 'interrupted' WHERE state = 'streaming'"), {},
                      QStringLiteral("recover replies interrupted by a crash"));
        if (err) d_->recovered = q.numRowsAffected();
    } else {
        d_->ownerLock.reset();
    }
    if (!err) {
        close();
        return err;
    }
    d_->sinceFlush.start();
    return StoreError::ok();
}

void ConversationStore::close() {
    if (!d_->open) return;
    // Best effort: a failing flush (full disk) must not keep the file open.
    (void)d_->flush();
    if (!d_->streaming.isEmpty()) {
        QSqlQuery q(d_->db());
        for (auto it = d_->streaming.cbegin(); it != d_->streaming.cend(); ++it)
            (void)d_->run(q, QStringLiteral("UPDATE messages SET state = 'interrupted' WHERE id = ? AND state = 'streaming'"),
                          {it.key()}, QStringLiteral("end a streaming reply"));
        d_->streaming.clear();
    }
    d_->flushTimer.reset();
    {
        QSqlDatabase db = d_->db();
        db.close();
    }
    QSqlDatabase::removeDatabase(d_->connectionName);
    d_->ownerLock.reset();  // unlocks
    d_->open = false;
    d_->recovered = 0;
}

bool ConversationStore::isOpen() const { return d_->open; }
QString ConversationStore::path() const { return d_->path; }
int ConversationStore::recoveredReplyCount() const { return d_->recovered; }
QString ConversationStore::connectionName() const { return d_->connectionName; }

StoreResult<ConversationId> ConversationStore::createConversation(const QString& title, const QString& model,
                                                                  const QString& systemPrompt) {
    if (!d_->open) return d_->notOpen();
    const qint64 now = sql::nowMs();
    QSqlQuery q(d_->db());
    KESTREL_STORE_TRY(d_->run(q,
        QStringLiteral("INSERT INTO conversations (title, created_at, updated_at, model, system_prompt) "
                       "VALUES (?, ?, ?, ?, ?)"),
        {cleanTitle(title), now, now, model, systemPrompt}, QStringLiteral("create a conversation")));
    return q.lastInsertId().toLongLong();
}

namespace {

StoreError updateOne(ConversationStore::Impl& d, ConversationId id, const QString& sqlText,
                     std::initializer_list<QVariant> values, const QString& doing) {
    if (!d.open) return d.notOpen();
    QSqlQuery q(d.db());
    KESTREL_STORE_TRY(d.run(q, sqlText, values, doing));
    if (q.numRowsAffected() == 0)
        return {StoreError::Code::NotFound, QStringLiteral("cannot %1: there is no conversation %2").arg(doing).arg(id)};
    return StoreError::ok();
}

}  // namespace

StoreError ConversationStore::renameConversation(ConversationId id, const QString& title) {
    return updateOne(*d_, id, QStringLiteral("UPDATE conversations SET title = ?, updated_at = ? WHERE id = ?"),
                     {cleanTitle(title), sql::nowMs(), id}, QStringLiteral("rename conversation %1").arg(id));
}

StoreError ConversationStore::setConversationModel(ConversationId id, const QString& model) {
    return updateOne(*d_, id, QStringLiteral("UPDATE conversations SET model = ? WHERE id = ?"), {model, id},
                     QStringLiteral("set the model of conversation %1").arg(id));
}

StoreError ConversationStore::setSystemPrompt(ConversationId id, const QString& systemPrompt) {
    return updateOne(*d_, id, QStringLiteral("UPDATE conversations SET system_prompt = ?, updated_at = ? WHERE id = ?"),
                     {systemPrompt, sql::nowMs(), id},
                     QStringLiteral("set the system prompt of conversation %1").arg(id));
}

StoreError ConversationStore::deleteConversation(ConversationId id) {
    return updateOne(*d_, id,
                     QStringLiteral("UPDATE conversations SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL"),
                     {sql::nowMs(), id}, QStringLiteral("delete conversation %1").arg(id));
}

StoreError ConversationStore::restoreConversation(ConversationId id) {
    return updateOne(*d_, id,
                     QStringLiteral("UPDATE conversations SET deleted_at = NULL WHERE id = ? AND deleted_at IS NOT NULL"),
                     {id}, QStringLiteral("restore deleted conversation %1").arg(id));
}

StoreResult<int> ConversationStore::purgeDeleted(const QDateTime& deletedBefore) {
    if (!d_->open) return d_->notOpen();
    const qint64 cutoff = deletedBefore.isValid() ? sql::toMs(deletedBefore) : std::numeric_limits<qint64>::max();
    const QString doing = QStringLiteral("purge deleted conversations");
    sql::Transaction tx(d_->db(), d_->path);
    KESTREL_STORE_TRY(tx.begin(doing));
    // Messages go with their conversation (ON DELETE CASCADE), and the search
    // index with them (triggers).
    QSqlQuery q(d_->db());
    KESTREL_STORE_TRY(d_->run(q,
        QStringLiteral("DELETE FROM conversations WHERE deleted_at IS NOT NULL AND deleted_at <= ?"),
        {cutoff}, doing));
    const int n = q.numRowsAffected();
    KESTREL_STORE_TRY(tx.commit(doing));
    return n;
}

namespace {

StoreResult<QList<Conversation>> listWhere(const ConversationStore::Impl& d, const QString& where,
                                           const QString& order) {
    if (!d.open) return d.notOpen();
    QSqlQuery q(d.db());
    q.setForwardOnly(true);
    KESTREL_STORE_TRY(d.run(q,
        QStringLiteral("SELECT %1 FROM conversations WHERE %2 ORDER BY %3")
            .arg(QLatin1String(kConversationColumns), where, order),
        {}, QStringLiteral("list conversations")));
    QList<Conversation> out;
    while (q.next()) out.append(conversationFromQuery(q));
    return out;
}

}  // namespace

StoreResult<QList<Conversation>> ConversationStore::listConversations() const {
    return listWhere(*d_, QStringLiteral("deleted_at IS NULL"), QStringLiteral("updated_at DESC, id DESC"));
}

StoreResult<QList<Conversation>> ConversationStore::listDeletedConversations() const {
    return listWhere(*d_, QStringLiteral("deleted_at IS NOT NULL"), QStringLiteral("deleted_at DESC, id DESC"));
}

StoreResult<Conversation> ConversationStore::conversation(ConversationId id) const {
    if (!d_->open) return d_->notOpen();
    QSqlQuery q(d_->db());
    KESTREL_STORE_TRY(d_->run(q,
        QStringLiteral("SELECT %1 FROM conversations WHERE id = ?").arg(QLatin1String(kConversationColumns)),
        {id}, QStringLiteral("read conversation %1").arg(id)));
    if (!q.next()) return {StoreError::Code::NotFound, QStringLiteral("there is no conversation %1").arg(id)};
    return conversationFromQuery(q);
}

}  // namespace kestrel::store
