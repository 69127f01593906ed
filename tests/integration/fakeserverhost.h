// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// A fake SGLang host for the tuning end-to-end tests: the app's practice server (remote/practiceserver.h,
// a PRACTICE / TEST DOUBLE, labelled as such) in a temporary folder. The inference server is
// resources/practice/fake_sglang_server.py installed as the tree's sglang/launch_server.py (it writes an
// SGLang-style startup log that follows SGLang's lookup over the config files on disk, then idles), and
// nvidia-smi is a script that reports one H200 held by that server while its pid file names a live
// process. The agent, its install-config, the sshd, the shell commands of the server profile and every
// file are real.

#include "core/server/serverprofile.h"
#include "core/util/shellquote.h"
#include "remote/hosts/practiceserver.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>

namespace moetune::test {

class FakeServerHost {
public:
    bool create(QString *error) {
        if (!m_dir.isValid())
            return fail(error, QStringLiteral("no temporary folder"));
        // The tree is the practice server's (its marker lets the agent install simulated results into it).
        if (!m_practice.create(error))
            return false;
        if (!writePython(slowPython(), "export MOETUNE_SYNTHETIC_DELAY_MS=40\n"))
            return fail(error, QStringLiteral("cannot write the fake host under ") + root());
        return true;
    }

    ~FakeServerHost() { stopServer(); }

    // The serving benchmark's test doubles: the fake server answers its OpenAI-compatible API on port
    // (its latency follows the config file it loaded, see resources/practice/fake_sglang_server.py; tpotMs
    // per token and 2 x tpotMs to the first token at factor 1) and tests/support/fakebenchserving.py becomes
    // the tree's sglang/bench_serving.py.
    bool enableServing(const QString &fakeBenchPy, int port, int tpotMs, QString *error) {
        m_port = port;
        m_tpotMs = tpotMs;
        QFile::remove(benchTool());
        if (!QFile::copy(fakeBenchPy, benchTool()))
            return fail(error, QStringLiteral("cannot install the fake bench tool as ") + benchTool());
        return true;
    }
    QString benchTool() const { return site() + QStringLiteral("/sglang/bench_serving.py"); }
    int port() const { return m_port; }
    // While this file exists the fake server's latency rule is turned round (a regression at the serving
    // level that the kernel numbers do not show: the only way a row-merged push can serve slower).
    QString invertFile() const { return root() + QStringLiteral("/invert-latency"); }

    // The profile a user would write for this server (kind Command: nohup + log file + pid file).
    // The practice server's own profile; with serving enabled, the server also answers its HTTP API on
    // m_port with the test's per-token latency (the same start command otherwise).
    ServerProfile profile() const {
        ServerProfile p = m_practice.profile();
        if (m_port > 0) {
            p.kind = ServerProfile::Kind::Command;
            p.startCommand =
                QStringLiteral("cd ") + shellQuote(root()) + QStringLiteral(" && { PYTHONPATH=") +
                shellQuote(site()) + QStringLiteral(" FAKESERVER_PID_FILE=") + shellQuote(pidFile()) +
                QStringLiteral(" FAKESERVER_EXIT_AFTER_S=600 FAKESERVER_TPOT_MS=") +
                QString::number(m_tpotMs) + QStringLiteral(" FAKESERVER_TTFT_MS=") +
                QString::number(2 * m_tpotMs) + QStringLiteral(" FAKESERVER_INVERT_FILE=") +
                shellQuote(invertFile()) +
                QStringLiteral(" setsid nohup python3 -m sglang.launch_server --model-path ") +
                shellQuote(model()) + QStringLiteral(" --tp 2") + servingArgs() + QStringLiteral(" >> ") +
                shellQuote(log()) + QStringLiteral(" 2>&1 < /dev/null & }");
        }
        return p;
    }

    // Starts the server the way the profile does and waits for its readiness line.
    bool startServer(QString *error) {
        const qint64 before = QFileInfo(log()).size();
        if (QProcess::execute(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), profile().startCommand}) != 0)
            return fail(error, QStringLiteral("the start command failed"));
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 30000) {
            QFile f(log());
            if (f.open(QIODevice::ReadOnly) && f.size() > before) {
                f.seek(before);
                if (f.readAll().contains("ready to roll"))
                    return true;
            }
            QThread::msleep(50);
        }
        return fail(error, QStringLiteral("the fake server did not get ready"));
    }

    void stopServer() {
        QFile f(pidFile());
        if (!f.open(QIODevice::ReadOnly))
            return;
        const qint64 pid = f.readAll().trimmed().toLongLong();
        if (pid > 0) {
            QProcess::execute(QStringLiteral("kill"), {QStringLiteral("-TERM"), QString::number(pid)});
            QElapsedTimer t;
            t.start();
            while (QFile::exists(pidFile()) && t.elapsed() < 10000)
                QThread::msleep(20);
        }
    }

    QString root() const { return m_dir.path(); }
    QString site() const { return m_practice.site(); }
    QString configRoot() const { return m_practice.configRoot(); }
    QString wantedFolder() const { return m_practice.wantedFolder(); }
    QString upName() const { return m_practice.upName(); }
    QString downName() const { return m_practice.downName(); }
    QString fallbackFile() const { return m_practice.fallbackFile(); }
    QString model() const { return m_practice.model(); }
    QString bin() const { return m_practice.bin(); }
    QString python() const { return m_practice.python(); }
    QString slowPython() const { return bin() + QStringLiteral("/python-slow"); }
    QString log() const { return m_practice.log(); }
    QString pidFile() const { return m_practice.pidFile(); }

private:
    QString servingArgs() const {
        return m_port > 0 ? QStringLiteral(" --port %1 --serve-http").arg(m_port) : QString();
    }
    static bool fail(QString *error, const QString &message) {
        if (error)
            *error = message;
        return false;
    }
    bool writePython(const QString &path, const QByteArray &extra) {
        const QByteArray body =
            "#!/bin/sh\n# the fake host's interpreter: system python3 + the fake SGLang tree\n"
            "export PYTHONPATH=" +
            shellQuote(site()).toUtf8() + "\nexport MOETUNE_NVIDIA_SMI=" +
            shellQuote(QString(bin() + QStringLiteral("/nvidia-smi"))).toUtf8() + "\n" + extra +
            "exec python3 \"$@\"\n";
        return write(path, body) &&
               QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    }
    static bool write(const QString &path, const QByteArray &data) {
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile f(path);
        return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
    }

    QTemporaryDir m_dir;
    PracticeServer m_practice{m_dir.path()};
    int m_port = 0;
    int m_tpotMs = 4;
};

} // namespace moetune::test
