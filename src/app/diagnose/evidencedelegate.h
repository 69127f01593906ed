#pragma once

#include <QStyledItemDelegate>

namespace moetune {

// Paints an evidence line with the part that matched the rule highlighted.
class EvidenceDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    explicit EvidenceDelegate(QObject *parent = nullptr);

    void paint(QPainter *painter, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override;
};

} // namespace moetune
