// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/moe/framework.h"
#include "core/moe/kernelconfig.h"

#include <QByteArray>
#include <QMap>
#include <QString>

#include <optional>

namespace moetune {

// A tuned config file: batch size M -> kernel config (docs/servers.md section 3).
class ConfigFile {
public:
    QMap<int, KernelConfig> entries;
    QString tritonVersion; // vLLM's top-level "triton_version" key, optional

    // Validates; on failure returns nullopt and, when error is given, a sentence naming the bad key/field.
    static std::optional<ConfigFile> parse(const QByteArray &json, QString *error);
    // The exact bytes the server's tuner writes (json.dump(indent=4) style, trailing newline).
    QByteArray toJson(Framework dialect) const;
    // The entry the server would pick for m tokens (nearest key; the smaller one on a tie); null when empty.
    const KernelConfig *nearest(int m) const;

    bool operator==(const ConfigFile &) const = default;
};

} // namespace moetune
