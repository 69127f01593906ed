// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QObject>
#include <QPushButton>
#include <QString>
#include <QTest>

namespace moetune::test {

// GUI tests find widgets and models by their object names, as a user finds them by their labels; a
// missing one is named in a warning (the test then fails on the null pointer's check).
template <typename T>
T *named(const QObject *parent, const QString &name) {
    T *w = parent->findChild<T *>(name);
    if (!w)
        qWarning("no child named %s", qPrintable(name));
    return w;
}

// Clicks the push button of that name; fails the test when it is missing or disabled.
inline void click(const QObject *parent, const QString &button) {
    auto *b = named<QPushButton>(parent, button);
    QVERIFY2(b && b->isEnabled(), qPrintable(button + QStringLiteral(" is not enabled")));
    QTest::mouseClick(b, Qt::LeftButton);
}

} // namespace moetune::test
