// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/flowhost.h"

#include "cli/console.h"
#include "cli/runreport.h"
#include "core/host/serverchoice.h"
#include "core/run/workspace.h"
#include "remote/flows/runkeeper.h"

#include <QFile>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace moetune::cli {

QList<QCommandLineOption> FlowHost::commonOptions() {
    return {{u"python"_s, u"The host's interpreter for the agent (a venv's bin/python)."_s, u"PATH"_s},
            {u"accept-new-host-key"_s, u"Trust an unknown host key (prints its fingerprint)."_s},
            {u"profile"_s,
             u"A server profile JSON file (kind, stopCommand, startCommand, logFile, ...) instead of "
             u"the one saved for the host."_s,
             u"FILE"_s},
            {u"format"_s, u"Output: text (default) or json."_s, u"FORMAT"_s, u"text"_s},
            {u"server"_s,
             u"Which of the host's servers to act on, a pid or a port (needed when several run: the "
             u"command asks rather than pick one)."_s,
             u"PID|PORT"_s}};
}

void FlowHost::fail(const QString &message) const {
    Console::err(u"moetune-cli %1: %2\n"_s.arg(m_command, message));
}

int FlowHost::connect(const QString &command, const QCommandLineParser &parser) {
    m_command = command;
    const QString format = parser.value(u"format"_s);
    if (format != "text"_L1 && format != "json"_L1) {
        fail(u"unknown --format '%1' (text or json)."_s.arg(format));
        return FlowExitUsage;
    }
    m_json = format == "json"_L1;
    const QStringList pos = parser.positionalArguments();
    QString error;
    auto target = resolveHost(pos.value(0), &error);
    if (!target) {
        fail(error);
        return FlowExitUsage;
    }
    m_profile = target->serverProfile;
    if (parser.isSet(u"profile"_s)) {
        QFile f(parser.value(u"profile"_s));
        QJsonParseError pe{};
        const QJsonDocument doc =
            f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll(), &pe) : QJsonDocument();
        if (!doc.isObject()) {
            fail(u"cannot read the server profile %1: %2"_s.arg(
                f.fileName(), f.error() != QFile::NoError ? f.errorString() : pe.errorString()));
            return FlowExitUsage;
        }
        m_profile = ServerProfile::fromJson(doc.object());
    }
    if (parser.isSet(u"server"_s)) {
        if (!ServerChoice::parse(parser.value(u"server"_s), &error)) {
            fail(u"--server: "_s + error);
            return FlowExitUsage;
        }
        m_profile.server = parser.value(u"server"_s).trimmed();
    }
    target->serverProfile = m_profile; // the session's flows act through it; its probes focus on its server
    if (parser.isSet(u"python"_s))
        target->python = parser.value(u"python"_s);
    HostSessionSync::Options options;
    options.acceptNewHostKey = parser.isSet(u"accept-new-host-key"_s);
    options.askSecret = terminalSecretPrompt();
    m_session = std::make_unique<HostSessionSync>(*target, options);
    if (!m_session->connect(&error)) {
        fail(error);
        return FlowExitHost;
    }
    HostSession *session = m_session->session();
    session->setChooseHow(u"with --server PID|PORT"_s);
    m_flows = session->flows();
    // What runs on the host is always shown (stderr, so --format json stays parseable on stdout).
    QObject::connect(calls(), &HostCalls::commandStarted,
                     [](const QString &c) { Console::err(u"$ "_s + c + u'\n'); });
    QObject::connect(calls(), &HostCalls::commandOutput,
                     [](const QString &l) { Console::err(u"  | "_s + l + u'\n'); });
    QObject::connect(calls(), &HostCalls::commandEnded, [](const QString &, int status, const QString &err) {
        if (status != 0 || !err.isEmpty())
            Console::err(
                u"  (exit status %1%2)\n"_s.arg(status).arg(err.isEmpty() ? QString() : u", "_s + err));
    });
    auto say = [](const QString &l) { Console::err(l + u'\n'); };
    QObject::connect(server(), &ServerControl::status, say);
    QObject::connect(push(), &PushFlow::status, say);
    QObject::connect(tune(), &TuneFlow::reattaching, say);
    QObject::connect(m_flows->runKeeper(), &RunKeeper::problem, say);
    return FlowExitOk;
}

int FlowHost::followRun(const QString &runId, RunProgress *progress, const QJsonObject &extra,
                        const std::optional<HostProbe> &facts) {
    // Kept where the app keeps the runs it follows: the Results page and `report` open it.
    WorkspaceRun keep;
    keep.runId = runId;
    keep.host = host().label();
    keep.source = u"moetune-cli %1, followed from %2"_s.arg(m_command, host().label());
    keep.spec = extra.value("spec"_L1).toObject();
    if (facts)
        keep.hostFacts = facts->raw;
    QString keepError;
    RunKeeper *keeper = m_flows->runKeeper();
    const bool kept = keeper->begin(Workspace::defaultLocation(), keep, &keepError);
    if (!kept)
        Console::err(u"This run is not kept locally: %1\n"_s.arg(keepError));
    RunProgressLine line;
    auto c = QObject::connect(tune(), &TuneFlow::runEvent,
                              [&line, progress](const QJsonObject &) { line.update(*progress); });
    bool ok = false;
    QString error;
    tune()->follow(runId, progress, [this, &ok, &error](bool o, const QString &e) {
        ok = o;
        error = e;
        finish();
    });
    wait();
    QObject::disconnect(c);
    line.finish();
    if (kept) {
        if (keeper->flush(&keepError))
            Console::err(u"Kept in %1 (moetune-cli report %1).\n"_s.arg(keeper->runFolder()));
        else
            Console::err(keepError + u'\n');
    }
    if (m_json) {
        QJsonObject o = RunReport::summaryJson(*progress);
        for (auto it = extra.begin(); it != extra.end(); ++it)
            o.insert(it.key(), it.value());
        if (!ok)
            o.insert("follow_error"_L1, error);
        Console::out(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Indented)));
    } else {
        Console::out(RunReport::summaryText(*progress));
    }
    if (!ok) {
        fail(error);
        return FlowExitHost;
    }
    return RunReport::exitFor(*progress);
}

} // namespace moetune::cli
