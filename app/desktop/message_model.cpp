#include "message_model.h"

#include "text_segments.h"

namespace kestrel::desktop {

MessageModel::MessageModel(QObject* parent) : QAbstractListModel(parent) {}

int MessageModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(items_.size()); }

QVariant MessageModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() < 0 || index.row() >= items_.size()) return {};
    const MessageItem& m = items_[index.row()];
    switch (role) {
    case RoleRole: return m.role;
    case Qt::DisplayRole:
    case ContentRole: return m.content;
    case ReasoningRole: return m.reasoning;
    case StateRole: return m.state;
    case TokensPerSecondRole: return m.tokensPerSecond;
    case SiblingIndexRole: return m.siblingIndex;
    case SiblingCountRole: return m.siblingCount;
    case MessageIdRole: return m.id;
    case SegmentsRole: return splitMarkdownSegments(m.content);
    case ErrorRole: return m.error;
    case StopReasonRole: return m.stopReason;
    case ContinuableRole: return m.continuable();
    default: return {};
    }
}

QHash<int, QByteArray> MessageModel::roleNames() const {
    return {
        {RoleRole, "role"},
        {ContentRole, "content"},
        {ReasoningRole, "reasoning"},
        {StateRole, "state"},
        {TokensPerSecondRole, "tokensPerSecond"},
        {SiblingIndexRole, "siblingIndex"},
        {SiblingCountRole, "siblingCount"},
        {MessageIdRole, "messageId"},
        {SegmentsRole, "segments"},
        {ErrorRole, "error"},
        {StopReasonRole, "stopReason"},
        {ContinuableRole, "continuable"},
    };
}

void MessageModel::setMessages(QList<MessageItem> items) {
    const bool countChanges = items.size() != items_.size();
    beginResetModel();
    items_ = std::move(items);
    endResetModel();
    if (countChanges) emit countChanged();
}

int MessageModel::rowOf(qint64 id) const {
    for (int i = int(items_.size()) - 1; i >= 0; --i)
        if (items_[i].id == id) return i;
    return -1;
}

template <class Change>
void MessageModel::update(qint64 id, const QList<int>& roles, Change&& change) {
    const int row = rowOf(id);
    if (row < 0) return;
    change(items_[row]);
    const QModelIndex i = index(row);
    emit dataChanged(i, i, roles);
}

void MessageModel::appendText(qint64 id, const QString& content, const QString& reasoning) {
    if (content.isEmpty() && reasoning.isEmpty()) return;
    update(id, {ContentRole, ReasoningRole, SegmentsRole, ContinuableRole}, [&](MessageItem& m) {
        m.content += content;
        m.reasoning += reasoning;
    });
}

void MessageModel::setState(qint64 id, const QString& state, const QString& error) {
    update(id, {StateRole, ErrorRole, ContinuableRole}, [&](MessageItem& m) {
        m.state = state;
        m.error = error;
    });
}

void MessageModel::setTokensPerSecond(qint64 id, double tokensPerSecond) {
    update(id, {TokensPerSecondRole}, [&](MessageItem& m) { m.tokensPerSecond = tokensPerSecond; });
}

void MessageModel::setStopReason(qint64 id, const QString& stopReason) {
    update(id, {StopReasonRole, ContinuableRole}, [&](MessageItem& m) { m.stopReason = stopReason; });
}

QVariantMap MessageModel::get(int row) const {
    QVariantMap out;
    if (row < 0 || row >= items_.size()) return out;
    const QHash<int, QByteArray> names = roleNames();
    for (auto it = names.begin(); it != names.end(); ++it)
        out.insert(QString::fromLatin1(it.value()), data(index(row), it.key()));
    return out;
}

}  // namespace kestrel::desktop
