// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// A fleet operation's state and record: what each host of the set is doing and did, and what each tuning
// group is doing and did. One model for both shells and the report: the fleet flows (src/remote/fleet/)
// fill it, the Fleet view and `moetune-cli fleet` show it, the fleet PDF and `fleet undo` read it back.
// Saved as JSON in the local workspace (<workspace>/fleet/<id>.json, format "moetune-fleet" version 1) after
// every change of a host's outcome, so an interrupted rollout can be undone from what was recorded.

#include "core/fleet/configgroups.h"
#include "core/fleet/inventory.h"
#include "core/push/pushrecord.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// Where one host of the set is. The order is the order of the loop; Failed / Unreachable end a host.
enum class FleetHostStage {
    Waiting,     // not started (bounded parallelism: its turn has not come)
    Connecting,  // ssh session being set up
    Diagnosing,  // probe + log fetch + diagnosis
    Diagnosed,   // facts known (findings may say nothing is missing)
    Unreachable, // could not connect, or the connection was refused (reason says which; host key changed)
    Failed,      // a step failed on a reachable host (reason says which)
    Tuning,      // this host runs its group's tuning job
    Tuned,       // its group's result is here
    Importing,   // the group's result.json is being copied to this host (agent import-run)
    Pushing,     // preview + install
    Restarting,  // restart through the server profile, then proof
    Proved,      // pushed, restarted, warning gone (and serving verdict when asked)
    ProofFailed, // pushed and restarted but the proof failed: the rollout of the group stops here
    Undoing,
    Undone,     // undone and read back
    UndoFailed, // the undo could not put back what was there (reason names the file)
    Skipped,    // not touched: its group's rollout stopped before its batch, or nothing was missing
};
QString fleetStageName(FleetHostStage stage); // "waiting", "unreachable", ... (JSON, CLI)
std::optional<FleetHostStage> fleetStageFromName(const QString &name);
QString fleetStageText(FleetHostStage stage);           // the words a user reads ("Proved", ...)
bool fleetStageIsTerminalFailure(FleetHostStage stage); // Unreachable, Failed, ProofFailed, UndoFailed

// One host of the set: who it is, what diagnosis learned, and what the rollout did there.
struct FleetHostRecord {
    FleetHost host;
    FleetHostStage stage = FleetHostStage::Waiting;
    QString reason; // the sentence for the current stage: why unreachable / failed, what it is doing

    // Diagnosis (the table's columns). Empty when not known.
    QString gpu;              // "8x NVIDIA H200"
    QString framework;        // "sglang" / "vllm"
    QString frameworkVersion; // "0.5.4"
    QString triton;           // "3.6.0"
    QString model;            // served model path or name
    QString moeKernel;        // the MoE kernel in use, as the diagnosis names it ("Triton fused MoE")
    QStringList findings;     // one line per finding, most severe first
    FleetHostFacts facts;     // what grouping reads (facts.host == host.name)
    int group = -1;           // index into FleetRecord::groups, -1 = in no group

    // Rollout.
    QString runId;          // the run on THIS host (tuned here, or imported here) that was pushed
    PushRecord push;        // what the push changed (empty files = nothing pushed)
    QString proof;          // the proof's sentence ("the warning is gone ...")
    QString servingVerdict; // the serving comparison's sentence with its interval; "" = not measured
    bool undone = false;    // read back after the undo
    double startedAt = 0;   // seconds since the epoch, 0 = not started
    double endedAt = 0;

    QJsonObject toJson() const;
    static std::optional<FleetHostRecord> fromJson(const QJsonObject &o, QString *error = nullptr);
    bool operator==(const FleetHostRecord &) const = default;
};

// One tuning group: the hosts that need the same config file and run the same kernel code.
struct FleetGroupRecord {
    FleetConfigGroup group;
    QString tuneHost;   // the host that runs (ran) the group's job; "" = not chosen yet
    QString runId;      // the tuning run on tuneHost
    QString resultFile; // local copy of the run's result.json (in the workspace), "" = not fetched
    QString canary;     // the first host pushed; "" = not rolled out yet
    QString
        state; // "diagnosed", "tuning", "tuned", "rolling out", "rolled out", "stopped", "undone", "failed"
    QString reason; // why stopped / failed (names the host)

    QJsonObject toJson() const;
    static std::optional<FleetGroupRecord> fromJson(const QJsonObject &o, QString *error = nullptr);
    bool operator==(const FleetGroupRecord &) const = default;
};

struct FleetRecord {
    QString id; // "fleet-20261208-011530" (safe for a file name)
    double createdAt = 0;
    QString inventory;            // the inventory file, "" = the ssh config / the app's hosts
    QString selection;            // what the user picked, in words ("group h200", "all", "gpu-1 gpu-2")
    QList<FleetHostRecord> hosts; // in the order of the set
    QList<FleetGroupRecord> groups;
    QList<FleetGroupDifference> differences; // why groups are apart (from FleetGrouping)
    QStringList nothingMissing;              // hosts whose server found its config

    FleetHostRecord *host(const QString &name);
    const FleetHostRecord *host(const QString &name) const;
    // Counts per stage over the set (for the totals line and the report).
    int count(FleetHostStage stage) const;
    // Re-forms the groups from the hosts' facts (groupFleetHosts) and sets each host's `group`.
    void regroup();

    QJsonObject toJson() const;
    static std::optional<FleetRecord> fromJson(const QJsonObject &o, QString *error = nullptr);
    // <workspace>/fleet/<id>.json, written atomically.
    bool save(const QString &workspacePath, QString *error) const;
    static std::optional<FleetRecord> load(const QString &file, QString *error);
    // Every record of a workspace, newest first (damaged ones skipped, named in *warnings).
    static QList<FleetRecord> loadAll(const QString &workspacePath, QStringList *warnings = nullptr);
    static QString newId(); // from the current time
};

} // namespace moetune
