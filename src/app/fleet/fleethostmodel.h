// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/fleet/fleetrecord.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QSet>
#include <QTimer>

namespace moetune {

// The Fleet view's host table: one row per host of the set, read from the FleetRecord the fleet flows
// update in place. The flows' hostChanged(i) only marks a row; the marked rows are told to the view at
// most every flushMs (dataChanged per row, never a reset), so 1,000 hosts reporting at once cost the
// GUI thread one repaint per interval.
class FleetHostModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int flushMs = 100;
    // The stage right after the host: it is what changes, and it stays in view at 1024 px.
    enum Column {
        HostColumn,
        StageColumn,
        GpuColumn,
        FrameworkColumn,
        TritonColumn,
        ModelColumn,
        KernelColumn,
        FindingsColumn,
        GroupColumn,
        ColumnCount
    };
    enum Role { StageRole = Qt::UserRole + 1, HostNameRole, GroupRole };

    explicit FleetHostModel(QObject *parent = nullptr);

    // The record shown (not owned; nullptr = none). Resets the model.
    void setRecord(const FleetRecord *record);
    const FleetRecord *record() const { return m_record; }
    // A host of the record changed: its row is refreshed at the next flush.
    void hostChanged(int index);
    // Every row (after a regroup, the group column of all hosts).
    void allChanged();
    // The tuning progress of a group's job, shown on the host that runs it (total 0 = none).
    void setTuneProgress(int group, qint64 done, qint64 total);
    // A flush (and flushed()) at the next interval even with no row marked (a group changed).
    void requestFlush();
    // Tells the view now what is pending (tests, and the end of a flow).
    void flush();
    bool hasPending() const { return !m_pending.isEmpty() || m_all; }
    int flushCount() const { return m_flushes; }

    // The Stage column's words for a host: "Unreachable: host key not known ...".
    QString stageText(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
    // After each flush that told the view something (the page refreshes its totals line then).
    void flushed();

private:
    void schedule();

    const FleetRecord *m_record = nullptr;
    QSet<int> m_pending;
    bool m_all = false;
    bool m_requested = false;
    QTimer m_timer;
    QHash<int, QPair<qint64, qint64>> m_tuneProgress; // group -> done, total
    int m_flushes = 0;
};

} // namespace moetune
