// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

namespace moetune::test {

// Where processesWith looks for its token.
enum class ProcessField {
    Environment, // one whole entry of /proc/PID/environ ("NAME=value"): a process and all it started
    CommandLine, // anywhere in /proc/PID/cmdline: e.g. a program reached through a link named by the token
};

// Live processes of this machine (not zombies, not the test itself) that carry token: what a test
// counts to see that nothing outlived the program it killed.
QList<qint64> processesWith(const QByteArray &token, ProcessField field);

// "PID (command line), ..." for a failure message.
QString describeProcesses(const QList<qint64> &pids);

} // namespace moetune::test
