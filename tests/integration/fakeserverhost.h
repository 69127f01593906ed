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
#include "remote/practiceserver.h"
#include "remote/shellquote.h"

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

    // The profile a user would write for this server (kind Command: nohup + log file + pid file).
    ServerProfile profile() const { return m_practice.profile(); }

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
};

} // namespace moetune::test
