#include "app/diagnose/evidencedelegate.h"

#include "app/diagnose/evidencemodel.h"

#include <QApplication>
#include <QPainter>
#include <QTextLayout>

namespace moetune {

EvidenceDelegate::EvidenceDelegate(QObject *parent)
    : QStyledItemDelegate(parent) {}

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

    const QRect textRect =
        style->subElementRect(QStyle::SE_ItemViewItemText, &opt, widget).adjusted(2, 0, -2, 0);
    const qsizetype start = index.data(EvidenceModel::MatchStartRole).toLongLong();
    const qsizetype length = index.data(EvidenceModel::MatchLengthRole).toLongLong();

    QTextLayout layout(text, opt.font);
    QTextOption textOption;
    textOption.setWrapMode(QTextOption::NoWrap);
    layout.setTextOption(textOption);
    QList<QTextLayout::FormatRange> formats;
    if (length > 0 && start >= 0 && start < text.size()) {
        QTextLayout::FormatRange range;
        range.start = int(start);
        range.length = int(qMin(length, text.size() - start));
        QColor mark(0xff, 0xd2, 0x4d);
        if (opt.state & QStyle::State_Selected)
            mark.setAlpha(200);
        range.format.setBackground(mark);
        range.format.setForeground(QColor(0x20, 0x20, 0x20));
        range.format.setFontWeight(QFont::Bold);
        formats.append(range);
    }
    layout.setFormats(formats);
    layout.beginLayout();
    QTextLine line = layout.createLine();
    layout.endLayout();
    if (!line.isValid())
        return;

    painter->save();
    painter->setClipRect(textRect);
    const QPalette::ColorGroup group =
        (opt.state & QStyle::State_Enabled) ? QPalette::Normal : QPalette::Disabled;
    painter->setPen(opt.palette.color(group, (opt.state & QStyle::State_Selected) ? QPalette::HighlightedText
                                                                                  : QPalette::Text));
    const qreal y = textRect.top() + (textRect.height() - line.height()) / 2.0;
    // A match that starts beyond the visible part is scrolled into view, with some context before it.
    qreal x = textRect.left();
    if (length > 0 && start < text.size()) {
        const qreal startX = line.cursorToX(int(start));
        if (startX > textRect.width() * 0.6)
            x -= startX - textRect.width() * 0.25;
    }
    layout.draw(painter, QPointF(x, y));
    painter->restore();
}

} // namespace moetune
