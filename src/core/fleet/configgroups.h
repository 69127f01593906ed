// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

namespace moetune {

// What a fleet diagnosis learned about one host's fused-MoE config: the file its server looked for and
// did not find, and what decides whether a config tuned elsewhere fits it.
struct FleetHostFacts {
    QString host;
    QString framework;        // "vllm", "sglang"
    QString frameworkVersion; // shown, not grouped on: the kernel hash says whether the code differs
    QString tritonVersion;    // "3.5.0"
    QString tritonFolder;     // the folder the server reads configs from, e.g. "configs/triton_3_5_0"
    QString deviceName;       // as in the config file name, "NVIDIA_H200"
    int experts = 0;          // E
    int intermediate = 0;     // N
    QString dtype;            // "fp8_w8a8", "" for the default dtype
    QString blockShape;       // "[128,128]", "" for none
    QString kernelSourceHash; // hash of the server's fused-MoE kernel source file
    QString missingConfig;    // the config file name the server wanted and did not find; "" = none missing
    bool operator==(const FleetHostFacts &) const = default;
};

// Hosts that need the same config file and run the same kernel code: one tuning job serves them all.
struct FleetConfigGroup {
    FleetHostFacts key;            // the first host's facts; host and frameworkVersion are the first's
    QStringList hosts;             // in the order given
    QStringList frameworkVersions; // every version seen in the group, sorted
    bool operator==(const FleetConfigGroup &) const = default;
};

// Why two groups cannot share one tuning: one sentence per fact that differs.
struct FleetGroupDifference {
    int first = 0; // indices into FleetGrouping::groups
    int second = 0;
    QStringList reasons;
};

struct FleetGrouping {
    QList<FleetConfigGroup> groups;            // in the order their first host was given
    QList<FleetGroupDifference> differences;   // for every pair of groups, first < second
    QStringList nothingMissing;                // hosts whose server found its config
    QList<QPair<QString, QString>> notGrouped; // host and why it could not be placed
};

// Forms the tuning groups. A host whose kernel source hash, device name, E or N is unknown is never
// grouped: nothing shows a config tuned elsewhere fits it.
FleetGrouping groupFleetHosts(const QList<FleetHostFacts> &facts);

// The sentences naming what differs between two hosts' facts (empty when a config transfers).
QStringList fleetFactDifferences(const FleetHostFacts &a, const FleetHostFacts &b);

} // namespace moetune
