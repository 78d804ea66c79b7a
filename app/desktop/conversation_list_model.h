// ConversationListModel: the sidebar. Every conversation newest first, or,
// with a search query, the conversations that match it (FTS5, best first)
// with a highlighted snippet.
//
// UI thread only (it reads the store, which belongs to that thread). The store
// must outlive the model. Call refresh() after the store changed.
#pragma once

#include <QAbstractListModel>
#include <QDateTime>
#include <QList>
#include <QString>

namespace kestrel::store {
class ConversationStore;
}

namespace kestrel::desktop {

class ConversationListModel : public QAbstractListModel {
    Q_OBJECT
    Q_PROPERTY(QString query READ query WRITE setQuery NOTIFY queryChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
public:
    enum Role { IdRole = Qt::UserRole + 1, TitleRole, UpdatedRole, SnippetRole, UpdatedTextRole };

    explicit ConversationListModel(store::ConversationStore* store, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QString query() const { return query_; }
    void setQuery(const QString& query);
    Q_INVOKABLE void refresh();
    Q_INVOKABLE qint64 idAt(int row) const;
    Q_INVOKABLE int rowOf(qint64 id) const;
    QString lastError() const { return lastError_; }

signals:
    void queryChanged();
    void countChanged();

private:
    struct Item {
        qint64 id = 0;
        QString title;
        QDateTime updated;
        QString snippetHtml;  // escaped user text with <b> highlights; empty without a query
    };
    store::ConversationStore* store_;
    QString query_;
    QList<Item> items_;
    QString lastError_;
};

}  // namespace kestrel::desktop
