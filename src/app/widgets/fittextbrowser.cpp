// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/widgets/fittextbrowser.h"

#include <QAbstractTextDocumentLayout>
#include <QResizeEvent>
#include <QScrollBar>

namespace moetune {

FitTextBrowser::FitTextBrowser(QWidget *parent)
    : QTextBrowser(parent) {
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    connect(document()->documentLayout(), &QAbstractTextDocumentLayout::documentSizeChanged, this,
            &FitTextBrowser::fit);
}

void FitTextBrowser::resizeEvent(QResizeEvent *event) {
    QTextBrowser::resizeEvent(event);
    if (event->size().width() != event->oldSize().width())
        fit();
}

void FitTextBrowser::fit() {
    const int height = int(document()->size().height()) + 2 * frameWidth() + 2;
    if (height != this->height())
        setFixedHeight(height);
    verticalScrollBar()->setValue(0);
}

} // namespace moetune
