// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/flows/waiter.h"

#include <QTimer>

#include <utility>

namespace moetune {

bool Waiter::wait(int timeoutMs) {
    if (!m_done) {
        QTimer timer;
        timer.setSingleShot(true);
        QObject::connect(&timer, &QTimer::timeout, &m_loop, &QEventLoop::quit);
        if (timeoutMs > 0)
            timer.start(timeoutMs);
        m_loop.exec();
    }
    return std::exchange(m_done, false);
}

void Waiter::done() {
    m_done = true;
    m_loop.quit();
}

bool waitUntil(const std::function<bool()> &condition, int timeoutMs, int pollMs) {
    if (condition())
        return true;
    Waiter waiter;
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, [&] {
        if (condition())
            waiter.done();
    });
    poll.start(pollMs);
    return waiter.wait(timeoutMs) || condition();
}

} // namespace moetune
