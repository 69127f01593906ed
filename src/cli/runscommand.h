#pragma once

#include "cli/command.h"

namespace moetune::cli {

// `moetune-cli runs HOST [--format json]: the tuning runs on a host, newest first.`
class RunsCommand : public Command {
public:
    QString name() const override;
    ApplicationKind applicationKind() const override { return ApplicationKind::Core; }
    QString summary() const override;
    int run(const QStringList &args) override;
};

} // namespace moetune::cli
