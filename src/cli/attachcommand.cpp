// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/attachcommand.h"

#include "cli/commandregistry.h"
#include "cli/console.h"
#include "cli/flowhost.h"

using namespace Qt::StringLiterals;

namespace moetune::cli {

MOETUNE_REGISTER_COMMAND(AttachCommand)

QString AttachCommand::name() const {
    return u"attach"_s;
}

QString AttachCommand::summary() const {
    return u"Follow a tuning run on a host to its end (reattaches by itself after a dropped connection)"_s;
}

int AttachCommand::run(const QStringList &args) {
    QCommandLineParser p;
    p.setApplicationDescription(summary());
    p.addHelpOption();
    p.addPositionalArgument(u"HOST"_s, u"the host"_s);
    p.addPositionalArgument(u"RUN"_s, u"the run id (moetune-cli runs HOST)"_s);
    p.addOptions(FlowHost::commonOptions());
    p.addOption({u"from"_s, u"Start at event N (the run's events before it are not shown)."_s, u"N"_s});
    if (!p.parse(args) || p.positionalArguments().size() != 2) {
        Console::err(u"moetune-cli attach: "_s +
                     (p.errorText().isEmpty() ? u"give HOST and RUN."_s : p.errorText()) + u'\n');
        return FlowExitUsage;
    }
    RunProgress progress;
    if (p.isSet(u"from"_s)) {
        bool ok = false;
        const qint64 from = p.value(u"from"_s).toLongLong(&ok);
        if (!ok || from < 0) {
            Console::err(u"moetune-cli attach: --from wants an event number >= 0.\n"_s);
            return FlowExitUsage;
        }
        progress.lastSeq = from - 1;
    }
    FlowHost host;
    if (const int rc = host.connect(name(), p))
        return rc;
    return host.followRun(p.positionalArguments().value(1), &progress);
}

} // namespace moetune::cli
