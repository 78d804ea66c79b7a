#include "conversation_list_model.h"

#include "conversation_store.h"

#include <QLocale>
#include <QSet>

namespace kestrel::desktop {

ConversationListModel::ConversationListModel(store::ConversationStore* store, QObject* parent)
    : QAbstractListModel(parent), store_(store) {}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(items_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() < 0 || index.row() >= items_.size()) return {};
    const Item& c = items_[index.row()];
    switch (role) {
    case IdRole: return c.id;
    case Qt::DisplayRole:
    case TitleRole: return c.title;
    case UpdatedRole: return c.updated;
    case SnippetRole: return c.snippetHtml;
    case UpdatedTextRole: {
        const QDateTime local = c.updated.toLocalTime();
        if (local.date() != QDate::currentDate()) return QLocale().toString(local.date(), QLocale::ShortFormat);
        // Minutes are enough in a list; some locales' short format carries seconds.
        QString format = QLocale().timeFormat(QLocale::ShortFormat);
        format.remove(QStringLiteral(":ss"));
        return QLocale().toString(local.time(), format);
    }
    default: return {};
    }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
    return {{IdRole, "conversationId"}, {TitleRole, "title"}, {UpdatedRole, "updated"},
            {SnippetRole, "snippet"}, {UpdatedTextRole, "updatedText"}};
}

void ConversationListModel::setQuery(const QString& query) {
    if (query == query_) return;
    query_ = query;
    emit queryChanged();
    refresh();
}

void ConversationListModel::refresh() {
    QList<Item> items;
    lastError_.clear();
    if (store_ && store_->isOpen()) {
        if (query_.trimmed().isEmpty()) {
            auto list = store_->listConversations();
            if (list) {
                for (const store::Conversation& c : list.value()) items.append({c.id, c.title, c.updatedAt, {}});
            } else {
                lastError_ = list.error().message();
            }
        } else {
            auto hits = store_->search(query_);
            if (hits) {
                QSet<qint64> seen;
                for (const store::SearchHit& hit : hits.value()) {
                    if (seen.contains(hit.conversationId)) continue;
                    seen.insert(hit.conversationId);
                    auto c = store_->conversation(hit.conversationId);
                    items.append({hit.conversationId, hit.conversationTitle, c ? c->updatedAt : QDateTime(),
                                  hit.highlightedHtml()});
                }
            } else {
                lastError_ = hits.error().message();
            }
        }
    }
    const bool countChanges = items.size() != items_.size();
    beginResetModel();
    items_ = std::move(items);
    endResetModel();
    if (countChanges) emit countChanged();
}

qint64 ConversationListModel::idAt(int row) const {
    return row >= 0 && row < items_.size() ? items_[row].id : 0;
}

int ConversationListModel::rowOf(qint64 id) const {
    for (int i = 0; i < items_.size(); ++i)
        if (items_[i].id == id) return i;
    return -1;
}

}  // namespace kestrel::desktop
