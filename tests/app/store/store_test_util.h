// Shared by the store suites: a fresh database in a temporary folder and raw
// SQL access to the store's connection for checks the API does not expose.
#pragma once

#include "conversation_store.h"

#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStringList>
#include <QTemporaryDir>
#include <QVariant>
#include <QtTest>

namespace kestrel::store::test {

// The first column of every row of `sql` on the store's connection, as text.
inline QStringList queryColumn(const ConversationStore& store, const QString& sql) {
    QSqlQuery q(QSqlDatabase::database(store.connectionName(), false));
    QStringList out;
    if (!q.exec(sql)) return {QStringLiteral("SQL ERROR: ") + q.lastError().text()};
    while (q.next()) out << q.value(0).toString();
    return out;
}

inline QString queryValue(const ConversationStore& store, const QString& sql) {
    const QStringList rows = queryColumn(store, sql);
    return rows.isEmpty() ? QString() : rows.first();
}

// PRAGMA integrity_check and foreign_key_check both clean.
inline bool databaseConsistent(const ConversationStore& store, QString* why) {
    const QStringList integrity = queryColumn(store, QStringLiteral("PRAGMA integrity_check"));
    if (integrity != QStringList{QStringLiteral("ok")}) {
        *why = QStringLiteral("integrity_check: ") + integrity.join(QLatin1String("; "));
        return false;
    }
    const QStringList fk = queryColumn(store, QStringLiteral("PRAGMA foreign_key_check"));
    if (!fk.isEmpty()) {
        *why = QStringLiteral("foreign_key_check: ") + fk.join(QLatin1String("; "));
        return false;
    }
    return true;
}

inline StoreError errorOf(const StoreError& e) { return e; }
template <typename T>
StoreError errorOf(const StoreResult<T>& r) { return r.error(); }

}  // namespace kestrel::store::test

#define STORE_VERIFY_OK(expr)                                                               \
    do {                                                                                    \
        const auto storeCheck_ = (expr);                                                    \
        QVERIFY2(storeCheck_.isOk(), qPrintable(::kestrel::store::test::errorOf(storeCheck_).message())); \
    } while (0)
