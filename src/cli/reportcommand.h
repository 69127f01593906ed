// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/command.h"

namespace moetune::cli {

// `moetune-cli report RUN|WORKSPACE [--run ID] [--pdf FILE] [--format text|markdown]`: the report of a
// tuning run kept in a workspace (or an agent run folder copied from the host), as text or a PDF.
class ReportCommand : public Command {
public:
    QString name() const override;
    QString summary() const override;
    int run(const QStringList &args) override;
    // The PDF draws Qt Charts, which needs a QApplication; on the offscreen platform no display is needed.
    ApplicationKind applicationKind() const override { return ApplicationKind::WidgetsOffscreen; }
};

} // namespace moetune::cli
