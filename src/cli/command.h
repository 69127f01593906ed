// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <QStringList>

namespace moetune::cli {

// Exit statuses shared by every subcommand, so scripts can rely on them.
enum ExitCode : int {
    ExitClean = 0,    // nothing at warning or above
    ExitFindings = 1, // findings at warning or above (or the command's own "something to fix")
    ExitUsage = 2,    // bad arguments, unreadable input
};

// The application object a command runs under, made by main() before the command runs (Qt allows one
// per process, and which one decides what the command may use).
enum class ApplicationKind {
    Core,             // QCoreApplication: no display, no GUI libraries touched (diagnose, probe, ...)
    GuiOffscreen,     // QGuiApplication on the "offscreen" platform: fonts, QPdfWriter, QPainter, no display
    WidgetsOffscreen, // QApplication on the "offscreen" platform: Qt Charts (a QGraphicsView) for the PDF
                      // report
};

// One `moetune-cli <name> ...` subcommand. Register it with MOETUNE_REGISTER_COMMAND (commandregistry.h).
class Command {
public:
    virtual ~Command() = default;
    virtual QString name() const = 0;
    // Which application object run() needs; every command says so (no default to forget).
    virtual ApplicationKind applicationKind() const = 0;
    // One line for `moetune-cli --help`.
    virtual QString summary() const = 0;
    // args[0] is "moetune-cli <name>" (for QCommandLineParser), the rest are the subcommand's arguments.
    virtual int run(const QStringList &args) = 0;
};

} // namespace moetune::cli
