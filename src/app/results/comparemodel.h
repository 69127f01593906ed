// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/moe/configfile.h"
#include "core/run/sweepresult.h"

#include <QAbstractTableModel>
#include <QList>
#include <QString>

namespace moetune {

// This run's chosen configs against another config file (the one on the host it would replace, an
// older triton_X_Y_Z folder's file, another run's, or a local file): per batch size the config the
// server would pick from each, the keys that differ, and both latencies where they were measured.
class CompareModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { ColM, ColThis, ColOther, ColDiff, ColThisUs, ColOtherUs, ColRatio, ColumnCount };

    explicit CompareModel(QObject *parent = nullptr);

    // measuredIn: results searched, in order, for a timing of the other file's config (this run first).
    void setComparison(const SweepResult &run, SweepOp op, const ConfigFile &other, const QString &otherLabel,
                       const QList<SweepResult> &measuredIn);
    void clear();
    int differingRows() const;     // batch sizes whose configs differ
    int measuredOtherRows() const; // rows where the other config's latency is known
    bool isSimulated() const { return m_simulated; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    static QString differences(const KernelConfig &a, const KernelConfig &b); // "BN 64->128, stages 3->4"

private:
    struct Row {
        int m = 0;
        std::optional<KernelConfig> mine;
        std::optional<KernelConfig> other;
        int otherKey = 0; // the key of the other file the server would use at m
        double mineUs = kUnknown;
        double otherUs = kUnknown;
        QString otherWhere; // which run timed the other config
    };
    QList<Row> m_rows;
    QString m_otherLabel;
    bool m_simulated = false;
};

} // namespace moetune
