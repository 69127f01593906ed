// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/hosts/hostmemorydelegate.h"

#include "app/hosts/hostgpumodel.h"

#include <QApplication>
#include <QPainter>

namespace moetune {

HostMemoryDelegate::HostMemoryDelegate(QObject *parent)
    : QStyledItemDelegate(parent) {}

void HostMemoryDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option,
                               const QModelIndex &index) const {
    const double fraction = index.data(HostGpuModel::MemoryFractionRole).toDouble();
    if (fraction < 0) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QString text = opt.text;
    opt.text.clear();
    QWidget *widget = const_cast<QWidget *>(option.widget);
    QStyle *style = widget ? widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);

    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    const QRectF bar = QRectF(option.rect).adjusted(4, 4, -4, -4);
    painter->setPen(QPen(option.palette.color(QPalette::Mid), 1));
    painter->setBrush(option.palette.color(QPalette::Base));
    painter->drawRoundedRect(bar, 3, 3);
    // Green while there is room, amber above 80 %, red above 95 %: a busy GPU leaves little for tuning.
    const QColor fill = fraction > 0.95  ? QColor(0xe5, 0x73, 0x73)
                        : fraction > 0.8 ? QColor(0xff, 0xb7, 0x4d)
                                         : QColor(0x81, 0xc7, 0x84);
    QRectF used = bar.adjusted(1, 1, -1, -1);
    used.setWidth(used.width() * qBound(0.0, fraction, 1.0));
    painter->setPen(Qt::NoPen);
    painter->setBrush(fill);
    painter->drawRoundedRect(used, 2, 2);
    painter->setPen(option.palette.color(QPalette::Text));
    painter->drawText(bar, Qt::AlignCenter, text);
    painter->restore();
}

QSize HostMemoryDelegate::sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const {
    QSize size = QStyledItemDelegate::sizeHint(option, index);
    size.setHeight(size.height() + 8);
    size.setWidth(qMax(size.width() + 24, 220));
    return size;
}

} // namespace moetune
