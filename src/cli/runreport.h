// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/host/preflight.h"
#include "core/run/runprogress.h"

#include <QJsonObject>
#include <QString>

namespace moetune::cli {

// Text and JSON of the tuning commands' results (tune, attach, runs), shared so they print one way.
class RunReport {
public:
    static QString preflightText(const Preflight &p);
    static QJsonObject preflightJson(const Preflight &p);
    // Best so far per batch size next to the default, and the run's end.
    static QString summaryText(const RunProgress &r);
    static QJsonObject summaryJson(const RunProgress &r);
    // Exit status for a followed run: 0 finished ok, 1 failed/cancelled.
    static int exitFor(const RunProgress &r);
};

// A progress line on stderr for a followed run (redrawn at most 5 times a second on a terminal; one
// line per 10% otherwise, so a CI log shows progress without flooding).
class RunProgressLine {
public:
    void update(const RunProgress &r);
    void finish();

private:
    qint64 m_lastDraw = 0;
    int m_lastDecile = -1;
    bool m_drawn = false;
};

} // namespace moetune::cli
