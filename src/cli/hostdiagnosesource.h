// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/diagnosesource.h"
#include "remote/hosts/hostconfig.h"

#include <optional>

namespace moetune::cli {

// `diagnose --host HOST [--python PATH] [--bytes N] [--log SOURCE]`: HostSession's "diagnose host" flow
// (fetch the end of the host's log, probe the host, merge the facts into the diagnosis), run
// synchronously.
class HostDiagnoseSource : public DiagnoseSource {
public:
    QList<QCommandLineOption> options() const override;
    bool isSelected(const QCommandLineParser &parser) const override;
    std::optional<Diagnosis> diagnose(const QCommandLineParser &parser, const Diagnoser &diagnoser,
                                      QString *label, QString *error) override;
    // --log SOURCE: /path or ~/path is a file; one word without spaces is a file too (relative to the
    // current folder on the Local machine, refused with a sentence elsewhere); a command has a space and
    // does not start with a relative path (that would run the file). Never a file run as a command.
    static std::optional<LogSource> logSourceOption(const QString &text, bool local, QString *error);
};

} // namespace moetune::cli
