// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QStyledItemDelegate>

namespace moetune {

// Draws HostGpuModel's memory column as a bar (used / total) with the text on top.
class HostMemoryDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    explicit HostMemoryDelegate(QObject *parent = nullptr);
    void paint(QPainter *painter, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override;
    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;
};

} // namespace moetune
