// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/diagnosis.h"

#include <QCommandLineOption>
#include <QList>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QCommandLineParser;

namespace moetune::cli {

// Another place `moetune-cli diagnose` can read a log from (e.g. `--host HOST` over SSH). A source adds
// its options to the diagnose command; when the user gives them, the source diagnoses its log with the
// command's Diagnoser (the same rules as for a file) and the command renders and sets the exit status
// exactly as for a file.
class DiagnoseSource {
public:
    virtual ~DiagnoseSource() = default;
    virtual QList<QCommandLineOption> options() const = 0;
    // True when the user asked for this source (one of its options is set).
    virtual bool isSelected(const QCommandLineParser &parser) const = 0;
    // The diagnosis; nullopt with *error set (a sentence a person can act on) on failure. *label names
    // the input in messages ("gpu-7:/var/log/sglang.log").
    virtual std::optional<Diagnosis> diagnose(const QCommandLineParser &parser, const Diagnoser &diagnoser,
                                              QString *label, QString *error) = 0;

    using Factory = std::function<std::unique_ptr<DiagnoseSource>()>;
    static void add(Factory factory);
    static std::vector<std::unique_ptr<DiagnoseSource>> all();

    template <typename T>
    struct Registration {
        Registration() {
            DiagnoseSource::add([] { return std::make_unique<T>(); });
        }
    };
};

} // namespace moetune::cli

#define MOETUNE_REGISTER_DIAGNOSE_SOURCE(Type)                                                               \
    namespace {                                                                                              \
    const moetune::cli::DiagnoseSource::Registration<Type> registration_##Type;                              \
    }
