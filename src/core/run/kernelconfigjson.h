// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/moe/kernelconfig.h"

#include <QJsonObject>
#include <QString>
#include <QStringView>

#include <optional>

namespace moetune {

// The agent's JSON spelling of a KernelConfig ({"BLOCK_SIZE_M":..,"num_stages":..}, PROTOCOL.md 3) and
// its compact key ("m64n128k64g16w4s3", plus "t" for TMA), as in the agent's KernelConfig.key().
class KernelConfigJson {
public:
    enum class Parameter { BlockM, BlockN, BlockK, GroupM, Warps, Stages };

    static std::optional<KernelConfig> fromJson(const QJsonObject &o, QString *error = nullptr);
    static QJsonObject toJson(const KernelConfig &c);
    static QString key(const KernelConfig &c);
    static std::optional<KernelConfig> fromKey(QStringView key);
    // A 64-bit identity for hashing many configs (10 bits per field, TMA in the top bit).
    static quint64 packed(const KernelConfig &c);

    static int value(const KernelConfig &c, Parameter p);
    static QString name(Parameter p);      // "BLOCK_SIZE_M", ...
    static QString shortName(Parameter p); // "BM", ...
};

} // namespace moetune
