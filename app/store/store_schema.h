// The database schema as a list of migrations, applied in order and recorded
// in PRAGMA user_version. Internal to app/store (tests use it directly).
//
// To change the schema, append one Migration to kMigrations in
// store_schema.cpp with the next version number; never edit a shipped one.
// Each migration runs in its own transaction together with the user_version
// bump, so a crash mid-upgrade leaves the previous version intact.
#pragma once

#include "store_error.h"

#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <span>

namespace kestrel::store::schema {

struct Migration {
    int version;          // user_version after this migration; 1, 2, 3, ...
    const char* purpose;  // for error messages
    QStringList statements;
};

// The migrations this build knows, ascending by version.
std::span<const Migration> migrations();
int latestVersion();

// Sets the per-connection pragmas: WAL, foreign keys, synchronous=NORMAL,
// busy timeout.
StoreError configureConnection(QSqlDatabase& db, const QString& dbPath);

// Reads user_version and applies every migration above it. A version above
// the last migration's is refused (Unsupported) without touching the file.
StoreError migrate(QSqlDatabase& db, const QString& dbPath, std::span<const Migration> steps);

StoreResult<int> userVersion(QSqlDatabase& db, const QString& dbPath);

}  // namespace kestrel::store::schema
