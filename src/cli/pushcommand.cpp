// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/pushcommand.h"

#include "cli/commandregistry.h"
#include "cli/console.h"
#include "cli/flowhost.h"
#include "cli/servingoptions.h"
#include "core/diagnosis/diagnoser.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>

using namespace Qt::StringLiterals;

namespace moetune::cli {

MOETUNE_REGISTER_COMMAND(PushCommand)

namespace {

QString previewText(const PushFlow::Preview &pv) {
    QString s = u"Push run %1%2 into %3\n  (from %4)\n"_s.arg(
        pv.runId, pv.simulated ? u" [SIMULATED: synthetic backend]"_s : QString(), pv.target.folder,
        pv.target.source);
    for (const QString &w : pv.target.warnings)
        s += u"  warning: "_s + w + u'\n';
    if (!pv.target.persistentFolder.isEmpty())
        s += u"  persistent alternative (--persistent): %1 with %2. %3\n"_s.arg(
            pv.target.persistentFolder, pv.target.persistentEnv, pv.target.persistentNote);
    for (const QJsonObject &d : pv.diffs) {
        const bool exists = d.value("exists"_L1).toBool();
        const bool changed = d.value("changed"_L1).toBool();
        s += u"  %1 %2\n"_s.arg(!exists   ? u"new      "_s
                                : changed ? u"replace  "_s
                                          : u"unchanged"_s,
                                d.value("target"_L1).toString());
        if (exists && changed)
            s += u"    the file there now is kept as %1\n"_s.arg(d.value("would_backup"_L1).toString());
        // Every row of the file: kept / replaced with its measured gain / added / kept unmeasured.
        for (const PushRowMerge &m : pv.merges) {
            if (m.target == d.value("target"_L1).toString()) {
                for (const QString &line : m.lines())
                    s += u"    "_s + line + u'\n';
            }
        }
        const QString diff = d.value("diff"_L1).toString();
        if (exists && changed && !diff.isEmpty()) {
            for (const QString &line : diff.split(u'\n'))
                s += u"    "_s + line + u'\n';
        }
    }
    if (!pv.refused.isEmpty())
        s += u"  refused: "_s + pv.refused + u'\n';
    return s;
}

} // namespace

QString PushCommand::name() const {
    return u"push"_s;
}

QString PushCommand::summary() const {
    return u"Install a run's configs where the server reads them (backup, atomic); --restart proves it"_s;
}

int PushCommand::run(const QStringList &args) {
    QCommandLineParser p;
    p.setApplicationDescription(summary());
    p.addHelpOption();
    p.addPositionalArgument(u"HOST"_s, u"the host"_s);
    p.addPositionalArgument(u"RUN"_s, u"the run id (moetune-cli runs HOST)"_s);
    p.addOptions(FlowHost::commonOptions());
    p.addOptions({
        {u"dry-run"_s, u"Show the target path, warnings and the diff; change nothing."_s},
        {u"restart"_s, u"Then restart the server through its profile, wait for readiness and compare its log "
                       u"since the restart with the one before."_s},
        {u"persistent"_s, u"Push into the persistent folder offered (a host folder + SGLANG_MOE_CONFIG_DIR / "
                          u"VLLM_TUNED_CONFIG_FOLDER) instead of the folder the server reads now."_s},
        {u"framework"_s, u"sglang (default) or vllm: whose file to install."_s, u"F"_s, u"sglang"_s},
        {u"before-log"_s,
         u"The server's log before the push (default: fetched through the server profile)."_s, u"FILE"_s},
    });
    p.addOptions(ServingOptions::options());
    if (!p.parse(args) || p.positionalArguments().size() != 2) {
        Console::err(u"moetune-cli push: "_s +
                     (p.errorText().isEmpty() ? u"give HOST and RUN."_s : p.errorText()) + u'\n');
        return FlowExitUsage;
    }
    const Framework fw = frameworkFromString(p.value(u"framework"_s));
    if (fw == Framework::Unknown) {
        Console::err(u"moetune-cli push: --framework is sglang or vllm.\n"_s);
        return FlowExitUsage;
    }
    if (ServingOptions::wanted(p) && !p.isSet(u"restart"_s) && !p.isSet(u"dry-run"_s)) {
        Console::err(u"moetune-cli push: --bench needs --restart (the benchmark after the push runs on the "
                     u"restarted server).\n"_s);
        return FlowExitUsage;
    }
    const QString runId = p.positionalArguments().value(1);
    FlowHost host;
    if (const int rc = host.connect(name(), p))
        return rc;
    QTemporaryDir tmp;
    QJsonObject out;

    // The server's log before: the warning there names the path it wants, and it is the "before" of the
    // proof.
    Diagnosis before;
    bool haveBefore = false;
    QString beforeLog = p.value(u"before-log"_s);
    if (beforeLog.isEmpty() && (!host.profile().logFile.isEmpty() || !host.profile().logCommand.isEmpty())) {
        beforeLog = tmp.filePath(u"before.log"_s);
        bool ok = false;
        QString err;
        host.server()->fetchCurrentLog(64LL << 20, beforeLog, [&](bool o, const QString &e) {
            ok = o;
            err = e;
            host.finish();
        });
        host.wait();
        if (!ok) {
            Console::err(
                u"Could not read the server's log before the push (%1); the target comes from the probe.\n"_s
                    .arg(err));
            beforeLog.clear();
        }
    }
    if (!beforeLog.isEmpty()) {
        QString err;
        before = Diagnoser().diagnoseFile(beforeLog, {}, &err);
        haveBefore = err.isEmpty();
        if (!haveBefore) {
            host.fail(u"cannot diagnose %1: %2"_s.arg(beforeLog, err));
            return FlowExitUsage;
        }
    }
    HostProbe probe;
    QString error;
    host.tune()->preflight(TuneSpec{}, [&](const Preflight &, const HostProbe &pr, const QString &e) {
        probe = pr;
        error = e;
        host.finish();
    });
    host.wait();
    if (!error.isEmpty())
        Console::err(u"The probe failed (%1); the target comes from the log alone.\n"_s.arg(error));

    PushFlow::Preview preview;
    host.push()->preview(runId, fw, haveBefore ? &before : nullptr, error.isEmpty() ? &probe : nullptr,
                         p.isSet(u"persistent"_s), [&](const PushFlow::Preview &pv) {
                             preview = pv;
                             host.finish();
                         });
    host.wait();
    out.insert("preview"_L1, preview.toJson());
    auto emitJson = [&] {
        if (host.json())
            Console::out(QString::fromUtf8(QJsonDocument(out).toJson(QJsonDocument::Indented)));
    };
    if (!preview.ok()) {
        emitJson();
        host.fail(preview.error);
        return FlowExitHost;
    }
    if (!host.json())
        Console::out(previewText(preview));
    if (p.isSet(u"dry-run"_s)) {
        emitJson();
        return preview.refused.isEmpty() ? FlowExitOk : FlowExitRefused;
    }
    // --bench: the serving benchmark before, then push, restart (the log proof) and after (ServingFlow).
    if (ServingOptions::wanted(p))
        return ServingOptions::runPush(host, p, preview, before, tmp.filePath(u"after.log"_s),
                                       error.isEmpty() ? &probe : nullptr, out);
    PushRecord record;
    host.push()->push(preview, [&](const PushRecord &r, const QString &e) {
        record = r;
        error = e;
        host.finish();
    });
    host.wait();
    out.insert("record"_L1, record.toJson());
    if (!error.isEmpty()) {
        emitJson();
        host.fail(error);
        // Nothing installed (refused, changed since the preview, another push won): refused, never 0.
        return error.contains(u"simulated"_s) || !record.changedSomething() ? FlowExitRefused : FlowExitHost;
    }
    QStringList targets;
    for (const PushRecord::File &f : record.files) {
        targets.append(f.target);
        if (!host.json())
            Console::out(
                u"  %1 %2%3\n"_s.arg(f.unchanged ? u"unchanged"_s : u"installed"_s, f.target,
                                     f.backup.isEmpty() ? QString() : u" (backup: "_s + f.backup + u')'));
    }
    // "Pushed" only for a push that changed a file: a push that found the same bytes changed nothing and
    // has nothing to undo.
    if (!host.json())
        Console::out(
            record.changedSomething()
                ? u"Pushed%1. Undo with: moetune-cli undo-push %2 %3\n"_s.arg(
                      record.simulated ? u" SIMULATED configs"_s : QString(), host.host().alias, runId)
                : u"Nothing changed: the same bytes were already there, so there is nothing to undo.\n"_s);
    if (!p.isSet(u"restart"_s)) {
        emitJson();
        return FlowExitOk;
    }
    PushFlow::Proof proof;
    host.push()->restartAndProve(before, targets, tmp.filePath(u"after.log"_s),
                                 [&](const PushFlow::Proof &pr) {
                                     proof = pr;
                                     host.finish();
                                 });
    host.wait();
    QJsonObject pj = proof.proof.toJson();
    pj.insert("ok"_L1, proof.ok);
    pj.insert("message"_L1, proof.message);
    pj.insert("ready_after_s"_L1, proof.start.readyAfterS);
    out.insert("proof"_L1, pj);
    emitJson();
    if (!host.json())
        Console::out(proof.message + u'\n');
    if (!proof.ok) {
        host.fail(proof.message);
        return FlowExitHost;
    }
    return proof.proof.warningGone() ? FlowExitOk : FlowExitOutcome;
}

} // namespace moetune::cli
