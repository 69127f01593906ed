// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/widgets/fittableview.h"

#include <QHeaderView>
#include <QResizeEvent>
#include <QTimer>

namespace moetune {

FitTableView::FitTableView(QWidget *parent)
    : QTableView(parent) {
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setWordWrap(true);
    verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
}

void FitTableView::setModel(QAbstractItemModel *model) {
    QTableView::setModel(model);
    if (!model)
        return;
    // Rows are laid out after the model changes: fit once they are.
    const auto later = [this] { QTimer::singleShot(0, this, &FitTableView::fit); };
    connect(model, &QAbstractItemModel::modelReset, this, later);
    connect(model, &QAbstractItemModel::layoutChanged, this, later);
    connect(model, &QAbstractItemModel::rowsInserted, this, later);
    connect(model, &QAbstractItemModel::rowsRemoved, this, later);
    connect(model, &QAbstractItemModel::dataChanged, this, later);
    fit();
}

int FitTableView::contentHeight() const {
    int height = 2 * frameWidth();
    if (horizontalHeader()->isVisible())
        height += horizontalHeader()->height();
    const int rows = model() ? model()->rowCount() : 0;
    for (int r = 0; r < rows; ++r)
        height += rowHeight(r);
    return height + 1;
}

QSize FitTableView::sizeHint() const {
    return {QTableView::sizeHint().width(), contentHeight()};
}

QSize FitTableView::minimumSizeHint() const {
    return {QTableView::minimumSizeHint().width(), contentHeight()};
}

void FitTableView::resizeEvent(QResizeEvent *event) {
    QTableView::resizeEvent(event);
    if (event->size().width() != event->oldSize().width())
        QTimer::singleShot(0, this, &FitTableView::fit);
}

void FitTableView::fit() {
    resizeRowsToContents();
    const int height = contentHeight();
    if (height != this->height())
        setFixedHeight(height);
}

} // namespace moetune
