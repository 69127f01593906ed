// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringView>

#include <optional>

namespace moetune {

// What a MoE backend name in a server log means for the Triton fused-MoE config files
// (docs/servers.md section 9): one entry of a rule file's "moe_backends" list (resources/rules/README.md).
struct MoeBackend {
    enum class Configs {
        Used,    // the Triton fused-MoE kernel: its config files decide its speed
        Unused,  // another kernel: no Triton config file is read for its layers
        Partly,  // another kernel that hands the shapes it rejects to the Triton kernel (DeepGEMM)
        Auto,    // the server picks by GPU and dtype (SGLang 'auto'): Triton on Hopper/Ampere
        Ignored, // the Triton kernel with its built-in defaults: the loader ignores the files
        Unknown, // a name no rule file describes
    };

    QString name;   // normalised (normalise()): "MARLIN", "FLASHINFER_TRTLLM", "TRITON_KERNELS"
    QString scheme; // normalised; empty: any scheme. "MXFP4": this entry only for that scheme's layers
    Configs configs = Configs::Unknown;
    QString kernel; // how a sentence names it ("the Triton fused-MoE kernel"); empty: the printed name
    QString note;   // one sentence more about it, or empty
    QString origin; // file it came from

    // Reads one "moe_backends" entry; nullopt with a sentence in *error when a field is missing or wrong.
    static std::optional<MoeBackend> fromJson(const QJsonObject &object, QString *error);
    // "FlashInfer TRTLLM" / "flashinfer_trtllm" / "'FLASHINFER-TRTLLM'" -> "FLASHINFER_TRTLLM".
    static QString normalise(QStringView printed);
    // The entry for a printed name and scheme: one of that scheme first, then one for any scheme; nullopt
    // when none describes the name.
    static std::optional<MoeBackend> find(const QList<MoeBackend> &table, QStringView name,
                                          QStringView scheme);
    static QString configsName(Configs configs); // "used", "unused", "partly", "auto", "ignored", "unknown"
};

} // namespace moetune
