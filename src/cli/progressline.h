// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QElapsedTimer>
#include <QString>

namespace moetune::cli {

// A one-line progress report on stderr ("diagnosing server.log: 45% (460 MB of 1.0 GB)"), redrawn at
// most ten times a second and erased when done. Silent unless stderr is a terminal and the work lasts.
class ProgressLine {
public:
    explicit ProgressLine(QString label);
    ~ProgressLine();
    ProgressLine(const ProgressLine &) = delete;
    ProgressLine &operator=(const ProgressLine &) = delete;

    // Diagnoser::Progress: total < 0 when unknown (a stream). Never cancels.
    bool update(qint64 done, qint64 total);

private:
    QString m_label;
    QElapsedTimer m_started;
    qint64 m_lastDraw = -1;
    bool m_enabled;
    bool m_drawn = false;
};

} // namespace moetune::cli
