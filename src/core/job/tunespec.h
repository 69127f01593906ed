// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/moe/framework.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <array>
#include <optional>

namespace moetune {

struct TuningTarget;

// One tuning job for the agent's `tune` command: a MoE shape, the batch sizes, the search and where.
struct TuneSpec {
    Framework framework = Framework::Unknown;
    int experts = 0;    // E (local experts, as in the file name)
    int n = 0;          // logical N per rank (moe_intermediate_size / tp; = the file's N except SGLang int4)
    int hiddenSize = 0; // K
    int topk = 0;
    QString dtype; // "" = bf16/fp16, else "fp8_w8a8", ...
    std::optional<std::array<int, 2>> blockShape;
    bool perChannelQuant = false;
    bool upAndDown = false; // ops "up+down": separate up and _down files (SGLang); else "up"
    QList<int> batchSizes = defaultBatchSizes();
    QJsonObject space;                         // PROTOCOL.md 6 "space": {} = the full reference space, pruned
    QString strategy = QStringLiteral("fast"); // a strategy:<name> capability of the agent
    QList<int> gpus;                           // empty = "all"
    double timeBudgetSeconds = 0;              // 0 = none
    QString deviceName;                        // "" = the agent's (synthetic: SIMULATED_GPU)
    QString backend = QStringLiteral("auto");  // "auto" | "server" | "triton" | "synthetic"
    QString python;                            // interpreter for the server/triton backends, "" = agent's
    QString routingFile;                       // recorded topk ids on the host, "" = random routing

    static QList<int> defaultBatchSizes(); // the reference tuners' 18 sizes
    // Fills what a diagnosis knows (host facts: tuneSpecFor() in core/host/hostprobe.h); the caller
    // checks validate() before running.
    static TuneSpec fromTarget(const TuningTarget &target);

    // The longest config file name a run may write (255 bytes less room for the agent's backup and
    // temporary suffixes, ".bak-<stamp>-<n>" and ".<name>.moetune-tmp-<pid>-<hex>").
    static constexpr qsizetype kMaxConfigNameBytes = 191;
    // Empty when runnable, else the first sentence of JobCheck::check() (core/job/jobcheck.h).
    QString validate() const;
    // "E=128, N=768, K=2048, top-k 8, bf16" (K and top-k left out while unknown), for tables and lines.
    QString shapeText() const;
    // "SGLang: E=128, N=768, K=2048, top-k 8, bf16, up and down": one line naming the whole job.
    QString summaryText() const;
    // The keys that name the job (framework, E, N, K/topk when known, dtype, block_shape,
    // per_channel_quant, ops, device_name) as compact JSON: what the diagnosis's advice quotes.
    QString shapeJson() const;
    QJsonObject toJson() const; // remote_agent/PROTOCOL.md section 6 keys, defaults omitted
    static std::optional<TuneSpec> fromJson(const QJsonObject &o, QString *error = nullptr);
    bool operator==(const TuneSpec &) const = default;
};

} // namespace moetune
