// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/hosts/hosticons.h"

#include <QPainter>
#include <QPixmap>

namespace moetune {

QColor HostIcons::stateColor(Transport::State state) {
    switch (state) {
    case Transport::State::Connected:
        return QColor(0x2e, 0x9d, 0x4f);
    case Transport::State::Connecting:
    case Transport::State::Reconnecting:
        return QColor(0xd9, 0x9a, 0x06);
    case Transport::State::AwaitingUser:
        return QColor(0x2f, 0x6f, 0xd6);
    case Transport::State::Failed:
        return QColor(0xc6, 0x28, 0x28);
    case Transport::State::Disconnected:
        break;
    }
    return QColor(0x9e, 0x9e, 0x9e);
}

QIcon HostIcons::state(Transport::State state) {
    QIcon icon;
    for (const int size : {16, 32}) {
        QPixmap pixmap(size, size);
        pixmap.fill(Qt::transparent);
        QPainter p(&pixmap);
        p.setRenderHint(QPainter::Antialiasing);
        const QColor c = stateColor(state);
        p.setPen(QPen(c.darker(130), size / 16.0));
        // A hollow ring while nothing is connected, a filled dot once something is (or was) happening.
        p.setBrush(state == Transport::State::Disconnected ? QBrush(Qt::NoBrush) : QBrush(c));
        const qreal m = size * 0.22;
        p.drawEllipse(QRectF(m, m, size - 2 * m, size - 2 * m));
        icon.addPixmap(pixmap);
    }
    return icon;
}

QIcon HostIcons::page() {
    QIcon icon;
    for (const int size : {32, 64}) {
        QPixmap pixmap(size, size);
        pixmap.fill(Qt::transparent);
        QPainter p(&pixmap);
        p.setRenderHint(QPainter::Antialiasing);
        const qreal u = size / 32.0;
        const QColor body(0x37, 0x47, 0x4f);
        for (int i = 0; i < 3; ++i) {
            const QRectF unit(4 * u, (4 + i * 8.5) * u, 24 * u, 7 * u);
            p.setPen(Qt::NoPen);
            p.setBrush(body);
            p.drawRoundedRect(unit, 1.5 * u, 1.5 * u);
            p.setBrush(i == 0 ? QColor(0x4c, 0xaf, 0x50) : QColor(0xb0, 0xbe, 0xc5));
            p.drawEllipse(QPointF(8 * u, unit.center().y()), 1.6 * u, 1.6 * u);
            p.setBrush(QColor(0x90, 0xa4, 0xae));
            p.drawRect(QRectF(13 * u, unit.center().y() - 0.6 * u, 12 * u, 1.2 * u));
        }
        icon.addPixmap(pixmap);
    }
    return icon;
}

} // namespace moetune
