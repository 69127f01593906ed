#pragma once

#include <QCoreApplication>
#include <QString>
#include <QStringList>

#include <memory>

namespace moetune::cli {

// Exit statuses shared by every subcommand, so scripts can rely on them.
enum ExitCode : int {
    ExitClean = 0,    // nothing at warning or above
    ExitFindings = 1, // findings at warning or above (or the command's own "something to fix")
    ExitUsage = 2,    // bad arguments, unreadable input
};

// One `moetune-cli <name> ...` subcommand. Register it with MOETUNE_REGISTER_COMMAND (commandregistry.h).
class Command {
public:
    virtual ~Command() = default;
    virtual QString name() const = 0;
    // One line for `moetune-cli --help`.
    virtual QString summary() const = 0;
    // args[0] is "moetune-cli <name>" (for QCommandLineParser), the rest are the subcommand's arguments.
    virtual int run(const QStringList &args) = 0;
    // The application object the command runs under, made before run(); most need no display. (The
    // PDF report makes a QApplication on the offscreen platform.)
    virtual std::unique_ptr<QCoreApplication> createApplication(int &argc, char **argv) const {
        return std::make_unique<QCoreApplication>(argc, argv);
    }
};

} // namespace moetune::cli
