// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/runprogress.h"

#include <QAbstractTableModel>
#include <QMap>

namespace moetune {

// The Tune page's live table: per batch size the GEMMs compared (up+down, or the one measured so far
// of an up+down run), the best so far, the default config's latency of the same GEMMs, the speedup and
// the HBM floor (when the run's result gave it). Once the run has ended, a size whose down GEMM was never
// measured shows no speedup, as the report does. Rebuilt from a RunProgress; rows only grow while a run
// streams, so views keep their selection.
class TuneBestModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { BatchSize, Op, Best, Default, Speedup, Floor, ColumnCount };

    explicit TuneBestModel(QObject *parent = nullptr);
    void setProgress(const RunProgress &progress);
    void setFloors(const QMap<int, double> &floorUs); // m -> us
    void clear();

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        int m = 0;
        QString op;
        double best = 0;
        double def = 0;
        bool complete = true;
        bool operator==(const Row &) const = default;
    };
    bool comparable(const Row &r) const { return r.def > 0 && r.best > 0 && (r.complete || !m_ended); }
    QList<Row> m_rows;
    bool m_ended = false;
    QMap<int, double> m_floors;
    bool m_simulated = false;
};

} // namespace moetune
