// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace moetune::test {

// An ssh-agent for the test: started with its own socket, ended by the destructor.
class SshAgentFixture {
public:
    ~SshAgentFixture();
    bool start(const QString &socketPath, QString *error);
    bool add(const QString &key, QString *error);
    QString socket() const { return m_socket; }

private:
    qint64 m_pid = 0;
    QString m_socket;
};

} // namespace moetune::test
