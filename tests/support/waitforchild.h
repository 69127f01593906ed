// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDeadlineTimer>
#include <QObject>
#include <QString>
#include <QTest>

namespace moetune::test {

// Waits (processing events) until parent has a child of type T (and objectName name, when given), e.g. a
// dialog a page opens from a queued signal. Returns nullptr after timeoutMs.
template <typename T>
T *waitForChild(const QObject *parent, int timeoutMs = 10000, const QString &name = {}) {
    const QDeadlineTimer deadline(timeoutMs);
    for (;;) {
        if (T *child = parent->findChild<T *>(name))
            return child;
        if (deadline.hasExpired())
            return nullptr;
        QTest::qWait(20);
    }
}

} // namespace moetune::test
