// Export entry points: format names, dispatch, and the atomic file write.
#include "exporter.h"

#include <QSaveFile>

namespace kestrel::store {

QString exportFileExtension(ExportFormat format) {
    switch (format) {
    case ExportFormat::Markdown: return QStringLiteral("md");
    case ExportFormat::Json: return QStringLiteral("json");
    case ExportFormat::Html: return QStringLiteral("html");
    case ExportFormat::PlainText: return QStringLiteral("txt");
    }
    return QStringLiteral("txt");
}

QString exportFormatName(ExportFormat format) {
    switch (format) {
    case ExportFormat::Markdown: return QStringLiteral("Markdown");
    case ExportFormat::Json: return QStringLiteral("JSON");
    case ExportFormat::Html: return QStringLiteral("HTML");
    case ExportFormat::PlainText: return QStringLiteral("Plain text");
    }
    return {};
}

QByteArray render(ExportFormat format, const QList<ConversationSnapshot>& conversations) {
    switch (format) {
    case ExportFormat::Markdown: return renderMarkdown(conversations);
    case ExportFormat::Json: return renderJson(conversations);
    case ExportFormat::Html: return renderHtml(conversations);
    case ExportFormat::PlainText: return renderPlainText(conversations);
    }
    return {};
}

Exporter::Exporter(const ConversationStore& store) : store_(store) {}

StoreResult<QByteArray> Exporter::exportToBytes(const QList<ConversationId>& ids, ExportFormat format) const {
    QList<ConversationId> which = ids;
    if (which.isEmpty()) {
        auto all = store_.listConversations();
        if (!all) return all.error();
        for (const Conversation& c : *all) which.append(c.id);
    }
    QList<ConversationSnapshot> snapshots;
    snapshots.reserve(which.size());
    for (ConversationId id : which) {
        auto s = store_.snapshot(id);
        if (!s) return s.error();
        snapshots.append(std::move(*s));
    }
    return render(format, snapshots);
}

StoreError Exporter::exportToFile(const QList<ConversationId>& ids, ExportFormat format, const QString& path) const {
    auto bytes = exportToBytes(ids, format);
    if (!bytes) return bytes.error();
    // QSaveFile writes a temporary file next to `path` and renames it over
    // `path` only when everything was written.
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return {StoreError::Code::Io, QStringLiteral("%1: cannot write the export: %2").arg(path, file.errorString())};
    if (file.write(*bytes) != bytes->size()) {
        const QString why = file.errorString();
        file.cancelWriting();
        return {StoreError::Code::Io, QStringLiteral("%1: writing the export failed: %2").arg(path, why)};
    }
    if (!file.commit())
        return {StoreError::Code::Io, QStringLiteral("%1: saving the export failed: %2").arg(path, file.errorString())};
    return StoreError::ok();
}

}  // namespace kestrel::store
