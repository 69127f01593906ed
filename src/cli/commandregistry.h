// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/command.h"

#include <QCoreApplication>

#include <functional>
#include <memory>
#include <vector>

namespace moetune::cli {

// The subcommands linked into moetune-cli. Each command's .cpp registers itself at static
// initialisation, so adding a subcommand never edits main.cpp.
class CommandRegistry {
public:
    using Factory = std::function<std::unique_ptr<Command>()>;

    static void add(Factory factory);
    // Every registered command, sorted by name.
    static std::vector<std::unique_ptr<Command>> all();
    static std::unique_ptr<Command> find(const QString &name);

    // The kind of application `moetune-cli ARGS` needs, decided from the raw arguments before any
    // application object exists: the command's own kind; Core for help, --version and unknown commands.
    static ApplicationKind applicationKindFor(int argc, char **argv);
    // Creates that application. GuiOffscreen forces the offscreen platform whatever QT_QPA_PLATFORM
    // says, so a report renders the same with or without a display.
    static std::unique_ptr<QCoreApplication> createApplication(ApplicationKind kind, int &argc, char **argv);

    // Helper whose constructor registers T; use through MOETUNE_REGISTER_COMMAND.
    template <typename T>
    struct Registration {
        Registration() {
            CommandRegistry::add([] { return std::make_unique<T>(); });
        }
    };
};

} // namespace moetune::cli

#define MOETUNE_REGISTER_COMMAND(Type)                                                                       \
    namespace {                                                                                              \
    const moetune::cli::CommandRegistry::Registration<Type> registration_##Type;                             \
    }
