// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/moe/siblingdevice.h"

#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// The words up to and including the first one holding a digit, lower case; empty when none holds one.
QStringList deviceModel(const QString &name) {
    static const QRegularExpression sep(u"[_\\- ]+"_s);
    QStringList out;
    for (const QString &word : name.split(sep, Qt::SkipEmptyParts)) {
        out.append(word.toLower());
        for (const QChar c : word) {
            if (c.isDigit() && c.unicode() < 128)
                return out;
        }
    }
    return {};
}

} // namespace

bool isSiblingDevice(const QString &a, const QString &b) {
    if (a == b)
        return false;
    const QStringList ma = deviceModel(a);
    return !ma.isEmpty() && ma == deviceModel(b);
}

QStringList siblingDeviceFiles(const ConfigName &name, const QStringList &files) {
    QStringList out;
    for (const QString &f : files) {
        const auto other = ConfigName::parse(f);
        if (!other)
            continue;
        ConfigName same = *other;
        same.deviceName = name.deviceName;
        if (same == name && isSiblingDevice(name.deviceName, other->deviceName))
            out.append(f);
    }
    return out;
}

} // namespace moetune
