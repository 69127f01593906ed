// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/serving/servingcomparison.h"
#include "remote/flows/hostcalls.h"
#include "remote/flows/pushflow.h"
#include "remote/flows/servercontrol.h"

#include <QObject>
#include <QPointer>

#include <functional>
#include <memory>

namespace moetune {

// The serving proof of a push, below both shells (docs/servers.md section 10): the server's own serving
// benchmark run on its host against the running server with a fixed, seeded workload, before the push
// (the server as it is) and after push + restart; in rigorous mode order-balanced pairs of boots
// (A B B A ...), a restart per leg, the old files put back for A through PushFlow's undo and the run's
// files pushed again for B, ending on the pushed files. A tool that is missing or fails stops it with a
// sentence and the command to try by hand; nothing is estimated.
class ServingFlow : public QObject {
    Q_OBJECT
public:
    struct Plan {
        ServingWorkload workload;
        ServingBenchCommand bench;
        bool rigorous = false;
        int pairs = 4; // rigorous mode: order-balanced pairs (4 = A B B A A B B A); adaptive: the cap
        // Adaptive (rigorous only): pairs are added, from 2 on, until the primary metric's 95% interval is
        // narrower than the margin (a rule on precision, never on the change itself), the cap of pairs or
        // the time limit.
        bool adaptive = false;
        double marginPct = ServingComparison::kDefaultMarginPct;
        int timeLimitS = 6 * 3600; // the whole comparison: no leg starts after it, none runs past it
        QString validate() const;
    };
    struct Outcome {
        ServingComparison comparison;
        PushRecord record;     // the last push (empty when nothing was pushed)
        PushFlow::Proof proof; // the restart after the first push (log proof), when there was one
        bool pushed = false;   // the server ends on the pushed files
    };

    ServingFlow(HostCalls *calls, PushFlow *push, ServerControl *server, QObject *parent = nullptr);

    // The server as it is, no restart: one leg, no verdict.
    void benchmark(const Plan &plan, const std::function<void(const ServingComparison &)> &done);
    // Before, push, restart, after (and more legs in rigorous mode). afterLogFile: for the proof.
    void compare(const Plan &plan, const PushFlow::Preview &preview, const Diagnosis &before,
                 const QString &afterLogFile, const std::function<void(const Outcome &)> &done);
    void cancel(); // stops after the command that runs now; the comparison says so
    bool running() const { return m_running; } // a benchmark() or compare() has not called its done yet

signals:
    void status(const QString &line);
    // A leg starts: index from 0 of total, arm 'A' or 'B'.
    void legStarted(int index, int total, QChar arm);
    // A leg ended (ok or not): the comparison so far (the Tune page draws it).
    void legFinished(int index, const moetune::ServingComparison &soFar);

private:
    struct Run;
    void runLeg(const std::shared_ptr<Run> &run, QChar arm, const std::function<void(bool)> &next);
    void benchOne(const std::shared_ptr<Run> &run, int concurrencyIndex, const std::function<void()> &next);
    void nextLeg(const std::shared_ptr<Run> &run);
    void finish(const std::shared_ptr<Run> &run);
    void setFiles(const std::shared_ptr<Run> &run, QChar arm,
                  const std::function<void(const QString &)> &done);
    void restart(const std::shared_ptr<Run> &run, const std::function<void(const QString &)> &done);

    QPointer<HostCalls> m_calls;
    QPointer<PushFlow> m_push;
    QPointer<ServerControl> m_server;
    bool m_cancel = false;
    bool m_running = false;
};

} // namespace moetune
