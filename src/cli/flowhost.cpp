// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/flowhost.h"

#include "cli/console.h"
#include "cli/runreport.h"

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
            {u"format"_s, u"Output: text (default) or json."_s, u"FORMAT"_s, u"text"_s}};
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
    m_calls = std::make_unique<HostCalls>(session->transport(), session->agent());
    m_tune = std::make_unique<TuneFlow>(m_calls.get());
    m_server = std::make_unique<ServerControl>(m_calls.get(), m_profile);
    m_push = std::make_unique<PushFlow>(m_calls.get(), m_server.get(), session->label());
    // What runs on the host is always shown (stderr, so --format json stays parseable on stdout).
    QObject::connect(m_calls.get(), &HostCalls::commandStarted,
                     [](const QString &c) { Console::err(u"$ "_s + c + u'\n'); });
    QObject::connect(m_calls.get(), &HostCalls::commandOutput,
                     [](const QString &l) { Console::err(u"  | "_s + l + u'\n'); });
    QObject::connect(
        m_calls.get(), &HostCalls::commandEnded, [](const QString &, int status, const QString &err) {
            if (status != 0 || !err.isEmpty())
                Console::err(
                    u"  (exit status %1%2)\n"_s.arg(status).arg(err.isEmpty() ? QString() : u", "_s + err));
        });
    auto say = [](const QString &l) { Console::err(l + u'\n'); };
    QObject::connect(m_server.get(), &ServerControl::status, say);
    QObject::connect(m_push.get(), &PushFlow::status, say);
    QObject::connect(m_tune.get(), &TuneFlow::reattaching, say);
    return FlowExitOk;
}

int FlowHost::followRun(const QString &runId, RunProgress *progress, const QJsonObject &extra) {
    RunProgressLine line;
    auto c = QObject::connect(m_tune.get(), &TuneFlow::runEvent,
                              [&line, progress](const QJsonObject &) { line.update(*progress); });
    bool ok = false;
    QString error;
    m_tune->follow(runId, progress, [this, &ok, &error](bool o, const QString &e) {
        ok = o;
        error = e;
        finish();
    });
    wait();
    QObject::disconnect(c);
    line.finish();
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
