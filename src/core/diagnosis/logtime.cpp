// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/logtime.h"

#include <QDate>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

bool digitsAt(QByteArrayView s, qsizetype at, qsizetype n, int *value) {
    if (at + n > s.size())
        return false;
    int v = 0;
    for (qsizetype i = at; i < at + n; ++i) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *value = v;
    return true;
}

// Milliseconds since 2000-01-01 of a date and time of day; -1 when the date is impossible.
qint64 msecsOf(int year, int month, int day, qint64 msOfDay) {
    const QDate date(year, month, day);
    if (!date.isValid())
        return -1;
    return QDate(2000, 1, 1).daysTo(date) * 86400000 + msOfDay;
}

} // namespace

std::optional<LogTime> LogTime::parse(QByteArrayView p) {
    p = p.trimmed();
    int year = 0, month = 0, day = 0, h = 0, m = 0, s = 0;
    qsizetype at = 0;
    bool hasYear = false;
    if (p.size() >= 19 && digitsAt(p, 0, 4, &year) && p[4] == '-') {
        hasYear = true;
        at = 5;
    }
    if (!digitsAt(p, at, 2, &month) || at + 2 >= p.size() || p[at + 2] != '-' ||
        !digitsAt(p, at + 3, 2, &day))
        return std::nullopt;
    at += 5;
    if (at >= p.size() || (p[at] != ' ' && p[at] != 'T'))
        return std::nullopt;
    ++at;
    if (!digitsAt(p, at, 2, &h) || p.size() < at + 8 || p[at + 2] != ':' || !digitsAt(p, at + 3, 2, &m) ||
        p[at + 5] != ':' || !digitsAt(p, at + 6, 2, &s))
        return std::nullopt;
    at += 8;
    int ms = 0;
    if (at < p.size() && (p[at] == '.' || p[at] == ',')) {
        int scale = 100;
        for (++at; at < p.size() && p[at] >= '0' && p[at] <= '9'; ++at) {
            ms += (p[at] - '0') * scale;
            scale /= 10;
        }
    }
    if (h > 23 || m > 59 || s > 60 || msecsOf(hasYear ? year : 2000, month, day, 0) < 0)
        return std::nullopt;
    LogTime t;
    t.year = hasYear ? year : 0;
    t.month = month;
    t.day = day;
    t.msecsOfDay = (qint64(h) * 3600 + qint64(m) * 60 + s) * 1000 + ms;
    int oh = 0, om = 0;
    if (at + 6 <= p.size() && (p[at] == '+' || p[at] == '-') && digitsAt(p, at + 1, 2, &oh) &&
        p[at + 3] == ':' && digitsAt(p, at + 4, 2, &om))
        t.offsetMsecs = (p[at] == '+' ? 1 : -1) * qint64(oh * 60 + om) * 60000;
    t.text = QString::fromLatin1(p);
    return t;
}

std::optional<qint64> LogTime::secondsBetween(const std::optional<LogTime> &a,
                                              const std::optional<LogTime> &b) {
    if (!a || !b)
        return std::nullopt;
    // A year-less time is read in the other's year (2000, a leap year, when neither has one).
    const int yearA = a->year ? a->year : (b->year ? b->year : 2000);
    const int yearB = b->year ? b->year : yearA;
    const qint64 from = msecsOf(yearA, a->month, a->day, a->msecsOfDay) - a->offsetMsecs;
    const qint64 to = msecsOf(yearB, b->month, b->day, b->msecsOfDay) - b->offsetMsecs;
    if (from < 0 || to < 0 || to < from)
        return std::nullopt;
    return (to - from + 500) / 1000;
}

QString LogTime::clock() const {
    const qsizetype space = std::max(text.indexOf(u' '), text.indexOf(u'T'));
    QString c = space >= 0 ? text.mid(space + 1) : text;
    // Drop fractions and offsets: people read seconds.
    if (c.size() > 8)
        c.truncate(8);
    return c;
}

} // namespace moetune
