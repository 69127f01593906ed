// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArrayView>
#include <QString>

#include <optional>

namespace moetune {

// A time as a log prefix prints it (LogPrefix::time): "2026-03-14 09:12:50[,mmm]", vLLM's year-less
// "03-14 09:12:50", ISO 8601 "2026-03-14T09:12:50.3Z" (an offset is applied).
struct LogTime {
    int year = 0; // 0: vLLM prints none (compared in the other time's year)
    int month = 0;
    int day = 0;
    qint64 msecsOfDay = 0;
    qint64 offsetMsecs = 0; // an ISO offset ("+02:00"), subtracted to compare
    QString text;           // as printed, for people

    static std::optional<LogTime> parse(QByteArrayView printed);
    // Seconds from a to b, when both can be compared (a year-less time takes the other's year);
    // nullopt when either is missing or b is before a.
    static std::optional<qint64> secondsBetween(const std::optional<LogTime> &a,
                                                const std::optional<LogTime> &b);
    // "09:12:50" (the clock part, which people read in a log).
    QString clock() const;
};

} // namespace moetune
