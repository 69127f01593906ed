// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnoser.h"
#include "core/fleet/fleetrecord.h"
#include "core/fleet/inventory.h"
#include "remote/fleet/fleetrolloutflow.h"
#include "remote/fleet/fleettuneflow.h"

#include <QHash>
#include <QIcon>
#include <QPointer>
#include <QSet>
#include <QWidget>

#include <functional>
#include <memory>
#include <optional>

namespace Ui {
class FleetPage;
}

namespace moetune {

class FleetDiagnoseFlow;
class FleetGroupModel;
class FleetHostModel;
class HostRegistry;
class HostSession;

// The Fleet view (issue 46): many hosts at once. A set of hosts (selected on the Hosts page, or all / a
// group / a tag of an Ansible inventory) is diagnosed in parallel into one host table (GPU, framework,
// Triton, model, MoE kernel, findings, the stage with live progress; unreachable hosts with the reason),
// grouped into tuning groups (one config file and one kernel source each; what sets groups apart is
// named), then per group: Tune Group on one host, Roll Out with a canary and at most K restarting at once,
// Undo Group from the records. The work is the fleet flows' (src/remote/fleet) over the registry's
// sessions; this page only shows the FleetRecord they update and batches what it repaints.
class FleetPage : public QWidget {
    Q_OBJECT
public:
    explicit FleetPage(HostRegistry *registry, QWidget *parent = nullptr);
    ~FleetPage() override;

    static QIcon icon(); // the navigation entry: three server racks side by side, drawn in code

    // Where fleet records (and the runs the flows keep) go: the app's workspace by default.
    void setWorkspacePath(const QString &path) { m_workspace = path; }
    QString workspacePath() const { return m_workspace; }
    void setMaxSessions(int n) { m_maxSessions = n; }
    // The rules the Diagnose page uses, for every host's log.
    void setDiagnoser(std::function<Diagnoser()> diagnoser) { m_diagnoser = std::move(diagnoser); }
    // The tuning run's options (backend "" = the job's own; "synthetic" = SIMULATED numbers, for tests:
    // the run, the Fleet view and the report say SIMULATED). "Stop its server while tuning" sets
    // takeOutOfService.
    void setTuneOptions(const FleetTuneFlow::Options &options) { m_tuneOptions = options; }

    // The Hosts page's "Diagnose All": these hosts of the registry, diagnosed now.
    void diagnoseRegistryHosts(const QStringList &aliases);
    // Reads an Ansible inventory (the error in the banner); its hosts, groups and tags become the sets
    // to choose from. Hosts not on the Hosts page connect as ~/.ssh/config and the inventory say.
    bool openInventory(const QString &path);
    void chooseInventory(); // the file dialog
    // Chooses a set of the inventory by its words: "all", "group NAME", "tag NAME".
    bool chooseSet(const QString &words);
    void diagnose(); // the chosen set
    void cancelDiagnosis();
    // Shows a saved record (the newest of the workspace is opened when the page is first shown), so a
    // rollout cut short, even by quitting, can be undone from what was recorded.
    void openRecord(const FleetRecord &record);
    void openLatestRecord(); // asynchronously

    int selectedGroup() const;
    bool selectGroup(int group);
    // The buttons: the selected group with the options shown. Roll Out and Undo ask first.
    void tuneSelectedGroup();
    void rollOutSelectedGroup();
    void undoSelectedGroup();

    const FleetRecord *record() const { return m_record.get(); }
    FleetHostModel *hostModel() const { return m_hostModel; }
    FleetGroupModel *groupModel() const { return m_groupModel; }
    QString totalsText() const;
    QString bannerText() const;
    bool isDiagnosing() const { return !m_diagnoseFlow.isNull(); }
    bool isGroupBusy(int group) const { return m_busyGroups.contains(group); }
    bool isBusy() const { return isDiagnosing() || !m_busyGroups.isEmpty(); }

signals:
    void statusMessage(const QString &text, int timeoutMs);
    // The record was saved (a diagnosis, tuning, rollout or undo ended): the Results page reads it again.
    void recordSaved(const QString &workspacePath, const QString &recordId);

protected:
    void showEvent(QShowEvent *event) override;

private:
    struct HostSet {
        QString label;     // the combo's words
        QString selection; // FleetRecord::selection
        QString inventory; // FleetRecord::inventory
        QList<FleetHost> hosts;
    };

    HostSession *sessionFor(const FleetHost &host, QString *error);
    void setSets(const QList<HostSet> &sets, const QString &source);
    void startDiagnosis(const HostSet &set);
    void newRecord(std::unique_ptr<FleetRecord> record);
    void onGroupSelected();
    void onFlushed();
    void groupFinished(int group, bool ok, const QString &message);
    void rollOutNow(int group, const FleetRolloutFlow::Options &options);
    void undoGroupNow(int group);
    void updateActions();
    void updateGroupNote();
    void showMessage(int kind, const QString &text);
    QStringList groupHosts(int group, bool reachableOnly) const;

    std::unique_ptr<Ui::FleetPage> m_ui;
    HostRegistry *m_registry;
    FleetHostModel *m_hostModel;
    FleetGroupModel *m_groupModel;
    QString m_workspace;
    int m_maxSessions = 8;
    std::function<Diagnoser()> m_diagnoser;
    FleetTuneFlow::Options m_tuneOptions;
    QList<HostSet> m_sets;
    std::optional<FleetInventory> m_inventory;
    QString m_inventoryPath;
    std::unique_ptr<FleetRecord> m_record;
    QPointer<FleetDiagnoseFlow> m_diagnoseFlow;
    FleetTuneFlow *m_tuneFlow = nullptr;
    FleetRolloutFlow *m_rolloutFlow = nullptr;
    QSet<int> m_busyGroups;
    bool m_groupsDirty = false;
    bool m_latestAsked = false;
    QHash<QString, HostSession *> m_ownSessions; // inventory hosts the Hosts page does not have
};

} // namespace moetune
