// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/fleet/fleetrecord.h"

#include <QAbstractTableModel>
#include <QHash>

namespace moetune {

// The Fleet view's group table: one row per tuning group of the record (the config file the group's
// hosts want, its hosts, the kernel source hash, the tuning run, the state), and what sets the group
// apart from the others, named. Rows are refreshed in place; a reset only when the groups themselves
// change (a diagnosis ended and regrouped).
class FleetGroupModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        GroupColumn,
        StateColumn,
        HostsColumn,
        RunColumn,
        ConfigColumn,
        KernelColumn,
        ApartColumn,
        ColumnCount
    };

    explicit FleetGroupModel(QObject *parent = nullptr);

    void setRecord(const FleetRecord *record);
    const FleetRecord *record() const { return m_record; }
    // Re-reads the record: a reset when the number of groups changed, else dataChanged for every row.
    void refresh();
    void setTuneProgress(int group, qint64 done, qint64 total);

    // "on gpu-3, run 20261208-abc (SIMULATED)" / "not tuned yet".
    QString runText(int group) const;
    QString stateText(int group) const;
    // "vs G2: Triton 3.5.0 vs 3.6.0 ...; vs G3: ..." ("" for a group like no other).
    QString apartText(int group) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void readSimulated();

    const FleetRecord *m_record = nullptr;
    int m_rows = 0;
    QHash<QString, bool> m_resultSimulated; // result.json path -> simulated
    QList<bool> m_simulated; // per group, read at refresh (a result.json on disk), never while painting
    QHash<int, QPair<qint64, qint64>> m_tuneProgress;
};

} // namespace moetune
