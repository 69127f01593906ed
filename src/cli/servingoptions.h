// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobe.h"
#include "remote/flows/pushflow.h"
#include "remote/flows/servingflow.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QJsonObject>

#include <optional>

namespace moetune::cli {

class FlowHost;

// The serving benchmark options shared by `push --restart --bench PRESET` and `bench HOST`
// (docs/cli.md): the preset and its edits, rigorous pairs, the tool and the endpoint.
class ServingOptions {
public:
    static QList<QCommandLineOption> options();
    static bool wanted(const QCommandLineParser &p) { return p.isSet(QStringLiteral("bench")); }
    // The plan from the options, the probe's server and the profile; nullopt with a sentence.
    static std::optional<ServingFlow::Plan> plan(const QCommandLineParser &p, Framework framework,
                                                 const HostProbe *probe, const ServerProfile &profile,
                                                 const QString &defaultPreset, QString *error);
    // push --restart --bench: benchmark, push, restart (proof), benchmark, verdict. Returns the exit status.
    static int runPush(FlowHost &host, const QCommandLineParser &p, const PushFlow::Preview &preview,
                       const Diagnosis &before, const QString &afterLog, const HostProbe *probe,
                       QJsonObject &out);
    // Exit status for a comparison: 0 faster, no change or inconclusive, 1 slower, 3 not measured.
    static int exitFor(const ServingComparison &c);
};

} // namespace moetune::cli
