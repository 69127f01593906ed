#include "cli/commandregistry.h"

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

} // namespace moetune::cli
