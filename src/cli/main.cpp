// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// moetune-cli: dispatches `moetune-cli <command> ...` to the commands registered in cli/commandregistry.h.
#include "cli/command.h"
#include "cli/commandregistry.h"
#include "cli/console.h"
#include "core/util/version.h"

#include <QCoreApplication>
#include <QStringList>

using namespace Qt::StringLiterals;
using namespace moetune;
using namespace moetune::cli;

namespace {

QString usage() {
    QString text = u"Usage: moetune-cli <command> [options] [arguments]\n"
                   u"       moetune-cli help <command>\n"
                   u"       moetune-cli --version\n\n"
                   u"Diagnose and tune the fused-MoE Triton kernel configs of LLM inference servers.\n\n"
                   u"Commands:\n"_s;
    for (const auto &command : CommandRegistry::all())
        text += u"  "_s + command->name().leftJustified(12) + command->summary() + u'\n';
    text += u"\nExit status: 0 clean, 1 findings at warning or above, 2 usage or read error.\n"_s;
    return text;
}

} // namespace

int main(int argc, char **argv) {
    // diagnose must stay a plain core application; a report needs a GUI one (offscreen): the command says.
    const auto app =
        CommandRegistry::createApplication(CommandRegistry::applicationKindFor(argc, argv), argc, argv);
    // The same names as the app, so both read the user's rule files from one config folder.
    QCoreApplication::setOrganizationName(u"moetune"_s);
    QCoreApplication::setApplicationName(u"moetune"_s);
    QCoreApplication::setApplicationVersion(versionString());

    QStringList args = QCoreApplication::arguments();
    args.removeFirst();
    if (args.isEmpty()) {
        Console::err(usage());
        return ExitUsage;
    }
    const QString first = args.takeFirst();
    if (first == u"--help"_s || first == u"-h"_s || (first == u"help"_s && args.isEmpty())) {
        Console::out(usage());
        return ExitClean;
    }
    if (first == u"--version"_s || first == u"-v"_s) {
        Console::out(u"moetune-cli "_s + versionString() + u'\n');
        return ExitClean;
    }
    QString name = first;
    if (first == u"help"_s) {
        name = args.takeFirst();
        args = QStringList{u"--help"_s};
    }
    auto command = CommandRegistry::find(name);
    if (!command) {
        Console::err(u"moetune-cli: unknown command '"_s + name +
                     u"'. Run 'moetune-cli --help' for the list of commands.\n"_s);
        return ExitUsage;
    }
    args.prepend(u"moetune-cli "_s + name);
    return command->run(args);
}
