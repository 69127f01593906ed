// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/agentevent.h"
#include "core/run/sweepresult.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>

namespace moetune {

// Builds a SweepResult while a run's events arrive (live, from `attach`, or replayed from a saved
// events.jsonl), so the Results page and the report show a run that has not finished. A `result` event
// or a result.json replaces what the events built (it holds the floors and files the events lack).
class SweepResultBuilder {
public:
    // What one event changed, so a view redraws only what moved.
    struct Change {
        bool measurement = false; // a unit was added (timed or failed)
        bool best = false;        // a winner improved at bestM
        int bestM = 0;
        bool finished = false; // the run's own done
        bool replaced = false; // a whole result replaced the state
    };

    SweepResultBuilder() = default;

    Change add(const AgentEvent &event);
    // Reads an events.jsonl; protocol errors are returned with their line number, the rest is kept.
    QStringList addEventsFile(const QByteArray &bytes);
    void setResult(const SweepResult &result); // a finished run's result.json

    const SweepResult &result() const { return m_result; }
    qint64 lastSeq() const { return m_lastSeq; } // for attach --from lastSeq()+1; -1 when none
    int events() const { return m_events; }
    double firstTimestamp() const { return m_firstTs; }
    double lastTimestamp() const { return m_lastTs; }

private:
    void applyRunStarted(const QJsonObject &o);
    void setEntry(QList<SweepEntry> &list, const SweepEntry &entry);

    SweepResult m_result;
    qint64 m_lastSeq = -1;
    int m_events = 0;
    double m_firstTs = 0;
    double m_lastTs = 0;
    bool m_haveResult = false;
};

} // namespace moetune
