// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QPair>
#include <QString>
#include <QStringList>

namespace moetune {

// The live state of one tuning run, built from its events (remote_agent/PROTOCOL.md section 4) in seq
// order. An event whose seq was already applied is dropped, so a reattach that repeats events (attach
// --from lastSeq + 1 after a dropped connection, or a replay from 0) counts nothing twice.
struct RunProgress {
    struct Best {
        QString op;
        int m = 0;
        double medianUs = 0;
        double defaultUs = 0; // 0 = not measured yet
        QJsonObject config;
        bool final = false;
    };
    struct PerGpu {
        int measured = 0;
        int failed = 0;
    };
    // One batch size as the live table shows it: like compared with like. Up + down summed only when
    // both GEMMs have a best; until then the GEMM that has one, against that GEMM's own default.
    struct Row {
        int m = 0;
        QString op;            // "up+down" (all GEMMs of the run), "up" or "down" (that GEMM alone)
        double bestUs = 0;     // of op
        double defaultUs = 0;  // of op; 0 = not measured
        bool complete = false; // every GEMM of the run has a best at m
    };

    QString runId;
    QString runDir;
    QString state = QStringLiteral("starting"); // starting, running, finished, failed, cancelled
    QString backend;
    QString strategy;
    QString deviceName;
    bool simulated = false;
    qint64 pid = 0;
    qint64 lastSeq = -1; // the last applied event; attach from lastSeq + 1
    qint64 done = 0;
    qint64 total = 0;
    double elapsedS = 0;
    double etaS = -1; // -1 = unknown
    QString phase;
    int measurements = 0;
    int failures = 0;
    int duplicatesDropped = 0;
    QMap<int, PerGpu> gpus;
    QMap<QPair<QString, int>, Best> best;           // (op, m)
    QMap<int, double> defaultUs;                    // summed over ops per m, from the default phase
    QMap<QPair<QString, int>, double> defaultPerOp; // (op, m) -> the default config's latency
    QStringList ops;                 // the run's GEMMs from its spec: {"up", "down"} or {"both"}
    QMap<QString, int> failureKinds; // candidate_error kind -> count
    int journalUnits = 0;            // units a resumed run took from its journal, not timed again
    int unitsSeen = 0;               // measurement + candidate_error events applied
    QStringList files;               // result_written paths of config files
    QString resultPath;
    QString doneStatus; // the run's own done: ok / failed / cancelled
    QString error;      // the run's error event message
    double wallS = 0;

    // Limits on what a stream may make this hold (memory bounded by what is shown, not by what was sent).
    static constexpr qint64 kMaxSeqGap = 64;      // lines an agent may skip (a damaged journal line)
    static constexpr int kMaxBestEntries = 4096;  // distinct (op, batch size) pairs
    static constexpr int kMaxFiles = 256;         // result_written config files
    static constexpr int kMaxGpuIndex = 1023;     // "gpu" of a measurement
    static constexpr int kMaxBatchSize = 1 << 20; // "m" of a measurement or best

    // Applies one run event. Returns false when it was dropped (duplicate or older seq) or refused. A
    // refused event (another run's, a seq that jumps ahead, a latency <= 0 or not finite, a result path
    // outside the run folder, a limit above exceeded) sets *problem to a sentence: the stream is not to be
    // trusted, and the caller stops with a protocol error naming the line.
    bool apply(const QJsonObject &event, QString *problem = nullptr);
    bool finished() const { return !doneStatus.isEmpty(); }
    // Best so far per batch size, summed over ops (up + down when tuned separately): m -> us. Only the
    // batch sizes where every GEMM of the run has a best (a sum of some of them is no total).
    QMap<int, double> bestPerBatch() const;
    // Per batch size, the comparable best and default (see Row), ascending m.
    QList<Row> rows() const;
    // Units done as the GPUs count them: from the journal + timed + failed (the progress bar's units).
    qint64 unitsDone() const { return qMax<qint64>(done, journalUnits + unitsSeen); }
    // What failed, by kind: "12 compile errors, 8 out of shared memory"; "" when nothing failed.
    QString failureText() const;
    // "412/480 known so far (85%), ETA 12 s for those, 3 failed" while running (the total grows as the
    // strategy adds phases: never 100% before the run's own done), "1876/1876 (100%)" once done.
    QString progressLine() const;
};

} // namespace moetune
