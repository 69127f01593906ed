#pragma once

#include <QStyledItemDelegate>

class QTreeView;

namespace moetune {

// Wraps a tree view's text to its column's width: the size hint measures the text at the width of the
// column (QStyledItemDelegate measures it unbounded, so a wrapped row stays one line tall and its text is
// cut). The view re-lays its rows when a column is resized.
class WrappingDelegate : public QStyledItemDelegate {
public:
    explicit WrappingDelegate(QTreeView *view);

    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;

private:
    QTreeView *m_view;
};

} // namespace moetune
