// MessageModel: the messages of the branch on screen, for the chat ListView.
//
// UI thread only. The controller fills it from the store and appends streamed
// text to the last row; QML only reads it. Rows are snapshots, so the model
// never queries the database while QML is painting.
#pragma once

#include <QAbstractListModel>
#include <QList>
#include <QString>
#include <QVariantList>

namespace kestrel::desktop {

struct MessageItem {
    qint64 id = 0;
    qint64 parentId = 0;
    QString role;   // "user", "assistant", "system"
    QString content;
    QString reasoning;
    QString state;  // "complete", "streaming", "interrupted", "error"
    QString error;
    double tokensPerSecond = 0;
    int siblingIndex = 0;
    int siblingCount = 1;
    QString stopReason;  // why a reply stopped (store::Message::stopReason); empty when unknown

    // A reply the model can go on writing: cut at its length limit, stopped by the user
    // or rewritten by them, with text to continue from.
    bool continuable() const {
        return role == QLatin1String("assistant") && !content.isEmpty() &&
               (stopReason == QLatin1String("max_tokens") || stopReason == QLatin1String("edited") ||
                state == QLatin1String("interrupted"));
    }
};

class MessageModel : public QAbstractListModel {
    Q_OBJECT
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
public:
    enum Role {
        RoleRole = Qt::UserRole + 1,
        ContentRole,
        ReasoningRole,
        StateRole,
        TokensPerSecondRole,
        SiblingIndexRole,
        SiblingCountRole,
        MessageIdRole,
        SegmentsRole,  // the content split at fenced code blocks (text_segments.h)
        ErrorRole,
        StopReasonRole,
        ContinuableRole,  // MessageItem::continuable()
    };
    Q_ENUM(Role)

    explicit MessageModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void setMessages(QList<MessageItem> items);
    const QList<MessageItem>& items() const { return items_; }
    int rowOf(qint64 id) const;  // -1 when absent
    // Streaming: append to the row of `id`.
    void appendText(qint64 id, const QString& content, const QString& reasoning);
    void setState(qint64 id, const QString& state, const QString& error = {});
    void setTokensPerSecond(qint64 id, double tokensPerSecond);
    void setStopReason(qint64 id, const QString& stopReason);

    Q_INVOKABLE QVariantMap get(int row) const;

signals:
    void countChanged();

private:
    // Applies `change` to the row of `id` (if shown) and announces `roles` changed.
    template <class Change>
    void update(qint64 id, const QList<int>& roles, Change&& change);

    QList<MessageItem> items_;
};

}  // namespace kestrel::desktop
