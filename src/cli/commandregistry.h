#pragma once

#include "cli/command.h"

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
