// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QTableView>

namespace moetune {

// A table as tall as all its rows (each as tall as its wrapped text), for short tables stacked in one
// scroll area: the area scrolls, the table never does, and nothing in it is cut off.
class FitTableView : public QTableView {
    Q_OBJECT
public:
    explicit FitTableView(QWidget *parent = nullptr);

    void setModel(QAbstractItemModel *model) override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void fit();
    int contentHeight() const;
};

} // namespace moetune
