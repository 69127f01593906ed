// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/moe/configfile.h"
#include "core/moe/kernelconfig.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>

#include <array>
#include <cmath>
#include <limits>
#include <optional>

namespace moetune {

// Which GEMM a unit timed (PROTOCOL.md 3): the whole MoE call ("both", spec ops "up"), or the up / down
// GEMM on its own (spec ops "up+down").
enum class SweepOp : quint8 { Both, Up, Down };
QString sweepOpName(SweepOp op);
std::optional<SweepOp> sweepOpFromName(QStringView name);

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
inline bool known(double v) {
    return !std::isnan(v);
}
// A JSON number as is, anything else (null, missing, text) as kUnknown.
inline double numberOrUnknown(const QJsonValue &v) {
    return v.isDouble() ? v.toDouble() : kUnknown;
}

// One timed (or failed) unit: a config at one batch size.
struct SweepMeasurement {
    SweepOp op = SweepOp::Both;
    int m = 0;
    KernelConfig config;
    std::optional<KernelConfig> configDown;
    int round = 0; // -1: the server's default config; >= 0: strategy rounds
    int replays = 0;
    double medianUs = kUnknown;
    double minUs = kUnknown;
    double maxUs = kUnknown;
    double spread = kUnknown; // (max - min) / median
    int gpu = 0;
    QString errorKind; // "compile", "resources", "oom", "mismatch", "crash", "other"; empty when timed
    QString error;

    bool ok() const { return errorKind.isEmpty() && known(medianUs); }
};

// A winner or the default config at one (op, m).
struct SweepEntry {
    SweepOp op = SweepOp::Both;
    int m = 0;
    KernelConfig config;
    double medianUs = kUnknown;
};

// Per batch size, summed over the ops (up + down when tuned separately); NaN where unknown.
struct BatchSummary {
    int m = 0;
    double bestUs = kUnknown;
    double defaultUs = kUnknown;
    double speedup = kUnknown;          // default / best
    double rooflineUs = kUnknown;       // the HBM weight-streaming floor
    double rooflineFraction = kUnknown; // floor / best (1.0 = at the floor)
    // The agent's final head-to-head (protocol issue 9, optional): "tuned_faster", "default_fastest",
    // "tie_default_kept", ...; chosenDefault when the file keeps the default config at this size.
    QString decision;
    bool chosenDefault = false;
};

// One config file of the result (the server's exact name) and its entries.
struct SweepFile {
    QString framework; // "sglang" | "vllm"
    QString kind;      // "sglang" | "sglang_down" | "vllm"
    QString fileName;
    QString path; // on the GPU host
    QString sha256;
    ConfigFile config;
};

// One point of a landscape: a distinct config at one (op, m), its latest timing.
struct LandscapePoint {
    KernelConfig config;
    double medianUs = kUnknown;
    double spread = kUnknown;
    int timings = 0; // how many units timed it (rounds, re-times)
    bool winner = false;
    bool isDefault = false;
};

// Everything a tuning run measured (remote_agent/PROTOCOL.md section 5, result.json), as a value. Built
// from a result.json, or incrementally from the run's events (SweepResultBuilder).
struct SweepResult {
    QString runId;
    QString agentVersion;
    QString framework; // "sglang" | "vllm"
    QString backend;   // "synthetic" | "triton" | "server"
    QString deviceName;
    QString tritonVersion;
    QString strategy;
    QString status = QStringLiteral("running"); // "ok" | "failed" | "cancelled" | "running"
    bool simulated = false;
    double createdAt = 0;  // epoch seconds
    double finishedAt = 0; // 0 while running
    QList<int> gpus;
    QList<SweepOp> ops;
    QList<int> batchSizes;

    int experts = 0;
    int n = 0;
    int k = 0;
    int topk = 0;
    QString dtype; // "" = bf16
    std::optional<std::array<int, 2>> blockShape;
    bool perChannelQuant = false;

    QList<SweepMeasurement> measurements;
    QList<SweepEntry> winners;
    QList<SweepEntry> defaults;
    QList<SweepEntry> roofline; // config unused; medianUs = the floor
    QList<BatchSummary> perBatch;
    QList<SweepFile> files;

    double wallSeconds = kUnknown;
    int unitsMeasured = 0;
    int unitsFailed = 0;
    int unitsFromJournal = 0;
    int workerCrashes = 0;
    bool budgetHit = false;

    // Parses result.json (format "moetune-result", version 1); a sentence naming the bad field on error.
    static std::optional<SweepResult> fromJson(const QJsonObject &o, QString *error = nullptr);
    QJsonObject toJson() const; // the same format (samples are not kept)

    const BatchSummary *batch(int m) const;
    const SweepEntry *winner(SweepOp op, int m) const;
    const SweepEntry *defaultEntry(SweepOp op, int m) const;
    double rooflineUs(SweepOp op, int m) const;
    // Sums winners, defaults and floors of every op into perBatch (as the agent does).
    void recomputePerBatch();
    // Every distinct config timed at (op, m), latest round first (the agent's latest_score).
    QList<LandscapePoint> landscape(SweepOp op, int m) const;
    // The latest timing of exactly this config at (op, m), NaN when it was not timed (a compare lookup).
    double latencyOf(SweepOp op, int m, const KernelConfig &config) const;
    int measuredCount() const; // units that have a timing
    int failedCount() const;

    QString shapeText() const; // "E=128 N=768 K=2048 top-k 8 bf16"
    QString dtypeText() const; // "bf16" when unquantised
};

} // namespace moetune
