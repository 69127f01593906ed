// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/serving/servingbenchcommand.h"
#include "core/serving/servingchange.h"
#include "core/serving/servingresult.h"
#include "core/serving/servingworkload.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// A serving benchmark before and after a push: the workload and the commands, every leg (one boot of
// the server, A = the files it had, B = the pushed files; one benchmark run per concurrency), the
// change of each metric with its 95% interval, and the verdict. Plain mode is one A leg (the server as
// it is) and one B leg (after push + restart); rigorous mode runs order-balanced pairs (A B B A ...),
// a restart per leg. Also a benchmark of a server on its own (only A legs, no verdict).
struct ServingComparison {
    enum class Verdict { Faster, NoChange, Slower, Failed, Unpaired };
    struct Leg {
        QChar arm = u'A';             // 'A' before (the old files), 'B' after (the pushed files)
        QList<ServingResult> results; // one per concurrency, in the workload's order
        QString error;                // why the leg stopped ("" = all runs parsed)
        QStringList commands;         // what ran on the host for it (the tool's command lines)
        bool ok() const { return error.isEmpty(); }
        const ServingResult *at(int concurrency) const;
    };
    struct Row {
        int concurrency = 0;
        ServingResult::Metric metric = ServingResult::Metric::TpotMedian;
        ServingChange change;
        ServingChange::Outcome outcome = ServingChange::Outcome::NoChange;
    };

    ServingWorkload workload;
    ServingBenchCommand bench;
    bool rigorous = false;
    int pairs = 1;
    QString runId;                 // the run whose files were pushed ("" for a benchmark on its own)
    bool configsSimulated = false; // the pushed configs came from the synthetic backend
    QList<Leg> legs;
    QString error; // the comparison stopped: the sentence, and what to try by hand
    QString note;  // e.g. the server was left on the old files after an undo

    // "AB" for plain mode, "ABBA", "ABBAABBA" for 2 and 4 pairs (pairs alternate AB and BA).
    static QString legOrder(int pairs, bool rigorous);
    QList<double> values(QChar arm, int concurrency, ServingResult::Metric m) const;
    QList<Row> rows() const; // per concurrency and metric, from the legs that finished
    Verdict verdict() const;
    static QString verdictId(Verdict v); // "faster", "no-change", "slower", "failed", "unpaired"
    static QString verdictName(Verdict v);
    QString verdictSentence() const;    // one line for people, with the interval that decided it
    QString text() const;               // the table and the verdict, for the CLI and the report
    QStringList manualCommands() const; // the tool's command per concurrency, to run by hand

    QJsonObject toJson() const;
    static std::optional<ServingComparison> fromJson(const QJsonObject &o, QString *error = nullptr);
};

} // namespace moetune
