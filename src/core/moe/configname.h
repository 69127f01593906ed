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

// The file name a server looks up for one fused-MoE shape (docs/servers.md section 2):
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

    // The dtypes the servers write into names (docs/servers.md section 2), without the empty bf16/fp16 one.
    static const QStringList &knownDtypes();

    // The name `server` builds for a layer of LOGICAL shape (N = moe_intermediate_size / tp; blockShape
    // [0, group] for group-quantised int4/int8 weights), as the agent's naming.server_config_name does:
    // vLLM drops the dtype for int8_w8a8 and never writes per_channel_quant or _down; a block shape with
    // a 0 is never in a name; for int4_w4a16 SGLang names the packed N (N/2), vLLM N. nullopt (and
    // *error set) for an odd int4 N or an unknown server.
    static std::optional<ConfigName> forServer(Framework server, int experts, int logicalN,
                                               const QString &deviceName, const QString &dtype,
                                               std::optional<std::array<int, 2>> blockShape,
                                               bool perChannelQuant, bool down, QString *error = nullptr);
    // The inverse for N: the layer's logical N when `server` wrote this name (SGLang int4_w4a16: 2 x n).
    int logicalN(Framework server) const;

    bool operator==(const ConfigName &) const = default;
    // The same layer shape on the same GPU: everything but the up/_down half. A push, a proof and a
    // finding all ask "is this the file of that shape" this one way.
    bool sameShape(const ConfigName &other) const {
        return experts == other.experts && n == other.n && deviceName == other.deviceName &&
               dtype == other.dtype && blockShape == other.blockShape &&
               perChannelQuant == other.perChannelQuant;
    }
};

// What a config file name says when a poster shortened it or the server could not read the GPU's name
// (docs/servers.md section 1, "Pasted and odd names"): "device_name=...", ",...," in the middle of the
// name, ".../" before it, "NVIDIA_Graphics_Device". Each field is known only where the name prints it;
// nothing is guessed.
struct PartialConfigName {
    std::optional<int> experts;
    std::optional<int> n;
    std::optional<QString> deviceName;                           // nullopt: cut from the paste
    std::optional<QString> dtype;                                // "" = bf16/fp16; nullopt: may have been cut
    std::optional<std::optional<std::array<int, 2>>> blockShape; // outer nullopt: may have been cut
    bool down = false;
    bool folderElided = false; // ".../" or "…/" before the name: where the server looked is not known
    bool nameElided = false;   // "..." or "…" inside the name
    bool deviceUnreadable =
        false; // the GPU name PyTorch gives a GPU it cannot name ("NVIDIA Graphics Device")

    // nullopt when the path is a whole config name in a whole folder (ConfigName::parse reads it) or names
    // no E=/N=/device_name= field at all.
    static std::optional<PartialConfigName> parse(QStringView path);
    // "E, N, GPU name, dtype, block shape": the parts the name does not say, in that order.
    QStringList unknownParts() const;
    // "E=128, N=768, fp8_w8a8, block [128, 128]" with "E=?" / "dtype unknown" for what it does not say.
    QString shapeText() const;
    // A ConfigName when every field of the name is known (the folder may still be cut).
    std::optional<ConfigName> whole() const;
};

} // namespace moetune
