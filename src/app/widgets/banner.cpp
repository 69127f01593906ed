// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/widgets/banner.h"

#include "app/widgets/severitystyle.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace moetune {

Banner::Banner(QWidget *parent)
    : QFrame(parent)
    , m_icon(new QLabel(this))
    , m_text(new QLabel(this))
    , m_action(new QPushButton(this))
    , m_close(new QToolButton(this))
    , m_more(new QToolButton(this)) {
    setProperty("moetuneBanner", true);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(10, 6, 6, 6);
    layout->setSpacing(8);
    m_icon->setFixedSize(18, 18);
    m_text->setObjectName(u"bannerText"_s);
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_text->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    m_action->hide();
    m_close->setAutoRaise(true);
    m_close->setText(u"\u2715"_s);
    m_close->setToolTip(tr("Dismiss"));
    layout->addWidget(m_icon, 0, Qt::AlignTop);
    auto *textColumn = new QVBoxLayout;
    textColumn->setContentsMargins(0, 0, 0, 0);
    textColumn->setSpacing(0);
    textColumn->addWidget(m_text);
    m_more->setObjectName(u"bannerMoreButton"_s);
    m_more->setAutoRaise(true);
    m_more->setCursor(Qt::PointingHandCursor);
    m_more->hide();
    textColumn->addWidget(m_more, 0, Qt::AlignLeft);
    layout->addLayout(textColumn, 1);
    layout->addWidget(m_action, 0, Qt::AlignVCenter);
    layout->addWidget(m_close, 0, Qt::AlignTop);
    connect(m_action, &QPushButton::clicked, this, &Banner::actionTriggered);
    connect(m_more, &QToolButton::clicked, this, [this] { setExpanded(!m_expanded); });
    connect(m_close, &QToolButton::clicked, this, [this] {
        hide();
        emit closed();
    });
    applyStyle();
}

void Banner::showMessage(Kind kind, const QString &text) {
    m_kind = kind;
    m_text->setText(text);
    m_expanded = false;
    applyStyle();
    show();
    updateCap();
}

void Banner::setMaximumLines(int lines) {
    m_maxLines = lines;
    updateCap();
}

void Banner::setExpanded(bool expanded) {
    m_expanded = expanded;
    updateCap();
}

bool Banner::isTruncated() const {
    return !m_more->isHidden() && !m_expanded;
}

void Banner::resizeEvent(QResizeEvent *event) {
    QFrame::resizeEvent(event);
    updateCap();
}

void Banner::updateCap() {
    if (m_maxLines <= 0) {
        m_more->hide();
        m_text->setMaximumHeight(QWIDGETSIZE_MAX);
        return;
    }
    const int width = m_text->width() > 50 ? m_text->width() : qMax(200, this->width() - 80);
    const int needed = m_text->heightForWidth(width);
    const int cap = m_text->fontMetrics().lineSpacing() * m_maxLines + 2;
    if (needed <= cap) {
        m_more->hide();
        m_text->setMaximumHeight(QWIDGETSIZE_MAX);
        return;
    }
    m_more->setText(
        m_expanded ? tr("Show less")
                   : tr("Show all (%1 lines)").arg(needed / qMax(1, m_text->fontMetrics().lineSpacing())));
    m_more->show();
    m_text->setMaximumHeight(m_expanded ? QWIDGETSIZE_MAX : cap);
}

void Banner::setClosable(bool closable) {
    m_close->setVisible(closable);
}

void Banner::setAction(const QString &text) {
    m_action->setText(text);
    m_action->setVisible(!text.isEmpty());
}

QString Banner::text() const {
    return m_text->text();
}

void Banner::applyStyle() {
    QColor accent;
    QIcon icon;
    switch (m_kind) {
    case Kind::Error:
        accent = SeverityStyle::color(Severity::Error);
        icon = SeverityStyle::icon(Severity::Error);
        break;
    case Kind::Warning:
        accent = SeverityStyle::color(Severity::Warning);
        icon = SeverityStyle::icon(Severity::Warning);
        break;
    case Kind::Success:
        accent = QColor(0x2e, 0xa0, 0x5a);
        icon = style()->standardIcon(QStyle::SP_DialogApplyButton);
        break;
    case Kind::Info:
        accent = SeverityStyle::color(Severity::Info);
        icon = SeverityStyle::icon(Severity::Info);
        break;
    }
    QColor background = accent;
    background.setAlpha(28);
    setStyleSheet(
        u"QFrame[moetuneBanner=\"true\"] { background: %1; border: 1px solid %2; border-left: 4px solid %3;"
        " border-radius: 4px; }"_s.arg(background.name(QColor::HexArgb), accent.lighter(130).name(),
                                       accent.name()));
    m_icon->setPixmap(icon.pixmap(18, 18));
}

} // namespace moetune
