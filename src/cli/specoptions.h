// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/job/tunespec.h"
#include "core/job/tuningtarget.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QList>
#include <QString>

#include <optional>

namespace moetune::cli {

// Where a tuning command's job comes from (tune, headroom): --from-log, --spec or the shape options.
struct SpecSource {
    std::optional<TuneSpec> spec; // complete except what the probe fills (--from-log)
    std::optional<TuningTarget> target;
    QString error;
};

// --from-log, --target, --spec and every shape / job option; verb starts the --from-log help ("Tune").
QList<QCommandLineOption> specOptions(const QString &verb);
SpecSource readSpecSource(const QCommandLineParser &p);
// Options that override any source; "" or a sentence naming the bad option.
QString applySpecOverrides(const QCommandLineParser &p, TuneSpec *s);
// The core's JobCheck of the job, the Tune page's sentences: "" when runnable, else the first problem
// (a job for another N or E than the log's target is refused, as on the page). File names the server
// would not read are a warning on stderr ("moetune-cli tune: warning: The server looks for X, not Y"),
// not a refusal, as on the page.
QString checkSpec(const QString &command, const TuneSpec &spec, const std::optional<TuningTarget> &target);

} // namespace moetune::cli
