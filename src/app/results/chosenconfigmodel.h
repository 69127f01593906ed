// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/sweepresult.h"

#include <QAbstractTableModel>

namespace moetune {

// The chosen config per batch size of one run: config, tuned and default latency, speedup, HBM floor
// and the fraction of it reached. Simulated runs say so in the headers and every tooltip.
class ChosenConfigModel : public QAbstractTableModel {
    Q_OBJECT
public:
    // What "m16n64k128g1w4s3" stands for (the chosen config's tooltip and its column header's).
    static QString configKey();
    enum Column { ColM, ColConfig, ColTuned, ColDefault, ColSpeedup, ColFloor, ColFraction, ColumnCount };
    static constexpr int SortRole = Qt::UserRole + 1; // the raw number (NaN where unknown)

    explicit ChosenConfigModel(QObject *parent = nullptr);

    void setResult(const SweepResult &result);
    bool isSimulated() const { return m_simulated; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        BatchSummary batch;
        QString config;
    };
    QList<Row> m_rows;
    bool m_simulated = false;
};

} // namespace moetune
