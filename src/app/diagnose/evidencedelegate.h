// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QStyledItemDelegate>

namespace moetune {

// Paints an evidence line whole (wrapped to the column) with the part that matched the rule highlighted.
class EvidenceDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    explicit EvidenceDelegate(QObject *parent = nullptr);

    void paint(QPainter *painter, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override;
    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;
};

} // namespace moetune
