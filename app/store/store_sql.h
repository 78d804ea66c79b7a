// Small helpers every store file shares: running a statement with bound
// values and turning any QtSql/SQLite failure into a readable StoreError.
// Internal to app/store.
#pragma once

#include "store_error.h"

#include <QDateTime>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>
#include <QVariant>
#include <QVariantList>

#include <initializer_list>

namespace kestrel::store::sql {

// Maps a QtSql error (SQLite result code in nativeErrorCode) to a StoreError
// whose message says what was being done and to which file.
StoreError toStoreError(const QSqlError& error, const QString& doing, const QString& dbPath);

// Prepares `sql`, binds `values` positionally and executes it. On failure
// returns the error; on success leaves `query` positioned before the first row.
StoreError run(QSqlQuery& query, const QString& sql, std::initializer_list<QVariant> values,
               const QString& doing, const QString& dbPath);
StoreError run(QSqlQuery& query, const QString& sql, const QVariantList& values,
               const QString& doing, const QString& dbPath);

// A transaction that rolls back unless commit() succeeded. Nested use is not
// supported (SQLite has no nested BEGIN); callers keep transactions flat.
class Transaction {
public:
    Transaction(QSqlDatabase db, QString dbPath);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;

    StoreError begin(const QString& doing);
    StoreError commit(const QString& doing);

private:
    QSqlDatabase db_;
    QString dbPath_;
    bool active_ = false;
};

// Times are stored as INTEGER milliseconds since the epoch, UTC.
inline qint64 toMs(const QDateTime& t) { return t.toMSecsSinceEpoch(); }
inline QDateTime fromMs(const QVariant& v) {
    if (v.isNull()) return {};
    return QDateTime::fromMSecsSinceEpoch(v.toLongLong(), Qt::UTC);
}
inline qint64 nowMs() { return QDateTime::currentMSecsSinceEpoch(); }
// NULL for id 0, so "no parent" / "no leaf" are SQL NULLs.
inline QVariant idOrNull(qint64 id) { return id > 0 ? QVariant(id) : QVariant(QMetaType(QMetaType::LongLong)); }

}  // namespace kestrel::store::sql
