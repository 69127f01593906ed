// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/widgets/wrappingdelegate.h"

#include <QHeaderView>
#include <QTreeView>

namespace moetune {

WrappingDelegate::WrappingDelegate(QTreeView *view)
    : QStyledItemDelegate(view)
    , m_view(view) {
    view->setWordWrap(true);
    view->setUniformRowHeights(false);
    // A new column width changes every wrapped row's height.
    connect(view->header(), &QHeaderView::sectionResized, view, [view] { view->doItemsLayout(); });
}

QSize WrappingDelegate::sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const {
    // A column sized to its contents is as wide as its one line: wrapping it at its current width would
    // size it to that width (a "Where" of four lines). Only the stretched column wraps.
    if (m_view->header()->sectionResizeMode(index.column()) == QHeaderView::ResizeToContents) {
        QStyleOptionViewItem single = option;
        single.features &= ~QStyleOptionViewItem::WrapText;
        return QStyledItemDelegate::sizeHint(single, index);
    }
    QStyleOptionViewItem opt = option;
    opt.features |= QStyleOptionViewItem::WrapText;
    int width = m_view->header()->sectionSize(index.column());
    if (index.column() == m_view->header()->logicalIndex(0))
        width -= m_view->indentation() * (m_view->rootIsDecorated() ? 1 : 0);
    // The style wraps only inside a valid rectangle (QTreeView passes a width of -1 and no height).
    opt.rect = QRect(0, 0, qMax(1, width), QWIDGETSIZE_MAX);
    return QStyledItemDelegate::sizeHint(opt, index);
}

} // namespace moetune
