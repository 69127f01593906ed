// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "sshagentfixture.h"

#include "sshdfixture.h"

#include <QFile>
#include <QProcess>
#include <QRegularExpression>

#include <csignal>
#include <sys/types.h>

using namespace Qt::StringLiterals;

namespace moetune::test {

SshAgentFixture::~SshAgentFixture() {
    if (m_pid > 0)
        ::kill(pid_t(m_pid), SIGTERM);
    if (!m_socket.isEmpty())
        QFile::remove(m_socket);
}

bool SshAgentFixture::start(const QString &socketPath, QString *error) {
    QByteArray out;
    if (!SshdFixture::run(u"ssh-agent"_s, {u"-s"_s, u"-a"_s, socketPath}, error, &out))
        return false;
    const auto m = QRegularExpression(u"SSH_AGENT_PID=(\\d+)"_s).match(QString::fromUtf8(out));
    if (!m.hasMatch()) {
        *error = u"ssh-agent printed no pid: "_s + QString::fromUtf8(out);
        return false;
    }
    m_pid = m.captured(1).toLongLong();
    m_socket = socketPath;
    return true;
}

bool SshAgentFixture::add(const QString &key, QString *error) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(u"SSH_AUTH_SOCK"_s, m_socket);
    p.setProcessEnvironment(env);
    p.start(u"ssh-add"_s, {key});
    if (!p.waitForFinished(10000) || p.exitCode() != 0) {
        *error = u"ssh-add failed: "_s + QString::fromUtf8(p.readAllStandardError());
        return false;
    }
    return true;
}

} // namespace moetune::test
