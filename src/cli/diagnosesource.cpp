// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/diagnosesource.h"

namespace moetune::cli {

namespace {
std::vector<DiagnoseSource::Factory> &sourceFactories() {
    static std::vector<DiagnoseSource::Factory> list;
    return list;
}
} // namespace

void DiagnoseSource::add(Factory factory) {
    sourceFactories().push_back(std::move(factory));
}

std::vector<std::unique_ptr<DiagnoseSource>> DiagnoseSource::all() {
    std::vector<std::unique_ptr<DiagnoseSource>> sources;
    for (const Factory &factory : sourceFactories())
        sources.push_back(factory());
    return sources;
}

} // namespace moetune::cli
