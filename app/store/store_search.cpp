// Full-text search. FTS5 (trigram tokenizer) finds and ranks the rows; the
// snippet and its highlight ranges are cut here from the row's text, so the
// UI gets plain text plus ranges instead of markup mixed into user text.
#include "conversation_store.h"

#include "store_impl.h"

#include <QRegularExpression>
#include <QSqlQuery>

namespace kestrel::store {
namespace {

// The trigram tokenizer can only match terms of three or more characters;
// shorter ones (common in Chinese: 中文, 你好) are matched with instr().
constexpr int kTrigram = 3;
constexpr int kSnippetBefore = 40;
constexpr int kSnippetLength = 160;

QStringList splitTerms(const QString& query) {
    QString cleaned = query;
    for (QChar& c : cleaned)
        if (c.category() == QChar::Other_Control || c.category() == QChar::Other_Format) c = QLatin1Char(' ');
    static const QRegularExpression kSpace(QStringLiteral("\\s+"));
    QStringList terms = cleaned.split(kSpace, Qt::SkipEmptyParts);
    terms.removeDuplicates();
    return terms;
}

int codePoints(const QString& s) { return int(s.toUcs4().size()); }

// Each term becomes an FTS5 string ("a""b" for a"b): inside a string, FTS5
// syntax (*, -, NEAR(, OR, ^, :) has no meaning. Adjacent strings are ANDed.
QString ftsExpression(const QStringList& terms) {
    QStringList quoted;
    for (const QString& t : terms) {
        QString q = t;
        q.replace(QLatin1Char('"'), QLatin1String("\"\""));
        quoted << QLatin1Char('"') + q + QLatin1Char('"');
    }
    return quoted.join(QLatin1Char(' '));
}

QString safeCut(const QString& text, int& start, int& end) {
    if (start > 0 && text.at(start).isLowSurrogate()) --start;
    if (end < text.size() && end > 0 && text.at(end).isLowSurrogate()) ++end;
    return text.mid(start, end - start);
}

void makeSnippet(const QString& text, const QStringList& terms, SearchHit& hit) {
    int first = -1;
    for (const QString& t : terms) {
        const int at = text.indexOf(t, 0, Qt::CaseInsensitive);
        if (at >= 0 && (first < 0 || at < first)) first = at;
    }
    int start = first < 0 ? 0 : std::max(0, first - kSnippetBefore);
    int end = std::min<int>(int(text.size()), start + kSnippetLength);
    QString body = safeCut(text, start, end);
    // One line for a list entry; same length, so ranges stay valid.
    for (QChar& c : body)
        if (c.category() == QChar::Other_Control || c == QChar::LineSeparator || c == QChar::ParagraphSeparator)
            c = QLatin1Char(' ');
    const QString lead = start > 0 ? QStringLiteral("…") : QString();
    hit.snippet = lead + body + (end < text.size() ? QStringLiteral("…") : QString());

    QList<std::pair<int, int>> ranges;
    for (const QString& t : terms) {
        for (int at = body.indexOf(t, 0, Qt::CaseInsensitive); at >= 0;
             at = body.indexOf(t, at + int(t.size()), Qt::CaseInsensitive))
            ranges.append({at + int(lead.size()), int(t.size())});
    }
    std::sort(ranges.begin(), ranges.end());
    for (const auto& r : ranges) {  // merge overlaps ("aa" and "aaa")
        if (!hit.highlights.isEmpty() && r.first <= hit.highlights.last().first + hit.highlights.last().second) {
            auto& last = hit.highlights.last();
            last.second = std::max(last.first + last.second, r.first + r.second) - last.first;
        } else {
            hit.highlights.append(r);
        }
    }
}

struct SourceSql {
    const char* fts;      // the FTS table
    const char* table;    // its content table alias "x" with columns used below
    const char* text;     // the searched column of x
    const char* select;   // columns: message id (or 0), conversation id, title, text
    const char* join;     // joins that reach conversations c
    const char* notLive;  // extra condition on x
};

const SourceSql kTitles = {"conversations_fts", "conversations x", "x.title", "0, x.id, x.title, x.title",
                           "JOIN conversations c ON c.id = x.id", "1"};
const SourceSql kMessages = {"messages_fts", "messages x", "x.content",
                             "x.id, x.conversation_id, c.title, x.content",
                             "JOIN conversations c ON c.id = x.conversation_id", "x.state != 'streaming'"};

StoreError searchSource(const ConversationStore::Impl& d, const SourceSql& src, const QStringList& longTerms,
                        const QStringList& shortTerms, const QStringList& allTerms, int limit,
                        QList<SearchHit>& out) {
    QString sqlText;
    QVariantList values;
    QString filters;
    for (const QString& t : shortTerms) {
        filters += QStringLiteral(" AND instr(lower(%1), lower(?)) > 0").arg(QLatin1String(src.text));
        values.append(t);
    }
    if (!longTerms.isEmpty()) {
        // FTS5 wants the table's own name (not an alias) left of MATCH.
        sqlText = QStringLiteral("SELECT %1 FROM %2 JOIN %3 ON x.rowid = %2.rowid %4 "
                                 "WHERE %2 MATCH ? AND c.deleted_at IS NULL%5 ORDER BY %2.rank LIMIT ?")
                      .arg(QLatin1String(src.select), QLatin1String(src.fts), QLatin1String(src.table),
                           QLatin1String(src.join), filters);
        values.prepend(ftsExpression(longTerms));
    } else {
        sqlText = QStringLiteral("SELECT %1 FROM %2 %3 WHERE c.deleted_at IS NULL AND %4%5 "
                                 "ORDER BY c.updated_at DESC, x.rowid DESC LIMIT ?")
                      .arg(QLatin1String(src.select), QLatin1String(src.table), QLatin1String(src.join),
                           QLatin1String(src.notLive), filters);
    }
    values.append(limit);
    QSqlQuery q(d.db());
    q.setForwardOnly(true);
    KESTREL_STORE_TRY(sql::run(q, sqlText, values, QStringLiteral("search"), d.path));
    while (q.next()) {
        SearchHit hit;
        hit.messageId = q.value(0).toLongLong();
        hit.conversationId = q.value(1).toLongLong();
        hit.conversationTitle = q.value(2).toString();
        makeSnippet(q.value(3).toString(), allTerms, hit);
        out.append(std::move(hit));
    }
    return StoreError::ok();
}

}  // namespace

StoreResult<QList<SearchHit>> ConversationStore::search(const QString& query, int limit) const {
    if (!d_->open) return d_->notOpen();
    const QStringList terms = splitTerms(query);
    QList<SearchHit> hits;
    if (terms.isEmpty() || limit <= 0) return hits;
    QStringList longTerms, shortTerms;
    for (const QString& t : terms) (codePoints(t) >= kTrigram ? longTerms : shortTerms) << t;
    // Titles first: a conversation named after the query is the likeliest target.
    KESTREL_STORE_TRY(searchSource(*d_, kTitles, longTerms, shortTerms, terms, limit, hits));
    if (hits.size() < limit)
        KESTREL_STORE_TRY(searchSource(*d_, kMessages, longTerms, shortTerms, terms, limit - int(hits.size()), hits));
    return hits;
}

}  // namespace kestrel::store
