// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/diagnose/evidencedelegate.h"

#include "app/diagnose/evidencemodel.h"

#include <QApplication>
#include <QPainter>
#include <QTextLayout>

namespace moetune {

namespace {

constexpr int textMargin = 4; // left + right padding of the text in its cell

// The line wrapped at width (anywhere, logs have long unbroken paths), the match highlighted.
void layOut(QTextLayout &layout, qreal width, qsizetype start, qsizetype length, bool selected) {
    const QString &text = layout.text();
    QTextOption textOption;
    textOption.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    layout.setTextOption(textOption);
    QList<QTextLayout::FormatRange> formats;
    if (length > 0 && start >= 0 && start < text.size()) {
        QTextLayout::FormatRange range;
        range.start = int(start);
        range.length = int(qMin(length, text.size() - start));
        QColor mark(0xff, 0xd2, 0x4d);
        if (selected)
            mark.setAlpha(200);
        range.format.setBackground(mark);
        range.format.setForeground(QColor(0x20, 0x20, 0x20));
        range.format.setFontWeight(QFont::Bold);
        formats.append(range);
    }
    layout.setFormats(formats);
    layout.beginLayout();
    qreal y = 0;
    for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
        line.setLineWidth(qMax<qreal>(20, width));
        line.setPosition(QPointF(0, y));
        y += line.height();
    }
    layout.endLayout();
}

} // namespace

EvidenceDelegate::EvidenceDelegate(QObject *parent)
    : QStyledItemDelegate(parent) {}

QSize EvidenceDelegate::sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const {
    if (index.column() != EvidenceModel::TextColumn)
        return QStyledItemDelegate::sizeHint(option, index);
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    // Views with word wrap give the column's width; shown whole, the line takes the rows it needs.
    const int width = option.rect.width() > 0 ? option.rect.width() : 600;
    QTextLayout layout(opt.text, opt.font);
    layOut(layout, width - 2 * textMargin, -1, 0, false);
    return {width, int(layout.boundingRect().height()) + 6};
}

void EvidenceDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option,
                             const QModelIndex &index) const {
    if (index.column() != EvidenceModel::TextColumn) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QString text = opt.text;
    opt.text.clear();
    const QWidget *widget = option.widget;
    QStyle *style = widget ? widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);

    const QRect textRect = option.rect.adjusted(textMargin, 3, -textMargin, -3);
    const qsizetype start = index.data(EvidenceModel::MatchStartRole).toLongLong();
    const qsizetype length = index.data(EvidenceModel::MatchLengthRole).toLongLong();
    QTextLayout layout(text, opt.font);
    layOut(layout, textRect.width(), start, length, opt.state & QStyle::State_Selected);

    painter->save();
    painter->setClipRect(option.rect);
    const QPalette::ColorGroup group =
        (opt.state & QStyle::State_Enabled) ? QPalette::Normal : QPalette::Disabled;
    painter->setPen(opt.palette.color(group, (opt.state & QStyle::State_Selected) ? QPalette::HighlightedText
                                                                                  : QPalette::Text));
    layout.draw(painter, textRect.topLeft());
    painter->restore();
}

} // namespace moetune
