#include "store_sql.h"

namespace kestrel::store::sql {
namespace {

// SQLite primary result codes (sqlite3.h); QtSql reports them as text.
enum : int {
    kSqliteBusy = 5,
    kSqliteLocked = 6,
    kSqliteNoMem = 7,
    kSqliteReadOnly = 8,
    kSqliteIoErr = 10,
    kSqliteCorrupt = 11,
    kSqliteFull = 13,
    kSqliteCantOpen = 14,
    kSqliteConstraint = 19,
    kSqliteNotADb = 26,
};

}  // namespace

StoreError toStoreError(const QSqlError& error, const QString& doing, const QString& dbPath) {
    bool ok = false;
    const int native = error.nativeErrorCode().toInt(&ok);
    const int primary = ok ? (native & 0xff) : -1;
    const QString detail = error.text().trimmed().isEmpty() ? QStringLiteral("unknown SQLite error")
                                                            : error.text().trimmed();
    const QString where = dbPath.isEmpty() ? QStringLiteral("the database") : dbPath;
    using C = StoreError::Code;
    switch (primary) {
    case kSqliteReadOnly:
        return {C::ReadOnly, QStringLiteral("%1: cannot %2: the database is read-only (check the file's and "
                                            "its folder's permissions) [%3]").arg(where, doing, detail)};
    case kSqliteFull:
        return {C::DiskFull, QStringLiteral("%1: cannot %2: the disk is full; free some space and try "
                                            "again [%3]").arg(where, doing, detail)};
    case kSqliteCorrupt:
    case kSqliteNotADb:
        return {C::Corrupt, QStringLiteral("%1: cannot %2: the file is damaged or is not a Kestrel "
                                           "database [%3]").arg(where, doing, detail)};
    case kSqliteBusy:
    case kSqliteLocked:
        return {C::Busy, QStringLiteral("%1: cannot %2: another program (or another Kestrel window) "
                                        "keeps the database locked [%3]").arg(where, doing, detail)};
    case kSqliteCantOpen:
    case kSqliteIoErr:
    case kSqliteNoMem:
        return {C::Io, QStringLiteral("%1: cannot %2: %3").arg(where, doing, detail)};
    case kSqliteConstraint:
        return {C::InvalidArgument, QStringLiteral("%1: cannot %2: %3").arg(where, doing, detail)};
    default:
        return {C::Internal, QStringLiteral("%1: cannot %2: %3").arg(where, doing, detail)};
    }
}

StoreError run(QSqlQuery& query, const QString& sql, const QVariantList& values, const QString& doing,
               const QString& dbPath) {
    if (!query.prepare(sql)) return toStoreError(query.lastError(), doing, dbPath);
    for (const QVariant& v : values) {
        // A null QString binds as SQL NULL; text columns are NOT NULL, and
        // "no title" is an empty title.
        if (v.typeId() == QMetaType::QString && v.toString().isNull())
            query.addBindValue(QString(QLatin1String("")));
        else
            query.addBindValue(v);
    }
    if (!query.exec()) return toStoreError(query.lastError(), doing, dbPath);
    return StoreError::ok();
}

StoreError run(QSqlQuery& query, const QString& sql, std::initializer_list<QVariant> values,
               const QString& doing, const QString& dbPath) {
    return run(query, sql, QVariantList(values), doing, dbPath);
}

Transaction::Transaction(QSqlDatabase db, QString dbPath) : db_(std::move(db)), dbPath_(std::move(dbPath)) {}

Transaction::~Transaction() {
    if (active_) db_.rollback();
}

StoreError Transaction::begin(const QString& doing) {
    if (!db_.transaction()) return toStoreError(db_.lastError(), doing, dbPath_);
    active_ = true;
    return StoreError::ok();
}

StoreError Transaction::commit(const QString& doing) {
    if (!db_.commit()) {
        const StoreError err = toStoreError(db_.lastError(), doing, dbPath_);
        db_.rollback();
        active_ = false;
        return err;
    }
    active_ = false;
    return StoreError::ok();
}

}  // namespace kestrel::store::sql
