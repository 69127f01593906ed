// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/moe/framework.h"

#include <QString>
#include <QStringList>
#include <QStringView>

#include <array>
#include <optional>

namespace moetune {

// The file name a server looks up for one fused-MoE shape (FORMATS.md 2):
// E=<E>,N=<N>,device_name=<dev>[,dtype=<dt>][,block_shape=[n, k]][,per_channel_quant=True][_down].json
struct ConfigName {
    int experts = 0;
    int n = 0;
    QString deviceName;
    QString dtype; // "" = bf16/fp16
    std::optional<std::array<int, 2>> blockShape;
    bool perChannelQuant = false;
    bool down = false;

    // Parses a bare file name or a path ending in one; both dialects. nullopt when it is not a config name.
    static std::optional<ConfigName> parse(QStringView fileNameOrPath);
    // SGLang writes "[128, 128]", vLLM "[128,128]"; vLLM has no _down and no per_channel_quant.
    QString fileName(Framework dialect) const;

    // The dtypes the servers write into names (FORMATS.md 2), without the empty bf16/fp16 one.
    static const QStringList &knownDtypes();

    bool operator==(const ConfigName &) const = default;
};

} // namespace moetune
