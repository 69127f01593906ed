// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/diagnosesource.h"

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
};

} // namespace moetune::cli
