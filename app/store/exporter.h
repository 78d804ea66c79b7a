// Export conversations to files people read or re-import, and import them back.
//
// Formats:
//  - Markdown and plain text: the active branch of each conversation, with
//    a note where other branches exist. For reading and pasting.
//  - HTML: one self-contained page (inline CSS, no scripts, no external
//    resources, light/dark via prefers-color-scheme); every piece of user,
//    model and title text is HTML-escaped.
//  - JSON: lossless. Every field of every message of every branch, in a
//    versioned envelope {"format": "kestrel-conversations", "version": 1,
//    "exportedAt": ..., "conversations": [...]}. Only this one re-imports.
//
// Files are written atomically (QSaveFile): a failed export never leaves a
// half-written file in place of an older one.
//
// Threading: like ConversationStore, use from the store's thread. The pure
// render*() functions are reentrant and touch no database.
#pragma once

#include "conversation_store.h"
#include "store_error.h"
#include "store_types.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace kestrel::store {

enum class ExportFormat { Markdown, Json, Html, PlainText };

// "md", "json", "html", "txt".
QString exportFileExtension(ExportFormat format);
// "Markdown", "JSON", "HTML", "Plain text" (untranslated; the UI translates its own labels).
QString exportFormatName(ExportFormat format);

inline constexpr const char* kJsonFormatName = "kestrel-conversations";
inline constexpr int kJsonFormatVersion = 1;

// Pure renderers over snapshots (UTF-8 bytes).
QByteArray renderMarkdown(const QList<ConversationSnapshot>& conversations);
QByteArray renderJson(const QList<ConversationSnapshot>& conversations);
QByteArray renderHtml(const QList<ConversationSnapshot>& conversations);
QByteArray renderPlainText(const QList<ConversationSnapshot>& conversations);
QByteArray render(ExportFormat format, const QList<ConversationSnapshot>& conversations);

// Parses and validates an export made by renderJson(). A malformed, truncated
// or hostile file (wrong types, unknown roles, parent links to nowhere or in a
// cycle, a newer version) is an InvalidFile / Unsupported error naming what
// was wrong, never a crash. Ids in the result are those of the file; messages
// come parents-first, siblings in file order. "deletedAt" is not read back:
// an imported conversation is never deleted.
StoreResult<QList<ConversationSnapshot>> parseJsonExport(const QByteArray& json);

class Exporter {
public:
    // The store must outlive the exporter.
    explicit Exporter(const ConversationStore& store);

    // Snapshots of `ids`, or of every conversation that is not deleted when
    // `ids` is empty (newest first), rendered in `format`.
    StoreResult<QByteArray> exportToBytes(const QList<ConversationId>& ids, ExportFormat format) const;
    // The same, written atomically to `path`.
    StoreError exportToFile(const QList<ConversationId>& ids, ExportFormat format,
                            const QString& path) const;

private:
    const ConversationStore& store_;
};

class Importer {
public:
    // The store must outlive the importer.
    explicit Importer(ConversationStore& store);

    // Imports every conversation of a JSON export as new conversations (new
    // ids, branches and the active leaf preserved). All or nothing per
    // conversation; validation happens before anything is written, so a bad
    // file imports nothing. Returns the new ids in file order.
    StoreResult<QList<ConversationId>> importBytes(const QByteArray& json);
    StoreResult<QList<ConversationId>> importFile(const QString& path);

    // Files bigger than this are refused before being read (default 512 MiB).
    void setMaxFileSize(qint64 bytes);

private:
    ConversationStore& store_;
    qint64 maxFileSize_ = 512ll * 1024 * 1024;
};

}  // namespace kestrel::store
