// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/commandregistry.h"

#ifdef MOETUNE_CLI_HAS_WIDGETS
#include <QApplication>
#endif

#include <QGuiApplication>

#include <algorithm>

namespace moetune::cli {

namespace {
// Function-local static: registrations run during static initialisation in any order.
std::vector<CommandRegistry::Factory> &factories() {
    static std::vector<CommandRegistry::Factory> list;
    return list;
}
} // namespace

void CommandRegistry::add(Factory factory) {
    factories().push_back(std::move(factory));
}

std::vector<std::unique_ptr<Command>> CommandRegistry::all() {
    std::vector<std::unique_ptr<Command>> commands;
    for (const Factory &factory : factories())
        commands.push_back(factory());
    std::sort(commands.begin(), commands.end(),
              [](const auto &a, const auto &b) { return a->name() < b->name(); });
    return commands;
}

std::unique_ptr<Command> CommandRegistry::find(const QString &name) {
    for (const Factory &factory : factories()) {
        auto command = factory();
        if (command->name() == name)
            return command;
    }
    return nullptr;
}

ApplicationKind CommandRegistry::applicationKindFor(int argc, char **argv) {
    if (argc < 2)
        return ApplicationKind::Core;
    const QString first = QString::fromLocal8Bit(argv[1]);
    if (first.startsWith(u'-') || first == QLatin1StringView("help"))
        return ApplicationKind::Core; // usage, --version, `help CMD`: text only
    const auto command = find(first);
    return command ? command->applicationKind() : ApplicationKind::Core;
}

std::unique_ptr<QCoreApplication> CommandRegistry::createApplication(ApplicationKind kind, int &argc,
                                                                     char **argv) {
    switch (kind) {
    case ApplicationKind::WidgetsOffscreen:
#ifdef MOETUNE_CLI_HAS_WIDGETS
        qputenv("QT_QPA_PLATFORM", "offscreen");
        return std::make_unique<QApplication>(argc, argv);
#else
        [[fallthrough]];
#endif
    case ApplicationKind::GuiOffscreen:
        qputenv("QT_QPA_PLATFORM", "offscreen");
        return std::make_unique<QGuiApplication>(argc, argv);
    case ApplicationKind::Core:
        break;
    }
    return std::make_unique<QCoreApplication>(argc, argv);
}

} // namespace moetune::cli
