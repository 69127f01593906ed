// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/reportcommand.h"

#include "cli/commandregistry.h"
#include "cli/console.h"
#include "core/fleet/fleetrecord.h"
#include "core/report/report.h"
#include "core/report/reporttext.h"
#include "core/run/workspace.h"
#include "report/demoworkspace.h"
#include "report/fleetreport.h"
#include "report/pdfreport.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>

using namespace Qt::StringLiterals;

namespace moetune::cli {

MOETUNE_REGISTER_COMMAND(ReportCommand)

namespace {

// `report WORKSPACE --fleet [--run ID] [--pdf FILE]`: a fleet record of the workspace (the newest unless
// --run names one), as text or as the fleet PDF (the app's Results page exports the same).
int fleetReport(const QString &where, const QString &id, const QString &pdf) {
    QStringList warnings;
    const QList<FleetRecord> records = FleetRecord::loadAll(where, &warnings);
    for (const QString &w : warnings)
        Console::err(u"moetune-cli report: note: "_s + w + u'\n');
    if (records.isEmpty())
        return Console::fail(
            u"report"_s,
            u"%1 holds no fleet records (<workspace>/fleet/*.json); `moetune-cli "
            u"fleet diagnose` or the app's Fleet view makes one."_s.arg(QDir::toNativeSeparators(where)));
    const FleetRecord *record = &records.first();
    if (!id.isEmpty()) {
        record = nullptr;
        QStringList ids;
        for (const FleetRecord &r : records) {
            ids.append(r.id);
            if (r.id == id)
                record = &r;
        }
        if (!record)
            return Console::fail(u"report"_s, u"no fleet record '%1' in %2; it has: %3."_s.arg(
                                                  id, QDir::toNativeSeparators(where), ids.join(u", "_s)));
    }
    if (pdf.isEmpty()) {
        Console::out(FleetReport::text(*record));
        return ExitClean;
    }
    QString path = pdf;
    if (QFileInfo(path).isDir())
        path = QDir(path).filePath(FleetReport::suggestedFileName(*record));
    if (FleetReport::simulated(*record))
        Console::err(
            u"moetune-cli report: a tuning run of this fleet is simulated; every page of %1 says so\n"_s.arg(
                QDir::toNativeSeparators(path)));
    QString error;
    if (!FleetReport::write(*record, path, &error))
        return Console::fail(u"report"_s, error, ExitFindings);
    Console::out(u"Wrote %1\n"_s.arg(QDir::toNativeSeparators(path)));
    return ExitClean;
}

} // namespace

QString ReportCommand::name() const {
    return u"report"_s;
}

QString ReportCommand::summary() const {
    return u"Report of a tuning run (text, Markdown or a PDF with charts)"_s;
}

int ReportCommand::run(const QStringList &args) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        u"Print or write the report of a tuning run. RUN is a run folder (a workspace's, or an agent run "
        u"folder copied from the host: spec.json, events.jsonl, result.json); WORKSPACE is a folder of runs "
        u"(the newest is reported unless --run names one); 'demo' is the bundled recorded H200 sweep. "
        u"Simulated runs are marked SIMULATED in the text, on every PDF page and in the PDF's file name.\n\n"
        u"Exit status: 0 written, 1 the PDF could not be written, 2 bad arguments or an unreadable run."_s);
    parser.addHelpOption();
    parser.addPositionalArgument(u"RUN|WORKSPACE"_s, u"A run folder, a workspace folder, or 'demo'."_s);
    const QCommandLineOption runOption(u"run"_s, u"The run id inside a workspace."_s, u"ID"_s);
    const QCommandLineOption pdfOption(
        u"pdf"_s, u"Write the PDF report to FILE (a folder: a name is chosen)."_s, u"FILE"_s);
    const QCommandLineOption formatOption(u"format"_s, u"Text output: text (default) or markdown."_s,
                                          u"FORMAT"_s, u"text"_s);
    const QCommandLineOption fleetOption(
        u"fleet"_s,
        u"Report a fleet record of WORKSPACE instead of a run: the newest, or the one --run names "
        u"(per group the hosts, the tuning run and each host's outcome, with totals)."_s);
    parser.addOptions({runOption, pdfOption, formatOption, fleetOption});
    if (!parser.parse(args))
        return Console::fail(u"report"_s, parser.errorText() + u". Run 'moetune-cli report --help'."_s);
    if (parser.isSet(u"help"_s)) {
        QString help = parser.helpText();
        const qsizetype options = help.indexOf(u" [options]"_s);
        if (help.startsWith(u"Usage: "_s) && options > 0)
            help.replace(7, options - 7, u"moetune-cli report"_s);
        Console::out(help);
        return ExitClean;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1)
        return Console::fail(u"report"_s, u"give one RUN or WORKSPACE folder."_s);
    const QString format = parser.value(formatOption);
    if (format != "text"_L1 && format != "markdown"_L1)
        return Console::fail(u"report"_s, u"--format must be text or markdown, not '%1'."_s.arg(format));

    if (parser.isSet(fleetOption))
        return fleetReport(positional.first(), parser.value(runOption), parser.value(pdfOption));

    const bool demo = positional.first() == "demo"_L1;
    const QString where = demo ? DemoWorkspace::path() : positional.first();
    QString error;
    const auto ws = Workspace::open(where, &error);
    if (!ws)
        return Console::fail(u"report"_s, error);
    for (const auto &w : ws->warnings())
        Console::err(u"moetune-cli report: note: "_s + w + u'\n');
    if (ws->runs().isEmpty())
        return Console::fail(u"report"_s, u"%1 holds no runs yet."_s.arg(QDir::toNativeSeparators(where)));
    const WorkspaceRun *run = &ws->runs().first();
    // The demo's first report is its headline run, the one the app opens on (not the newest).
    if (demo && ws->run(DemoWorkspace::headlineRun()))
        run = ws->run(DemoWorkspace::headlineRun());
    if (parser.isSet(runOption)) {
        run = ws->run(parser.value(runOption));
        if (!run) {
            QStringList ids;
            for (const auto &r : ws->runs())
                ids.append(r.runId);
            return Console::fail(u"report"_s, u"no run '%1' in %2; it has: %3."_s.arg(
                                                  parser.value(runOption), QDir::toNativeSeparators(where),
                                                  ids.join(u", "_s)));
        }
    } else if (ws->runs().size() > 1) {
        Console::err(u"moetune-cli report: %1 holds %2 runs; reporting %3, %4 (--run ID for another).\n"_s
                         .arg(demo ? u"the demo workspace"_s : QDir::toNativeSeparators(where))
                         .arg(ws->runs().size())
                         .arg(demo ? u"its headline run"_s : u"the newest"_s)
                         .arg(run->runId));
    }

    if (!parser.isSet(pdfOption)) {
        const Report report = Report::fromRun(*run);
        Console::out(format == "markdown"_L1 ? ReportText::toMarkdown(report) : ReportText::toText(report));
        return ExitClean;
    }
    QString path = parser.value(pdfOption);
    if (QFileInfo(path).isDir())
        path = QDir(path).filePath(PdfReport::suggestedFileName(*run));
    // The name given is the name written (the suggested name of a folder says SIMULATED); the report
    // itself says SIMULATED on every page.
    if (run->result.simulated)
        Console::err(u"moetune-cli report: the run is simulated; every page of %1 says so\n"_s.arg(
            QDir::toNativeSeparators(path)));
    QElapsedTimer timer;
    timer.start();
    if (!PdfReport::write(*run, path, &error))
        return Console::fail(u"report"_s, error, ExitFindings);
    Console::out(u"Wrote %1 (%2 ms)\n"_s.arg(QDir::toNativeSeparators(path)).arg(timer.elapsed()));
    return ExitClean;
}

} // namespace moetune::cli
