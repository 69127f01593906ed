// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace moetune::test {

// One finished run of a command-line program (moetune-cli in the tests): exit status, stdout as bytes,
// stderr as text. exitCode is -1 when it crashed or did not finish in time (err then says so).
struct CliResult {
    int exitCode = -1;
    QByteArray out;
    QString err;
    QJsonObject json() const { return QJsonDocument::fromJson(out).object(); }
};

// Runs program with args, stdin from /dev/null (non-interactive: never a password prompt), in env
// (the test's own environment when empty), and waits up to timeoutMs; a program still running then
// is killed.
CliResult runCli(const QString &program, const QStringList &args, int timeoutMs,
                 const QProcessEnvironment &env = {});

} // namespace moetune::test
